// `ksview spaces up|down|status`: real kube-apiservers on loopback playing WDS, ITS and WECs, over
// one etcd with one key prefix per space. `up` is idempotent: it reuses live processes, starts
// what is missing and waits until every space answers; a live process started with other flags
// (by an older version: e.g. etcd without TLS) is restarted with the current ones, on its data.
// `down` stops every process it started and removes the state it wrote. With `--real-nodes`
// (./real-nodes.ts) a hosting space host1 and real nodes in host1 and wec1 run too, wds1's serve
// and wec1's pull agent are left to the chart's pods, and `down` removes what the nodes made.
import { existsSync, mkdirSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';
import { ensureBinaries, ensureNodeBinaries, type Binaries } from './binaries.js';
import {
  apiserverArgs, controllerManagerArgs, etcdArgs, schedulerArgs,
} from './components.js';
import { waitFor, type ProbeResult } from '../kube/wait.js';
import { probeApiserver, probeComponent, probeEtcd } from './health.js';
import { agentCommands } from './agents.js';
import { probeAgent } from './agent-endpoints.js';
import { ensureEtcdPki } from './component-certs.js';
import { ensureAgentIdentities } from './agent-identities.js';
import { writeSpaceKubeconfig, writeSpacesKubeconfig } from './kubeconfig.js';
import { DEFAULT_WDSS, layoutPorts, runsScheduler, serveProcessName, spacesLayout, wdsSpaces, type SpaceLayout, type SpacesLayout, type SpacesOptions } from './layout.js';
import { nodeLayouts, nodeProcessNames, podApiserverAddress } from './node-layout.js';
import { portFree } from './ports.js';
import { isRunning, runsWith, startDetached, stopAll, waitReady, type ProcessRecord } from './processes.js';
import { ensureSpacePki } from './space-pki.js';
import { writeAdmissionConfig } from './admission-config.js';
import { HOSTED_WEBHOOK_PORT, writeWebhookKubeconfig } from './webhook-client.js';
import { ensureWecExecutors } from './wec-executors.js';
import { optionsOfState, readState, writeState, type SpacesState } from './state.js';

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

/**
 * Starts components and remembers them, saving the state after each start so `down` can always
 * clean up. A recorded process that is dead is forgotten and started again on the same data
 * (healing); one that dies while `up` waits for it (it was shutting down) is started once more.
 */
class Launcher {
  private readonly live = new Map<string, ProcessRecord>();
  private readonly startedNow = new Set<string>();
  private readonly args = new Map<string, { binary: string; args: string[] }>();

  constructor(private readonly layout: SpacesLayout, private readonly state: SpacesState,
    private readonly progress: Progress) {
    const { reuse, restart } = healPlan(state.processes, isRunning);
    for (const r of reuse) this.live.set(r.name, r);
    for (const name of restart) progress.step(`${name} is not running: it will be started again, on its data`);
    state.processes = [...this.live.values()];
  }

  running(name: string): boolean {
    return this.live.has(name);
  }

  /** Stops a live process (the next `ensure` starts it again). */
  async stop(name: string): Promise<void> {
    const rec = this.live.get(name);
    if (!rec) return;
    await stopAll([rec]);
    this.live.delete(name);
  }

  async ensure(name: string, binary: string, args: string[], wrapper: string[] = []): Promise<ProcessRecord> {
    const existing = this.live.get(name);
    if (existing && runsWith(existing, binary, args)) return existing;
    if (existing) {
      this.progress.step(`${name} runs with other flags than this version starts it with: restarting it, on its data`);
      await stopAll([existing]);
      this.live.delete(name);
    }
    const logDir = path.join(this.layout.dir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const rec = startDetached(name, binary, args, path.join(logDir, `${name.replace('/', '-')}.log`), process.env, wrapper);
    // A wrapper execs the binary a moment later: until then the process is not yet "ours".
    if (wrapper.length > 0) await waitFor(async () => ({ ok: isRunning(rec), detail: 'not exec\'d yet' }), 5_000, 20);
    this.live.set(name, rec);
    this.startedNow.add(name);
    this.args.set(name, { binary, args });
    this.state.processes = [...this.state.processes.filter((p) => p.name !== name), rec];
    writeState(this.layout.statePath, this.state);
    this.progress.step(`started ${name} (pid ${rec.pid})`);
    return rec;
  }

  /** `ensure`, then wait until ready; a reused process that exits meanwhile is started again. */
  async ensureReady(name: string, binary: string, args: string[], what: string,
    probe: () => Promise<ProbeResult>, timeoutMs: number): Promise<ProcessRecord> {
    const rec = await this.ensure(name, binary, args);
    try {
      await waitReady(what, rec, probe, timeoutMs);
      return rec;
    } catch (err) {
      if (this.startedNow.has(name) || isRunning(rec)) throw err;
      this.live.delete(name);
      this.progress.step(`${name} exited while reused: starting it again`);
      const again = await this.ensure(name, binary, args);
      await waitReady(what, again, probe, timeoutMs);
      return again;
    }
  }
}

/** Which recorded processes `up` reuses (alive) and which it starts again (dead: same name, same data). */
export function healPlan(recorded: readonly ProcessRecord[], alive: (r: ProcessRecord) => boolean): { reuse: ProcessRecord[]; restart: string[] } {
  const reuse = recorded.filter((r) => alive(r));
  const restart = recorded.filter((r) => !alive(r)).map((r) => r.name);
  return { reuse, restart };
}

/** `<space>/<component>` or `etcd`, checked against the names the layout runs; a UserError otherwise. */
export function parseProcessName(name: string, known: readonly string[]): string {
  if (known.includes(name)) return name;
  throw new UserError(`no process '${name}' in these spaces; one of: ${known.join(', ')}`);
}

/** Every process name the spaces of `layout` run, in start order. */
export function processNames(layout: SpacesLayout): string[] {
  const names = ['etcd'];
  for (const s of layout.spaces) {
    names.push(`${s.name}/kube-apiserver`, `${s.name}/kube-controller-manager`);
    if (runsScheduler(s)) names.push(`${s.name}/kube-scheduler`);
    if (s.role === 'wec' && !s.realNode) names.push(`${s.name}/kwok`);
  }
  for (const n of nodeLayouts(layout)) names.push(...nodeProcessNames(n));
  names.push(...serveSpaces(layout).map((s) => serveProcessName(s.name)), ...agentCommands(layout).map((a) => a.name));
  return names;
}

/** The WDSs whose `ksview serve` runs as a process: all but wds1 with real nodes (there, a pod of the chart). */
export function serveSpaces(layout: SpacesLayout): SpaceLayout[] {
  return wdsSpaces(layout).filter((s, i) => !(layout.realNodes && i === 0));
}

/** Stops one process cleanly (TERM, then KILL after the grace), keeping its data: `up` starts it again. */
export async function spacesStop(dir: string, name: string): Promise<{ stopped: boolean }> {
  const state = readState(path.join(dir, 'state.json'));
  if (!state) throw new UserError(`no spaces in ${dir}: run 'ksview spaces up'`);
  const layout = spacesLayout(optionsOfState(dir, state));
  const wanted = parseProcessName(name, processNames(layout));
  const rec = state.processes.find((p) => p.name === wanted);
  if (!rec || !isRunning(rec)) return { stopped: false };
  await stopAll([rec]);
  return { stopped: true };
}

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

export async function spacesUp(opts: UpOptions): Promise<SpacesLayout> {
  const { progress } = opts;
  const timeout = opts.readyTimeoutMs ?? 120_000;
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

  // The whole local system: the view and placement of each WDS, the inventory, the agents. Our
  // Node processes are replaced when `restartNode` (tests, demo: run the code just built).
  if (opts.spacesOnly) return layout;
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
      return layout;
    }
  }
  await ensureInventory(layout, progress);
  await ensureAgents(layout, progress, { restart: opts.restartNode ?? false });
  return layout;
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

export interface DownResult {
  stopped: number;
}

export async function spacesDown(dir: string): Promise<DownResult> {
  const state = readState(path.join(dir, 'state.json'));
  if (!state) {
    if (existsSync(path.join(dir, 'etcd'))) removeState(dir, 0);
    return { stopped: 0 };
  }
  const live = state.processes.filter(isRunning);
  // Real nodes first: kubelet and kube-proxy, the pods, containerd, then what they made (./node-cleanup.ts).
  const failed = state.realNodes ? await realNodesDown(dir, state, live) : [];
  // Stop clients before servers: kwok, scheduler and controller-manager, then kube-apiservers, then etcd.
  const rank = (r: ProcessRecord) => (r.name === 'etcd' ? 2 : r.name.endsWith('/kube-apiserver') ? 1 : 0);
  for (const level of [0, 1, 2]) await stopAll(live.filter((r) => rank(r) === level));
  if (failed.length > 0) {
    // The state stays, so `down` again retries what is left.
    throw new UserError(`spaces down could not remove everything the real nodes made: ${failed.join('; ')}`);
  }
  removeState(dir, state.wecs, state.wdss ?? 1, state.realNodes ?? false);
  return { stopped: live.length };
}

/** Stops the nodes' processes and removes what they made; restores kubelet's sysctls. Returns what failed. */
async function realNodesDown(dir: string, state: SpacesState, live: ProcessRecord[]): Promise<string[]> {
  const layout = spacesLayout(optionsOfState(dir, state));
  const nodes = nodeLayouts(layout);
  const named = (suffix: string) => live.filter((r) => nodes.some((n) => r.name === `${n.space}/${suffix}`));
  await stopAll([...named('kubelet'), ...named('kube-proxy')]);
  const { planNodeCleanup, readMachineFacts, runCleanup } = await import('./node-cleanup.js');
  // The pods' processes and the shims go before containerd, so it does not restart them.
  const kills = planNodeCleanup(nodes, state.portBase, readMachineFacts(nodes, state.portBase)).filter((s) => s.kind === 'kill');
  const failed = await runCleanup(kills);
  await stopAll(named('containerd'));
  failed.push(...await runCleanup(planNodeCleanup(nodes, state.portBase, readMachineFacts(nodes, state.portBase))));
  if (state.nodeSysctls) {
    // The last real-node spaces of the machine to stop restores them (./node-host.ts).
    const { NODE_SYSCTLS, restoreMachineSysctls } = await import('./node-host.js');
    const { failed: notRestored, ignored } = restoreMachineSysctls(nodes.map((n) => path.dirname(n.containerdSocket)), state.nodeSysctls);
    if (ignored.length > 0) process.stderr.write(`spaces down: ignored recorded sysctls ${ignored.join(', ')} (only ${NODE_SYSCTLS.join(', ')} with integer values are restored)\n`);
    failed.push(...notRestored.map((k) => `sysctl ${k} not restored`));
  }
  return failed;
}

/** Removes what `up` wrote, and only that: never a folder the user pointed at by mistake. */
function removeState(dir: string, wecs: number, wdss = 1, realNodes = false): void {
  const layout = spacesLayout({ dir, portBase: 0, wecs, wdss, realNodes });
  const ours = new Set(['state.json', 'state.json.tmp', 'kubeconfig', 'etcd', 'etcd-pki', 'logs', ...layout.spaces.map((s) => s.name)]);
  for (const entry of readdirSync(dir)) {
    if (ours.has(entry) || /^(wec|wds|host)\d+$/.test(entry) || entry.startsWith('kubeconfig')) rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
  try { rmdirSync(dir); } catch { /* not empty: something else lives there */ }
}

export interface SpaceStatus {
  name: string;
  role: string;
  server: string;
  components: Array<{ name: string; ok: boolean; detail: string }>;
}

export async function spacesStatus(dir: string): Promise<SpaceStatus[] | undefined> {
  const state = readState(path.join(dir, 'state.json'));
  if (!state) return undefined;
  const layout = spacesLayout(optionsOfState(dir, state));
  const proc = (name: string) => state.processes.find((p) => p.name === name);
  const alive = (name: string) => {
    const p = proc(name);
    return p !== undefined && isRunning(p);
  };
  const etcdOk = alive('etcd') ? await probeEtcd(layout) : { ok: false, detail: 'not running' };
  return Promise.all(layout.spaces.map(async (s) => {
    const check = async (component: string, probe: () => Promise<ProbeResult>) => {
      const name = `${s.name}/${component}`;
      const r = alive(name) ? await probe() : { ok: false, detail: 'not running' };
      return { name: component, ok: r.ok, detail: r.detail };
    };
    const components = [
      { name: 'etcd', ok: etcdOk.ok, detail: etcdOk.detail },
      await check('kube-apiserver', () => probeApiserver(s.dir, s.apiserverPort)),
      await check('kube-controller-manager', () => probeComponent(s.controllerManagerPort)),
    ];
    if (runsScheduler(s)) components.push(await check('kube-scheduler', () => probeComponent(s.schedulerPort)));
    if (s.role === 'wec' && !s.realNode) components.push(await check('kwok', async () => ({ ok: true, detail: 'running' })));
    const node = nodeLayouts(layout).find((n) => n.space === s.name);
    if (node) {
      // The node's processes (pids), then its Ready condition as its kube-apiserver reports it.
      for (const c of ['containerd', 'kubelet', 'kube-proxy']) {
        components.push(await check(c, async () => ({ ok: true, detail: `running (pid ${proc(`${s.name}/${c}`)!.pid})` })));
      }
      const { nodeReady } = await import('./real-nodes.js');
      components.push({ name: `node ${node.name}`, ...(await nodeReady(layout, node)) });
    }
    if (serveSpaces(layout).includes(s)) components.push(await check('ksview-serve', () => probeComponent(s.viewServerPort ?? layout.viewServerPort)));
    // The agents answer /readyz (open; HTTPS, their certificate checked): ready means connected
    // to the ITS (and, pull, its WEC). Listed once started (KSVIEW_SPACES_NO_AGENTS=1 starts
    // none); a dead one stays recorded: "not running".
    for (const a of agentCommands(layout).filter((c) => c.name.startsWith(`${s.name}/`) && proc(c.name))) {
      components.push(await check(a.name.slice(s.name.length + 1), () => probeAgent(a, '/readyz')));
    }
    return { name: s.name, role: s.role, server: `https://127.0.0.1:${s.apiserverPort}`, components };
  }));
}
