// Benchmark (not a test): latency of the workload-as-data view against the WDS itself.
//
//   npx tsc -p . && node dist/bench/view-latency.js [--json FILE] [--restart-server]
//
// Ensures the local demo spaces (default state dir, port base, 2 WECs) and `ksview serve` for wds1
// are up (`--restart-server`: restarted from this build first, so the run measures this code rather
// than whichever build started the running one), then sends the same requests on two paths with
// the same client (one undici Pool each, keep-alive, the admin client certificate from the spaces'
// kubeconfig):
//   DIRECT  https://127.0.0.1:16410                                               (wds1 kube-apiserver)
//   VIEW    https://127.0.0.1:16410/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy
//           (kube-apiserver's aggregator -> ksview serve -> wds1)
// and, to tell where the time goes, two more paths that are not part of the target:
//   KSVIEW       https://127.0.0.1:16405/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy
//                (ksview serve without the aggregator; it accepts the admin certificate as a
//                client-CA certificate)
//   IMPERSONATE  https://127.0.0.1:16410 with the Impersonate-User/-Group headers ksview serve adds
//                (what wds1 itself pays for a request that comes through ksview)
// ksview serve is a JIT-compiled Node process: a fresh one runs its request path unoptimised for
// its first ~2,000 requests (its hop measured ~0.7 ms over its first 250 GETs, ~0.3 ms from ~1,750
// on), so it is first warmed with SERVER_WARMUP GETs straight to it; kube-apiserver (Go) needs none.
// Then measured, after a warm-up, one request at a time, the order of the paths rotating every
// iteration so each sees the same machine load: GET of one ConfigMap, LIST of 1,000 ConfigMaps,
// and watch latency (one PATCH made directly, the same MODIFIED event awaited on a watch open on
// every path), and a few one-hop floors (health and ksview's own discovery, directly and through
// the aggregator). Target (the issue): median VIEW/DIRECT <= 1.3 for each. Loopback only, bounded in
// count and time; the namespace it makes is deleted at the end, on error and on Ctrl-C.
// Exit status: 0 every target met, 1 a target missed, 2 the benchmark could not run.
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BenchCleanup, bounded, kubeconfigClient, call, fmt, makePool, mustCall, onWatchEvents, orderFor, stats, type Client as AnyClient } from './http-bench.js';
import { stderrProgress } from '../src/util/progress.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout } from '../src/spaces/layout.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { ensureViewServer } from '../src/spaces/view-server.js';

const CONFIGMAPS = 1000;
const CREATE_CONCURRENCY = 16;
const N_GET = 300;
const N_LIST = 50;
const N_WATCH = 100;
const N_FLOOR = 200;
const WARMUP = { get: 20, list: 5, watch: 5, floor: 20 };
/** GETs sent to ksview serve alone before anything is measured (see the header). */
const SERVER_WARMUP = 2000;
const TARGET_RATIO = 1.3;
/** The whole run, set-up and clean-up included, ends within this. */
const OVERALL_TIMEOUT_MS = 15 * 60_000;
const EVENT_TIMEOUT_MS = 10_000;
const WDS = 'wds1';
const VIEW_ROOT = `/apis/view.kubestellar.io/v1alpha1/spaces/${WDS}/proxy`;

type PathName = 'DIRECT' | 'VIEW' | 'KSVIEW' | 'IMPERSONATE';
type Client = AnyClient<PathName>;

const progress = stderrProgress();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const USAGE = 'usage: node dist/bench/view-latency.js [--json FILE] [--restart-server]';

function parseArgs(argv: string[]): { json?: string; restartServer: boolean } {
  const out: { json?: string; restartServer: boolean } = { restartServer: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') {
      const f = argv[++i];
      if (!f) throw new Error('--json needs a file name');
      out.json = f;
    } else if (a.startsWith('--json=')) {
      out.json = a.slice('--json='.length);
    } else if (a === '--restart-server') {
      out.restartServer = true;
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else {
      throw new Error(`unknown argument ${a} (${USAGE})`);
    }
  }
  return out;
}

// ---- watches ---------------------------------------------------------------------------------

interface WatchStream {
  client: Client;
  /** counter value -> performance.now() when its MODIFIED event arrived. */
  seen: Map<string, number>;
  waiters: Map<string, () => void>;
  close: () => void;
  error?: Error;
}

/**
 * Opens a watch without waiting for its response headers: a server may hold them back until the
 * first event (ksview serve does), so the first PATCH of the warm-up is what gets them flowing.
 */
