// What an agent does while its mailbox's ResourceQuota refuses copies (docs/upsync.md, "Bounds"):
// one breaker for the whole mailbox, not a retry per copy, so that a full quota costs the ITS a
// probe per backoff period however many copies wait. Refused copies wait in `refused` (first
// refused, first tried; with kube's message); while any wait, a create of a copy not yet written is
// not sent but waits with them. A probe releases the first waiting copy after the backoff (base
// doubling to max, from the copy writer's retry limits); a copy written releases the next `batch`;
// a copy deleted from the mailbox releases one after `roomDelayMs` (kube-controller-manager's quota
// controller frees the room only once it has seen the deletion). Copies no longer wanted leave.
import { backoffMs, type RateLimit } from '../../kube/work-queue.js';

export interface QuotaBreakerOptions {
  limit: RateLimit;
  /** Queues a released copy for a create. */
  release: (name: string) => void;
  /** The waiting copies changed (their requests' status says how many). */
  onChange: () => void;
  /** Released at most at once after a copy was written (the writers in flight). */
  batch: number;
  /** After a copy of the mailbox is deleted, the wait before a probe (default 1 s). */
  roomDelayMs?: number;
}

export class QuotaBreaker {
  /** Copies waiting for room: name → kube's message, in the order they were refused. */
  readonly refused = new Map<string, string>();
  /** Waiting copies released for one create. */
  private readonly released = new Set<string>();
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (ms since the epoch). */
  private dueAt = 0;
  private last = '';

  constructor(private readonly quota: QuotaBreakerOptions) {}

  /** Whether a create of `name` may be sent now. */
  mayCreate(name: string): boolean {
    return this.refused.size === 0 || this.released.has(name);
  }

  /** A create not sent: `name` waits with the refused copies; kube's last message. */
  wait(name: string): string {
    if (!this.refused.has(name)) {
      this.refused.set(name, this.last);
      this.quota.onChange();
    }
    return this.last;
  }

  /** The quota refused a create of `name`. */
  refusedBy(name: string, message: string): void {
    this.last = message;
    const changed = this.refused.get(name) !== message;
    this.refused.set(name, message);
    this.released.delete(name);
    this.failures++;
    this.arm(this.backoff());
    if (changed) this.quota.onChange();
  }

  /** `name` was written: there is room, the next ones are released. */
  written(name: string): void {
    this.released.delete(name);
    if (!this.refused.delete(name)) return;
    if (this.refused.size === 0) this.reset();
    else {
      this.failures = 0;
      this.releaseNext(this.quota.batch);
    }
    this.quota.onChange();
  }

  /** `name` is no longer waiting (not wanted, or its write failed otherwise: said as that failure). */
  dropped(name: string): void {
    const wasReleased = this.released.delete(name);
    if (!this.refused.delete(name)) return;
    if (this.refused.size === 0) this.reset();
    else if (wasReleased && this.released.size === 0) this.releaseNext(1);
    this.quota.onChange();
  }

  /** A sync of `name` ended without a create (held back): a released copy goes back to waiting. */
  settled(name: string): void {
    if (this.released.delete(name) && this.refused.size > 0 && this.released.size === 0) this.arm(this.backoff());
  }

  /** A copy left the mailbox: room, once the quota controller has counted it. */
  roomMade(): void {
    const delay = this.quota.roomDelayMs ?? 1000;
    // A probe due sooner stays (a stream of deletions must not keep postponing it).
    if (this.refused.size === 0 || (this.timer && this.dueAt <= Date.now() + delay)) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.arm(delay);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private backoff(): number {
    return backoffMs(this.quota.limit, Math.max(0, this.failures - 1));
  }

  private arm(ms: number): void {
    if (this.timer) return;
    this.dueAt = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.releaseNext(1);
    }, ms);
  }

  private releaseNext(n: number): void {
    for (const name of this.refused.keys()) {
      if (n <= 0) break;
      if (this.released.has(name)) continue;
      this.released.add(name);
      this.quota.release(name);
      n--;
    }
  }

  private reset(): void {
    this.failures = 0;
    this.released.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
