// A bound on one client's own requests to one kube-apiserver (the ITS, from placement and from the
// agents): at most `limit` in flight, the limit between 1 and maxInFlight. When the server says it
// is overloaded — 429, or a 5xx carrying Retry-After (client-go's rule for retrying) — no request
// of this client starts until the time it asked for has passed (Retry-After, capped; without one,
// an exponential backoff), the limit halves (once per such pause) and the refused request is
// retried first; each `limit` successes in a row grow the limit by one again (additive increase,
// multiplicative decrease, as TCP does). After maxRetries refusals the last answer is returned: the
// caller's error path (a controller's rate-limited requeue) tries again later, so nothing is lost.
// Concurrency, priority and pausing are p-queue's; the rules above are ours.
import PQueue from 'p-queue';

export interface LimitedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

export interface RequestLimiterOptions {
  /** The most requests in flight at once (the limit starts there). */
  maxInFlight: number;
  /** Refusals of one request before its answer is returned (client-go: 10). */
  maxRetries?: number;
  /** The longest pause one answer can ask for (a Retry-After beyond it is cut). */
  maxWaitMs?: number;
  /** The first backoff when a 429 names no Retry-After (doubled per retry of that request). */
  baseBackoffMs?: number;
  now?: () => number;
}

export interface RequestLimiterStats {
  limit: number;
  inFlight: number;
  queued: number;
  /** Answers that asked this client to slow down, since it started. */
  throttled: number;
  /** Requests whose answer was returned after maxRetries refusals. */
  gaveUp: number;
}

/**
 * `--max-its-requests-inflight`'s default (serve and agent): see docs/benchmarks.md, "Fleet speed, first part" for the
 * measurement it comes from.
 */
export const DEFAULT_ITS_MAX_IN_FLIGHT = 32;

const DEFAULTS = { maxRetries: 10, maxWaitMs: 30_000, baseBackoffMs: 250 };

/** The wait an answer asks for, in ms (Retry-After: seconds or an HTTP date), or undefined. */
export function retryAfterMs(headers: LimitedResponse['headers'], now: number): number | undefined {
  const raw = headers['retry-after'];
  const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class RequestLimiter {
  private readonly queue: PQueue;
  private readonly max: number;
  private readonly limits: Required<Omit<RequestLimiterOptions, 'now'>> & { now: () => number };
  private successes = 0;
  private resumeAt = 0;
  private paused = false;
  private resumeTimer: NodeJS.Timeout | undefined;
  private throttledCount = 0;
  private gaveUpCount = 0;

  constructor(opts: RequestLimiterOptions) {
    if (!Number.isInteger(opts.maxInFlight) || opts.maxInFlight < 1) throw new Error(`maxInFlight must be a positive integer, not ${opts.maxInFlight}`);
    this.limits = { ...DEFAULTS, now: Date.now, ...opts };
    this.max = opts.maxInFlight;
    this.queue = new PQueue({ concurrency: this.max });
  }

  get stats(): RequestLimiterStats {
    return { limit: this.queue.concurrency, inFlight: this.queue.pending, queued: this.queue.size, throttled: this.throttledCount, gaveUp: this.gaveUpCount };
  }

  /** `send` within the bound, retried while the server asks this client to slow down. */
  async run<R extends LimitedResponse>(send: () => Promise<R>): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      let wait: number | undefined;
      // The answer is judged inside the task: the queue starts the next request as soon as a task
      // ends, so a pause set after it would let one more through per refusal.
      const res = await this.queue.add(async () => {
        const r = await send();
        wait = this.waitAsked(r, attempt);
        if (wait === undefined) this.succeeded();
        else this.slowDown(wait);
        return r;
      }, { priority: attempt > 0 ? 1 : 0, throwOnTimeout: true }); // a retry first: it has waited longest
      if (wait === undefined) return res;
      this.throttledCount++;
      if (attempt >= this.limits.maxRetries) {
        this.gaveUpCount++;
        return res;
      }
    }
  }

  /** Stops the resume timer (the process is ending). */
  close(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    this.paused = false;
    this.queue.start();
  }

  private waitAsked(res: LimitedResponse, attempt: number): number | undefined {
    const asked = retryAfterMs(res.headers, this.limits.now());
    if (res.status === 429) return Math.min(asked ?? this.limits.baseBackoffMs * 2 ** Math.min(attempt, 10), this.limits.maxWaitMs);
    if (res.status >= 500 && asked !== undefined) return Math.min(asked, this.limits.maxWaitMs);
    return undefined;
  }

  private succeeded(): void {
    if (this.queue.concurrency >= this.max) return;
    if (++this.successes >= this.queue.concurrency) {
      this.queue.concurrency += 1;
      this.successes = 0;
    }
  }

  private slowDown(waitMs: number): void {
    // Many requests in flight are refused together: one halving per pause, not one per refusal.
    if (!this.paused) this.queue.concurrency = Math.max(1, Math.floor(this.queue.concurrency / 2));
    this.successes = 0;
    const until = this.limits.now() + waitMs;
    if (this.paused && until <= this.resumeAt) return;
    this.paused = true;
    this.resumeAt = until;
    this.queue.pause();
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = undefined;
      this.paused = false;
      this.queue.start();
    }, waitMs); // not unref'd: a request waiting for the resume keeps the process alive
  }
}
