// Benchmark (not a test): placement and status at fleet scale, simulated (docs/benchmarks.md, "Fleet scale").
//
//   npx tsc -p . && node dist/bench/fleet-scale.js [--sizes 100,300,1000] [--objects 100]
//        [--churn-rate 100] [--churn-seconds 30] [--direct 10000] [--max-its-requests-inflight N] [--max-objects-per-work N]
//
// Ensures the demo spaces and `ksview serve` for wds1 as `ksview spaces up` runs them (placement
// and status controllers on), then:
//  1. makes max(sizes) ManagedClusters fleet-<r>-<i> in its1, with their mailbox namespaces,
//     accepted and Available (no lease, so the hub's lease rule leaves them so); cluster i carries
//     the label fleet-<r>-<S>=in for every size S > i;
//  2. makes M (default 100) Deployments in a namespace fleet-<r> of wds1 and three StatusCollectors:
//     COUNT, SUM(returned.status.availableReplicas), MAX(returned.status.observedGeneration);
//  3. starts the simulated agent (./fleet-agent.ts, a process of its own) for the mailboxes
//     fleet-<r>-*: it acknowledges each work (ManifestWork status Applied/Available with the
//     Deployment's feedback) and writes its WorkStatus, and deletes the WorkStatus with the work;
//  4. BASELINE (DIRECT): a client with 32 in flight server-side applies --direct ManifestWorks
//     (default 10,000, the same Deployments' works, each a new one) straight to its1 and deletes them: its1's raw
//     write rate on this machine, what any controller writing works is bounded by; then DIRECT
//     acknowledged: as many works again, each also acknowledged as an agent does (its status, a
//     WorkStatus created and its status written), the least placing and acknowledging costs the ITS;
//     its1's cores in both (bundled: --direct
//     placements in works of N Deployments, each applied and its status written with every
//     object's status, as placing and acknowledging them takes at least);
//  5. for each size S: a BindingPolicy selecting the M Deployments and the S clusters, naming the
//     three collectors; times, from its creation: all M×S works seen on a watch of its1; all
//     acknowledged by the simulated agent; all M CombinedStatuses (watched through the aggregator,
//     combinedstatuses.view.kubestellar.io) showing COUNT = S and SUM = S; the policy Ready (every
//     object Available in every cluster). Then CHURN: --churn-rate WorkStatus changes per second
//     for --churn-seconds (each sets one (object, cluster)'s observedGeneration to a new, larger
//     number; bundled works: the object's status in its work, sent to the simulated agent, which
//     writes it as ours does), each timed until its object's CombinedStatus MAX shows it. Then the
//     policy is deleted and the time until all its works are gone is taken. RSS of `ksview serve` is
//     sampled every second (the maximum is reported); when all is placed, the ManifestWorks and
//     WorkStatuses of the stage are counted and their stored size (JSON as listed) summed, and the
//     writes to them (watch events: ours and the agent's) counted.
// --max-its-requests-inflight N, --max-objects-per-work N: `ksview serve` restarted with that flag (and
// again as `spaces up` runs it at the end); with N > 1 the works are bundles (docs/placement.md),
// and "works" in the table counts (object, cluster) placements, the works themselves apart.
// Everything made is deleted at the end (also on error). Prints progress on stderr and a table on
// stdout. Exit: 0 done (the targets: RSS ≤ 1 GB, and 1,000 clusters placed in less than KubeFleet's
// reported ≈ 30 s), 1 a target missed, 2 could not run.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { jsonLines } from '../src/kube/json-lines.js';
import { manifestWork, manifestWorkName, stripServerFields } from '../src/controllers/model/wrapping.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout } from '../src/spaces/layout.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { readState } from '../src/spaces/state.js';
import { ensureViewServer, VIEW_SERVER_PROCESS } from '../src/spaces/view-server.js';
import { bounded, client, percentile, progress, rssMb, type Client, type Obj } from './agent-common.js';
import { deploymentStatusOf, fleetDeployment, workStatusObjectOf, workStatusOf } from './fleet-shapes.js';
import { bundledWork } from '../src/controllers/placement/bundle-slots.js';
import { statusValues } from '../src/kube/status-in-work.js';
import { deleteSimulatedClusters, makeSimulatedClusters, until } from './simulated-clusters.js';

