// The agent side of upsync for one cluster (docs/upsync.md, "Transport: the edge dials out"),
// started and stopped with its ClusterAgent:
// - watches the cluster's UpsyncRequests (any WDS) and UpsyncedObjects in its mailbox of the ITS;
// - watches in the WEC the resources the requests need (./sources.ts: one informer per
//   (group, resource), or per (group, resource, namespace) when the clauses name their
//   namespaces; stopped when no request needs it; unserved ones retried on rediscovery);
// - on any change, after a short debounce, plans again (./plan.ts: the copies wanted, each
//   request's status) and queues the names of the copies whose content changed (./copy-writer.ts)
//   and the requests whose status did (./request-status.ts): event-driven, keys only;
// - copies only what each request's executor may read in the WEC (./read-rights.ts, asked by
//   SubjectAccessReview and cached; a missing answer is asked in the background and the plan run
//   again when it comes: meanwhile the object is not copied, and a copy already there is left as
//   it is, so an agent restart or an expired answer deletes nothing);
// - a backstop resync (every resyncMs, and once when everything has first listed) queues every
//   name the plan or the mailbox knows: what changed while the agent was down converges, and
//   copies no request selects any more (a request deleted meanwhile) are deleted;
// - copies the mailbox's ResourceQuota refuses wait (./quota-breaker.ts: one probe at a time, and
//   one soon after a copy of the mailbox goes); they are counted out of their requests' `objects`
//   and said first in their message, and in the log at most once a minute.
import { Informer, withoutManagedFields, type ChangeType } from '../../kube/informer.js';
import { jsonExtent } from '../../kube/json.js';
import type { KubeObject } from '../../kube/objects.js';
import type { Upstream } from '../../kube/upstream.js';
import type { RateLimit } from '../../kube/work-queue.js';
import { upsyncRequestsPath, upsyncedObjectsPath, type UpsyncRequest, type UpsyncRequestStatus, type UpsyncedObject } from '../../kube/upsync-api.js';
import { errorLine } from '../shared/log.js';
import { RestMapper } from '../shared/rest-mapper.js';
import { CopyWriter, copySignature } from './copy-writer.js';
import { neededResources, plan, watchScopes, type DesiredCopy, type Plan } from './plan.js';
import { ReadRights } from './read-rights.js';
import { RequestStatusWriter } from './request-status.js';
import { grKey } from './select.js';
import { WecSources, type InformerLike, type ResourceMapper, type UpsyncInformerFactory } from './sources.js';

export interface UpsyncAgentOptions {
  cluster: string;
  its: Upstream;
  wec: Upstream;
  /** The WEC's REST mapper (default: a new one; ClusterAgent passes its ApplyEngine's, sharing discovery). */
  mapper?: ResourceMapper;
  log: (msg: string) => void;
  /** Each failure, by where (`upsync-write`, `upsync-status`, `upsync-watch`, `upsync-authorize`): metrics. */
  onError?: (where: string, err: unknown) => void;
  /** Backstop resync (default 5 min). */
  resyncMs?: number;
  /** Discovery read again while a requested resource is unserved (default 30 s). */
  rediscoverMs?: number;
  /** Debounce of planning after a change (default 50 ms). */
  debounceMs?: number;
  /** UpsyncedObject writes in flight at most (default 8). */
  writers?: number;
  /** Backoff of a failed UpsyncedObject write (tests; default 0.5 s doubling to 60 s). */
  writeRetry?: RateLimit;
  /** Tests: informers (default: real informers, managedFields dropped). */
  informers?: UpsyncInformerFactory;
  /** How long an executor's read right is reused (default 30 s). */
  readRightTtlMs?: number;
}

const EMPTY: Plan = { desired: new Map(), statuses: new Map(), undecided: new Set() };
/** Deeper than this, an object is not copied (its JSON could not be written safely): counted too large. */
const MAX_DEPTH = 1000;
/** The log says the quota refuses copies at most this often. */
const QUOTA_LOG_MS = 60_000;

export class UpsyncAgent {
  private readonly requests: InformerLike<UpsyncRequest>;
  private readonly copies: InformerLike<UpsyncedObject>;
  readonly sources: WecSources;
  readonly writer: CopyWriter;
  readonly status: RequestStatusWriter;
  readonly rights: ReadRights;
  private current: Plan = EMPTY;
  private readonly sizes = new WeakMap<KubeObject, number>();
  private planTimer: NodeJS.Timeout | undefined;
  private timers: NodeJS.Timeout[] = [];
  private resynced = false;
  private started = false;
  private stopped = false;
  private lastWatchError = '';
  private lastAuthorizeError = '';
  /** When the log last said the mailbox's quota refuses copies. */
  private quotaSaidAt = -Infinity;

