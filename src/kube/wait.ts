// Waiting on a condition with a deadline: the one polling loop for "until ready" everywhere
// (spaces' components, CRDs Established, the APIService Available).
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProbeResult {
  ok: boolean;
  detail: string;
  /** Set when waiting longer cannot help (the process exited). */
  final?: boolean;
}

/** Polls `probe` until it is ok or `timeoutMs` passes; returns the last result. */
export async function waitFor(probe: () => Promise<ProbeResult>, timeoutMs: number, everyMs = 250): Promise<ProbeResult> {
  const deadline = Date.now() + timeoutMs;
  let last: ProbeResult = { ok: false, detail: 'not probed' };
  while (Date.now() < deadline) {
    last = await probe();
    if (last.ok || last.final) return last;
    await sleep(everyMs);
  }
  return last;
}

export class TimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms / 1000} s`);
    this.name = 'TimeoutError';
  }
}

/** `promise`'s outcome, or a TimeoutError once `ms` pass first (the work itself is not stopped). */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new TimeoutError(ms)), ms); });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `attempt` until it succeeds, waiting `firstMs` after a failure and doubling up to `maxMs`:
 * for start-up steps against a space that may be briefly away (its kube-apiserver restarting),
 * which must delay a server, not end it. Each failure is handed to `onError`.
 */
export async function retryUntilDone<T>(attempt: () => Promise<T>, onError: (err: unknown) => void, firstMs = 1000, maxMs = 10_000): Promise<T> {
  for (let wait = firstMs; ; wait = Math.min(wait * 2, maxMs)) {
    try {
      return await attempt();
    } catch (err) {
      onError(err);
      await sleep(wait);
    }
  }
}
