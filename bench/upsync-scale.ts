// Benchmark (not a test): upsync at fleet scale, simulated (docs/upsync.md; target: 10,000 upsynced objects over
// 100 clusters; time to all visible, churn of 100 changes/s with bounded lag, `ksview serve`'s RSS
// growth ≤ 150 MB for them).
//
//   npx tsc -p . && node dist/bench/upsync-scale.js [--clusters 100] [--objects 10000]
//        [--churn-rate 100] [--churn-seconds 30] [--bytes 1024]
//
// Ensures the demo spaces and `ksview serve` for wds1 as `ksview spaces up` runs them (controllers
// on), then:
//  1. makes --clusters ManagedClusters ups-<r>-<i> in its1 with their mailbox namespaces, accepted
//     and Available (no lease: the hub's lease rule leaves them so), and a BindingPolicy of wds1
//     upsyncing ConfigMaps of the namespace ups-<r> from them; waits for serve's UpsyncRequest in
//     every mailbox;
//  2. the simulated agent (this process, 32 writes in flight, as an agent per cluster would write
//     its copies) creates --objects UpsyncedObjects spread evenly over the clusters, each the copy
//     of a ConfigMap of --bytes of data, exactly as our agent writes them. BASELINE: the time those
//     writes take its1 (what any agent is bounded by); measured: the time until every one of them
//     is in the view (`upsyncedobjects` in namespace ups-<r>, listed then watched through wds1's
//     kube-apiserver and the aggregator, as kubectl reads it);
//  3. CHURN: --churn-rate changes per second for --churn-seconds, each a new version of one copy
//     (a new data value, a new source resourceVersion), timed from the start of its write until
//     the view's watch shows it;
//  4. `ksview serve`'s RSS sampled every second: before the copies (after the requests), the
//     maximum, and the growth.
// Everything made is deleted at the end (also on error). Progress on stderr, a table on stdout.
// Exit: 0 targets met (RSS growth ≤ 150 MB, churn lag p99 ≤ 1 s), 1 missed, 2 could not run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { jsonLines } from '../src/kube/json-lines.js';
import { upsyncedObjectName, upsyncRequestName } from '../src/kube/upsync-api.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout } from '../src/spaces/layout.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { readState } from '../src/spaces/state.js';
import { ensureViewServer, VIEW_SERVER_PROCESS } from '../src/spaces/view-server.js';
import { bounded, client, percentile, progress, rssMb, type Obj } from './agent-common.js';
import { deleteSimulatedClusters, makeSimulatedClusters, until } from './simulated-clusters.js';

const RSS_GROWTH_TARGET_MB = 150;
const LAG_P99_TARGET_MS = 1000;
const STAGE_TIMEOUT_MS = 1_800_000;
/** How often conditions are looked at: the time to all visible is taken to this. */
const POLL_MS = 20;