function openWatch(c: Client, ns: string, rv: string): WatchStream {
  const ac = new AbortController();
  const w: WatchStream = { client: c, seen: new Map(), waiters: new Map(), close: () => ac.abort() };
  const fail = (err: Error) => {
    if (ac.signal.aborted || w.error) return;
    w.error = err;
    for (const wake of [...w.waiters.values()]) wake();
  };
  c.pool.request({
    method: 'GET',
    path: `${c.prefix}/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=900`,
    headers: { ...c.headers, accept: 'application/json' },
    headersTimeout: 0,
    bodyTimeout: 0,
    signal: ac.signal,
  }).then(async (res) => {
    if (res.statusCode !== 200) {
      const text = Buffer.from(await res.body.arrayBuffer()).toString('utf8');
      throw new Error(`${c.name} watch: ${res.statusCode} ${text.slice(0, 300)}`);
    }
    onWatchEvents<{ type: string; object?: { data?: Record<string, string>; message?: string } }>(res.body, () => performance.now(), (ev, now) => {
      if (ev.type === 'ERROR') fail(new Error(`${c.name} watch: ERROR event ${ev.object?.message ?? ''}`));
      if (ev.type !== 'MODIFIED') return;
      const counter = ev.object?.data?.counter;
      if (counter === undefined || w.seen.has(counter)) return;
      w.seen.set(counter, now);
      w.waiters.get(counter)?.();
    });
    res.body.on('error', fail);
    res.body.on('end', () => fail(new Error(`${c.name} watch: the server ended the stream`)));
  }).catch((err: unknown) => fail(err as Error));
  return w;
}

function waitEvent(w: WatchStream, counter: string): Promise<number> {
  const at = w.seen.get(counter);
  if (at !== undefined) return Promise.resolve(at);
  if (w.error) return Promise.reject(w.error);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      w.waiters.delete(counter);
      reject(new Error(`${w.client.name} watch: no MODIFIED event for counter ${counter} within ${EVENT_TIMEOUT_MS} ms`));
    }, EVENT_TIMEOUT_MS);
    w.waiters.set(counter, () => {
      clearTimeout(timer);
      w.waiters.delete(counter);
      const t = w.seen.get(counter);
      if (t !== undefined) resolve(t);
      else reject(w.error ?? new Error(`${w.client.name} watch failed`));
    });
  });
}

// ---- main ------------------------------------------------------------------------------------

interface Row {
  name: string;
  n: number;
  samples: Record<PathName, number[]>;
  target: boolean;
}

interface Floor {
  name: string;
  client: Client;
  path: string;
  samples: number[];
}

