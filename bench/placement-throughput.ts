// Benchmark (not a test): the placement controllers against a plain parallel client.
//
//   npx tsc -p . && node dist/bench/placement-throughput.js [--objects N] [--clusters N] [--extra N]
//
// Ensures the local demo spaces and `ksview serve` (with its placement controllers), then:
//  1. makes N (default 1,000) ConfigMaps in a namespace bench-<r> of wds1, `extra` more (default
//     9,000) in bench-<r>-extra that no policy selects (so wds1 holds 10,000 workload objects),
//     and C (default 10) ManagedClusters bench-<r>-<i> with their namespaces in its1;
//  2. DIRECT: a client with 32 requests in flight server-side applies the N×C ManifestWorks the
//     controllers would write (same names in another WDS's name space, same content) to its1;
//  3. CONTROLLER: applies one BindingPolicy selecting the N ConfigMaps and the C clusters and
//     times until a watch on its1 has seen all N×C works;
//  4. UPDATE: 20 times, patches one ConfigMap and times until the watch has seen its C works
//     carry the new value;
//  5. reads the RSS of the ksview serve process (/proc/<pid>/status) with all that in its caches.
// Targets (the issue): CONTROLLER ≤ 2 × DIRECT; UPDATE p50 ≤ 100 ms; RSS ≤ 300 MB. Everything it
// makes is deleted at the end (also on error). Exit status: 0 all met, 1 one missed, 2 could not run.
import { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { stderrProgress } from '../src/util/progress.js';
import { manifestWork, manifestWorkName, stripServerFields } from '../src/controllers/model/wrapping.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout } from '../src/spaces/layout.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { readState } from '../src/spaces/state.js';
import { ensureViewServer, VIEW_SERVER_PROCESS } from '../src/spaces/view-server.js';

const progress = stderrProgress();
type Obj = Record<string, any>;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} needs a whole number`);
  return n;
}

async function client(kubeconfig: string, context: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  kc.setCurrentContext(context);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const pool = new Pool(new URL(kc.getCurrentCluster()!.server).origin, { connections: 32, pipelining: 1, bodyTimeout: 0, connect: { ca: opts.ca as string, cert: opts.cert as string, key: opts.key as string } });
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Obj> => {
    const res = await pool.request({ method: method as 'GET', path, headers: { accept: 'application/json', 'content-type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300 && res.statusCode !== 404) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) as Obj : {};
  };
  return { pool, call };
}

async function bounded(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, n) }, async () => { while (next < n) await fn(next++); }));
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };

async function main(): Promise<number> {
  const N = arg('objects', 1000);
  const C = arg('clusters', 10);
  const EXTRA = arg('extra', 9000);
  const dir = defaultSpacesDir();
  const layout = spacesLayout({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2 });
  progress.step(`ensuring the demo spaces in ${dir} and ksview serve`);
  await spacesUp({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2, cacheDir: defaultCacheDir(), progress });
  await ensureViewServer(layout, progress);
  const wds = await client(layout.kubeconfigPath, 'wds1');
  const its = await client(layout.kubeconfigPath, 'its1');
  const r = randomBytes(3).toString('hex');
  const ns = `bench-${r}`;
  const clusters = Array.from({ length: C }, (_, i) => `bench-${r}-${i}`);
  const policy = `bench-${r}`;
  const cleanup = async () => {
    progress.step('cleaning up');
    await wds.call('DELETE', `/apis/control.kubestellar.io/v1alpha1/bindingpolicies/${policy}`).catch(() => undefined);
    for (const c of clusters) {
      await its.call('DELETE', `/apis/cluster.open-cluster-management.io/v1/managedclusters/${c}`).catch(() => undefined);
      await its.call('DELETE', `/api/v1/namespaces/${c}`).catch(() => undefined);
    }
    await wds.call('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
    await wds.call('DELETE', `/api/v1/namespaces/${ns}-extra`).catch(() => undefined);
  };
  try {
    progress.step(`making ${N} + ${EXTRA} ConfigMaps in wds1 and ${C} ManagedClusters in its1`);
    await wds.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await wds.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${ns}-extra` } });
    const data = { greeting: 'hello', payload: 'x'.repeat(200) };
    await bounded(N, 32, async (i) => { await wds.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { bench: r } }, data }); });
    await bounded(EXTRA, 32, async (i) => { await wds.call('POST', `/api/v1/namespaces/${ns}-extra/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data }); });
    for (const c of clusters) {
      await its.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: c } });
      await its.call('POST', '/apis/cluster.open-cluster-management.io/v1/managedclusters', { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: c, labels: { bench: r } }, spec: { hubAcceptsClient: true } });
    }

    // DIRECT: the same number of ManifestWork server-side applies, 32 in flight.
    progress.step(`DIRECT: ${N * C} ManifestWork server-side applies from a parallel client`);
    const t0 = performance.now();
    await bounded(N * C, 32, async (k) => {
      const i = Math.floor(k / C);
      const cluster = clusters[k % C]!;
      const id = { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: `cm-${i}` };
      const manifest = stripServerFields({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns, labels: { bench: r } }, data }, id);
      const work = manifestWork(manifest, { wds: `direct${r}`, cluster, id, policies: [policy], createOnly: false });
      await its.call('PATCH', `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${manifestWorkName(`direct${r}`, id)}?fieldManager=bench&force=true`, work, 'application/apply-patch+yaml');
    });
    const direct = performance.now() - t0;
    progress.step(`DIRECT took ${(direct / 1000).toFixed(2)} s; deleting its works`);
    for (const c of clusters) await its.call('DELETE', `/apis/work.open-cluster-management.io/v1/namespaces/${c}/manifestworks?labelSelector=${encodeURIComponent(`view.kubestellar.io/wds=direct${r}`)}`);

    // CONTROLLER: a watch counts the works the policy makes.
    const seen = new Map<string, string>();
    const waiters: (() => void)[] = [];
    const ac = new AbortController();
    const watch = await its.pool.request({ method: 'GET', signal: ac.signal, headers: { accept: 'application/json' },
      path: `/apis/work.open-cluster-management.io/v1/manifestworks?watch=1&labelSelector=${encodeURIComponent(`bindingpolicy.view.kubestellar.io/${policy}`)}` });
    void (async () => {
      let buf = '';
      try {
        for await (const chunk of watch.body) {
          buf += (chunk as Buffer).toString('utf8');
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const e = JSON.parse(buf.slice(0, nl)) as Obj;
            buf = buf.slice(nl + 1);
            if (e.type === 'ADDED' || e.type === 'MODIFIED') seen.set(`${e.object.metadata.namespace}/${e.object.metadata.name}`, String(e.object.spec.workload.manifests[0].data?.greeting));
            for (const w of waiters.splice(0)) w();
          }
        }
      } catch { /* aborted at the end */ }
    })();
    const until = async (what: string, ok: () => boolean, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!ok()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise<void>((res) => { waiters.push(res); setTimeout(res, 200); });
      }
    };
    progress.step(`CONTROLLER: BindingPolicy ${policy} → ${N * C} ManifestWorks`);
    const t1 = performance.now();
    await wds.call('POST', '/apis/control.kubestellar.io/v1alpha1/bindingpolicies', { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: policy },
      spec: { clusterSelectors: [{ matchLabels: { bench: r } }], downsync: [{ namespaces: [ns], objectSelectors: [{ matchLabels: { bench: r } }] }] } });
    await until(`${N * C} works`, () => seen.size >= N * C, 600_000);
    const controller = performance.now() - t1;
    progress.step(`CONTROLLER took ${(controller / 1000).toFixed(2)} s`);

    // UPDATE: one object changed → its works.
    const updates: number[] = [];
    for (let k = 0; k < 20; k++) {
      const i = (k * 37) % N;
      const value = `v${k}`;
      const t2 = performance.now();
      await wds.call('PATCH', `/api/v1/namespaces/${ns}/configmaps/cm-${i}`, { data: { greeting: value } }, 'application/merge-patch+json');
      await until(`the works of cm-${i}`, () => clusters.every((c) => seen.get(`${c}/${manifestWorkName('wds1', { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: `cm-${i}` })}`) === value), 60_000);
      updates.push(performance.now() - t2);
    }
    ac.abort();

    const state = readState(layout.statePath);
    const pid = state?.processes.find((p) => p.name === VIEW_SERVER_PROCESS)?.pid;
    const rssKb = pid ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) : 0;
    const ratio = controller / direct;
    const p50 = median(updates);
    const rssMb = rssKb / 1024;
    const ok = ratio <= 2 && p50 <= 100 && rssMb > 0 && rssMb <= 300;
    process.stdout.write([
      `| measurement | value | target |`,
      `|---|---|---|`,
      `| DIRECT: ${N * C} ManifestWork applies, 32 in flight | ${(direct / 1000).toFixed(2)} s | |`,
      `| CONTROLLER: policy → ${N * C} ManifestWorks seen | ${(controller / 1000).toFixed(2)} s | |`,
      `| CONTROLLER / DIRECT | ${ratio.toFixed(2)} | ≤ 2 ${ratio <= 2 ? 'met' : 'NOT met'} |`,
      `| one object changed → its ${C} works updated, p50 of 20 (min–max) | ${p50.toFixed(1)} ms (${Math.min(...updates).toFixed(1)}–${Math.max(...updates).toFixed(1)}) | ≤ 100 ms ${p50 <= 100 ? 'met' : 'NOT met'} |`,
      `| ksview serve RSS with ${N + EXTRA} ConfigMaps (+ the rest of wds1) cached | ${rssMb.toFixed(0)} MB | ≤ 300 MB ${rssMb <= 300 ? 'met' : 'NOT met'} |`,
      '',
    ].join('\n'));
    return ok ? 0 : 1;
  } finally {
    await cleanup();
    await wds.pool.close();
    await its.pool.close();
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`placement-throughput: ${err.message}\n`);
  process.exit(2);
});