function num(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const n = Number(i >= 0 ? process.argv[i + 1] : dflt);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a whole number ≥ 1`);
  return n;
}

async function main(): Promise<number> {
  const C = num('clusters', 100);
  const N = num('objects', 10_000);
  const churnRate = num('churn-rate', 100);
  const churnSecs = num('churn-seconds', 30);
  const bytes = num('bytes', 1024);
  const dir = defaultSpacesDir();
  const layout = spacesLayout({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2 });
  progress.step(`ensuring the demo spaces in ${dir} and ksview serve`);
  await spacesUp({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2, cacheDir: defaultCacheDir(), progress });
  await ensureViewServer(layout, progress);
  const servePid = readState(layout.statePath)?.processes.find((p) => p.name === VIEW_SERVER_PROCESS)?.pid;
  const wds = await client(layout.kubeconfigPath, 'wds1');
  const its = await client(layout.kubeconfigPath, 'its1', 64);
  const r = randomBytes(3).toString('hex');
  const prefix = `ups-${r}-`;
  const ns = `ups-${r}`;
  const policy = `ups-${r}`;
  const clusters = Array.from({ length: C }, (_, i) => `${prefix}${i}`);
  const CONTROL = '/apis/control.kubestellar.io/v1alpha1';
  const VIEW = `/apis/view.kubestellar.io/v1alpha1/namespaces/${ns}/upsyncedobjects`;
  let rssMax = 0;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, rssMb(servePid)); }, 1000);
  const ac = new AbortController();

  const cleanup = async () => {
    progress.step('cleaning up (the policy, the clusters and their mailboxes)');
    ac.abort();
    await wds.call('DELETE', `${CONTROL}/bindingpolicies/${policy}`).catch(() => undefined);
    await deleteSimulatedClusters(its, clusters);
  };
  try {
    progress.step(`making ${C} ManagedClusters (accepted, Available) and their namespaces in its1`);
    const now = new Date().toISOString();
    await makeSimulatedClusters(its, clusters, () => ({ upsbench: r }));
    progress.step(`a BindingPolicy upsyncing ConfigMaps of ${ns} from the ${C} clusters; waiting for its UpsyncRequests`);
    await wds.call('POST', `${CONTROL}/bindingpolicies`, { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: policy },
      spec: { clusterSelectors: [{ matchLabels: { upsbench: r } }], upsync: [{ resources: ['configmaps'], namespaces: [ns] }] } });
    const requestName = upsyncRequestName('wds1', policy);
    let requests = 0;
    await until(`${C} UpsyncRequests`, async () => {
      const list = await its.call('GET', `${CONTROL}/upsyncrequests?labelSelector=${encodeURIComponent(`upsync.view.kubestellar.io/policy=${policy}`)}`);
      requests = ((list.items ?? []) as Obj[]).filter((x) => x.metadata.name === requestName).length;
      return requests === C;
    }, 120_000, () => `${requests}/${C}`, POLL_MS);
    await new Promise((res) => setTimeout(res, 2000));
    const rssBefore = rssMb(servePid);
    rssMax = rssBefore;

    // The view's watch: each row's latest data value.
    const seen = new Map<string, { v: string; at: number }>();
    const listed = await wds.call('GET', VIEW);
    void (async () => {
      const res = await wds.pool.request({ method: 'GET', signal: ac.signal, path: `${VIEW}?watch=1&allowWatchBookmarks=true&resourceVersion=${listed.metadata.resourceVersion}` });
      if (res.statusCode !== 200) throw new Error(`watch ${VIEW}: ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`);
      for await (const doc of jsonLines(res.body)) {
        const e = doc as Obj;
        if (e.type === 'ADDED' || e.type === 'MODIFIED') seen.set(e.object.metadata.name as string, { v: e.object.spec?.object?.data?.v as string, at: performance.now() });
      }
    })().catch((err: Error) => { if (!ac.signal.aborted) progress.step(`view watch ended: ${err.message}`); });

    const filler = 'x'.repeat(bytes);
    const copyOf = (i: number, v: string, rv: number) => {
      const cluster = clusters[i % C]!;
      const name = `cm-${Math.floor(i / C)}`;
      const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, uid: `${r}-${i}`, resourceVersion: String(rv), creationTimestamp: now }, data: { v, filler } };
      return {
        cluster, row: `${cluster}:configmaps:${name}`,
        body: {
          apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
          metadata: { name: upsyncedObjectName('wds1', { group: '', resource: 'configmaps', namespace: ns, name }), namespace: cluster, labels: { 'upsync.view.kubestellar.io/wds': 'wds1' } },
          source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: ns, name, uid: `${r}-${i}`, resourceVersion: String(rv) },
          lastSeen: new Date().toISOString(), policies: [policy], object,
        },
      };
    };
    progress.step(`the simulated agent writes ${N} UpsyncedObjects (${bytes} B of data each) into the ${C} mailboxes`);
    const t0 = performance.now();
    const stored = new Map<number, string>(); // i → resourceVersion of the copy in its1
    await bounded(N, 32, async (i) => {
      const c = copyOf(i, 'v0', 1);
      const out = await its.call('POST', `${CONTROL}/namespaces/${c.cluster}/upsyncedobjects`, c.body);
      stored.set(i, out.metadata.resourceVersion as string);
    });
    const written = performance.now();
    const rows = Array.from({ length: N }, (_, i) => copyOf(i, 'v0', 1).row);
    const visible = await until(`all ${N} in the view`, () => rows.every((row) => seen.has(row)), STAGE_TIMEOUT_MS, () => `${rows.filter((row) => seen.has(row)).length}/${N}`, POLL_MS);
    const listedAll = await wds.call('GET', VIEW);
    const inList = ((listedAll.items ?? []) as Obj[]).length;
    progress.step(`written in ${((written - t0) / 1000).toFixed(1)} s, all in the view ${((visible - t0) / 1000).toFixed(1)} s; a list shows ${inList}`);

    progress.step(`churn: ${churnRate} changes/s for ${churnSecs} s`);
    const lags: number[] = [];
    const sent: { row: string; v: string; at: number }[] = [];
    const churnStart = performance.now();
    const total = churnRate * churnSecs;
    let inFlight = 0;
    for (let k = 0; k < total; k++) {
      const due = churnStart + (k * 1000) / churnRate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
      const i = (k * 7919) % N;
      const v = `c${k}`;
      const c = copyOf(i, v, 2 + k);
      const at = performance.now();
      sent.push({ row: c.row, v, at });
      inFlight++;
      void its.call('PUT', `${CONTROL}/namespaces/${c.cluster}/upsyncedobjects/${c.body.metadata.name}`, { ...c.body, metadata: { ...c.body.metadata, resourceVersion: stored.get(i) } })
        .then((o) => { stored.set(i, o.metadata.resourceVersion as string); }, () => undefined).finally(() => { inFlight--; });
    }
    await until('churn writes answered', () => inFlight === 0, 120_000, undefined, POLL_MS);
    const settle = performance.now();
    await until('churn shown', () => sent.every((s) => { const x = seen.get(s.row); return x !== undefined && x.at >= s.at; }) || performance.now() - settle > 30_000, 60_000, undefined, POLL_MS);
    let unresolved = 0;
    // Rows changed are distinct (k × 7919 mod N, 7919 prime, fewer changes than rows): a row's latest event is its change's.
    for (const s of sent) {
      const x = seen.get(s.row);
      if (!x || x.at < s.at) { unresolved++; continue; }
      lags.push(Math.max(0, x.at - s.at));
    }
    const rssGrowth = rssMax - rssBefore;
    const p50 = percentile(lags, 50), p99 = percentile(lags, 99);
    const met = rssGrowth <= RSS_GROWTH_TARGET_MB && p99 <= LAG_P99_TARGET_MS && unresolved === 0;
    process.stdout.write([
      `| clusters | objects | written by the simulated agent (baseline) | all in the view | view ÷ baseline | churn (sent, rate) | lag p50 | lag p99 | lag max | not shown | serve RSS before → max (growth) |`,
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      `| ${C} | ${N} | ${((written - t0) / 1000).toFixed(1)} s (${(N / ((written - t0) / 1000)).toFixed(0)}/s) | ${((visible - t0) / 1000).toFixed(1)} s | ${((visible - t0) / (written - t0)).toFixed(2)} | ${sent.length}, ${(sent.length / ((settle - churnStart) / 1000)).toFixed(0)}/s | ${p50.toFixed(0)} ms | ${p99.toFixed(0)} ms | ${Math.max(...lags).toFixed(0)} ms | ${unresolved} | ${rssBefore.toFixed(0)} → ${rssMax.toFixed(0)} MB (+${rssGrowth.toFixed(0)}) |`,
      '',
      `targets: RSS growth ≤ ${RSS_GROWTH_TARGET_MB} MB, churn lag p99 ≤ ${LAG_P99_TARGET_MS} ms: ${met ? 'met' : 'NOT met'} (${new Date().toISOString()})`, ''].join('\n'));
    return met ? 0 : 1;
  } finally {
    clearInterval(sampler);
    await cleanup();
    await Promise.allSettled([wds.pool.close(), its.pool.close()]);
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`upsync-scale: ${err.message}\n`);
  process.exit(2);
});
