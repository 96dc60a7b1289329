// What the latency benches share (view-latency, in-cluster): one undici Pool per path (keep-alive,
// certificates verified), one timed request, bounded parallel set-up, the rotating order of the
// paths (so each sees the same machine load), median/p90 of samples, the events of a watch with
// the time each arrived, a kubeconfig context's address and certificates, and the once-only
// cleanup with its signal and exit handling.
import { KubeConfig } from '@kubernetes/client-node';
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export const REQUEST_TIMEOUT_MS = 30_000;

export interface Client<N extends string = string> {
  name: N;
  origin: string;
  prefix: string;
  pool: Pool;
  /** Sent with every request on this path. */
  headers?: Record<string, string | string[]>;
}

export interface Reply {
  status: number;
  body: Buffer;
  ms: number;
}

export interface Tls { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string }

export function makePool(origin: string, tls: Tls): Pool {
  return new Pool(origin, {
    connections: 4,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
    connect: { ...tls, rejectUnauthorized: true },
  });
}

export async function call(c: Client, method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  const headers: Record<string, string | string[]> = { ...c.headers, accept: 'application/json' };
  let payload: string | undefined;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = contentType;
  }
  const t0 = performance.now();
  const res = await c.pool.request({ method: method as 'GET', path: c.prefix + p, headers, body: payload });
  const buf = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, body: buf, ms: performance.now() - t0 };
}

export async function mustCall(c: Client, method: string, p: string, body?: unknown, contentType?: string): Promise<Reply> {
  const r = await call(c, method, p, body, contentType);
  if (r.status < 200 || r.status >= 300) {
    throw new Error(`${c.name} ${method} ${p}: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
  }
  return r;
}

/** Runs fn(i) for i in [0, n) with at most `limit` at once. */
export async function bounded(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

/** The order of the paths in iteration i: every permutation in turn, so none is always first. */
export function orderFor<T>(items: T[], i: number): T[] {
  const perms = permutations(items);
  return perms[i % perms.length]!;
}

export function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, k) => permutations([...items.slice(0, k), ...items.slice(k + 1)]).map((rest) => [x, ...rest]));
}

export interface Stats { n: number; median: number; p90: number; min: number; max: number }

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
  const p90 = s[Math.max(0, Math.ceil(0.9 * n) - 1)]!;
  return { n, median, p90, min: s[0]!, max: s[n - 1]! };
}

export function fmt(ms: number): string {
  return ms.toFixed(ms < 10 ? 2 : 1);
}

/**
 * Each event of a watch response body (one JSON object a line), with `clock()` read when its chunk
 * arrived: the benches time events by arrival, which an async iterator would blur.
 */
export function onWatchEvents<E>(body: NodeJS.ReadableStream, clock: () => number, onEvent: (ev: E, at: number) => void): void {
  let buf = '';
  body.setEncoding('utf8');
  body.on('data', (chunk: string) => {
    const at = clock();
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) onEvent(JSON.parse(line) as E, at);
    }
  });
}

/**
 * What a bench made, removed once: the end of main, an error, a signal and a watchdog all await the
 * same work (`run`). `exitWith` runs main and exits with its code; on SIGINT or SIGTERM it says
 * `onSignal`, cleans up and exits 130; on an error it prints `describe(err)`, cleans up and exits 2
 * — except after a signal, when requests fail because the cleanup is removing what they use and the
 * signal's handler exits.
 */
export class BenchCleanup {
  private hook: (() => Promise<void>) | undefined;
  private cleaning: Promise<void> | undefined;
  private interrupted = false;

  /** What to remove, set once the bench has made it. */
  set(hook: () => Promise<void>): void {
    this.hook = hook;
  }

  run(): Promise<void> {
    return (this.cleaning ??= this.hook ? this.hook() : Promise.resolve());
  }

  exitWith(name: string, main: () => Promise<number>, onSignal: string, describe: (err: unknown) => string): void {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        this.interrupted = true;
        process.stderr.write(`${name}: ${sig}; ${onSignal}\n`);
        void this.run().finally(() => process.exit(130));
      });
    }
    main().then(
      (code) => process.exit(code),
      (err: unknown) => {
        if (this.interrupted) return;
        process.stderr.write(`${name}: ${describe(err)}\n`);
        void this.run().finally(() => process.exit(2));
      },
    );
  }
}

/** Where a context of a kubeconfig points and its TLS material (the spaces' admin certificates). */
export async function kubeconfigClient(kubeconfig: string, context: string): Promise<{ origin: string; tls: Tls }> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  kc.setCurrentContext(context);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`no cluster for context ${context} in ${kubeconfig}`);
  return { origin: new URL(cluster.server).origin, tls: { ca: opts.ca as string | undefined, cert: opts.cert as string | undefined, key: opts.key as string | undefined } };
}