const RSS_TARGET_MB = 1024;
const KUBEFLEET_S = 30;
const STAGE_TIMEOUT_MS = 3_600_000;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? dflt : dflt;
}
function num(name: string, dflt: number): number {
  const n = Number(arg(name, String(dflt)));
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} needs a whole number`);
  return n;
}

/**
 * A list-then-watch of a collection that lists again whenever the watch ends or says ERROR; with
 * `metadataOnly`, of the objects' metadata (PartialObjectMetadata): 2,000 bundles of 140 KB listed
 * whole take its1 longer than its 60 s request timeout.
 */
function follow(c: Client, base: string, onEvent: (type: string, o: Obj) => void, onList?: (items: Obj[]) => void, metadataOnly = false): { close(): void } {
  const ac = new AbortController();
  const sep = base.includes('?') ? '&' : '?';
  const accept = (as: string) => (metadataOnly ? `application/json;as=${as};g=meta.k8s.io;v=v1` : 'application/json');
  void (async () => {
    while (!ac.signal.aborted) {
      try {
        const listed = await c.pool.request({ method: 'GET', signal: ac.signal, headers: { accept: accept('PartialObjectMetadataList') }, path: base });
        if (listed.statusCode !== 200) throw new Error(`GET ${base}: ${listed.statusCode} ${(await listed.body.text()).slice(0, 200)}`);
        const list = await listed.body.json() as Obj;
        onList?.((list.items ?? []) as Obj[]);
        const res = await c.pool.request({ method: 'GET', signal: ac.signal, headers: { accept: accept('PartialObjectMetadata') },
          path: `${base}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}` });
        if (res.statusCode !== 200) throw new Error(`watch ${base}: ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`);
        for await (const doc of jsonLines(res.body)) {
          const e = doc as Obj;
          if (e.type === 'ERROR') break;
          if (e.type !== 'BOOKMARK') onEvent(e.type as string, e.object as Obj);
        }
      } catch (err) {
        if (!ac.signal.aborted) progress.step(`watch ${base.split('?')[0]}: ${(err as Error).message.slice(0, 200)}; listing again`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();
  return { close: () => ac.abort() };
}

/** How many objects a work carries, from its metadata: a bundle lists them (view.kubestellar.io/sources), a work of one object is one. */
function carried(o: Obj): number {
  const sources = o.metadata?.annotations?.['view.kubestellar.io/sources'] as string | undefined;
  return sources ? (JSON.parse(sources) as unknown[]).length : 1;
}

/** CPU seconds (user + system) a process has used so far; NaN when it is gone. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime: fields 14 and 15, in USER_HZ (100 on Linux)
  } catch {
    return NaN;
  }
}

/** The etcd database's size as its1's kube-apiserver reports it (bytes). */
async function etcdSize(its: Client): Promise<number> {
  const res = await its.pool.request({ method: 'GET', path: '/metrics' });
  const text = await res.body.text();
  return Number(/^apiserver_storage_size_bytes\{[^}]*\} (\S+)$/m.exec(text)?.[1] ?? NaN);
}

interface AgentTotals { acked: number; statuses: number; removed: number; queued: number; errors: number; lastError: string }

function startAgent(kubeconfig: string, prefix: string): { proc: ChildProcess; totals: () => AgentTotals } {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fleet-agent.js');
  const proc = spawn(process.execPath, [script, '--kubeconfig', kubeconfig, '--context', 'its1', '--prefix', prefix], { stdio: ['pipe', 'pipe', 'inherit'] });
  let latest: AgentTotals = { acked: 0, statuses: 0, removed: 0, queued: 0, errors: 0, lastError: '' };
  void (async () => { for await (const t of jsonLines(proc.stdout!)) latest = t as AgentTotals; })().catch(() => undefined);
  return { proc, totals: () => latest };
}

const valueOf = (cs: Obj, collector: string): number | undefined => {
  const cell = ((cs.results ?? []) as Obj[]).find((r) => r.name === collector)?.rows?.[0]?.columns?.[0] as Obj | undefined;
  const v = cell?.float ?? cell?.int;
  return v === undefined ? undefined : Number(v);
};

interface StageResult {
  clusters: number; works: number; storedWorks: number; storedMb: number;
  /** Growth of the etcd database's size (its1's apiserver_storage_size_bytes) from the policy's creation until all was placed. */
  etcdGrowthMb: number; workWrites: number; worksS: number; ackedS: number; combinedS: number; readyS: number; deleteS: number;
  /** Cores used while the works were written (CPU seconds / elapsed): its1's kube-apiserver, etcd, ksview serve, the simulated agent. */
  cores: { its: number; etcd: number; serve: number; agent: number };
  churnSent: number; churnRate: number; lagP50: number; lagP99: number; lagMax: number; unresolved: number; rssMaxMb: number; agentErrors: number;
}

async function main(): Promise<number> {
  const sizes = arg('sizes', '100,300,1000').split(',').map(Number);
  if (sizes.some((s) => !Number.isInteger(s) || s < 1)) throw new Error('--sizes needs whole numbers, e.g. 100,300,1000');
  const M = num('objects', 100);
  const churnRate = num('churn-rate', 100);
  const churnSecs = num('churn-seconds', 30);
  const directN = num('direct', 10_000);
  const maxC = Math.max(...sizes);
  const dir = defaultSpacesDir();
  const layout = spacesLayout({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2 });
  progress.step(`ensuring the demo spaces in ${dir} and ksview serve`);
  await spacesUp({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2, cacheDir: defaultCacheDir(), progress });
  // --max-its-requests-inflight: serve restarted with it (and again without it at the end), to measure its default.
  // Its former spelling --its-max-in-flight too, as serve still takes it.
  const itsMaxInFlight = arg('max-its-requests-inflight', arg('its-max-in-flight', ''));
  const perWork = arg('max-objects-per-work', '');
  const bundled = Number(perWork) > 1;
  const serveArgs = [...(itsMaxInFlight ? ['--max-its-requests-inflight', itsMaxInFlight] : []), ...(perWork ? ['--max-objects-per-work', perWork] : [])];
  if (serveArgs.length > 0) await ensureViewServer(layout, progress, { restart: true, extraArgs: serveArgs });
  else await ensureViewServer(layout, progress);
  const pidOf = (name: string) => readState(layout.statePath)?.processes.find((p) => p.name === name)?.pid;
  const servePid = pidOf(VIEW_SERVER_PROCESS);
  const itsPid = pidOf('its1/kube-apiserver');
  const etcdPid = pidOf('etcd');
  const wds = await client(layout.kubeconfigPath, 'wds1');
  const its = await client(layout.kubeconfigPath, 'its1');
  const r = randomBytes(3).toString('hex');
  const prefix = `fleet-${r}-`;
  const ns = `fleet-${r}`;
  const clusters = Array.from({ length: maxC }, (_, i) => `${prefix}${i}`);
  const collectors = { count: `${prefix}count`, sum: `${prefix}sum`, max: `${prefix}maxgen` };
  const policies: string[] = [];
  let agent: ReturnType<typeof startAgent> | undefined;
  const CONTROL = '/apis/control.kubestellar.io/v1alpha1';

  const cleanup = async () => {
    progress.step('cleaning up (policies, collectors, the WDS namespace, the clusters and their mailboxes)');
    for (const p of policies) await wds.call('DELETE', `${CONTROL}/bindingpolicies/${p}`).catch(() => undefined);
    for (const c of Object.values(collectors)) await wds.call('DELETE', `${CONTROL}/statuscollectors/${c}`).catch(() => undefined);
    await wds.call('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
    agent?.proc.kill();
    await deleteSimulatedClusters(its, clusters);
  };
  try {
    progress.step(`making ${maxC} ManagedClusters (accepted, Available) and their namespaces in its1`);
    await makeSimulatedClusters(its, clusters, (i) => {
      const labels: Record<string, string> = { fleet: r };
      for (const s of sizes) if (i < s) labels[`${prefix}${s}`] = 'in';
      return labels;
    });

    progress.step(`making ${M} Deployments in wds1 namespace ${ns} and 3 StatusCollectors`);
    await wds.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await bounded(M, 16, async (i) => { await wds.call('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, fleetDeployment(ns, i, r)); });
    const collector = (name: string, field: Obj) => wds.call('POST', `${CONTROL}/statuscollectors`, { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector',
      metadata: { name }, spec: { combinedFields: [field], limit: 20 } });
    await collector(collectors.count, { name: 'count', type: 'COUNT' });
    await collector(collectors.sum, { name: 'available', type: 'SUM', subject: 'returned.status.availableReplicas' });
    await collector(collectors.max, { name: 'generation', type: 'MAX', subject: 'returned.status.observedGeneration' });

    progress.step(`starting the simulated agent for the ${maxC} mailboxes ${prefix}*`);
    agent = startAgent(layout.kubeconfigPath, prefix);

    // BASELINE: its1's raw rate of ManifestWork applies (works of another WDS name, which no agent acknowledges).
    let directRate = NaN;
    let directS = NaN;
    let directCores = NaN;
    let directAckedS = NaN;
    let directAckedCores = NaN;
    if (directN > 0 && bundled) {
      // Bundled: what placing and acknowledging directN placements costs its1 in works of N objects —
      // each written (server-side apply) and its status written with every object's status in it.
      const per = Number(perWork);
      const n = Math.ceil(directN / per);
      progress.step(`BASELINE: ${n} bundled ManifestWorks of ${per} Deployments applied to its1 and their status written, 32 in flight`);
      const t0 = performance.now();
      await bounded(n, 32, async (k) => {
        const cluster = clusters[k % maxC]!;
        const works = Array.from({ length: per }, (_, j) => {
          const id = { group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name: `d-${j % M}` };
          return manifestWork(stripServerFields(fleetDeployment(ns, j % M, r), id), { wds: `direct${r}`, cluster, id, policies: ['direct'], createOnly: false });
        });
        const name = `direct${r}-b-${k}`;
        const work = bundledWork(`direct${r}`, cluster, name, works);
        const path = `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${name}`;
        await its.call('PATCH', `${path}?fieldManager=bench&force=true`, work, 'application/apply-patch+yaml');
        const manifests = (work.spec?.workload?.manifests ?? []) as Obj[];
        await its.call('PATCH', `${path}/status`, { status: workStatusOf(manifests, 1, new Date().toISOString(), (m) => statusValues(deploymentStatusOf(m), undefined)!.values) }, 'application/merge-patch+json');
      });
      directS = (performance.now() - t0) / 1000;
      directRate = (n * per) / directS;
      progress.step(`BASELINE: ${directS.toFixed(1)} s, ${directRate.toFixed(0)} placements/s; deleting them`);
      await bounded(Math.min(maxC, n), 16, async (i) => {
        await its.call('DELETE', `/apis/work.open-cluster-management.io/v1/namespaces/${clusters[i]}/manifestworks?labelSelector=${encodeURIComponent(`view.kubestellar.io/wds=direct${r}`)}`);
      });
    } else if (directN > 0) {
      progress.step(`BASELINE: ${directN} ManifestWork server-side applies to its1, 32 in flight`);
      const t0 = performance.now();
      const cpu0 = cpuSeconds(itsPid);
      // The k-th work of a baseline labelled `wds`: a new one each time (past M × clusters a pass of its
      // own in the name), as a re-apply of an unchanged work costs the ITS less than a write.
      const directWork = (k: number, wds: string) => {
        const i = k % M;
        const cluster = clusters[Math.floor(k / M) % maxC]!;
        const pass = Math.floor(k / (M * maxC));
        const id = { group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name: `d-${i}` };
        const deployment = stripServerFields(fleetDeployment(ns, i, r), id);
        const work = manifestWork(deployment, { wds, cluster, id, policies: ['direct'], createOnly: false });
        work.metadata.name = manifestWorkName(`${wds}-${pass}`, id);
        return { cluster, pass, deployment, work, path: `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${work.metadata.name}` };
      };
      await bounded(directN, 32, async (k) => {
        const { work, path } = directWork(k, `direct${r}`);
        await its.call('PATCH', `${path}?fieldManager=bench&force=true`, work, 'application/apply-patch+yaml');
      });
      directS = (performance.now() - t0) / 1000;
      directRate = directN / directS;
      directCores = (cpuSeconds(itsPid) - cpu0) / directS;
      progress.step(`BASELINE: ${directS.toFixed(1)} s, ${directRate.toFixed(0)} works/s, its1 kube-apiserver ${directCores.toFixed(2)} cores`);
      // The same works again (new names), each also acknowledged as an agent does it (the work's
      // status, then its Deployment's WorkStatus created and its status written): the least the
      // ITS must take to place and acknowledge, with no controller in between.
      progress.step(`BASELINE (acknowledged): ${directN} works applied, their status written, a WorkStatus each created and its status written, 32 in flight`);
      const t1 = performance.now();
      const cpu1 = cpuSeconds(itsPid);
      await bounded(directN, 32, async (k) => {
        const { cluster, pass, deployment, work, path } = directWork(k, `directack${r}`);
        await its.call('PATCH', `${path}?fieldManager=bench&force=true`, work, 'application/apply-patch+yaml');
        await its.call('PATCH', `${path}/status`, { status: workStatusOf([deployment], 1, new Date().toISOString()) }, 'application/merge-patch+json');
        const ws = workStatusObjectOf(deployment, work.metadata.name);
        ws.metadata.name = `${ws.metadata.name}-direct-${pass}`;
        ws.metadata.labels['view.kubestellar.io/wds'] = `directack${r}`;
        await its.call('POST', `/apis/control.kubestellar.io/v1alpha1/namespaces/${cluster}/workstatuses`, ws);
        await its.call('PATCH', `/apis/control.kubestellar.io/v1alpha1/namespaces/${cluster}/workstatuses/${ws.metadata.name}/status`, { status: deploymentStatusOf(deployment) }, 'application/merge-patch+json');
      });
      directAckedS = (performance.now() - t1) / 1000;
      directAckedCores = (cpuSeconds(itsPid) - cpu1) / directAckedS;
      progress.step(`BASELINE (acknowledged): ${directAckedS.toFixed(1)} s, ${(directN / directAckedS).toFixed(0)} works/s, its1 kube-apiserver ${directAckedCores.toFixed(2)} cores; deleting them`);
      await bounded(Math.min(maxC, Math.ceil(directN / M)), 16, async (i) => {
        for (const wds of [`direct${r}`, `directack${r}`]) {
          const sel = encodeURIComponent(`view.kubestellar.io/wds=${wds}`);
          await its.call('DELETE', `/apis/work.open-cluster-management.io/v1/namespaces/${clusters[i]}/manifestworks?labelSelector=${sel}`);
          await its.call('DELETE', `/apis/control.kubestellar.io/v1alpha1/namespaces/${clusters[i]}/workstatuses?labelSelector=${sel}`);
        }
      });
    }

    const results: StageResult[] = [];
    let generation = 1000;
    for (const S of sizes) {
      const policy = `${prefix}${S}`;
      const total = M * S;
      const base = agent.totals();
      // Work → how many objects it carries (1, or a bundle's); their sum is the placements made.
      const works = new Map<string, number>();
      let placed = 0;
      let workEvents = 0;
      let tFirst = 0;
      const setWork = (k: string, n: number | undefined) => {
        placed += (n ?? 0) - (works.get(k) ?? 0);
        if (placed > 0 && tFirst === 0) tFirst = performance.now();
        if (n === undefined) works.delete(k); else works.set(k, n);
      };
      const workWatch = follow(its, `/apis/work.open-cluster-management.io/v1/manifestworks?labelSelector=${encodeURIComponent(`bindingpolicy.view.kubestellar.io/${policy}`)}`,
        (type, o) => { workEvents++; setWork(`${o.metadata.namespace}/${o.metadata.name}`, type === 'DELETED' ? undefined : carried(o)); },
        (items) => { works.clear(); placed = 0; for (const o of items) setWork(`${o.metadata.namespace}/${o.metadata.name}`, carried(o)); }, true);
      // CombinedStatuses of this policy through the aggregator: object name → latest values.
      const combined = new Map<string, { count?: number; sum?: number; max?: number }>();
      const pending = new Map<string, { g: number; t: number }[]>();
      const lags: number[] = [];
      const seeCs = (type: string, o: Obj) => {
        const object = o.metadata?.labels?.['status.kubestellar.io/name'] as string;
        if (type === 'DELETED') { combined.delete(object); return; }
        const v = { count: valueOf(o, collectors.count), sum: valueOf(o, collectors.sum), max: valueOf(o, collectors.max) };
        combined.set(object, v);
        const waiting = pending.get(object);
        if (waiting && v.max !== undefined) {
          const at = performance.now();
          while (waiting.length > 0 && waiting[0]!.g <= v.max) lags.push(at - waiting.shift()!.t);
        }
      };
      const csWatch = follow(wds, `/apis/view.kubestellar.io/v1alpha1/namespaces/${ns}/combinedstatuses?labelSelector=${encodeURIComponent(`status.kubestellar.io/binding-policy=${policy}`)}`,
        seeCs, (items) => { combined.clear(); for (const o of items) seeCs('ADDED', o); });
      let rssMax = 0;
      const sampler = setInterval(() => { rssMax = Math.max(rssMax, rssMb(servePid) || 0); }, 1000);
      try {
        progress.step(`${S} clusters: BindingPolicy ${policy} → ${M} Deployments × ${S} clusters = ${total} ManifestWorks`);
        const t0 = performance.now();
        const cpu0 = { its: cpuSeconds(itsPid), etcd: cpuSeconds(etcdPid), serve: cpuSeconds(servePid), agent: cpuSeconds(agent.proc.pid) };
        policies.push(policy);
        const etcdBefore = await etcdSize(its);
        await wds.call('POST', `${CONTROL}/bindingpolicies`, { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: policy },
          spec: { clusterSelectors: [{ matchLabels: { [policy]: 'in' } }], downsync: [{ namespaces: [ns], objectSelectors: [{ matchLabels: { fleet: r } }],
            statusCollectors: Object.values(collectors) }] } });
        const agentSays = () => { const a = agent!.totals(); return `placed ${placed}/${total} in ${works.size} works, acked ${a.acked - base.acked}, WorkStatuses ${a.statuses - base.statuses}, agent queue ${a.queued}, agent errors ${a.errors - base.errors}${a.lastError ? ` (last: ${a.lastError})` : ''}`; };
        const tWorks = await until(`${total} placements`, () => placed >= total, STAGE_TIMEOUT_MS, agentSays);
        const span = (tWorks - t0) / 1000;
        const cores = { its: (cpuSeconds(itsPid) - cpu0.its) / span, etcd: (cpuSeconds(etcdPid) - cpu0.etcd) / span,
          serve: (cpuSeconds(servePid) - cpu0.serve) / span, agent: (cpuSeconds(agent.proc.pid) - cpu0.agent) / span };
        progress.step(`  all ${total} placements written (${works.size} works) in ${span.toFixed(1)} s, the first at ${((tFirst - t0) / 1000).toFixed(2)} s (cores used: its1 kube-apiserver ${cores.its.toFixed(2)}, etcd ${cores.etcd.toFixed(2)}, ksview serve ${cores.serve.toFixed(2)}, simulated agent ${cores.agent.toFixed(2)})`);
        const tAcked = await until(`${total} works acknowledged`, () => agent!.totals().statuses - base.statuses >= total, STAGE_TIMEOUT_MS, agentSays);
        progress.step(`  all acknowledged and WorkStatuses written at ${((tAcked - t0) / 1000).toFixed(1)} s`);
        const complete = () => combined.size >= M && [...combined.values()].every((v) => v.count === S && v.sum === S);
        const csSays = () => { const vs = [...combined.values()]; return `${vs.length} CombinedStatuses, ${vs.filter((v) => v.count === S && v.sum === S).length} complete, e.g. ${JSON.stringify(vs[0] ?? {})}`; };
        const tCombined = await until(`${M} CombinedStatuses over ${S} clusters`, complete, STAGE_TIMEOUT_MS, csSays);
        progress.step(`  all ${M} CombinedStatuses show COUNT = SUM = ${S} at ${((tCombined - t0) / 1000).toFixed(1)} s`);
        const ready = async () => ((await wds.call('GET', `${CONTROL}/bindingpolicies/${policy}`)).status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
        const tReady = await until(`policy ${policy} Ready`, ready, STAGE_TIMEOUT_MS);
        progress.step(`  policy Ready at ${((tReady - t0) / 1000).toFixed(1)} s`);
        // What the ITS stores for the stage, and how many writes it took to get there.
        const writesToReady = workEvents;
        let storedWorks = 0;
        let storedBytes = 0;
        await bounded(S, 16, async (i) => {
          for (const path of [`/apis/work.open-cluster-management.io/v1/namespaces/${clusters[i]}/manifestworks?labelSelector=${encodeURIComponent(`bindingpolicy.view.kubestellar.io/${policy}`)}`,
            `/apis/control.kubestellar.io/v1alpha1/namespaces/${clusters[i]}/workstatuses`]) {
            const list = await its.call('GET', path);
            for (const o of (list.items ?? []) as Obj[]) {
              if (path.includes('manifestworks')) storedWorks++;
              storedBytes += Buffer.byteLength(JSON.stringify(o));
            }
          }
        });
        const etcdGrowthMb = (await etcdSize(its) - etcdBefore) / 1e6;
        progress.step(`  stored: ${storedWorks} ManifestWorks, ${(storedBytes / 1e6).toFixed(1)} MB of works and WorkStatuses; etcd grew ${etcdGrowthMb.toFixed(0)} MB; ${writesToReady} work writes seen until Ready`);

        // CHURN: one WorkStatus change every 1000/rate ms, each timed until its object's MAX shows it.
        progress.step(`  churn: ${churnRate} WorkStatus changes/s for ${churnSecs} s`);
        const n = churnRate * churnSecs;
        const c0 = performance.now();
        let sent = 0;
        await bounded(n, 32, async (k) => {
          const due = c0 + (k * 1000) / churnRate;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((res) => setTimeout(res, wait));
          const i = k % M;
          const cluster = clusters[Math.floor(Math.random() * S)]!;
          const g = ++generation;
          const t = performance.now();
          const list = pending.get(`d-${i}`) ?? [];
          pending.set(`d-${i}`, list);
          list.push({ g, t });
          list.sort((a, b) => a.g - b.g);
          // Bundled: the object's status is in its work, which the agent writes (coalesced per work).
          if (bundled) agent!.proc.stdin!.write(`${JSON.stringify({ cluster, name: `d-${i}`, observedGeneration: g })}\n`);
          else await its.call('PATCH', `/apis/control.kubestellar.io/v1alpha1/namespaces/${cluster}/workstatuses/deployment-${ns}-d-${i}/status`,
            { status: { observedGeneration: g } }, 'application/merge-patch+json');
          sent++;
        });
        const churnElapsed = (performance.now() - c0) / 1000;
        await until('every churn change in its CombinedStatus', () => [...pending.values()].every((l) => l.length === 0), 120_000,
          () => `${[...pending.values()].reduce((a, l) => a + l.length, 0)} not shown yet`).catch((err: Error) => progress.step(`  ${err.message}`));
        const unresolved = [...pending.values()].reduce((a, l) => a + l.length, 0);
        progress.step(`  churn: ${sent} sent in ${churnElapsed.toFixed(1)} s, lag p50 ${percentile(lags, 50).toFixed(0)} ms, p99 ${percentile(lags, 99).toFixed(0)} ms; ksview serve RSS max so far ${rssMax.toFixed(0)} MB`);

        progress.step(`  deleting policy ${policy}`);
        const tDel0 = performance.now();
        await wds.call('DELETE', `${CONTROL}/bindingpolicies/${policy}`);
        const tDel = await until('the works gone', () => works.size === 0, STAGE_TIMEOUT_MS, agentSays);
        // Bundles carry their statuses: no WorkStatus to remove (waiting for them held the table back an hour).
        if (!bundled) await until('the WorkStatuses removed', () => agent!.totals().removed - base.removed >= total, STAGE_TIMEOUT_MS, agentSays);
        progress.step(`  all works gone in ${((tDel - tDel0) / 1000).toFixed(1)} s`);
        rssMax = Math.max(rssMax, rssMb(servePid) || 0);
        results.push({ clusters: S, works: total, storedWorks, storedMb: storedBytes / 1e6, etcdGrowthMb, workWrites: writesToReady, worksS: (tWorks - t0) / 1000, ackedS: (tAcked - t0) / 1000, combinedS: (tCombined - t0) / 1000,
          readyS: (tReady - t0) / 1000, deleteS: (tDel - tDel0) / 1000, cores, churnSent: sent, churnRate: sent / churnElapsed,
          lagP50: percentile(lags, 50), lagP99: percentile(lags, 99), lagMax: Math.max(...lags), unresolved, rssMaxMb: rssMax, agentErrors: agent.totals().errors - base.errors });
      } finally {
        clearInterval(sampler);
        workWatch.close();
        csWatch.close();
      }
    }

    const s = (x: number) => x.toFixed(1);
    const last = results[results.length - 1]!;
    const rssOk = results.every((x) => x.rssMaxMb > 0 && x.rssMaxMb <= RSS_TARGET_MB);
    process.stdout.write([
      `its1 baseline (DIRECT): ${directN} ManifestWork applies in ${s(directS)} s = ${directRate.toFixed(0)} works/s (32 in flight, its1 ${directCores.toFixed(2)} cores); serve --max-its-requests-inflight ${itsMaxInFlight || 'default'} --max-objects-per-work ${perWork || '1'}`,
      ...(Number.isFinite(directAckedS) ? [`its1 baseline (DIRECT, acknowledged: work, its status, a WorkStatus and its status): ${directN} in ${s(directAckedS)} s = ${(directN / directAckedS).toFixed(0)} works/s (its1 ${directAckedCores.toFixed(2)} cores)`] : []),
      '',
      '| clusters | placements | ManifestWorks stored | works + WorkStatuses stored (MB) | etcd grew (MB) | work writes until Ready | all placed (s) | placements/s | acknowledged + WorkStatuses (s) | CombinedStatuses complete (s) | policy Ready (s) | churn sent/s | churn lag p50 / p99 / max (ms) | not shown | policy deleted → works gone (s) | serve RSS max (MB) | cores while writing: its1 apiserver / etcd / serve / agent | agent errors |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|',
      ...results.map((x) => `| ${x.clusters} | ${x.works} | ${x.storedWorks} | ${s(x.storedMb)} | ${x.etcdGrowthMb.toFixed(0)} | ${x.workWrites} | ${s(x.worksS)} | ${(x.works / x.worksS).toFixed(0)} | ${s(x.ackedS)} | ${s(x.combinedS)} | ${s(x.readyS)} | ${x.churnRate.toFixed(0)} | ${x.lagP50.toFixed(0)} / ${x.lagP99.toFixed(0)} / ${x.lagMax.toFixed(0)} | ${x.unresolved} | ${s(x.deleteS)} | ${x.rssMaxMb.toFixed(0)} | ${[x.cores.its, x.cores.etcd, x.cores.serve, x.cores.agent].map((c) => c.toFixed(2)).join(' / ')} | ${x.agentErrors} |`),
      '',
      `targets: serve RSS ≤ ${RSS_TARGET_MB} MB: ${rssOk ? 'met' : 'NOT met'}; ${last.clusters} clusters placed in ${s(last.worksS)} s vs KubeFleet's reported ≈ ${KUBEFLEET_S} s (${new Date().toISOString()})`,
      '',
    ].join('\n'));
    return rssOk ? 0 : 1;
  } finally {
    await cleanup();
    await wds.pool.close();
    await its.pool.close();
    if (serveArgs.length > 0) await ensureViewServer(layout, progress, { restart: true });
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`fleet-scale: ${err.message}\n`);
  process.exit(2);
});
