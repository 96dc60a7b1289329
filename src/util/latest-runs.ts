// One run at a time per key, and every caller waits for a run that started after its call: a key
// asked for while its run is under way gets one more run after it (however many asked meanwhile),
// and that run reads the state as it is then. So writes of one object never overtake each other,
// and many changes while a write is in flight cost one write more, not one each. Written by hand:
// a dozen lines, where a queue per key (p-queue) would not merge the waiting calls.
export class LatestRuns {
  private readonly running = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, Promise<void>>();

  /** Runs `fn` for `key` now, or once after the run under way (the `fn` of the first caller that waits). */
  run(key: string, fn: () => Promise<void>): Promise<void> {
    const waiting = this.queued.get(key);
    if (waiting) return waiting;
    const current = this.running.get(key);
    if (!current) return this.start(key, fn);
    const next = current.catch(() => undefined).then(() => {
      this.queued.delete(key);
      return this.start(key, fn);
    });
    this.queued.set(key, next);
    return next;
  }

  /** Whether nothing runs or waits. */
  idle(): boolean {
    return this.running.size === 0 && this.queued.size === 0;
  }

  private start(key: string, fn: () => Promise<void>): Promise<void> {
    const p: Promise<void> = fn().finally(() => {
      if (this.running.get(key) === p) this.running.delete(key);
    });
    this.running.set(key, p);
    return p;
  }
}
