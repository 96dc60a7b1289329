// Where local spaces live: their names, loopback ports and files. Pure functions of the options,
// so `up`, `down`, `status` and `kubeconfig` agree without reading anything but the state dir.
import os from 'node:os';
import path from 'node:path';

export type SpaceRole = 'wds' | 'its' | 'wec';

export interface SpaceLayout {
  name: string;
  role: SpaceRole;
  /** The kube-apiserver's secure port on 127.0.0.1. */
  apiserverPort: number;
  controllerManagerPort: number;
  schedulerPort: number;
  /** Folder with this space's PKI and logs. */
  dir: string;
}

export interface SpacesLayout {
  dir: string;
  etcdClientPort: number;
  etcdPeerPort: number;
  spaces: SpaceLayout[];
  kubeconfigPath: string;
  statePath: string;
  /** Port of `ksview serve` for wds1 when the spaces run it (demo, tests). */
  viewServerPort: number;
  /** Endpoints (/healthz, /readyz, /metrics, /federatedresources) of the pull agent of wec1. */
  pullAgentPort: number;
  /** Endpoints of the one push agent beside its1, serving every other WEC. */
  pushAgentPort: number;
}

export interface SpacesOptions {
  /** State folder: PKI, etcd data, logs, pids, kubeconfig. */
  dir: string;
  /** First loopback port; the spaces use the 10 * (spaces + 1) ports from it. */
  portBase: number;
  wecs: number;
}

export const DEFAULT_PORT_BASE = 16400;
export const DEFAULT_WECS = 2;
/** Ports reserved per space: kube-apiserver, kube-controller-manager, kube-scheduler. */
const PORTS_PER_SPACE = 10;

export function defaultSpacesDir(env = process.env): string {
  if (env.KSVIEW_SPACES_DIR) return env.KSVIEW_SPACES_DIR;
  const stateHome = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(stateHome, 'kubestellar-view', 'spaces');
}

export function spaceNames(wecs: number): Array<{ name: string; role: SpaceRole }> {
  const names: Array<{ name: string; role: SpaceRole }> = [
    { name: 'wds1', role: 'wds' },
    { name: 'its1', role: 'its' },
  ];
  for (let i = 1; i <= wecs; i++) names.push({ name: `wec${i}`, role: 'wec' });
  return names;
}

export function spacesLayout(opts: SpacesOptions): SpacesLayout {
  const spaces = spaceNames(opts.wecs).map(({ name, role }, i) => {
    const first = opts.portBase + PORTS_PER_SPACE * (i + 1);
    return {
      name,
      role,
      apiserverPort: first,
      controllerManagerPort: first + 1,
      schedulerPort: first + 2,
      dir: path.join(opts.dir, name),
    };
  });
  return {
    dir: opts.dir,
    etcdClientPort: opts.portBase,
    etcdPeerPort: opts.portBase + 1,
    spaces,
    kubeconfigPath: path.join(opts.dir, 'kubeconfig'),
    statePath: path.join(opts.dir, 'state.json'),
    viewServerPort: opts.portBase + 5,
    // Inside the first block of ten, beside etcd and serve: the spaces' own ports never move.
    pullAgentPort: opts.portBase + 6,
    pushAgentPort: opts.portBase + 7,
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
    if (s.role === 'wec') ports.push({ port: s.schedulerPort, what: `${s.name} kube-scheduler` });
  }
  return ports;
}

/** The ports of our own Node processes (serve, agents), keyed by process name. */
export function nodePorts(layout: SpacesLayout): Array<{ port: number; what: string }> {
  return [
    { port: layout.viewServerPort, what: 'wds1/ksview-serve' },
    { port: layout.pullAgentPort, what: 'wec1/ksview-agent' },
    { port: layout.pushAgentPort, what: 'its1/ksview-agent-push' },
  ];
}