  constructor(private readonly options: UpsyncAgentOptions) {
    const factory: UpsyncInformerFactory = options.informers ?? ((where, path, onChange, onRelisted) => new Informer<KubeObject>(where === 'its' ? options.its : options.wec, {
      path, onChange, onRelisted, transform: withoutManagedFields, onError: (err) => this.watchError(err),
    }));
    const relisted = () => this.schedule();
    this.requests = factory('its', upsyncRequestsPath(options.cluster), (t, obj) => this.onRequest(t, obj as UpsyncRequest), relisted) as InformerLike<UpsyncRequest>;
    this.copies = factory('its', upsyncedObjectsPath(options.cluster), (t, obj) => this.onCopy(t, obj as UpsyncedObject), relisted) as InformerLike<UpsyncedObject>;
    this.sources = new WecSources({
      mapper: options.mapper ?? new RestMapper(options.wec), informers: factory,
      onChange: () => this.schedule(), onError: (err) => this.fail('upsync-watch', `WEC discovery: ${errorLine(err)}`, err),
    });
    this.rights = new ReadRights({
      wec: options.wec, ttlMs: options.readRightTtlMs, onChange: () => this.schedule(),
      onError: (err) => this.authorizeError(err),
    });
    this.writer = new CopyWriter({
      cluster: options.cluster, its: options.its, workers: options.writers, retry: options.writeRetry,
      desired: (n) => this.current.desired.get(n), held: (n) => this.copies.get(options.cluster, n),
      hold: (n) => this.current.undecided.has(n),
      mayDelete: (held) => this.mayDelete(held),
      onError: (n, err) => this.fail('upsync-write', `upsyncedobject ${n}: ${errorLine(err)}`, err),
      onRefused: (_n, message) => this.quotaRefused(message),
      onRefusedChange: () => this.refusedChanged(),
    });
    this.status = new RequestStatusWriter({
      cluster: options.cluster, its: options.its, debounceMs: options.debounceMs,
      request: (n) => this.requests.get(options.cluster, n), status: (n) => this.statusOf(n),
      onError: (n, err) => this.fail('upsync-status', `upsyncrequest ${n} status: ${errorLine(err)}`, err),
    });
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.requests.start();
    this.copies.start();
    this.writer.start();
    this.rights.start();
    this.timers = [
      setInterval(() => this.resync(), this.options.resyncMs ?? 300_000),
      setInterval(() => void this.sources.rediscover(), this.options.rediscoverMs ?? 30_000),
    ];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.planTimer);
    for (const t of this.timers) clearInterval(t);
    this.requests.stop();
    this.copies.stop();
    this.sources.stop();
    this.rights.stop();
    this.status.stop();
    await this.writer.stop();
  }

  /** Whether everything has listed once and the first resync was queued. */
  synced(): boolean {
    return this.resynced;
  }

  /** Whether no plan, write or status write is pending (tests). */
  idle(): boolean {
    return this.planTimer === undefined && this.writer.idle() && this.status.idle();
  }

  /** The copies the last plan wants (tests, the agent's /debug if any). */
  desired(): ReadonlyMap<string, DesiredCopy> {
    return this.current.desired;
  }

  /** Queues every copy the plan or the mailbox knows, and every request's status. */
  resync(): void {
    // Not before the mailbox has listed; a WEC resource that cannot list (forbidden) holds back only
    // its own copies (mayDelete) and its requests' statuses, not the rest.
    if (!this.requests.hasSynced || !this.copies.hasSynced) return;
    for (const n of this.current.desired.keys()) this.writer.enqueue(n);
    for (const c of this.copies.list()) this.writer.enqueue(c.metadata.name);
    for (const r of this.requests.list()) if (this.complete([r])) this.status.mark(r.metadata.name);
  }

  private onRequest(type: ChangeType, req: UpsyncRequest): void {
    if (type === 'DELETED') this.status.forget(req.metadata.name);
    this.sources.setWanted(watchScopes(this.requests.list()));
    this.schedule();
  }

  private onCopy(type: ChangeType, copy: UpsyncedObject): void {
    if (type === 'DELETED') {
      this.writer.forget(copy.metadata.name);
      // Room in the mailbox's quota: a waiting copy need not wait for the probe's backoff.
      this.writer.roomMade();
    }
    // Our own writes come back here too: sync finds them current and writes nothing.
    if (this.fullySynced()) this.writer.enqueue(copy.metadata.name);
  }

  private schedule(): void {
    if (this.planTimer || this.stopped) return;
    this.planTimer = setTimeout(() => {
      this.planTimer = undefined;
      this.replan();
    }, this.options.debounceMs ?? 50);
  }

  private replan(): void {
    if (!this.requests.hasSynced) return;
    const prev = this.current;
    const next = plan(this.requests.list(), this.sources, (obj) => this.sizeOf(obj), this.rights.mayRead);
    this.rights.sweep();
    this.current = next;
    for (const [n, d] of next.desired) {
      const p = prev.desired.get(n);
      if (!p || copySignature(p, p.wds) !== copySignature(d, d.wds)) this.writer.enqueue(n);
    }
    for (const n of prev.desired.keys()) if (!next.desired.has(n)) this.writer.enqueue(n);
    // A copy held while its answer was missing: the answer came (written, updated or deleted now).
    for (const n of prev.undecided) if (!next.undecided.has(n)) this.writer.enqueue(n);
    // A status only from a complete picture of its request: counts from half-listed informers would flap.
    for (const r of this.requests.list()) {
      const n = r.metadata.name;
      if ((!this.resynced || JSON.stringify(next.statuses.get(n)) !== JSON.stringify(prev.statuses.get(n))) && this.complete([r])) this.status.mark(n);
    }
    if (!this.resynced && this.fullySynced()) {
      this.resynced = true;
      this.options.log(`${this.options.cluster}: upsync: ${this.requests.list().length} requests, ${next.desired.size} objects; watching ${this.sources.watching().join(' ') || 'nothing'}`);
      this.resync();
    }
  }

  private fullySynced(): boolean {
    return this.requests.hasSynced && this.copies.hasSynced && this.sources.allSynced();
  }

  /** Whether every WEC resource the requests need has listed (or is known unserved). */
  private complete(requests: readonly UpsyncRequest[]): boolean {
    return [...neededResources(requests)].every((gr) => this.sources.synced(gr) || this.sources.unserved(gr));
  }

  /**
   * A copy may go when what could select it is fully listed: no request needs its resource any
   * more, or every request that does has listed all it needs (its namespaces, owners included).
   */
  private mayDelete(held: UpsyncedObject | undefined): boolean {
    if (!this.requests.hasSynced || !this.copies.hasSynced) return false;
    if (!held?.source) return this.sources.allSynced();
    const gr = grKey(held.source.group, held.source.resource);
    return this.complete(this.requests.list().filter((r) => neededResources([r]).has(gr)));
  }

  /** A request's status as planned, less the copies of it the mailbox's quota refuses. */
  private statusOf(name: string): UpsyncRequestStatus | undefined {
    const planned = this.current.statuses.get(name);
    const req = this.requests.get(this.options.cluster, name);
    if (!planned || !req || this.writer.refused.size === 0) return planned;
    let refused = 0;
    let reason = '';
    for (const [copy, message] of this.writer.refused) {
      const d = this.current.desired.get(copy);
      if (d?.wds !== req.spec.wds || !d.policies.includes(req.spec.policy)) continue;
      refused++;
      reason ||= message;
    }
    if (refused === 0) return planned;
    // First: serve clips a long message at its end.
    const said = `${refused} refused by the mailbox's ResourceQuota (${reason})`;
    return { ...planned, objects: Math.max(0, planned.objects - refused), message: planned.message ? `${said}; ${planned.message}` : said };
  }

  private refusedChanged(): void {
    for (const r of this.requests.list()) if (this.complete([r])) this.status.mark(r.metadata.name);
  }

  private quotaRefused(message: string): void {
    const err = new Error(message);
    if (Date.now() - this.quotaSaidAt < QUOTA_LOG_MS) {
      this.options.onError?.('upsync-write', err);
      return;
    }
    this.quotaSaidAt = Date.now();
    this.fail('upsync-write', `the mailbox's ResourceQuota refuses copies (${this.writer.refused.size} waiting, tried one at a time): ${message}`, err);
  }

  private sizeOf(obj: KubeObject): number {
    let n = this.sizes.get(obj);
    if (n === undefined) {
      n = jsonExtent(obj, MAX_DEPTH, 64 << 20).over ? Infinity : Buffer.byteLength(JSON.stringify(obj));
      this.sizes.set(obj, n);
    }
    return n;
  }

  private watchError(err: Error): void {
    // A mailbox without the CRDs (serve not upgraded) fails every retry the same way: said once.
    if (err.message === this.lastWatchError) return;
    this.lastWatchError = err.message;
    this.fail('upsync-watch', `upsync watch: ${errorLine(err)}`, err);
  }

  private authorizeError(err: unknown): void {
    // Reviews the WEC keeps refusing (the agent without system:auth-delegator) fail every retry alike: said once, counted each time.
    const line = `SubjectAccessReview of an executor: ${errorLine(err)}`;
    if (line === this.lastAuthorizeError) {
      this.options.onError?.('upsync-authorize', err);
      return;
    }
    this.lastAuthorizeError = line;
    this.fail('upsync-authorize', line, err);
  }

  private fail(where: string, line: string, err: unknown): void {
    this.options.onError?.(where, err);
    this.options.log(`${this.options.cluster}: ${line}`);
  }
}
