// Benchmark (not a test): a status change in a WEC → visible in the WDS object (docs/status.md; target: p50 ≤
// 500 ms, p99 ≤ 1.5 s over 200 trials).
//
//   npx tsc -p . && node dist/bench/status-latency.js [--trials N]
//
// Ensures the demo spaces and `ksview serve` for wds1 (as `ksview spaces up` runs them, placement
// and status controllers on, the pull agent of wec1 running). Sets up a LoadBalancer Service in a
// namespace of its own in wds1 and a BindingPolicy sending both to wec1 with
// wantSingletonReportedState. wec1 has no load-balancer controller, so the bench alone writes the
// Service's status there: each trial PATCHes wec1's Service /status with a new ingress IP and
// waits for that IP in the WDS Service (a watch on wds1), noting when the WorkStatus in its1 showed
// it (a watch on its1). The path measured is the whole of it: wec1's watch event → the agent →
// WorkStatus in its1 → the status controller's informer → the WDS status PATCH → wds1's watch.
// Baseline for the hops: the same PATCH's own event on a watch of wec1 (what any watcher of the
// WEC sees at best). Everything it created is deleted at the end. Exit: 0 targets met, 1 missed,
// 2 could not run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { percentile } from './agent-common.js';
import { call, waitFor, watch, type Obj } from './space-calls.js';
import { progress, spacePools } from './view-bench.js';

const WARMUP = 5;
const TARGET_P50 = 500;
const TARGET_P99 = 1500;
const TIMEOUT_MS = 30_000;

const ipOf = (o: Obj | undefined): string | undefined => o?.status?.loadBalancer?.ingress?.[0]?.ip;

async function main(): Promise<number> {
  const trials = Number(process.argv[process.argv.indexOf('--trials') + 1] || 200) || 200;
  const pools = await spacePools(['wds1', 'its1', 'wec1']);
  const wds = pools.wds1!, its = pools.its1!, wec = pools.wec1!;
  const run = randomBytes(3).toString('hex');
  const ns = `bench-status-${run}`;
  const svcPath = (base: string) => `${base}/api/v1/namespaces/${ns}/services/lb`;
  const policy = `bench-status-${run}`;
  const watches: { stop: () => void }[] = [];
  try {
    progress.step(`setting up namespace ${ns}, a LoadBalancer Service and a singleton BindingPolicy to wec1`);
    await call(wds, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { bench: run } } });
    await call(wds, 'POST', `/api/v1/namespaces/${ns}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb', labels: { bench: run } },
      spec: { type: 'LoadBalancer', selector: { app: 'none' }, ports: [{ port: 80 }] } });
    await call(wds, 'POST', '/apis/control.kubestellar.io/v1alpha1/bindingpolicies', { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
      metadata: { name: policy }, spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [{ objectSelectors: [{ matchLabels: { bench: run } }], wantSingletonReportedState: true }] } });
    await waitFor(async () => (await wec.request({ method: 'GET', path: svcPath('') }).then(async (r) => { await r.body.text(); return r.statusCode === 200; })), 'the Service in wec1');
    await waitFor(async () => (await call(wds, 'GET', svcPath(''))).metadata?.labels?.['kubestellar.io/executing-count'] === '1', 'the executing count on the WDS Service');

    const seen = { wds: new Map<string, number>(), its: new Map<string, number>(), wec: new Map<string, number>() };
    const on = (m: Map<string, number>) => (o: Obj, at: number) => { const ip = ipOf(o); if (ip && !m.has(ip)) m.set(ip, at); };
    const sel = encodeURIComponent('metadata.name=lb');
    for (const [pool, path, m] of [
      [wds, `/api/v1/namespaces/${ns}/services?watch=1&fieldSelector=${sel}`, seen.wds],
      [wec, `/api/v1/namespaces/${ns}/services?watch=1&fieldSelector=${sel}`, seen.wec],
      [its, `/apis/control.kubestellar.io/v1alpha1/namespaces/wec1/workstatuses?watch=1`, seen.its],
    ] as const) {
      const w = watch(pool, path, on(m));
      watches.push(w);
      await w.ready;
    }
    const samples = { wds: [] as number[], its: [] as number[], wec: [] as number[] };
    progress.step(`${WARMUP} warm-up and ${trials} measured status changes in wec1`);
    for (let i = 0; i < WARMUP + trials; i++) {
      const ip = `10.${200 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
      const t0 = performance.now();
      await call(wec, 'PATCH', `${svcPath('')}/status`, { status: { loadBalancer: { ingress: [{ ip }] } } }, 'application/merge-patch+json');
      const end = Date.now() + TIMEOUT_MS;
      while (!seen.wds.has(ip)) {
        if (Date.now() > end) throw new Error(`trial ${i}: ${ip} not in the WDS Service after ${TIMEOUT_MS / 1000} s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      if (i >= WARMUP) {
        samples.wds.push(seen.wds.get(ip)! - t0);
        if (seen.its.has(ip)) samples.its.push(seen.its.get(ip)! - t0);
        if (seen.wec.has(ip)) samples.wec.push(seen.wec.get(ip)! - t0);
      }
      if ((i + 1) % 50 === 0) progress.step(`${i + 1}/${WARMUP + trials}`);
    }
    const row = (what: string, xs: number[]) => `| ${what} | ${xs.length} | ${percentile(xs, 50).toFixed(1)} | ${percentile(xs, 90).toFixed(1)} | ${percentile(xs, 99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;
    const p50 = percentile(samples.wds, 50);
    const p99 = percentile(samples.wds, 99);
    const met = p50 <= TARGET_P50 && p99 <= TARGET_P99;
    process.stdout.write(['| from the PATCH of wec1\'s Service status to… | N | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) |', '|---|---:|---:|---:|---:|---:|',
      row('its event on a watch of wec1 (baseline: any WEC watcher)', samples.wec),
      row('the WorkStatus in its1 showing it', samples.its),
      row('**the WDS Service showing it** (wds1 watch)', samples.wds), '',
      `target: p50 <= ${TARGET_P50} ms and p99 <= ${TARGET_P99} ms: ${met ? 'met' : 'NOT met'} (p50 ${p50.toFixed(1)}, p99 ${p99.toFixed(1)}; ${new Date().toISOString()})`, ''].join('\n'));
    return met ? 0 : 1;
  } finally {
    for (const w of watches) w.stop();
    progress.step('deleting what the benchmark created');
    await Promise.allSettled([call(wds, 'DELETE', `/apis/control.kubestellar.io/v1alpha1/bindingpolicies/${policy}`), call(wds, 'DELETE', `/api/v1/namespaces/${ns}`)]);
    await Promise.allSettled(Object.values(pools).map((p) => p.close()));
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`status-latency: ${err.message}\n`);
  process.exit(2);
});
