// Coalesced writes by key: mark(key) writes at once when the key was not written within the last
// debounceMs (so a lone change is reported without delay), else at the end of that window; at most
// one write per key is in flight, and marks meanwhile make one more write after it. A burst of N
// marks thus makes two or three writes, each of the latest state (write reads the state when it
// runs). A failed write is retried after retryMs.
export class Coalescer {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<string>();
  private readonly dirty = new Set<string>();
  /** When each key's last write started (keys are work names: bounded by the works there are). */
  private readonly lastWrite = new Map<string, number>();
  private stopped = false;

  constructor(private readonly write: (key: string) => Promise<void>, private readonly debounceMs = 100,
    private readonly onError: (key: string, err: unknown) => void = () => {}, private readonly retryMs = 1000) {}

  mark(key: string, delayMs?: number): void {
    if (this.stopped) return;
    this.dirty.add(key);
    if (this.inFlight.has(key) || this.timers.has(key)) return;
    const last = this.lastWrite.get(key);
    const wait = delayMs ?? (last === undefined ? 0 : Math.max(0, last + this.debounceMs - Date.now()));
    this.timers.set(key, setTimeout(() => void this.run(key), wait));
  }

  /** Drops what is kept of a key that is gone (its work deleted). */
  forget(key: string): void {
    this.lastWrite.delete(key);
  }

  /** Whether nothing is scheduled or in flight (tests wait on it). */
  idle(): boolean {
    return this.timers.size === 0 && this.inFlight.size === 0;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private async run(key: string): Promise<void> {
    this.timers.delete(key);
    this.dirty.delete(key);
    this.inFlight.add(key);
    this.lastWrite.set(key, Date.now());
    let retry = false;
    try {
      await this.write(key);
    } catch (err) {
      this.onError(key, err);
      retry = true;
    } finally {
      this.inFlight.delete(key);
    }
    if (retry) this.mark(key, this.retryMs);
    else if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.mark(key);
    }
  }
}
