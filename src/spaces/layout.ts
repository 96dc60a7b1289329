// Where local spaces live: their names, loopback ports and files. Pure functions of the options,
// so `up`, `down`, `status` and `kubeconfig` agree without reading anything but the state dir.
import os from 'node:os';
import path from 'node:path';

/** `host`: the hosting space of `--real-nodes`, which runs the server pods (as KubeStellar's hosting cluster). */
export type SpaceRole = 'wds' | 'its' | 'wec' | 'host';

export interface SpaceLayout {
  name: string;
  role: SpaceRole;
  /** The kube-apiserver's secure port on 127.0.0.1. */
  apiserverPort: number;
  controllerManagerPort: number;
  schedulerPort: number;
  /** Folder with this space's PKI and logs. */
  dir: string;
  /** A WDS only: the port of its `ksview serve` (process `<wds>/ksview-serve`). */
  viewServerPort?: number;
  /** Runs one real node (kubelet, containerd, kube-proxy: ./real-nodes.ts) instead of kwok's fake nodes. */
  realNode?: boolean;
}

export interface SpacesLayout {
  dir: string;
  etcdClientPort: number;
  etcdPeerPort: number;
  spaces: SpaceLayout[];
  kubeconfigPath: string;
  statePath: string;
  /** Port of `ksview serve` for wds1 when the spaces run it (demo, tests); other WDSs: their SpaceLayout. */
  viewServerPort: number;
  /** Endpoints (/healthz, /readyz, /metrics, /federatedresources) of the pull agent of wec1. */
  pullAgentPort: number;
  /** Endpoints of the one push agent beside its1, serving every other WEC. */
  pushAgentPort: number;
  /** `spaces up --real-nodes`: host1 and wec1 run real nodes; wds1's serve and wec1's pull agent run as pods (the chart), not as processes. */
  realNodes: boolean;
}

export interface SpacesOptions {
  /** State folder: PKI, etcd data, logs, pids, kubeconfig. */
  dir: string;
  /** First loopback port; the spaces use blocks of ten ports from it (see spacesLayout). */
  portBase: number;
  wecs: number;
  /** WDSs: wds1 … wdsN (default 1). */
  wdss?: number;
  /** Real nodes: the hosting space host1 and a real node in host1 and wec1 (default false: kwok only). */
  realNodes?: boolean;
}

export const DEFAULT_PORT_BASE = 16400;
export const DEFAULT_WECS = 2;
export const MAX_WECS = 20;
export const DEFAULT_WDSS = 1;
export const MAX_WDSS = 5;
/** Ports reserved per space: kube-apiserver, kube-controller-manager, kube-scheduler; a WDS's serve at +5. */
const PORTS_PER_SPACE = 10;
/**
 * The block of wds2: after the blocks every allowed WEC may take (wds1, its1, wec1…wec20 are
 * blocks 1…22), so the ports of wds1, its1 and the WECs never move when WDSs are added, and
 * adding WECs never moves a WDS.
 */
const EXTRA_WDS_FIRST_BLOCK = MAX_WECS + 3;
const SERVE_OFFSET = 5;
/** The block of host1: after every block wds2…wds5 may take, so no other space's ports move with `--real-nodes`. */
const HOST_BLOCK = EXTRA_WDS_FIRST_BLOCK + MAX_WDSS - 1;
/** The hosting space of `--real-nodes`. */
export const HOST_SPACE = 'host1';

export function defaultSpacesDir(env = process.env): string {
  if (env.KSVIEW_SPACES_DIR) return env.KSVIEW_SPACES_DIR;
  const stateHome = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(stateHome, 'kubestellar-view', 'spaces');
}

/** The spaces, in start order: wds1, its1, wec1…wecN, then wds2…wdsM, then (real nodes) host1. */
export function spaceNames(wecs: number, wdss = DEFAULT_WDSS, realNodes = false): Array<{ name: string; role: SpaceRole; block: number }> {
  const names: Array<{ name: string; role: SpaceRole; block: number }> = [
    { name: 'wds1', role: 'wds', block: 1 },
    { name: 'its1', role: 'its', block: 2 },
  ];
  for (let i = 1; i <= wecs; i++) names.push({ name: `wec${i}`, role: 'wec', block: 2 + i });
  for (let i = 2; i <= wdss; i++) names.push({ name: `wds${i}`, role: 'wds', block: EXTRA_WDS_FIRST_BLOCK + i - 2 });
  if (realNodes) names.push({ name: HOST_SPACE, role: 'host', block: HOST_BLOCK });
  return names;
}

