// Benchmark (not a test): one object's change → applied in the WEC, with 100 objects sent to wec1
// as a work each (--max-objects-per-work 1) and packed into one bundle (100), side by side in one
// run (target: bundled p50 ≤ 300 ms; docs/placement.md "Bundled works").
//
//   npx tsc -p . && node dist/bench/bundle-update.js [--objects 100] [--trials 60] [--rounds 2]
//
// Ensures the demo spaces (`ksview spaces up`: placement and status controllers on, wec1's pull
// agent), then per round and per mode: restarts wds1's `ksview serve` with that
// --max-objects-per-work; makes a namespace of wds1 with --objects ConfigMaps and a BindingPolicy
// sending them to wec1; waits until all are in wec1; then --trials times changes one ConfigMap
// (a different one each time: its data.v) with a PATCH on wds1 and times, on a watch of wec1's
// ConfigMaps, when wec1 has the new value. The namespace and policy are deleted after each mode
// (and on error); serve is restarted as `spaces up` runs it at the end. Prints progress on stderr
// and a table on stdout: p50 / p90 / max per mode and round, and the ratio bundled / per-object of
// the medians. Exit: 0 target met (bundled p50 ≤ 300 ms in every round), 1 missed, 2 could not run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import { jsonLines } from '../src/kube/json-lines.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout } from '../src/spaces/layout.js';
import { ensureViewServer } from '../src/spaces/view-server.js';
import { percentile, type Obj } from './agent-common.js';
import { progress, spacePools } from './view-bench.js';

const TARGET_P50_MS = 300;
const TIMEOUT_MS = 30_000;

function num(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const n = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a whole number ≥ 1`);
  return n;
}

async function call(pool: Pool, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Obj> {
  const res = await pool.request({ method: method as 'GET', path, headers: { accept: 'application/json', 'content-type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) as Obj : {};
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** wec1's ConfigMaps of a namespace, as a watch sees them: name → data.v and when that value was first seen. */
function watchValues(wec: Pool, ns: string): { seen: Map<string, { v: string; at: number }>; ready: Promise<void>; stop(): void } {
  const ac = new AbortController();
  const seen = new Map<string, { v: string; at: number }>();
  const ready = (async () => {
    const res = await wec.request({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps?watch=1`, headers: { accept: 'application/json' }, signal: ac.signal });
    if (res.statusCode !== 200) throw new Error(`watch wec1: ${res.statusCode}`);
    void (async () => {
      try {
        for await (const e of jsonLines(res.body)) {
          const o = (e as Obj).object as Obj | undefined;
          const name = o?.metadata?.name as string | undefined;
          const v = o?.data?.v as string | undefined;
          if (name && v !== undefined && seen.get(name)?.v !== v) seen.set(name, { v, at: performance.now() });
        }
      } catch { /* stopped */ }
    })();
  })();
  return { seen, ready, stop: () => ac.abort() };
}

async function main(): Promise<number> {
  const objects = num('objects', 100);
  const trials = num('trials', 60);
  const rounds = num('rounds', 2);
  const pools = await spacePools(['wds1', 'wec1']);
  const wds = pools.wds1!, wec = pools.wec1!;
  const layout = spacesLayout({ dir: defaultSpacesDir(), portBase: DEFAULT_PORT_BASE, wecs: 2 });
  const rows: { round: number; mode: number; xs: number[] }[] = [];
  let cleanup: (() => Promise<void>) | undefined;
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const mode of [1, objects]) {
        await ensureViewServer(layout, progress, { restart: true, extraArgs: ['--max-objects-per-work', String(mode)] });
        const run = randomBytes(3).toString('hex');
        const ns = `bench-bundle-${run}`;
        const policy = ns;
        cleanup = async () => {
          await Promise.allSettled([call(wds, 'DELETE', `/apis/control.kubestellar.io/v1alpha1/bindingpolicies/${policy}`), call(wds, 'DELETE', `/api/v1/namespaces/${ns}`)]);
        };
        progress.step(`round ${round}, --max-objects-per-work ${mode}: ${objects} ConfigMaps in ${ns} to wec1`);
        const watch = watchValues(wec, ns);
        try {
          await call(wds, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
          for (let i = 0; i < objects; i++) {
            await call(wds, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { bench: run } }, data: { v: '0', pad: 'x'.repeat(400) } });
          }
          await call(wds, 'POST', '/apis/control.kubestellar.io/v1alpha1/bindingpolicies', { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
            metadata: { name: policy }, spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [{ namespaces: [ns], objectSelectors: [{ matchLabels: { bench: run } }] }] } });
          await until(`${objects} ConfigMaps in wec1`, async () => ((await call(wec, 'GET', `/api/v1/namespaces/${ns}/configmaps?labelSelector=bench%3D${run}`)).items ?? []).length === objects);
          await watch.ready;
          const xs: number[] = [];
          for (let k = 1; k <= trials; k++) {
            const name = `cm-${(k * 37) % objects}`;
            const v = String(k);
            const t0 = performance.now();
            await call(wds, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, { data: { v } }, 'application/merge-patch+json');
            const end = Date.now() + TIMEOUT_MS;
            while (watch.seen.get(name)?.v !== v) {
              if (Date.now() > end) throw new Error(`trial ${k}: ${name} v=${v} not in wec1 after ${TIMEOUT_MS / 1000} s`);
              await new Promise((r) => setTimeout(r, 1));
            }
            xs.push(watch.seen.get(name)!.at - t0);
          }
          rows.push({ round, mode, xs });
          const slowest = xs.map((x, k) => [k + 1, x] as const).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, x]) => `#${k} ${x.toFixed(0)} ms`).join(', ');
          progress.step(`  p50 ${percentile(xs, 50).toFixed(0)} ms, p90 ${percentile(xs, 90).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (slowest trials: ${slowest})`);
        } finally {
          watch.stop();
          await cleanup();
          cleanup = undefined;
        }
      }
    }
    const p50 = (round: number, mode: number) => percentile(rows.find((r) => r.round === round && r.mode === mode)!.xs, 50);
    const met = rows.filter((r) => r.mode === objects).every((r) => percentile(r.xs, 50) <= TARGET_P50_MS);
    process.stdout.write([
      `| round | --max-objects-per-work | works for ${objects} objects | trials | p50 (ms) | p90 (ms) | max (ms) |`, '|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.round} | ${r.mode} | ${r.mode === 1 ? objects : Math.ceil(objects / r.mode)} | ${r.xs.length} | ${percentile(r.xs, 50).toFixed(0)} | ${percentile(r.xs, 90).toFixed(0)} | ${Math.max(...r.xs).toFixed(0)} |`),
      '',
      ...Array.from({ length: rounds }, (_, i) => `round ${i + 1}: bundled / per-object p50 = ${(p50(i + 1, objects) / p50(i + 1, 1)).toFixed(2)}`),
      `target: bundled p50 ≤ ${TARGET_P50_MS} ms: ${met ? 'met' : 'NOT met'} (${new Date().toISOString()})`, '',
    ].join('\n'));
    return met ? 0 : 1;
  } finally {
    await cleanup?.();
    await ensureViewServer(layout, progress, { restart: true }).catch((err: Error) => progress.step(`restarting serve: ${err.message}`));
    await Promise.allSettled(Object.values(pools).map((p) => p.close()));
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`bundle-update: ${err.message}\n`);
  process.exit(2);
});
