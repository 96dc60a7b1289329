// Benchmark (not a test): create + get of a denatured kind through the view against a native one.
//
//   npx tsc -p . && node dist/bench/denatured-latency.js
//
// Ensures the local demo spaces and `ksview serve` for wds1, then, through the view
// (https://127.0.0.1:16410/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy, i.e. kube-apiserver's
// aggregator -> ksview serve -> wds1) with the wds1 admin certificate, one request at a time:
//   DENATURED  POST a ClusterRole (Kubernetes' registry in ksview-native, translated, stored as clusterroles.denatured.kubestellar.io), then GET it
//   NATIVE     POST a ConfigMap (passed through to wds1), then GET it
// alternating which kind goes first each iteration, after a warm-up. Reported: medians of create,
// get and create+get per kind and their ratios. Target (the issue): median create+get
// DENATURED/NATIVE <= 1.3 (it was 2). Everything it creates carries a label and is deleted at the end.
// Exit status: 0 target met, 1 missed, 2 could not run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { median, progress, VIEW_ROOT, wds1Pool } from './view-bench.js';

const N = 200;
const WARMUP = 20;
const TARGET_RATIO = 1.3;

interface Sample { create: number; get: number }

async function main(): Promise<number> {
  const pool = await wds1Pool();
  const call = async (method: string, path: string, body?: unknown): Promise<number> => {
    const t0 = performance.now();
    const res = await pool.request({ method: method as 'GET', path: VIEW_ROOT + path, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return performance.now() - t0;
  };

  const run = randomBytes(3).toString('hex');
  const label = `ksview-bench=${run}`;
  const ns = 'default';
  const kinds = {
    DENATURED: {
      create: (i: number) => call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `bench:${run}:${i}`, labels: { 'ksview-bench': run } },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] }),
      get: (i: number) => call('GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/bench:${run}:${i}`),
      cleanup: () => call('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector=${encodeURIComponent(label)}`),
    },
    NATIVE: {
      create: (i: number) => call('POST', `/api/v1/namespaces/${ns}/configmaps`,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bench-${run}-${i}`, labels: { 'ksview-bench': run } }, data: { verbs: 'get,list' } }),
      get: (i: number) => call('GET', `/api/v1/namespaces/${ns}/configmaps/bench-${run}-${i}`),
      cleanup: () => call('DELETE', `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(label)}`),
    },
  };
  const samples: Record<keyof typeof kinds, Sample[]> = { DENATURED: [], NATIVE: [] };
  try {
    progress.step(`${WARMUP} warm-up and ${N} measured create+get per kind, through the view`);
    for (let i = 0; i < WARMUP + N; i++) {
      const order: (keyof typeof kinds)[] = i % 2 ? ['DENATURED', 'NATIVE'] : ['NATIVE', 'DENATURED'];
      for (const k of order) {
        const create = await kinds[k].create(i);
        const get = await kinds[k].get(i);
        if (i >= WARMUP) samples[k].push({ create, get });
      }
      if ((i + 1) % 50 === 0) progress.step(`${i + 1}/${WARMUP + N}`);
    }
  } finally {
    progress.step('deleting what the benchmark created');
    await Promise.allSettled([kinds.DENATURED.cleanup(), kinds.NATIVE.cleanup()]);
    await pool.close();
  }

  const med = (k: keyof typeof kinds, f: (s: Sample) => number) => median(samples[k].map(f));
  const rows = [
    ['create', (s: Sample) => s.create],
    ['get', (s: Sample) => s.get],
    ['create+get', (s: Sample) => s.create + s.get],
  ] as const;
  const lines = ['| operation | DENATURED ClusterRole median (ms) | NATIVE ConfigMap median (ms) | ratio |', '|---|---|---|---|'];
  let ratio = 0;
  for (const [name, f] of rows) {
    const d = med('DENATURED', f);
    const n = med('NATIVE', f);
    if (name === 'create+get') ratio = d / n;
    lines.push(`| ${name} | ${d.toFixed(2)} | ${n.toFixed(2)} | ${(d / n).toFixed(2)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n\ntarget: median create+get DENATURED/NATIVE <= ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'} (${ratio.toFixed(2)}; n=${N} each, ${new Date().toISOString()})\n`);
  return ratio <= TARGET_RATIO ? 0 : 1;
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`denatured-latency: ${err.message}\n`);
  process.exit(2);
});
