// Benchmark (not a test): kubestellar-view installed where users run it (docs/benchmarks.md, "Install where users run it").
//
//   npx tsc -p . && node dist/bench/in-cluster.js [--json FILE] [--trials N] [--dir DIR] [--port-base N] [--keep-spaces]
//
// Needs root (real nodes: kubelet, containerd, network namespaces). Measures, each at least twice:
//   1. the image: `make image` after `make build` with warm caches (the build step included), and
//      the image step alone (`node build/image/build.mjs`); the compressed archive and the unpacked
//      root filesystem (src/spaces/image.ts imageSizes) and what takes the most of them (each part's
//      files gzipped one by one, buildah's default compression, for its share of the archive).
//      Targets: archive ≤ 100 MB, unpacked ≤ 250 MB, `make image` ≤ 60 s.
//   2. on real-node spaces of its own (`--dir`, default ~/.local/state/kubestellar-view/bench-in-cluster,
//      port base 23400, `--wdss 2`: wds1's server runs as the chart's pods in host1, wds2's as a
//      process `ksview serve` with the pods' WDS rights: serveWds2AsTheChartDoes), the chart installed as src/spaces/in-cluster-install.ts installs it; then, per
//      trial, `helm uninstall` of the server part (the WDS-side objects it registered left as they
//      are), the APIService awaited not Available, and `helm upgrade --install` of the server part
//      again: seconds from helm's start to wds1 saying the APIService is Available (polled every
//      100 ms; target ≤ 30 s), and per server pod from its container's start to Ready (target ≤ 5 s).
//      Clocks: the container's `state.running.startedAt` is the kubelet's (this machine's wall
//      clock, truncated to the second, so the figure errs long by < 1 s); Ready is the bench's wall
//      clock when a watch of the pods in host1 delivers the Ready condition. Also shown: running
//      first seen on that watch → Ready (both the bench's clock; errs short by the kubelet's status
//      delay) and pod created → Ready.
//   3. view latency, side by side in one run: GET of one ConfigMap and LIST of 500 through the view
//      of wds1 (wds1's aggregator → a server pod over the pod network) and through the view of wds2
//      (wds2's aggregator → the process on loopback), each against its own WDS directly, one request
//      at a time with the order of the four paths rotating every iteration so all see the same load;
//      both servers warmed first (a fresh Node server runs its request path unoptimised for its
//      first ~2,000 requests: bench/view-latency.ts), wds1's view twice as much (its two pods share
//      the aggregator's requests). Medians and p90 per round; target: (pod VIEW/DIRECT) /
//      (process VIEW/DIRECT) of the medians ≤ 1.1.
// Shows progress on stderr and the tables on stdout; `--json FILE` writes every number. The spaces
// are stopped and removed at the end, on error and on Ctrl-C (`--keep-spaces`: left running).
// The machine's load (`uptime`) is recorded at each phase: on a shared machine it is part of the result.
// Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import YAML from 'yaml';
import { viewRoot } from '../src/apiserver/groups/view-group.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { ensureHelm } from '../src/spaces/helm.js';
import { imageSizes } from '../src/spaces/image.js';
import { helmPart, installInCluster, RELEASES, SERVER_NAMESPACE, serverValues, type InClusterOptions } from '../src/spaces/in-cluster-install.js';
import type { SpacesLayout } from '../src/spaces/layout.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { spacesDown } from '../src/spaces/spaces-down.js';
import { rbacPath, type Manifest } from '../src/spaces/agent-identities.js';
import { renderKubeconfig } from '../src/spaces/kubeconfig.js';
import { ensureClientCert, spacePkiFiles } from '../src/spaces/space-pki.js';
import { APISERVICE_NAME, ensureViewServer } from '../src/spaces/view-server.js';
import { stderrProgress } from '../src/util/progress.js';
import { repoRoot } from '../src/util/repo-root.js';
import { BenchCleanup, bounded, kubeconfigClient, call, fmt, makePool, mustCall, onWatchEvents, orderFor, stats, type Client, type Tls } from './http-bench.js';

