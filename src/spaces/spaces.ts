// `ksview spaces up`: real kube-apiservers on loopback playing WDS, ITS and WECs, over one etcd
// with one key prefix per space. `up` is idempotent: it reuses live processes, starts what is
// missing and waits until every space answers; a live process started with other flags (by an
// older version: e.g. etcd without TLS) is restarted with the current ones, on its data (the
// Launcher, ./launcher.ts). With `--real-nodes` (./real-nodes.ts) a hosting space host1 and real
// nodes in host1 and wec1 run too, and wds1's serve and wec1's pull agent are left to the chart's
// pods. `down` and `stop` are ./spaces-down.ts; `status` is ./spaces-status.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';
import { ensureBinaries, ensureNodeBinaries, type Binaries, type NodeBinaries } from './binaries.js';
import {
  apiserverArgs, controllerManagerArgs, etcdArgs, schedulerArgs,
} from './components.js';
import { waitFor } from '../kube/wait.js';
import { probeApiserver, probeComponent, probeEtcd } from './health.js';
import { ensureEtcdPki } from './component-certs.js';
import { ensureAgentIdentities } from './agent-identities.js';
import { writeSpaceKubeconfig, writeSpacesKubeconfig } from './kubeconfig.js';
import { DEFAULT_WDSS, layoutPorts, runsScheduler, spacesLayout, wdsSpaces, type SpaceLayout, type SpacesLayout, type SpacesOptions } from './layout.js';
import { Launcher } from './launcher.js';
import { nodeLayouts, podApiserverAddress } from './node-layout.js';
import { portFree } from './ports.js';
import { serveSpaces } from './process-names.js';
import { isRunning, waitReady } from './processes.js';
import { ensureSpacePki } from './space-pki.js';
import { writeAdmissionConfig } from './admission-config.js';
import { HOSTED_WEBHOOK_PORT, writeWebhookKubeconfig } from './webhook-client.js';
import { ensureWecExecutors } from './wec-executors.js';
import { readState, writeState, type SpacesState } from './state.js';

export interface UpOptions extends SpacesOptions {
  cacheDir: string;
  progress: Progress;
  /** How long each phase may take to become ready. */
  readyTimeoutMs?: number;
  /** Only the kube-apiservers and their controllers: no serve, inventory or agents. */
  spacesOnly?: boolean;
  /** Replace running serve and agents, so they run the code just built (tests, demo). */
  restartNode?: boolean;
  /** How serve packs objects into works (absent: as recorded before, else a work per object); a change restarts serve. */
  bundle?: { objects: number; bytes: number };
}

const spaceKubeconfig = (s: SpaceLayout) => path.join(s.dir, 'kubeconfig');

async function checkPorts(layout: SpacesLayout, launcher: Launcher): Promise<void> {
  // A port whose component already runs is ours; every other must be free.
  const owner = (what: string) => {
    if (what.startsWith('etcd')) return 'etcd';
    const [space, component] = what.split(' ');
    return `${space}/${component}`;
  };
  for (const { port, what } of layoutPorts(layout)) {
    if (launcher.running(owner(what))) continue;
    if (!(await portFree(port))) {
      throw new UserError(`port ${port} on 127.0.0.1 (for ${what}) is already in use; stop what uses it or choose another --port-base`);
    }
  }
}

/** What the phases of `up` share: the options, the layout, the state and what starts processes. */
interface Up {
  opts: UpOptions;
  progress: Progress;
  timeout: number;
  layout: SpacesLayout;
  realNodes: boolean;
  state: SpacesState;
  launcher: Launcher;
  bins: Binaries;
  /** Real nodes only: kubelet, containerd and the rest, and the machine's preparation for them. */
  nodeBins?: NodeBinaries;
  nodeHost?: typeof import('./node-host.js');
  /** serve runs with another packing of works than before: restarted. */
  bundleChanged: boolean;
}

/**
 * The spaces' state checked against what runs (same port base, WECs and nodes; more WDSs is fine),
 * the binaries ensured, the state written and the ports checked free.
 */
