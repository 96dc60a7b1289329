// A work queue of keys for controllers, with client-go's workqueue semantics (written by hand:
// @kubernetes/client-node has none, and npm's queues know nothing of these rules):
// - a key is queued at most once (adding a queued key is a no-op: dedup);
// - a key being processed is never handed out again until done(key); if it was added meanwhile
//   it is queued again at done, so no change is lost and no key is processed twice at once;
// - addRateLimited(key) re-adds after a per-key exponential backoff (base·2^failures, capped),
//   forget(key) resets the key's failures; addAfter(key, ms) re-adds later;
// - shutDown() wakes every waiting get() with undefined; queued keys are dropped.
// Keys are strings; controllers derive them from structured keys (queue keys, never objects).

export interface RateLimit {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RATE_LIMIT: RateLimit = { baseMs: 5, maxMs: 60_000 };

/** The wait after `failures` failures before this one: base·2^failures, capped at max. */
export function backoffMs(limit: RateLimit, failures: number): number {
  return Math.min(limit.maxMs, limit.baseMs * 2 ** Math.min(failures, 40));
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;

  constructor(private readonly limit: RateLimit = DEFAULT_RATE_LIMIT) {}

  get length(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return; // queued again by done()
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
    } else {
      this.queue.push(key);
    }
  }

  /** The next key (now marked processing), waiting for one; undefined once shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Processing of key is over; a key added meanwhile is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.add(key);
    }, ms);
    this.timers.add(timer);
  }

  /** Re-adds key after its backoff, which doubles with each failure since forget(key). */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, this.backoff(n));
  }

  backoff(failures: number): number {
    return backoffMs(this.limit, failures);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.length = 0;
    this.dirty.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}

/**
 * Runs `workers` loops taking keys from the queue until it shuts down: handle(key) resolving is
 * success (forget), throwing is a retry with backoff (reported to onError). Resolves when all
 * loops have ended.
 */
export async function runWorkers(queue: WorkQueue, workers: number, handle: (key: string) => Promise<void>,
  onError: (key: string, err: unknown) => void = () => {}): Promise<void> {
  const loop = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await handle(key);
        queue.forget(key);
      } catch (err) {
        onError(key, err);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}