const DEFAULT_PORT_BASE = 23400;
const TARGETS = { archiveMB: 100, unpackedMB: 250, makeImageS: 60, availableS: 30, podReadyS: 5, ratioOfRatios: 1.1 };
const CONFIGMAPS = 500;
const N_GET = 400;
// 200, not 60: at 60 the LIST medians of the two DIRECT paths (two identical kube-apiservers)
// differed by 10 % from noise alone on a quiet machine, failing the ratio of ratios one round in four.
const N_LIST = 200;
const WARMUP = { get: 20, list: 5 };
/** GETs per server before anything is measured: wds1's view gets twice as many (two pods). */
const SERVER_WARMUP = 2000;
const ROUNDS = 2;
const OVERALL_TIMEOUT_MS = 60 * 60_000;
const SERVER_POD_SELECTOR = 'app.kubernetes.io/component=apiserver';

const progress = stderrProgress();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const USAGE = 'usage: node dist/bench/in-cluster.js [--json FILE] [--trials N] [--dir DIR] [--port-base N] [--keep-spaces]';

interface Args { json?: string; trials: number; dir: string; portBase: number; keepSpaces: boolean }

function parseArgs(argv: string[]): Args {
  const out: Args = {
    trials: 2, portBase: DEFAULT_PORT_BASE, keepSpaces: false,
    dir: path.join(os.homedir(), '.local', 'state', 'kubestellar-view', 'bench-in-cluster'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => { const v = argv[++i]; if (!v) throw new Error(`${a} needs a value (${USAGE})`); return v; };
    if (a === '--json') out.json = value();
    else if (a === '--trials') out.trials = Number(value());
    else if (a === '--dir') out.dir = path.resolve(value());
    else if (a === '--port-base') out.portBase = Number(value());
    else if (a === '--keep-spaces') out.keepSpaces = true;
    else if (a === '-h' || a === '--help') { process.stdout.write(`${USAGE}\n`); process.exit(0); } else throw new Error(`unknown argument ${a} (${USAGE})`);
  }
  if (!Number.isInteger(out.trials) || out.trials < 1) throw new Error('--trials must be a positive integer');
  if (!Number.isInteger(out.portBase) || out.portBase < 1024) throw new Error('--port-base must be a port number');
  return out;
}

const loads: Array<{ phase: string; uptime: string }> = [];
function noteLoad(phase: string): void {
  const uptime = (spawnSync('uptime', { encoding: 'utf8' }).stdout ?? '').trim() || `load average: ${os.loadavg().map((x) => x.toFixed(2)).join(', ')}`;
  loads.push({ phase, uptime });
  progress.step(`load (${phase}): ${uptime}`);
}

/** A command, its stderr passed through (its own progress), timed; stdout returned. */
function timed(cmd: string, args: string[]): Promise<{ ms: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.on('error', reject);
    child.on('close', (code) => code === 0 ? resolve({ ms: Date.now() - t0, stdout })
      : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stdout.trim().split('\n').slice(-2).join(' | ')}`)));
  });
}

// ---- 1. the image -----------------------------------------------------------------------------

interface Part { part: string; files: number; bytes: number; gzipBytes: number }

/** The root filesystem by part, each file gzipped alone for its share of the (one-layer, gzip) archive. */
function imageParts(rootfs: string): Part[] {
  const parts = new Map<string, Part>();
  const add = (name: string, file: string) => {
    const p = parts.get(name) ?? { part: name, files: 0, bytes: 0, gzipBytes: 0 };
    const data = readFileSync(file);
    p.files++;
    p.bytes += data.length;
    p.gzipBytes += gzipSync(data).length;
    parts.set(name, p);
  };
  const partOf = (rel: string): string => {
    if (rel === 'usr/bin/node') return '/usr/bin/node (the runtime, stripped)';
    if (/^(usr\/)?lib(64|x32)?\//.test(rel)) return 'shared libraries of node (ldd) and the loader';
    const nm = /^app\/node_modules\/((@[^/]+\/)?[^/]+)/.exec(rel);
    if (nm) return `/app/node_modules/${nm[1]}`;
    if (rel.startsWith('app/bin/ksview-')) return `/${rel} (Go helper)`;
    if (rel.startsWith('app/dist/')) return '/app/dist (the project, compiled)';
    if (rel.startsWith('app/manifests/')) return '/app/manifests (CRDs, ITS admission policy)';
    return 'other (/etc, /app/package.json, bin/ksview.js, build-info)';
  };
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) add(partOf(path.relative(rootfs, p)), p);
    }
  };
  walk(rootfs);
  // node_modules: its five largest packages by name, the rest together.
  const all = [...parts.values()];
  const modules = all.filter((p) => p.part.startsWith('/app/node_modules/')).sort((a, b) => b.bytes - a.bytes);
  const rest = modules.slice(5).reduce((acc, p) => ({ ...acc, files: acc.files + p.files, bytes: acc.bytes + p.bytes, gzipBytes: acc.gzipBytes + p.gzipBytes }),
    { part: `/app/node_modules, the other ${Math.max(0, modules.length - 5)} packages`, files: 0, bytes: 0, gzipBytes: 0 });
  return [...all.filter((p) => !p.part.startsWith('/app/node_modules/')), ...modules.slice(0, 5), ...(rest.files ? [rest] : [])]
    .sort((a, b) => b.bytes - a.bytes);
}

interface ImageResult {
  name: string;
  archive: string;
  digest: string;
  makeImageMs: number[];
  imageStepMs: number[];
  archiveBytes: number;
  unpackedBytes: number;
  parts: Part[];
}

async function measureImage(runs: number): Promise<ImageResult> {
  progress.step('make build (not timed: the caches and dist/ warm)');
  await timed('make', ['build']);
  // A checkout's first image runs `npm ci --omit=dev` into the staging folder (src/spaces/image.ts,
  // kept while package-lock.json does not change): that is a cold cache, not what is timed.
  if (!existsSync(path.join(repoRoot(), 'dist', 'image', 'npm', '.stamp'))) {
    progress.step('make image once, not timed: this checkout has no production node_modules staged yet (cold cache)');
    await timed('make', ['image']);
  }
  const makeImageMs: number[] = [];
  const imageStepMs: number[] = [];
  let stdout = '';
  for (let i = 1; i <= runs; i++) {
    progress.step(`make image, run ${i}/${runs}`);
    const r = await timed('make', ['image']);
    makeImageMs.push(r.ms);
    progress.step(`make image: ${(r.ms / 1000).toFixed(1)} s`);
  }
  for (let i = 1; i <= runs; i++) {
    progress.step(`node build/image/build.mjs (the image step alone), run ${i}/${runs}`);
    const r = await timed(process.execPath, ['build/image/build.mjs']);
    imageStepMs.push(r.ms);
    stdout = r.stdout;
    progress.step(`image step: ${(r.ms / 1000).toFixed(1)} s`);
  }
  const field = (k: string) => new RegExp(`^${k} (\\S+)`, 'm').exec(stdout)?.[1];
  const name = field('image');
  const archiveRel = field('archive');
  const digest = field('digest');
  if (!name || !archiveRel || !digest) throw new Error(`build/image/build.mjs printed no image, archive or digest: ${stdout.trim()}`);
  const archive = path.resolve(repoRoot(), archiveRel);
  const rootfs = path.join(repoRoot(), 'dist', 'image', 'rootfs');
  const { archiveBytes, unpackedBytes } = imageSizes(archive, rootfs);
  progress.step(`sizing the image's parts in ${rootfs}`);
  return { name, archive, digest, makeImageMs, imageStepMs, archiveBytes, unpackedBytes, parts: imageParts(rootfs) };
}

// ---- wds2's process with the pods' identity --------------------------------------------------------

/**
 * The spaces start a process `ksview serve` as the WDS's admin (system:masters), whom kube-apiserver
 * authorizes without reading RBAC; the chart's pods act as a least-privilege user, and every view
 * request they forward impersonates its caller: one RBAC check per impersonated user, group and
 * extra (kube's impersonation filter). Measured before this: +0.45 ms per GET, the whole difference
 * the first runs put on the pod network. So that the comparison isolates the pods and their
 * network, wds2's process gets what the pods get in wds1: the chart's wds part rendered for a user
 * of wds2's CA (`helm template`; applied by the admin, since the process's own registration made
 * objects of the same names that helm would refuse to adopt), and is restarted as that user,
 * without --register (the APIService, Service and certificate stay as they are).
 */
async function serveWds2AsTheChartDoes(layout: SpacesLayout, helm: string): Promise<void> {
  const wds2 = layout.spaces.find((s) => s.name === 'wds2');
  if (!wds2) throw new Error('no wds2 in the bench spaces');
  const user = 'kubestellar-view:server:wds2';
  const values = { server: { enabled: false }, wds: { enabled: true, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }], serviceAccount: { create: false } } };
  const rendered = spawnSync(helm, ['template', RELEASES.wds.name, path.join(repoRoot(), 'charts', 'kubestellar-view'), '--namespace', SERVER_NAMESPACE, '--values', '-'],
    { input: JSON.stringify(values), encoding: 'utf8' });
  if (rendered.status !== 0) throw new Error(`helm template of the wds part: ${rendered.stderr.trim()}`);
  const admin = clientOf('wds2 admin', await spaceClient(layout, 'wds2'));
  try {
    const objects = YAML.parseAllDocuments(rendered.stdout).map((d) => d.toJSON() as Manifest | null).filter((o): o is Manifest => !!o);
    // rbacPath refuses any other kind: the wds part renders RBAC only.
    for (const o of objects) await mustCall(admin, 'PATCH', `${rbacPath(o)}?fieldManager=bench&force=true`, o, 'application/apply-patch+yaml');
    progress.step(`wds2: the chart's wds part (${objects.length} RBAC objects) applied for ${user}`);
  } finally {
    await admin.pool.destroy();
  }
  const pair = await ensureClientCert(wds2.dir, 'kubestellar-view-server', user, []);
  const kubeconfig = path.join(wds2.dir, 'pki', 'clients', 'kubestellar-view-server.kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig([{
    name: 'wds2', user, server: `https://127.0.0.1:${wds2.apiserverPort}`,
    caPem: readFileSync(spacePkiFiles(wds2.dir).caCert, 'utf8'), certPem: pair.certPem, keyPem: pair.keyPem,
  }]), { mode: 0o600 });
  await ensureViewServer(layout, progress, { wds: 'wds2', restart: true, wdsKubeconfig: kubeconfig, register: false });
  progress.step(`wds2's ksview serve restarted as ${user}, as the pods run in wds1`);
}