async function prepare(opts: UpOptions): Promise<Up> {
  const { progress } = opts;
  const layout = spacesLayout(opts);
  const wdss = opts.wdss ?? DEFAULT_WDSS;
  const realNodes = opts.realNodes ?? false;
  const previous = readState(layout.statePath);
  // More WDSs than before is fine on running spaces (theirs are new ports; nothing else moves).
  if (previous && (previous.portBase !== opts.portBase || previous.wecs !== opts.wecs || (previous.wdss ?? 1) > wdss
    || (previous.realNodes ?? false) !== realNodes) && previous.processes.some(isRunning)) {
    throw new UserError(`spaces in ${layout.dir} already run with --port-base ${previous.portBase} --wecs ${previous.wecs} --wdss ${previous.wdss ?? 1}${previous.realNodes ? ' --real-nodes' : ''}; run 'ksview spaces down' first`);
  }
  if (realNodes && opts.wecs < 1) throw new UserError('--real-nodes needs at least one WEC (wec1 runs a real node)');
  // Real nodes: root and the Debian packages first (one line when missing), then the binaries.
  const nodeHost = realNodes ? await import('./node-host.js') : undefined;
  nodeHost?.ensureNodeHost(progress);
  const bins: Binaries = await ensureBinaries(opts.cacheDir, progress);
  const nodeBins = realNodes ? await ensureNodeBinaries(opts.cacheDir, progress) : undefined;
  mkdirSync(layout.dir, { recursive: true, mode: 0o700 });
  const bundle = opts.bundle ?? previous?.bundle;
  const bundleChanged = JSON.stringify(bundle ?? null) !== JSON.stringify(previous?.bundle ?? null);
  const state: SpacesState = {
    portBase: opts.portBase, wecs: opts.wecs, wdss, processes: previous?.processes ?? [], ...(bundle ? { bundle } : {}),
    ...(realNodes ? { realNodes, nodeSysctls: previous?.nodeSysctls ?? nodeHost!.recordMachineSysctls() } : {}),
  };
  const launcher = new Launcher(layout, state, progress);
  writeState(layout.statePath, state);
  await checkPorts(layout, launcher);
  return {
    opts, progress, timeout: opts.readyTimeoutMs ?? 120_000, layout, realNodes, state, launcher, bins, bundleChanged,
    ...(nodeBins ? { nodeBins } : {}), ...(nodeHost ? { nodeHost } : {}),
  };
}

/** Every space's PKI and kubeconfig, the WDSs' webhook clients, admission configurations, agent identities. */
async function writeConfiguration({ opts, progress, layout, realNodes }: Up): Promise<void> {
  // With real nodes pods dial every kube-apiserver at the nodes' DNATed address: in their certificates.
  const podAddress = realNodes ? [podApiserverAddress(opts.portBase)] : [];
  await Promise.all([ensureEtcdPki(layout.dir), ...layout.spaces.map((s) => ensureSpacePki(s.name, s.dir, podAddress))]);
  writeSpacesKubeconfig(layout);
  for (const s of layout.spaces) writeSpaceKubeconfig(layout, s.name, spaceKubeconfig(s));
  // A WDS served by pods (real nodes: wds1, the chart's hosted registration) is called on its
  // Service's port 443; the others on their serve process's port.
  const processServed = new Set(serveSpaces(layout).map((s) => s.name));
  for (const s of wdsSpaces(layout)) writeWebhookKubeconfig(s, processServed.has(s.name) ? (s.viewServerPort ?? layout.viewServerPort) : HOSTED_WEBHOOK_PORT);
  // Every space's AdmissionConfiguration (webhooks of a WDS, Pod Security where a node is real).
  for (const s of layout.spaces) writeAdmissionConfig(layout, s);
  // Each agent's own client certificate of its1 (never the admin's).
  await ensureAgentIdentities(layout);
  progress.step(`PKI and kubeconfig ready: ${layout.kubeconfigPath}`);
}

/** etcd, then every kube-apiserver, then their controller-managers, schedulers and kwok. */
async function startControlPlanes({ progress, timeout, layout, launcher, bins }: Up): Promise<void> {
  await launcher.ensureReady('etcd', bins.etcd, etcdArgs(layout), 'etcd', () => probeEtcd(layout), timeout);
  progress.step(`etcd ready on https://127.0.0.1:${layout.etcdClientPort} (client certificates of ${path.join(layout.dir, 'etcd-pki')} only)`);

  await Promise.all(layout.spaces.map(async (s) => {
    await launcher.ensureReady(`${s.name}/kube-apiserver`, bins.kubeApiserver, apiserverArgs(layout, s),
      `${s.name} kube-apiserver`, () => probeApiserver(s.dir, s.apiserverPort), timeout);
    progress.step(`${s.name} kube-apiserver ready at https://127.0.0.1:${s.apiserverPort}`);
  }));

  const controllers: Array<Promise<unknown>> = [];
  for (const s of layout.spaces) {
    controllers.push(launcher.ensureReady(`${s.name}/kube-controller-manager`, bins.kubeControllerManager,
      controllerManagerArgs(s, spaceKubeconfig(s)), `${s.name} kube-controller-manager`, () => probeComponent(s.controllerManagerPort), timeout));
    if (!runsScheduler(s)) continue;
    controllers.push(launcher.ensureReady(`${s.name}/kube-scheduler`, bins.kubeScheduler, schedulerArgs(s, spaceKubeconfig(s)),
      `${s.name} kube-scheduler`, () => probeComponent(s.schedulerPort), timeout));
    if (s.role !== 'wec' || s.realNode) continue;
    writeFileSync(path.join(s.dir, 'kwok.yaml'), KWOK_CONFIG);
    controllers.push(launcher.ensure(`${s.name}/kwok`, bins.kwok, kwokArgs(s)));
  }
  await Promise.all(controllers);
  progress.step('controllers ready');
}

