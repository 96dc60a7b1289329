// Whether an UpsyncRequest's executor (a ServiceAccount of the WEC) may `get` a resource in a
// namespace, asked of the WEC by SubjectAccessReview (../shared/work-executor.ts reviewExecutor: OCM's user
// and groups, the agent's right of system:auth-delegator). Upsync reads with the agent's broad
// rights; this check makes the WEC's RBAC for the executor decide what a policy may copy out, as
// it decides what a policy's works may write.
// - Synchronous for the planner: mayRead() answers from the cache, or undefined when it has no
//   answer yet; the question is then asked in the background and onChange() called when the
//   answer arrives, so the plan is run again.
// - Per (executor, group, resource, namespace). For a namespaced resource the review for every
//   namespace (namespace '') is asked first: a ClusterRole bound cluster-wide answers for all
//   namespaces in one review; only when it says no is each namespace asked.
// - An answer is reused for ttlMs (30 s), then asked again while the old answer still holds
//   (never "unknown" again once known: an expiry must not make copies flap); a change of answer
//   calls onChange(). Answers past their TTL are asked again by a timer too (every retryMs), so a
//   revoked right is seen within about a TTL even when nothing in the WEC changes.
// - A failed review is retried after retryMs (5 s), the old answer kept.
// - sweep(), after each plan, forgets the answers that plan did not ask for (requests, namespaces
//   and executors that went): the cache holds what the current requests need, no more.
import PQueue from 'p-queue';
import type { ServiceAccountRef } from '../../kube/service-account-ref.js';
import type { Upstream } from '../../kube/upstream.js';
import { reviewExecutor, serviceAccountExecutor } from '../shared/work-executor.js';

export const READ_RIGHT_TTL_MS = 30_000;

/** What is read of a resource: its discovery (the review names its version too). */
export interface ReadResource {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
}

/** The planner's question: undefined while the answer is not known yet. */
export type ReadAccess = (executor: ServiceAccountRef, resource: ReadResource, namespace: string) => boolean | undefined;

export interface ReadRightsOptions {
  wec: Upstream;
  /** An answer arrived or changed: plan again. */
  onChange: () => void;
  onError: (err: unknown) => void;
  ttlMs?: number;
  /** After a failed review (default: 5 s, at most the TTL). */
  retryMs?: number;
  /** Reviews in flight at most (default 8). */
  concurrency?: number;
  now?: () => number;
}

interface Entry {
  executor: ServiceAccountRef;
  resource: ReadResource;
  namespace: string;
  allowed: boolean | undefined;
  /** When to ask again. */
  until: number;
  asking: boolean;
  /** Asked for since the last sweep. */
  used: boolean;
}

export class ReadRights {
  private readonly entries = new Map<string, Entry>();
  private readonly queue: PQueue;
  private readonly ttlMs: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Reviews sent (tests). */
  reviews = 0;

  constructor(private readonly options: ReadRightsOptions) {
    this.ttlMs = options.ttlMs ?? READ_RIGHT_TTL_MS;
    this.retryMs = Math.min(options.retryMs ?? 5_000, this.ttlMs);
    this.now = options.now ?? (() => Date.now());
    this.queue = new PQueue({ concurrency: options.concurrency ?? 8 });
  }

  /** Whether `executor` may get `resource` objects in `namespace` ('' for a cluster-scoped resource). */
  mayRead: ReadAccess = (executor, resource, namespace) => {
    const everywhere = this.answer(executor, resource, '');
    if (!resource.namespaced || everywhere !== false) return everywhere;
    return this.answer(executor, resource, namespace);
  };

  /** Starts the timer that asks again what is past its TTL (or failed). */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.refresh(), this.retryMs);
    this.timer.unref();
  }

  /** Asks again every answer past its TTL, and every failed one past its retry time. */
  refresh(): void {
    const now = this.now();
    for (const [k, e] of this.entries) if (!e.asking && e.until <= now) this.ask(k, e);
  }

  /** After a plan: forgets the answers it did not ask for. */
  sweep(): void {
    for (const [k, e] of this.entries) {
      if (e.used) e.used = false;
      else this.entries.delete(k);
    }
  }

  /** Answers held (tests). */
  get size(): number {
    return this.entries.size;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.queue.clear();
  }

  private answer(executor: ServiceAccountRef, resource: ReadResource, namespace: string): boolean | undefined {
    const key = JSON.stringify([executor.namespace, executor.name, resource.group, resource.resource, namespace]);
    let e = this.entries.get(key);
    if (!e) {
      e = { executor, resource, namespace, allowed: undefined, until: 0, asking: false, used: true };
      this.entries.set(key, e);
    }
    e.used = true;
    if (!e.asking && e.until <= this.now()) this.ask(key, e);
    return e.allowed;
  }

  private ask(key: string, e: Entry): void {
    if (this.stopped) return;
    e.asking = true;
    const { resource: r } = e;
    const ex = serviceAccountExecutor(e.executor.namespace, e.executor.name);
    void this.queue.add(async () => {
      try {
        this.reviews++;
        const { allowed } = await reviewExecutor(this.options.wec, ex, 'get', { group: r.group, version: r.version, resource: r.resource, namespace: e.namespace, name: '' });
        e.until = this.now() + this.ttlMs;
        const changed = e.allowed !== allowed;
        e.allowed = allowed;
        if (changed && !this.stopped && this.entries.get(key) === e) this.options.onChange();
      } catch (err) {
        e.until = this.now() + this.retryMs;
        if (!this.stopped) this.options.onError(err);
      } finally {
        e.asking = false;
      }
    });
  }
}