function report(rows: Row[], floors: Floor[], notes: string[], command: string, meta: Record<string, unknown>): string {
  const lines: string[] = [];
  lines.push(`command: \`${command}\``);
  lines.push(`machine: ${meta.cpus} cores (${meta.cpuModel}), ${meta.memGiB} GiB, ${meta.platform}, node ${meta.node}; date ${meta.date}`);
  lines.push('');
  lines.push(`| measurement | N | DIRECT median | DIRECT p90 | VIEW median | VIEW p90 | VIEW/DIRECT (medians) | target ≤ ${TARGET_RATIO} |`);
  lines.push('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const d = stats(r.samples.DIRECT);
    const v = stats(r.samples.VIEW);
    const ratio = v.median / d.median;
    const verdict = r.target ? (ratio <= TARGET_RATIO ? 'PASS' : 'FAIL') : '(info)';
    lines.push(`| ${r.name} | ${r.n} | ${fmt(d.median)} ms | ${fmt(d.p90)} ms | ${fmt(v.median)} ms | ${fmt(v.p90)} ms | ${ratio.toFixed(2)} | ${verdict} |`);
  }
  for (const n of notes) lines.push('', n);
  lines.push('');
  lines.push('Where the time goes (medians; not part of the target). IMPERSONATE = DIRECT plus the impersonation headers ksview');
  lines.push('serve sends upstream; KSVIEW = ksview serve on 127.0.0.1:16405 without the aggregator.');
  lines.push('');
  lines.push('| measurement | DIRECT | IMPERSONATE | KSVIEW | VIEW | impersonation at wds1 (IMP−DIRECT) | ksview itself (KSVIEW−IMP) | aggregator (VIEW−KSVIEW) |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const [d, i, k, v] = (['DIRECT', 'IMPERSONATE', 'KSVIEW', 'VIEW'] as const).map((n) => stats(r.samples[n]).median) as [number, number, number, number];
    lines.push(`| ${r.name} | ${fmt(d)} ms | ${fmt(i)} ms | ${fmt(k)} ms | ${fmt(v)} ms | ${fmt(i - d)} ms | ${fmt(k - i)} ms | ${fmt(v - k)} ms |`);
  }
  lines.push('');
  lines.push('Floors: requests that touch no ConfigMap and no etcd (what one hop costs here).');
  lines.push('');
  lines.push('| request | N | median | p90 |');
  lines.push('|---|---:|---:|---:|');
  for (const f of floors) {
    const st = stats(f.samples);
    lines.push(`| ${f.name} | ${st.n} | ${fmt(st.median)} ms | ${fmt(st.p90)} ms |`);
  }
  return lines.join('\n');
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const command = ['node', 'dist/bench/view-latency.js', ...process.argv.slice(2)].join(' ');
  const watchdog = setTimeout(() => {
    process.stderr.write(`view-latency: still running after ${OVERALL_TIMEOUT_MS / 60_000} min; giving up\n`);
    void cleanup().finally(() => process.exit(2));
  }, OVERALL_TIMEOUT_MS);

  // 1. Spaces and view server (both idempotent).
  const dir = defaultSpacesDir();
  const layout = spacesLayout({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2 });
  progress.step(`ensuring the demo spaces in ${dir}`);
  await spacesUp({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2, cacheDir: defaultCacheDir(), progress });
  await ensureViewServer(layout, progress, { restart: args.restartServer });

  // 2. Clients: the admin certificate of wds1 from the spaces' kubeconfig.
  const { origin, tls } = await kubeconfigClient(layout.kubeconfigPath, WDS);
  if (!/^https:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|$)/.test(origin)) throw new Error(`${origin} is not on loopback`);
  const wds = layout.spaces.find((s) => s.name === WDS)!;
  if (!tls.cert) throw new Error(`context ${WDS} in ${layout.kubeconfigPath} has no client certificate`);
  const subject = new X509Certificate(tls.cert).subject.split('\n');
  const admin = {
    username: subject.find((l) => l.startsWith('CN='))?.slice(3) ?? '',
    groups: subject.filter((l) => l.startsWith('O=')).map((l) => l.slice(2)),
  };
  const ksviewOrigin = `https://127.0.0.1:${layout.viewServerPort}`;
  const clients: Record<PathName, Client> = {
    DIRECT: { name: 'DIRECT', origin, prefix: '', pool: makePool(origin, tls) },
    VIEW: { name: 'VIEW', origin, prefix: VIEW_ROOT, pool: makePool(origin, tls) },
    KSVIEW: {
      name: 'KSVIEW', origin: ksviewOrigin, prefix: VIEW_ROOT,
      pool: makePool(ksviewOrigin, { cert: tls.cert, key: tls.key, ca: readFileSync(path.join(wds.dir, 'view-certs', 'ca.crt')), servername: 'localhost' }),
    },
    IMPERSONATE: {
      name: 'IMPERSONATE', origin, prefix: '', pool: makePool(origin, tls),
      headers: { 'impersonate-user': admin.username, 'impersonate-group': [...admin.groups, 'system:authenticated'] },
    },
  };
  const all: Client[] = [clients.DIRECT, clients.VIEW, clients.KSVIEW, clients.IMPERSONATE];
  const direct = clients.DIRECT;
  for (const c of all) progress.step(`${c.name.padEnd(11)} ${c.origin}${c.prefix}${c.headers ? ` + ${Object.keys(c.headers).join(', ')}` : ''}`);

  // 3. The namespace and its ConfigMaps, made directly.
  const ns = `bench-${randomBytes(4).toString('hex')}`;
  let watches: WatchStream[] = [];
  teardown.set(async () => {
    for (const w of watches) w.close();
    progress.step(`deleting namespace ${ns}`);
    try {
      const r = await call(direct, 'DELETE', `/api/v1/namespaces/${ns}`);
      if (r.status !== 200 && r.status !== 202 && r.status !== 404) {
        progress.step(`could not delete namespace ${ns}: ${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
        return;
      }
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        if ((await call(direct, 'GET', `/api/v1/namespaces/${ns}`)).status === 404) {
          progress.step(`namespace ${ns} deleted`);
          return;
        }
        await sleep(500);
      }
      progress.step(`namespace ${ns} is still terminating after 60 s (the namespace controller of ${WDS} finishes it)`);
    } catch (err) {
      progress.step(`could not delete namespace ${ns}: ${(err as Error).message}`);
    }
  });

  try {
    await mustCall(direct, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    progress.step(`namespace ${ns} created; creating ${CONFIGMAPS} ConfigMaps (${CREATE_CONCURRENCY} at once)`);
    let made = 0;
    const t0 = performance.now();
    await bounded(CONFIGMAPS, CREATE_CONCURRENCY, async (i) => {
      const name = `cm-${String(i).padStart(4, '0')}`;
      await mustCall(direct, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { bench: 'view-latency' } },
        data: { index: String(i), color: ['red', 'green', 'blue'][i % 3]!, note: 'view-latency benchmark' },
      });
      if (++made % 250 === 0) progress.step(`${made}/${CONFIGMAPS} ConfigMaps`);
    });
    progress.step(`${CONFIGMAPS} ConfigMaps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // Sanity: every path answers the same objects.
    const getPath = `/api/v1/namespaces/${ns}/configmaps/cm-0500`;
    const listPath = `/api/v1/namespaces/${ns}/configmaps`;
    const listSizes: Record<string, number> = {};
    for (const c of all) {
      const g = JSON.parse((await mustCall(c, 'GET', getPath)).body.toString('utf8')) as { data?: { index?: string } };
      if (g.data?.index !== '500') throw new Error(`${c.name} GET answered another object`);
      const l = await mustCall(c, 'GET', listPath);
      const items = (JSON.parse(l.body.toString('utf8')) as { items?: unknown[] }).items ?? [];
      if (items.length !== CONFIGMAPS) throw new Error(`${c.name} LIST answered ${items.length} items, not ${CONFIGMAPS}`);
      listSizes[c.name] = l.body.length;
    }
    progress.step(`every path answers; LIST body ${Math.round(listSizes.DIRECT! / 1024)} KiB`);
    for (let i = 0; i < SERVER_WARMUP; i++) await mustCall(clients.KSVIEW, 'GET', getPath);
    progress.step(`ksview serve warmed with ${SERVER_WARMUP} GETs`);

    const rows: Row[] = [];
    const notes: string[] = [];
    const empty = (): Record<PathName, number[]> => ({ DIRECT: [], VIEW: [], KSVIEW: [], IMPERSONATE: [] });

    // 4a. GET of one ConfigMap.
    {
      const samples = empty();
      for (let i = 0; i < WARMUP.get + N_GET; i++) {
        for (const c of orderFor(all, i)) {
          const r = await mustCall(c, 'GET', getPath);
          if (i >= WARMUP.get) samples[c.name].push(r.ms);
        }
      }
      rows.push({ name: 'GET one ConfigMap', n: N_GET, samples, target: true });
      progress.step(`GET: ${N_GET} per path (after ${WARMUP.get} warm-up)`);
    }

    // 4b. LIST of the 1,000 ConfigMaps.
    {
      const samples = empty();
      for (let i = 0; i < WARMUP.list + N_LIST; i++) {
        for (const c of orderFor(all, i)) {
          const r = await mustCall(c, 'GET', listPath);
          if (i >= WARMUP.list) samples[c.name].push(r.ms);
        }
      }
      rows.push({ name: `LIST ${CONFIGMAPS} ConfigMaps`, n: N_LIST, samples, target: true });
      progress.step(`LIST: ${N_LIST} per path (after ${WARMUP.list} warm-up)`);
    }

    // 4c. Watch latency: one PATCH made directly, the same MODIFIED event on every path's watch.
    {
      const rvList = JSON.parse((await mustCall(direct, 'GET', `${listPath}?limit=1`)).body.toString('utf8')) as { metadata?: { resourceVersion?: string } };
      const rv = rvList.metadata?.resourceVersion;
      if (!rv) throw new Error('LIST answered no resourceVersion');
      watches = all.map((c) => openWatch(c, ns, rv));
      progress.step(`watches opened on every path at resourceVersion ${rv}`);
      const fromResponse = empty();
      const fromSend = empty();
      let eventBeforeResponse = 0;
      for (let i = 0; i < WARMUP.watch + N_WATCH; i++) {
        const counter = String(i);
        const tSend = performance.now();
        await mustCall(direct, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/cm-0000`, { data: { counter } }, 'application/merge-patch+json');
        const tResponse = performance.now();
        const arrived = await Promise.all(watches.map((w) => waitEvent(w, counter)));
        if (i >= WARMUP.watch) {
          watches.forEach((w, k) => {
            fromResponse[w.client.name].push(arrived[k]! - tResponse);
            fromSend[w.client.name].push(arrived[k]! - tSend);
            if (w.client.name === 'DIRECT' && arrived[k]! < tResponse) eventBeforeResponse++;
          });
        }
        // Let every stream go quiet before the next change.
        await sleep(20);
      }
      for (const w of watches) w.close();
      watches = [];
      // Event latency is measured from the change being issued: the moment it is committed lies
      // between the PATCH being sent and its response, and the direct watch often delivers before
      // the response is read, so a ratio of medians from the response compares two numbers near 0.
      rows.push({ name: 'watch: PATCH sent → MODIFIED event', n: N_WATCH, samples: fromSend, target: true });
      rows.push({ name: 'watch: PATCH response → MODIFIED event', n: N_WATCH, samples: fromResponse, target: false });
      progress.step(`watch: ${N_WATCH} events (after ${WARMUP.watch} warm-up)`);
      notes.push(`Watch: the DIRECT watch received the event before the PATCH response had been read in ${eventBeforeResponse} of ${N_WATCH} `
        + 'cases (negative samples), so the DIRECT median from the PATCH response is close to 0: that row shows the absolute delay the view adds, not a meaningful ratio.');
    }

    // 4d. Floors: one hop without the WDS behind it.
    const floors: Floor[] = [
      { name: 'kube-apiserver GET /healthz (DIRECT)', client: { ...direct }, path: '/healthz', samples: [] },
      { name: 'ksview GET /healthz (no authn, no upstream)', client: { ...clients.KSVIEW, prefix: '' }, path: '/healthz', samples: [] },
      { name: 'ksview GET /apis/view.kubestellar.io/v1alpha1 (client-cert authn, answered by ksview)', client: { ...clients.KSVIEW, prefix: '' }, path: '/apis/view.kubestellar.io/v1alpha1', samples: [] },
      { name: 'the same through the aggregator (kube-apiserver → ksview)', client: { ...clients.VIEW, prefix: '' }, path: '/apis/view.kubestellar.io/v1alpha1', samples: [] },
    ];
    for (let i = 0; i < WARMUP.floor + N_FLOOR; i++) {
      for (const f of orderFor(floors, i % 24)) {
        const r = await mustCall(f.client, 'GET', f.path);
        if (i >= WARMUP.floor) f.samples.push(r.ms);
      }
    }
    progress.step(`floors: ${N_FLOOR} per request (after ${WARMUP.floor} warm-up)`);

    const meta = {
      date: new Date().toISOString(),
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
    };
    const table = report(rows, floors, notes, command, meta);
    process.stdout.write(`\n${table}\n\n`);
    const failed = rows.filter((r) => r.target && stats(r.samples.VIEW).median / stats(r.samples.DIRECT).median > TARGET_RATIO);
    process.stdout.write(failed.length === 0
      ? `all targets met (median VIEW/DIRECT ≤ ${TARGET_RATIO})\n`
      : `target missed for: ${failed.map((r) => r.name).join('; ')}\n`);

    if (args.json) {
      const out = {
        command,
        ...meta,
        target: { medianRatioMax: TARGET_RATIO },
        paths: Object.fromEntries(all.map((c) => [c.name, `${c.origin}${c.prefix}`])),
        namespace: ns,
        notes,
        configMaps: CONFIGMAPS,
        listBodyBytes: listSizes,
        results: rows.map((r) => {
          const d = stats(r.samples.DIRECT);
          const v = stats(r.samples.VIEW);
          const k = stats(r.samples.KSVIEW);
          const imp = stats(r.samples.IMPERSONATE);
          const ratio = v.median / d.median;
          return {
            name: r.name, n: r.n, direct: d, view: v, ksview: k, impersonate: imp,
            ratio: Number(ratio.toFixed(3)), ksviewRatio: Number((k.median / d.median).toFixed(3)),
            target: r.target, pass: r.target ? ratio <= TARGET_RATIO : null,
            samplesMs: Object.fromEntries(Object.entries(r.samples).map(([n, s]) => [n, s.map((x) => Number(x.toFixed(3)))])),
          };
        }),
        floors: floors.map((f) => ({ name: f.name, url: `${f.client.origin}${f.path}`, ...stats(f.samples) })),
      };
      writeFileSync(args.json, `${JSON.stringify(out, null, 2)}\n`);
      progress.step(`wrote ${args.json}`);
    }
    return failed.length === 0 ? 0 : 1;
  } finally {
    await cleanup();
    await Promise.all(all.map((c) => c.pool.destroy().catch(() => undefined)));
    clearTimeout(watchdog);
  }
}

/** Deletes what the run made, once: every caller (end, error, signal, watchdog) awaits the same work. */
const teardown = new BenchCleanup();
const cleanup = () => teardown.run();

// After a signal, requests fail because the namespace is going: the signal handler exits.
teardown.exitWith('view-latency', main, 'cleaning up', (err) => (err as Error).stack ?? String(err));