/** The nodes of the WECs and of host1, Ready (real, or kwok's fake ones), and the WECs' executors. */
async function readyNodes({ opts, progress, timeout, layout, state, launcher, nodeBins, nodeHost }: Up): Promise<void> {
  // client-node takes half a second to load: only `up` with WECs pays for it, not every command.
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { defaultServiceAccountExists, ensureFakeNodes, nodesReady } = await import('./fake-nodes.js');
  if (nodeBins) {
    // Recorded (state.nodeSysctls) before the first node changes them.
    writeState(layout.statePath, state);
    nodeHost!.raiseInotifyInstances();
    const { ensureRealNodes } = await import('./real-nodes.js');
    await ensureRealNodes(layout, nodeBins, opts.cacheDir, {
      start: (name, binary, args, wrapper) => launcher.ensure(name, binary, args, wrapper),
      stop: (name) => launcher.stop(name),
    }, progress, timeout);
  }
  await Promise.all(layout.spaces.filter((s) => s.role === 'wec' || s.role === 'host').map(async (s) => {
    const kc = new KubeConfig();
    kc.loadFromFile(spaceKubeconfig(s));
    if (s.realNode) {
      // A real node: Ready already; pods wait for the `default` ServiceAccount.
      const sa = await waitFor(async () => ({ ok: await defaultServiceAccountExists(kc), detail: 'no default ServiceAccount yet' }), timeout);
      if (!sa.ok) throw new UserError(`${s.name}: no default ServiceAccount after ${timeout / 1000}s`);
      if (s.role === 'wec') await ensureWecExecutors(spaceKubeconfig(s));
      return;
    }
    const nodes = await ensureFakeNodes(kc, s.name);
    const kwok = state.processes.find((p) => p.name === `${s.name}/kwok`)!;
    await waitReady(`${s.name} fake nodes (kwok)`, kwok, async () => ({
      ok: (await nodesReady(kc, nodes)) && (await defaultServiceAccountExists(kc)),
      detail: 'nodes not Ready or no default ServiceAccount yet',
    }), timeout);
    progress.step(`${s.name}: ${nodes.length} kwok nodes Ready`);
    // The executors works are applied as (./wec-executors.ts): before any serve or agent runs.
    await ensureWecExecutors(spaceKubeconfig(s));
  }));
  progress.step('WEC executors in place (default: restricted; admin-executor: named explicitly)');
}

/**
 * The whole local system: the view and placement of each WDS, the inventory, the agents. Our
 * Node processes are replaced when `restartNode` (tests, demo: run the code just built).
 */
async function startKsview({ opts, progress, layout, realNodes, bundleChanged }: Up): Promise<void> {
  const { ensureViewServer } = await import('./view-server.js');
  const { ensureAgents, ensureInventory } = await import('./agents.js');
  // One at a time: the first installs the ITS CRDs the others then find.
  // A serve started with another packing of works is restarted with this one (the works are repacked, objects handed over in place).
  for (const wds of serveSpaces(layout)) await ensureViewServer(layout, progress, { restart: (opts.restartNode ?? false) || bundleChanged, wds: wds.name });
  if (realNodes) {
    progress.step(`real nodes: wds1's ksview serve and wec1's pull agent are not started as processes (the chart runs them as pods in ${nodeLayouts(layout).map((n) => n.space).join(' and ')})`);
    // The inventory needs the ITS CRDs, which a server installs: without a serve process they come
    // with the chart's server pods; `up --real-nodes` again then writes the inventory and starts the push agent.
    if (!(await itsCrdsInstalled(layout))) {
      progress.step("its1 has no ManagedCluster CRD yet (the chart's server installs it): inventory and push agent skipped; run 'ksview spaces up --real-nodes' again once the server runs");
      return;
    }
  }
  await ensureInventory(layout, progress);
  await ensureAgents(layout, progress, { restart: opts.restartNode ?? false });
}

export async function spacesUp(opts: UpOptions): Promise<SpacesLayout> {
  const up = await prepare(opts);
  await writeConfiguration(up);
  await startControlPlanes(up);
  await readyNodes(up);
  if (!opts.spacesOnly) await startKsview(up);
  return up.layout;
}

/** Whether its1 serves ManagedClusters (a server installed the ITS CRDs). */
async function itsCrdsInstalled(layout: SpacesLayout): Promise<boolean> {
  const { closeUpstream, upstreamFromKubeconfig, upstreamRequest } = await import('../kube/upstream.js');
  const its = layout.spaces.find((s) => s.role === 'its')!;
  const up = await upstreamFromKubeconfig(spaceKubeconfig(its));
  try {
    const res = await upstreamRequest(up, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/managedclusters.cluster.open-cluster-management.io');
    return res.status === 200;
  } finally {
    await closeUpstream(up);
  }
}

/** An explicit, empty kwok configuration, so a user's ~/.kwok/kwok.yaml never leaks in; kwok then uses its built-in stages. */
const KWOK_CONFIG = 'apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: {}\n';

function kwokArgs(s: SpaceLayout): string[] {
  return [
    `--kubeconfig=${spaceKubeconfig(s)}`,
    `--config=${path.join(s.dir, 'kwok.yaml')}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    // kwok renews node leases only when this is set; without it nodes go NotReady after 50s.
    '--node-lease-duration-seconds=40',
    '--node-ip=127.0.0.1',
    '--cidr=10.244.0.0/16',
  ];
}

