// Benchmark (not a test): server-side apply of a large denatured object through the view against
// the same apply on the native kind (a ClusterRole with 2,000 rules).
//
//   npx tsc -p . && node dist/bench/denatured-apply.js
//
// Ensures the local demo spaces and `ksview serve` for wds1 (as `ksview spaces up` runs it,
// controllers on), then, with the wds1 admin certificate, one request at a time:
//   VIEW    PATCH application/apply-patch+yaml of ClusterRole bench:<run> (2,000 rules) through the
//           view (aggregator -> ksview serve -> ksview-native -> wds1's clusterroles.denatured.kubestellar.io)
//   NATIVE  the same apply of ClusterRole bench-<run> on wds1's own rbac.authorization.k8s.io API
// alternating which goes first. Each iteration changes one rule, so every apply writes. Reported:
// median time per apply and the ratio. Target (the issue): VIEW/NATIVE <= 1.5. Both objects are
// deleted at the end. Exit status: 0 target met, 1 missed, 2 could not run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { median, progress, VIEW_ROOT, wds1Pool } from './view-bench.js';

const N = 15;
const WARMUP = 3;
const RULES = 2000;
const TARGET_RATIO = 1.5;

async function main(): Promise<number> {
  const pool = await wds1Pool();
  const call = async (method: string, path: string, body?: string, contentType = 'application/json'): Promise<number> => {
    const t0 = performance.now();
    const res = await pool.request({ method: method as 'GET', path, headers: { accept: 'application/json', 'content-type': contentType }, body });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return performance.now() - t0;
  };

  const run = randomBytes(3).toString('hex');
  const clusterRole = (name: string, i: number) => JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name },
    rules: Array.from({ length: RULES }, (_, r) => ({ apiGroups: [`g${r}.example.com`], resources: [`things${r}`, `others${r}`], verbs: r === 0 ? ['get', `v${i}`] : ['get', 'list', 'watch'] })),
  });
  const path = { VIEW: `${VIEW_ROOT}/apis/rbac.authorization.k8s.io/v1/clusterroles/bench:${run}`, NATIVE: `/apis/rbac.authorization.k8s.io/v1/clusterroles/bench-${run}` };
  const name = { VIEW: `bench:${run}`, NATIVE: `bench-${run}` };
  const samples: Record<'VIEW' | 'NATIVE', number[]> = { VIEW: [], NATIVE: [] };
  try {
    progress.step(`${WARMUP} warm-up and ${N} measured server-side applies of a ${RULES}-rule ClusterRole per side`);
    for (let i = 0; i < WARMUP + N; i++) {
      const order: ('VIEW' | 'NATIVE')[] = i % 2 ? ['VIEW', 'NATIVE'] : ['NATIVE', 'VIEW'];
      for (const k of order) {
        const ms = await call('PATCH', `${path[k]}?fieldManager=bench&force=true`, clusterRole(name[k], i), 'application/apply-patch+yaml');
        if (i >= WARMUP) samples[k].push(ms);
      }
      progress.step(`${i + 1}/${WARMUP + N}`);
    }
  } finally {
    progress.step('deleting what the benchmark created');
    await Promise.allSettled([call('DELETE', path.VIEW), call('DELETE', path.NATIVE)]);
    await pool.close();
  }
  const v = median(samples.VIEW);
  const n = median(samples.NATIVE);
  const ratio = v / n;
  process.stdout.write(`| side | median server-side apply, ${RULES}-rule ClusterRole (ms) |\n|---|---|\n| VIEW (denatured) | ${v.toFixed(1)} |\n| NATIVE (wds1) | ${n.toFixed(1)} |\n\n` +
    `target: VIEW/NATIVE <= ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'} (${ratio.toFixed(2)}; n=${N} each, ${new Date().toISOString()})\n`);
  return ratio <= TARGET_RATIO ? 0 : 1;
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`denatured-apply: ${err.message}\n`);
  process.exit(2);
});
