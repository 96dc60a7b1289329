// What the latency benches ask of a space through an undici Pool (./view-bench.ts spacePools): one
// JSON call, a watch reporting each event's object with the time it arrived, and a wait on a
// condition. Shared by status-latency.ts and upsync-latency.ts.
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import { jsonLines } from '../src/kube/json-lines.js';

export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One request; a status of 300 or more throws, saying what was asked. */
export async function call(pool: Pool, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Obj> {
  const res = await pool.request({ method: method as 'GET', path, headers: { accept: 'application/json', 'content-type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) as Obj : {};
}

/** A watch that calls `onObject(obj, at)` for each event's object; stop() ends it. */
export function watch(pool: Pool, path: string, onObject: (o: Obj, at: number) => void): { ready: Promise<void>; stop: () => void } {
  const ac = new AbortController();
  const ready = (async () => {
    const res = await pool.request({ method: 'GET', path, headers: { accept: 'application/json' }, signal: ac.signal });
    if (res.statusCode !== 200) throw new Error(`watch ${path}: ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`);
    (async () => {
      try {
        for await (const e of jsonLines(res.body)) onObject((e as Obj).object ?? {}, performance.now());
      } catch { /* stopped */ }
    })();
  })();
  return { ready, stop: () => ac.abort() };
}

/** Polls `check` every 200 ms until it is true; throws after `timeoutMs` (a check that throws fails at once). */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out: ${what}`);
}