// ---- clients ----------------------------------------------------------------------------------

interface SpaceClient { origin: string; tls: Tls }

const spaceClient = (layout: SpacesLayout, context: string): Promise<SpaceClient> => kubeconfigClient(layout.kubeconfigPath, context);

const clientOf = (name: string, s: SpaceClient, prefix = ''): Client => ({ name, origin: s.origin, prefix, pool: makePool(s.origin, s.tls) });

type Obj = Record<string, any>;

async function json(c: Client, p: string): Promise<Obj> {
  return JSON.parse((await mustCall(c, 'GET', p)).body.toString('utf8')) as Obj;
}

async function apiServiceAvailable(wds: Client): Promise<boolean> {
  const r = await call(wds, 'GET', `/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}`);
  if (r.status !== 200) return false;
  const svc = JSON.parse(r.body.toString('utf8')) as Obj;
  return ((svc.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Available' && c.status === 'True');
}

async function until<T>(what: string, fn: () => Promise<T | false | undefined>, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

// ---- 2. install → Available, pod start → Ready --------------------------------------------------

interface PodTimes { pod: string; createdSeen?: number; runningSeen?: number; startedAt?: number; readySeen?: number }

/** A watch of the server pods in host1: when each was first seen, seen running, seen Ready (Date.now()). */
function watchPods(host: Client, rv: string): { pods: Map<string, PodTimes>; close: () => void; error?: Error } {
  const ac = new AbortController();
  const w: { pods: Map<string, PodTimes>; close: () => void; error?: Error } = { pods: new Map(), close: () => ac.abort() };
  host.pool.request({
    method: 'GET',
    path: `/api/v1/namespaces/${SERVER_NAMESPACE}/pods?watch=true&allowWatchBookmarks=false&resourceVersion=${rv}&labelSelector=${encodeURIComponent(SERVER_POD_SELECTOR)}&timeoutSeconds=600`,
    headers: { accept: 'application/json' }, headersTimeout: 0, bodyTimeout: 0, signal: ac.signal,
  }).then(async (res) => {
    if (res.statusCode !== 200) throw new Error(`pod watch: ${res.statusCode}`);
    onWatchEvents<{ type: string; object: Obj }>(res.body, Date.now, (ev, now) => {
      if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
      const pod = ev.object;
      const name = pod.metadata.name as string;
      const t = w.pods.get(name) ?? { pod: name, createdSeen: now };
      const running = (pod.status?.containerStatuses as Obj[] | undefined)?.[0]?.state?.running;
      if (running && t.runningSeen === undefined) {
        t.runningSeen = now;
        t.startedAt = Date.parse(running.startedAt as string);
      }
      const ready = ((pod.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
      if (ready && t.readySeen === undefined) t.readySeen = now;
      w.pods.set(name, t);
    });
    res.body.on('error', (err: Error) => { if (!ac.signal.aborted) w.error = err; });
  }).catch((err: unknown) => { if (!ac.signal.aborted) w.error = err as Error; });
  return w;
}

interface Trial {
  trial: number;
  unavailableAfterUninstallMs: number;
  helmMs: number;
  availableMs: number;
  pods: Array<{ pod: string; startedToReadyMs: number; runningSeenToReadyMs: number; createdToReadyMs: number }>;
  load: string;
}

async function installTrial(i: number, install: InClusterOptions, wds1: Client, host: Client, helm: string): Promise<Trial> {
  const { layout } = install;
  const podsPath = `/api/v1/namespaces/${SERVER_NAMESPACE}/pods?labelSelector=${encodeURIComponent(SERVER_POD_SELECTOR)}`;
  progress.step(`trial ${i}: helm uninstall ${RELEASES.server.name} from ${RELEASES.server.space} (the objects the pods registered in wds1 stay)`);
  await timed(helm, ['uninstall', RELEASES.server.name, '--kubeconfig', layout.kubeconfigPath, '--kube-context', RELEASES.server.space, '--namespace', RELEASES.server.namespace]);
  await until('the server pods gone from host1', async () => ((await json(host, podsPath)).items as Obj[]).length === 0, 180_000, 250);
  const t0 = Date.now();
  await until(`APIService ${APISERVICE_NAME} not Available in wds1 after the uninstall`, async () => !(await apiServiceAvailable(wds1)), 180_000, 250);
  const unavailableAfterUninstallMs = Date.now() - t0;
  progress.step(`trial ${i}: pods gone; wds1 says not Available ${(unavailableAfterUninstallMs / 1000).toFixed(1)} s after they went`);
  noteLoad(`install trial ${i}`);
  const load = loads.at(-1)!.uptime;

  const rv = (await json(host, podsPath)).metadata.resourceVersion as string;
  const watch = watchPods(host, rv);
  try {
    const start = Date.now();
    await helmPart(install, RELEASES.server, serverValues(install));
    const helmMs = Date.now() - start;
    await until(`APIService ${APISERVICE_NAME} Available in wds1`, () => apiServiceAvailable(wds1), 180_000, 100);
    const availableMs = Date.now() - start;
    progress.step(`trial ${i}: helm ${(helmMs / 1000).toFixed(1)} s; Available ${(availableMs / 1000).toFixed(1)} s after helm started`);
    const replicas = 2;
    await until('both server pods seen Ready on the watch', async () => {
      if (watch.error) throw watch.error;
      return [...watch.pods.values()].filter((p) => p.readySeen !== undefined).length >= replicas;
    }, 180_000, 100);
    const pods = [...watch.pods.values()].filter((p) => p.readySeen !== undefined).map((p) => ({
      pod: p.pod,
      startedToReadyMs: p.readySeen! - p.startedAt!,
      runningSeenToReadyMs: p.readySeen! - p.runningSeen!,
      createdToReadyMs: p.readySeen! - p.createdSeen!,
    }));
    for (const p of pods) progress.step(`trial ${i}: ${p.pod} started → Ready ${(p.startedToReadyMs / 1000).toFixed(1)} s`);
    return { trial: i, unavailableAfterUninstallMs, helmMs, availableMs, pods, load };
  } finally {
    watch.close();
  }
}

// ---- 3. view latency: pods against the process ---------------------------------------------------

type PathName = 'POD DIRECT' | 'POD VIEW' | 'PROCESS DIRECT' | 'PROCESS VIEW';
interface LatencyRound { round: number; load: string; rows: Array<{ name: string; n: number; samples: Record<PathName, number[]> }> }

async function prepareWds(direct: Client, ns: string): Promise<void> {
  await mustCall(direct, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await bounded(CONFIGMAPS, 16, async (i) => {
    await mustCall(direct, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(4, '0')}`, labels: { bench: 'in-cluster' } },
      data: { index: String(i), color: ['red', 'green', 'blue'][i % 3]!, note: 'in-cluster benchmark' },
    });
  });
}

async function measureLatency(layout: SpacesLayout): Promise<{ rounds: LatencyRound[]; listBytes: number }> {
  const [s1, s2] = [await spaceClient(layout, 'wds1'), await spaceClient(layout, 'wds2')];
  const paths: Record<PathName, Client> = {
    'POD DIRECT': clientOf('POD DIRECT', s1),
    'POD VIEW': clientOf('POD VIEW', s1, viewRoot('wds1')),
    'PROCESS DIRECT': clientOf('PROCESS DIRECT', s2),
    'PROCESS VIEW': clientOf('PROCESS VIEW', s2, viewRoot('wds2')),
  };
  const all = Object.values(paths);
  try {
    const ns = `bench-${randomBytes(4).toString('hex')}`;
    progress.step(`namespace ${ns} with ${CONFIGMAPS} ConfigMaps in wds1 and in wds2 (made directly)`);
    await Promise.all([prepareWds(paths['POD DIRECT'], ns), prepareWds(paths['PROCESS DIRECT'], ns)]);
    const getPath = `/api/v1/namespaces/${ns}/configmaps/cm-0250`;
    const listPath = `/api/v1/namespaces/${ns}/configmaps`;
    let listBytes = 0;
    for (const c of all) {
      if ((await json(c, getPath)).data?.index !== '250') throw new Error(`${c.name} GET answered another object`);
      const l = await mustCall(c, 'GET', listPath);
      const n = ((JSON.parse(l.body.toString('utf8')) as Obj).items as unknown[]).length;
      if (n !== CONFIGMAPS) throw new Error(`${c.name} LIST answered ${n} items, not ${CONFIGMAPS}`);
      listBytes = l.body.length;
    }
    progress.step(`every path answers; LIST body ${Math.round(listBytes / 1024)} KiB; warming the servers (${2 * SERVER_WARMUP} GETs through wds1's view, ${SERVER_WARMUP} through wds2's)`);
    for (let i = 0; i < 2 * SERVER_WARMUP; i++) {
      await mustCall(paths['POD VIEW'], 'GET', getPath);
      if (i % 2 === 0) await mustCall(paths['PROCESS VIEW'], 'GET', getPath);
      if ((i + 1) % 1000 === 0) progress.step(`warm-up ${i + 1}/${2 * SERVER_WARMUP}`);
    }
    const rounds: LatencyRound[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      noteLoad(`latency round ${round}`);
      const r: LatencyRound = { round, load: loads.at(-1)!.uptime, rows: [] };
      for (const [name, p, n, warm] of [['GET one ConfigMap', getPath, N_GET, WARMUP.get], [`LIST ${CONFIGMAPS} ConfigMaps`, listPath, N_LIST, WARMUP.list]] as const) {
        const samples: Record<PathName, number[]> = { 'POD DIRECT': [], 'POD VIEW': [], 'PROCESS DIRECT': [], 'PROCESS VIEW': [] };
        for (let i = 0; i < warm + n; i++) {
          for (const c of orderFor(all, i)) {
            const res = await mustCall(c, 'GET', p);
            if (i >= warm) samples[c.name as PathName].push(res.ms);
          }
        }
        r.rows.push({ name, n, samples });
        progress.step(`round ${round}: ${name}, ${n} per path`);
      }
      rounds.push(r);
    }
    return { rounds, listBytes };
  } finally {
    await Promise.all(all.map((c) => c.pool.destroy().catch(() => undefined)));
  }
}

// ---- report -----------------------------------------------------------------------------------

const mb = (b: number) => (b / 1e6).toFixed(1);
const secs = (ms: number) => (ms / 1000).toFixed(1);

function latencyRatios(row: LatencyRound['rows'][number]) {
  const m = (p: PathName) => stats(row.samples[p]);
  const pod = m('POD VIEW').median / m('POD DIRECT').median;
  const proc = m('PROCESS VIEW').median / m('PROCESS DIRECT').median;
  return { pod, proc, ror: pod / proc };
}

function report(img: ImageResult, trials: Trial[], lat: { rounds: LatencyRound[]; listBytes: number }, command: string): { text: string; missed: string[] } {
  const L: string[] = [];
  const missed: string[] = [];
  L.push(`command: \`${command}\``);
  L.push(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, node ${process.version}; ${new Date().toISOString()}`);
  L.push('', 'Load (`uptime`) at each phase:', '');
  for (const l of loads) L.push(`- ${l.phase}: ${l.uptime}`);

  L.push('', `Image ${img.name} (${img.digest})`, '');
  L.push('| measurement | run 1 | run 2 | target |', '|---|---:|---:|---|');
  const row = (name: string, xs: number[], target: string) => L.push(`| ${name} | ${xs.map((x) => `${secs(x)} s`).join(' | ')} | ${target} |`);
  row('`make image` (after `make build`, warm caches)', img.makeImageMs, `≤ ${TARGETS.makeImageS} s`);
  row('`node build/image/build.mjs` (the image step alone)', img.imageStepMs, '');
  L.push('', '| size | MB | target |', '|---|---:|---|');
  L.push(`| compressed archive (${path.basename(img.archive)}) | ${mb(img.archiveBytes)} | ≤ ${TARGETS.archiveMB} MB |`);
  L.push(`| unpacked root filesystem | ${mb(img.unpackedBytes)} | ≤ ${TARGETS.unpackedMB} MB |`);
  if (img.archiveBytes / 1e6 > TARGETS.archiveMB) missed.push('image archive size');
  if (img.unpackedBytes / 1e6 > TARGETS.unpackedMB) missed.push('image unpacked size');
  if (img.makeImageMs.some((ms) => ms / 1000 > TARGETS.makeImageS)) missed.push('make image time');
  L.push('', 'What takes the most (unpacked; gzip: each file compressed alone, its share of the archive):', '');
  L.push('| part | files | MB | % | gzip MB |', '|---|---:|---:|---:|---:|');
  for (const p of img.parts) L.push(`| ${p.part} | ${p.files} | ${mb(p.bytes)} | ${(100 * p.bytes / img.unpackedBytes).toFixed(0)} | ${mb(p.gzipBytes)} |`);

  L.push('', 'Server part reinstalled (`helm uninstall`, then `helm upgrade --install`; the WDS-side objects left as they were):', '');
  L.push('| trial | helm ran | helm start → APIService Available in wds1 | pod: container startedAt (kubelet) → Ready seen (watch) | pod: running seen → Ready seen (watch) | pod: created seen → Ready seen | load at start |');
  L.push('|---|---:|---:|---|---|---|---|');
  for (const t of trials) {
    const per = (k: 'startedToReadyMs' | 'runningSeenToReadyMs' | 'createdToReadyMs') => t.pods.map((p) => `${secs(p[k])} s`).join(', ');
    L.push(`| ${t.trial} | ${secs(t.helmMs)} s | ${secs(t.availableMs)} s | ${per('startedToReadyMs')} | ${per('runningSeenToReadyMs')} | ${per('createdToReadyMs')} | ${t.load.replace(/^.*load average: /, '')} |`);
    if (t.availableMs / 1000 > TARGETS.availableS) missed.push(`install trial ${t.trial}: Available`);
    if (t.pods.some((p) => p.startedToReadyMs / 1000 > TARGETS.podReadyS)) missed.push(`install trial ${t.trial}: pod start → Ready`);
  }
  L.push('', `Targets: Available ≤ ${TARGETS.availableS} s; a pod's start → Ready ≤ ${TARGETS.podReadyS} s (the startedAt column: kubelet's wall clock truncated to the second, so it errs long by < 1 s).`);

  L.push('', `View latency, in one run: wds1's view served by the chart's 2 pods in host1 (aggregator → pod network), wds2's by a process \`ksview serve\` on loopback; LIST body ${Math.round(lat.listBytes / 1024)} KiB.`, '');
  L.push('| round | request | N | pod DIRECT median / p90 | pod VIEW median / p90 | process DIRECT median / p90 | process VIEW median / p90 | pod VIEW/DIRECT | process VIEW/DIRECT | ratio of ratios (target ≤ 1.1) |');
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of lat.rounds) {
    for (const x of r.rows) {
      const s = (p: PathName) => { const st = stats(x.samples[p]); return `${fmt(st.median)} / ${fmt(st.p90)} ms`; };
      const q = latencyRatios(x);
      L.push(`| ${r.round} | ${x.name} | ${x.n} | ${s('POD DIRECT')} | ${s('POD VIEW')} | ${s('PROCESS DIRECT')} | ${s('PROCESS VIEW')} | ${q.pod.toFixed(2)} | ${q.proc.toFixed(2)} | ${q.ror.toFixed(2)} ${q.ror <= TARGETS.ratioOfRatios ? 'PASS' : 'FAIL'} |`);
      if (q.ror > TARGETS.ratioOfRatios) missed.push(`latency round ${r.round}: ${x.name}`);
    }
  }
  for (const r of lat.rounds) L.push(`- round ${r.round} load at start: ${r.load}`);
  return { text: L.join('\n'), missed };
}

// ---- main -------------------------------------------------------------------------------------

const teardown = new BenchCleanup();
const cleanup = () => teardown.run();

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const command = ['node', 'dist/bench/in-cluster.js', ...process.argv.slice(2)].join(' ');
  if (process.getuid?.() !== 0) throw new Error('real nodes need root (kubelet, containerd, network namespaces)');
  const watchdog = setTimeout(() => {
    process.stderr.write(`in-cluster: still running after ${OVERALL_TIMEOUT_MS / 60_000} min; giving up\n`);
    void cleanup().finally(() => process.exit(2));
  }, OVERALL_TIMEOUT_MS);
  const cacheDir = defaultCacheDir();
  try {
    noteLoad('start');
    const img = await measureImage(2);

    const spacesOpts = { dir: args.dir, portBase: args.portBase, wecs: 2, wdss: 2, realNodes: true };
    teardown.set(async () => {
      if (args.keepSpaces) { progress.step(`spaces left running in ${args.dir} (--keep-spaces)`); return; }
      if (!existsSync(path.join(args.dir, 'state.json'))) return;
      progress.step(`ksview spaces down --dir ${args.dir}`);
      try { await spacesDown(args.dir); progress.step('spaces down'); } catch (err) { progress.step(`spaces down failed: ${(err as Error).message}`); }
    });
    noteLoad('spaces up');
    progress.step(`real-node spaces in ${args.dir}, port base ${args.portBase}, --wdss 2 (wds2's server: a process)`);
    const layout = await spacesUp({ ...spacesOpts, cacheDir, progress, restartNode: true });
    const install: InClusterOptions = { layout, cacheDir, progress, image: { name: img.name, archive: img.archive } };
    const firstStart = Date.now();
    await installInCluster(install);
    progress.step(`chart installed (image import, every part, agent ready) in ${secs(Date.now() - firstStart)} s`);

    const [s1, sh] = [await spaceClient(layout, 'wds1'), await spaceClient(layout, 'host1')];
    const wds1 = clientOf('wds1', s1);
    const host = clientOf('host1', sh);
    const helm = await ensureHelm(cacheDir, progress);
    const trials: Trial[] = [];
    try {
      for (let i = 1; i <= args.trials; i++) trials.push(await installTrial(i, install, wds1, host, helm));
    } finally {
      await Promise.all([wds1.pool.destroy(), host.pool.destroy()].map((p) => p.catch(() => undefined)));
    }

    await serveWds2AsTheChartDoes(layout, helm);
    const lat = await measureLatency(layout);
    noteLoad('end');
    const { text, missed } = report(img, trials, lat, command);
    process.stdout.write(`\n${text}\n\n${missed.length ? `targets missed: ${missed.join('; ')}` : 'all targets met'}\n`);
    if (args.json) {
      writeFileSync(args.json, `${JSON.stringify({
        command, date: new Date().toISOString(), loads, targets: TARGETS,
        image: { ...img, parts: img.parts },
        installTrials: trials,
        latency: lat.rounds.map((r) => ({
          round: r.round, load: r.load,
          rows: r.rows.map((x) => ({
            name: x.name, n: x.n, ...latencyRatios(x),
            stats: Object.fromEntries(Object.entries(x.samples).map(([k, v]) => [k, stats(v)])),
            samplesMs: Object.fromEntries(Object.entries(x.samples).map(([k, v]) => [k, v.map((s) => Number(s.toFixed(3)))])),
          })),
        })),
        missed,
      }, null, 2)}\n`);
      progress.step(`wrote ${args.json}`);
    }
    return missed.length ? 1 : 0;
  } finally {
    await cleanup();
    clearTimeout(watchdog);
  }
}

teardown.exitWith('in-cluster', main, "tearing down the bench's spaces", (err) => (err as Error).message ?? String(err));
