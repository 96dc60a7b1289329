// Benchmark (not a test): an object changed in a WEC → visible in the view (docs/upsync.md; target: p50 ≤ 300 ms,
// p99 ≤ 1 s over 200 trials).
//
//   npx tsc -p . && node dist/bench/upsync-latency.js [--trials N]
//
// Ensures the demo spaces and `ksview serve` for wds1 (as `ksview spaces up` runs them: controllers
// on, wec1's pull agent running). Makes a namespace in wec1 with a ConfigMap made there (by the
// bench, as a local operator would) and a BindingPolicy upsyncing ConfigMaps of that namespace
// from wec1. Each trial PATCHes the ConfigMap's data in wec1 with a new value and waits for that
// value on a watch of the per-cluster view (wds1's kube-apiserver, the aggregated path
// …/spaces/wds1/proxy/clusters/wec1/api/v1/namespaces/<ns>/configmaps?watch=1, as
// `kubectl --context wds1-view-wec1 get cm -w` reads it), noting when the UpsyncedObject in its1
// showed it (a watch on its1). Baseline: the same PATCH's own event on a watch of wec1 (what a
// watcher inside the WEC sees at best). Everything it created is deleted at the end.
// Exit: 0 targets met, 1 missed, 2 could not run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { percentile } from './agent-common.js';
import { call, waitFor, watch, type Obj } from './space-calls.js';
import { progress, spacePools, VIEW_ROOT } from './view-bench.js';

const WARMUP = 5;
const TARGET_P50 = 300;
const TARGET_P99 = 1000;
const TIMEOUT_MS = 30_000;


async function main(): Promise<number> {
  const trials = Number(process.argv[process.argv.indexOf('--trials') + 1] || 200) || 200;
  const pools = await spacePools(['wds1', 'its1', 'wec1']);
  const wds = pools.wds1!, its = pools.its1!, wec = pools.wec1!;
  const run = randomBytes(3).toString('hex');
  const ns = `bench-upsync-${run}`;
  const policy = `bench-upsync-${run}`;
  const cmPath = `/api/v1/namespaces/${ns}/configmaps`;
  const viewCm = `${VIEW_ROOT}/clusters/wec1${cmPath}`;
  const watches: { stop: () => void }[] = [];
  try {
    progress.step(`setting up namespace ${ns} in wec1 with a ConfigMap, and a BindingPolicy upsyncing it`);
    await call(wec, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await call(wec, 'POST', cmPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data: { v: 'start' } });
    await call(wds, 'POST', '/apis/control.kubestellar.io/v1alpha1/bindingpolicies', { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
      metadata: { name: policy }, spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], upsync: [{ resources: ['configmaps'], namespaces: [ns], objectNames: ['probe'] }] } });
    // 404 until the agent's copy is in the view.
    await waitFor(async () => (await call(wds, 'GET', `${viewCm}/probe`).catch(() => ({} as Obj))).data?.v === 'start', 'the ConfigMap in the view of wec1');

    const seen = { view: new Map<string, number>(), its: new Map<string, number>(), wec: new Map<string, number>() };
    const on = (m: Map<string, number>, pick: (o: Obj) => Obj | undefined) => (o: Obj, at: number) => { const v = pick(o)?.data?.v; if (typeof v === 'string' && !m.has(v)) m.set(v, at); };
    const sel = encodeURIComponent('metadata.name=probe');
    for (const [pool, path, m, pick] of [
      [wds, `${viewCm}?watch=1&fieldSelector=${sel}`, seen.view, (o: Obj) => o],
      [wec, `${cmPath}?watch=1&fieldSelector=${sel}`, seen.wec, (o: Obj) => o],
      [its, `/apis/control.kubestellar.io/v1alpha1/namespaces/wec1/upsyncedobjects?watch=1`, seen.its, (o: Obj) => (o.source?.namespace === ns ? o.object : undefined)],
    ] as const) {
      const w = watch(pool, path, on(m, pick));
      watches.push(w);
      await w.ready;
    }
    const samples = { view: [] as number[], its: [] as number[], wec: [] as number[] };
    progress.step(`${WARMUP} warm-up and ${trials} measured changes of the ConfigMap in wec1`);
    for (let i = 0; i < WARMUP + trials; i++) {
      const v = `v${i}-${run}`;
      const t0 = performance.now();
      await call(wec, 'PATCH', `${cmPath}/probe`, { data: { v } }, 'application/merge-patch+json');
      const end = Date.now() + TIMEOUT_MS;
      while (!seen.view.has(v)) {
        if (Date.now() > end) throw new Error(`trial ${i}: ${v} not in the view after ${TIMEOUT_MS / 1000} s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      if (i >= WARMUP) {
        samples.view.push(seen.view.get(v)! - t0);
        if (seen.its.has(v)) samples.its.push(seen.its.get(v)! - t0);
        if (seen.wec.has(v)) samples.wec.push(seen.wec.get(v)! - t0);
      }
      if ((i + 1) % 50 === 0) progress.step(`${i + 1}/${WARMUP + trials}`);
    }
    const row = (what: string, xs: number[]) => `| ${what} | ${xs.length} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 90).toFixed(1)} | ${percentile(xs, 99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;
    const p50 = percentile(samples.view, 50);
    const p99 = percentile(samples.view, 99);
    const met = p50 <= TARGET_P50 && p99 <= TARGET_P99;
    process.stdout.write(['| from the PATCH of the ConfigMap in wec1 to… | N | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) |', '|---|---:|---:|---:|---:|---:|',
      row('its event on a watch of wec1 (baseline: a watcher in the WEC)', samples.wec),
      row('the UpsyncedObject in its1 showing it', samples.its),
      row('**the per-cluster view showing it** (watch through wds1)', samples.view), '',
      `view p50 / baseline p50: ${(p50 / percentile(samples.wec, 50)).toFixed(1)}×`,
      `target: p50 <= ${TARGET_P50} ms and p99 <= ${TARGET_P99} ms: ${met ? 'met' : 'NOT met'} (p50 ${p50.toFixed(1)}, p99 ${p99.toFixed(1)}; ${new Date().toISOString()})`, ''].join('\n'));
    return met ? 0 : 1;
  } finally {
    for (const w of watches) w.stop();
    progress.step('deleting what the benchmark created');
    await Promise.allSettled([call(wds, 'DELETE', `/apis/control.kubestellar.io/v1alpha1/bindingpolicies/${policy}`), call(wec, 'DELETE', `/api/v1/namespaces/${ns}`)]);
    await Promise.allSettled(Object.values(pools).map((p) => p.close()));
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`upsync-latency: ${err.message}\n`);
  process.exit(2);
});