/**
 * Ports, in blocks of ten from the port base: block 0 is etcd (+0, +1), wds1's serve (+5) and the
 * agents (+6, +7); block 1 wds1, block 2 its1, blocks 3… the WECs; wds2… from block 23 on, each
 * with its serve at +5 of its own block (port base 16400: wds2 at 16630, its serve at 16635).
 */
export function spacesLayout(opts: SpacesOptions): SpacesLayout {
  const viewServerPort = opts.portBase + SERVE_OFFSET;
  const realNodes = opts.realNodes ?? false;
  const spaces = spaceNames(opts.wecs, opts.wdss, realNodes).map(({ name, role, block }): SpaceLayout => {
    const first = opts.portBase + PORTS_PER_SPACE * block;
    return {
      name,
      role,
      apiserverPort: first,
      controllerManagerPort: first + 1,
      schedulerPort: first + 2,
      dir: path.join(opts.dir, name),
      ...(role === 'wds' ? { viewServerPort: block === 1 ? viewServerPort : first + SERVE_OFFSET } : {}),
      // The spaces that run pods for real: the hosting space and wec1 (the pull agent as a pod).
      ...(realNodes && (role === 'host' || name === 'wec1') ? { realNode: true } : {}),
    };
  });
  return {
    dir: opts.dir,
    etcdClientPort: opts.portBase,
    etcdPeerPort: opts.portBase + 1,
    spaces,
    kubeconfigPath: path.join(opts.dir, 'kubeconfig'),
    statePath: path.join(opts.dir, 'state.json'),
    viewServerPort,
    // Inside the first block of ten, beside etcd and serve: the spaces' own ports never move.
    pullAgentPort: opts.portBase + 6,
    pushAgentPort: opts.portBase + 7,
    realNodes,
  };
}

/** Every port the layout uses, with what uses it, for the port-in-use check. */
export function layoutPorts(layout: SpacesLayout): Array<{ port: number; what: string }> {
  const ports = [
    { port: layout.etcdClientPort, what: 'etcd client' },
    { port: layout.etcdPeerPort, what: 'etcd peer' },
  ];
  // The view server's and the agents' ports are checked when they start: they may run already.
  for (const s of layout.spaces) {
    ports.push({ port: s.apiserverPort, what: `${s.name} kube-apiserver` });
    ports.push({ port: s.controllerManagerPort, what: `${s.name} kube-controller-manager` });
    if (runsScheduler(s)) ports.push({ port: s.schedulerPort, what: `${s.name} kube-scheduler` });
  }
  return ports;
}

/** The spaces that are clusters (pods run there): every controller, a scheduler; WECs and host1. */
export const runsScheduler = (s: SpaceLayout): boolean => s.role === 'wec' || s.role === 'host';

/** The WDS spaces, wds1 first. */
export function wdsSpaces(layout: SpacesLayout): SpaceLayout[] {
  return layout.spaces.filter((s) => s.role === 'wds');
}

/** The process name of a WDS's `ksview serve`. */
export const serveProcessName = (wds: string): string => `${wds}/ksview-serve`;

/** The ports of our own Node processes (serve, agents), keyed by process name. */
export function nodePorts(layout: SpacesLayout): Array<{ port: number; what: string }> {
  const [wds1, ...others] = wdsSpaces(layout);
  return [
    // With real nodes wds1's serve and wec1's pull agent run as pods, not as our processes.
    ...(layout.realNodes ? [] : [
      { port: layout.viewServerPort, what: serveProcessName(wds1?.name ?? 'wds1') },
      { port: layout.pullAgentPort, what: 'wec1/ksview-agent' },
    ]),
    { port: layout.pushAgentPort, what: 'its1/ksview-agent-push' },
    ...others.map((s) => ({ port: s.viewServerPort!, what: serveProcessName(s.name) })),
  ];
}
