// Benchmark (not a test): push mode with 4 WECs — a dead WEC must not slow the others.
//
//   npx tsc -p . && node dist/bench/agent-push-isolation.js [--trials N] [--dir DIR] [--port-base N] [--json FILE]
//
// Brings up its own spaces with 4 WECs (`ksview spaces up --wecs 4`, default state folder
// /tmp/ksview-bench-4, ports from 18400: apart from the demo and test spaces), where the push agent
// beside its1 serves wec2..wec4. Then, on the WECs that stay up (wec3, wec4), one at a time and
// alternating between them: a ManifestWork holding one ConfigMap (as placement writes it) → Applied
// reported on the work, N trials (default 100) per phase:
//  1. BEFORE: every WEC up;
//  2. AFTER: wec2's kube-apiserver stopped (`ksview spaces stop wec2/kube-apiserver`);
// then `ksview spaces up` again (restarts wec2's kube-apiserver). Target (the issue): p50 AFTER ≤
// 1.2 × p50 BEFORE. Works and namespaces it makes are deleted at the end; the spaces stay up
// (`ksview spaces down --dir DIR` removes them). Exit status: 0 met, 1 missed, 2 could not run.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from '../src/util/repo-root.js';
import { spacesLayout } from '../src/spaces/layout.js';
import { applyWork, benchWork, client, configMapId, median, ms, percentile, progress, WorkWatch, writeJson, type Client } from './agent-common.js';

const USAGE = 'usage: node dist/bench/agent-push-isolation.js [--trials N] [--dir DIR] [--port-base N] [--json FILE]';
const LIVE = ['wec3', 'wec4'];
const STOPPED = 'wec2';

function ksview(args: string[]): void {
  progress.step(`ksview ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [path.join(repoRoot(), 'bin', 'ksview.js'), ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`ksview ${args.join(' ')} failed (exit ${r.status})`);
}

async function main(): Promise<number> {
  let trials = 100;
  let dir = '/tmp/ksview-bench-4';
  let portBase = 18400;
  let json: string | undefined;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--trials') trials = Number(argv[++i]);
    else if (a === '--dir') dir = argv[++i]!;
    else if (a === '--port-base') portBase = Number(argv[++i]);
    else if (a === '--json') json = argv[++i];
    else throw new Error(`unknown argument ${a} (${USAGE})`);
  }
  const spaces = ['--dir', dir, '--port-base', String(portBase)];
  ksview(['spaces', 'up', '--wecs', '4', ...spaces]);
  const layout = spacesLayout({ dir, portBase, wecs: 4 });
  const its = await client(layout.kubeconfigPath, 'its1');
  const wecs = new Map<string, Client>();
  for (const w of LIVE) wecs.set(w, await client(layout.kubeconfigPath, w));
  const run = Math.random().toString(16).slice(2, 8);
  const label = `bench-${run}`;
  const ns = `bench-${run}`;
  const watches = new Map<string, WorkWatch>();
  let stopped = false;
  try {
    for (const [w, c] of wecs) {
      await c.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      watches.set(w, await WorkWatch.open(its, w, `bindingpolicy.view.kubestellar.io/${label}`));
    }
    let k = 0;
    const phase = async (name: string): Promise<number[]> => {
      const out: number[] = [];
      progress.step(`${name}: ${trials} trials on ${LIVE.join(', ')} (+5 warm-up)`);
      for (let i = 0; i < trials + 5; i++) {
        const cluster = LIVE[i % LIVE.length]!;
        const cm = `cm-${k++}`;
        const w = benchWork(cluster, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm, namespace: ns }, data: { k: String(k) } }, configMapId(ns, cm), label);
        const watch = watches.get(cluster)!;
        const t0 = performance.now();
        await applyWork(its, w);
        await watch.until(`Applied on ${cluster}/${w.metadata.name}`, () => watch.applied.has(w.metadata.name), 30_000);
        if (i >= 5) out.push(watch.applied.get(w.metadata.name)! - t0);
      }
      progress.step(`  p50 ${ms(median(out))}, p99 ${ms(percentile(out, 99))}`);
      return out;
    };
    const before = await phase('BEFORE (every WEC up)');
    ksview(['spaces', 'stop', `${STOPPED}/kube-apiserver`, '--dir', dir]);
    stopped = true;
    const after = await phase(`AFTER (${STOPPED}'s kube-apiserver stopped)`);
    const ratio = median(after) / median(before);
    process.stdout.write([
      `push agent beside its1 serving wec2..wec4; measured on ${LIVE.join(', ')}; spaces ${dir}`,
      '',
      '| phase | N | p50 | p90 | p99 |',
      '|---|---:|---:|---:|---:|',
      `| BEFORE: every WEC up | ${before.length} | ${ms(median(before))} | ${ms(percentile(before, 90))} | ${ms(percentile(before, 99))} |`,
      `| AFTER: ${STOPPED}'s kube-apiserver stopped | ${after.length} | ${ms(median(after))} | ${ms(percentile(after, 90))} | ${ms(percentile(after, 99))} |`,
      `| p50 AFTER / BEFORE | | **${ratio.toFixed(2)}** | | ≤ 1.2 ${ratio <= 1.2 ? 'met' : 'NOT met'} |`,
      '',
    ].join('\n'));
    writeJson(json, { before, after, ratio });
    return ratio <= 1.2 ? 0 : 1;
  } finally {
    progress.step('cleaning up');
    for (const w of watches.values()) w.close();
    for (const w of LIVE) {
      await its.call('DELETE', `/apis/work.open-cluster-management.io/v1/namespaces/${w}/manifestworks?labelSelector=${encodeURIComponent(`bindingpolicy.view.kubestellar.io/${label}`)}`).catch(() => undefined);
      await wecs.get(w)!.call('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
    }
    if (stopped) {
      try { ksview(['spaces', 'up', '--wecs', '4', ...spaces]); } catch (err) { progress.step(`  restarting ${STOPPED}: ${(err as Error).message}`); }
    }
    await its.pool.close();
    for (const c of wecs.values()) await c.pool.close();
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`agent-push-isolation: ${err.message}\n`);
  process.exit(2);
});
