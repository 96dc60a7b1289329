// Writes the UpsyncedObjects of one mailbox, one key (UpsyncedObject name) at a time from a work
// queue (keys, never objects; a key queued many times is written once), by a few workers (at
// most `workers` writes in flight), retried with backoff on failure. sync(name) compares what the
// planner wants with what the mailbox holds (its informer's copy, or our last write when that is
// newer) and writes only when the view would show something new: the source object's uid or
// resourceVersion, or the policies. Create is a POST, update a PUT with the resourceVersion held
// (409: re-read, once), delete a DELETE (404: already gone). A copy is deleted only when
// `mayDelete` says what would select it is fully known (informers listed), so a restart never
// deletes what a slow list has not shown yet; and a copy the mailbox holds is left as it is while
// `hold` says an answer about it is missing (an executor's read right being asked). A create the
// mailbox's ResourceQuota refuses (the ITS admin bounds each mailbox, since a malicious agent would
// ignore our own bounds) is not an error retried per copy: the copy waits in ./quota-breaker.ts,
// which tries one at a time until there is room; `refused` says which wait, and why.
import { joinApiVersion } from '../../kube/api-version.js';
import { newerResourceVersion, type KubeObject } from '../../kube/objects.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { UPSYNC_GROUP, UPSYNC_WDS_LABEL, upsyncedObjectsPath, type UpsyncedObject } from '../../kube/upsync-api.js';
import { WorkQueue, runWorkers, type RateLimit } from '../../kube/work-queue.js';
import type { DesiredCopy } from './plan.js';
import { QuotaBreaker } from './quota-breaker.js';

export const DEFAULT_UPSYNC_WRITERS = 8;

export interface CopyWriterOptions {
  cluster: string;
  its: Upstream;
  desired: (name: string) => DesiredCopy | undefined;
  /** The mailbox's copy, as its informer holds it. */
  held: (name: string) => UpsyncedObject | undefined;
  mayDelete: (held: UpsyncedObject | undefined) => boolean;
  /** Whether a held copy is to be left as it is for now (the planner lacks an answer about it). */
  hold?: (name: string) => boolean;
  onError: (name: string, err: unknown) => void;
  /** The set of copies waiting for room in the mailbox's ResourceQuota changed. */
  onRefusedChange?: () => void;
  /** The quota refused a create (kube's message, one line): logs and metrics. */
  onRefused?: (name: string, message: string) => void;
  workers?: number;
  /** Backoff of a failed write (default 0.5 s doubling to 60 s). */
  retry?: RateLimit;
}

/** Of kube's message of a quota refusal, what is kept (statuses and logs). */
const MAX_REFUSAL = 300;

/**
 * kube's message (its first line, at most MAX_REFUSAL characters) when a create of an
 * UpsyncedObject was refused by a ResourceQuota (403 Forbidden: "exceeded quota", or "status
 * unknown for quota" while the quota controller has not counted it yet), else undefined.
 */
export function quotaRefusal(res: { status: number; body: Buffer }): string | undefined {
  if (res.status !== 403) return undefined;
  let st: { reason?: unknown; message?: unknown; details?: { kind?: unknown } };
  try {
    st = JSON.parse(res.body.toString('utf8')) as typeof st;
  } catch {
    return undefined;
  }
  const { message } = st;
  if (st.reason !== 'Forbidden' || st.details?.kind !== 'upsyncedobjects' || typeof message !== 'string') return undefined;
  if (!/exceeded quota|status unknown for quota/.test(message)) return undefined;
  const line = message.split('\n')[0]!;
  return line.length > MAX_REFUSAL ? `${line.slice(0, MAX_REFUSAL)}…` : line;
}

/** What the view shows that a write must carry: identity, version and policies (not lastSeen). */
export const copySignature = (c: { source: { uid?: string; resourceVersion?: string; singular?: string; shortNames?: string[] }; policies?: string[] }, wds: string | undefined): string =>
  JSON.stringify([wds ?? '', c.source.uid ?? '', c.source.resourceVersion ?? '', c.policies ?? [], c.source.singular ?? '', c.source.shortNames ?? []]);

/** The UpsyncedObject of a desired copy (lastSeen: now, RFC 3339 to the second). */
export function copyObject(cluster: string, d: DesiredCopy, resourceVersion?: string): UpsyncedObject {
  const apiVersion = joinApiVersion(d.source.group, d.source.version);
  const object: KubeObject = { ...d.object, apiVersion, kind: d.source.kind };
  return {
    apiVersion: `${UPSYNC_GROUP}/v1alpha1`, kind: 'UpsyncedObject',
    metadata: { name: d.name, namespace: cluster, labels: { [UPSYNC_WDS_LABEL]: d.wds }, ...(resourceVersion ? { resourceVersion } : {}) },
    source: d.source, lastSeen: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), policies: d.policies, object,
  };
}

export class CopyWriter {
  private readonly queue: WorkQueue;
  /** Per name, what our last write stored: its signature and the resourceVersion it got. */
  private readonly written = new Map<string, { sig: string; rv: string }>();
  private loops: Promise<void> | undefined;
  private busy = 0;
  /** Counts of writes, for tests and logs. */
  readonly writes = { create: 0, update: 0, delete: 0 };
  private readonly quota: QuotaBreaker;

  constructor(private readonly options: CopyWriterOptions) {
    const limit = options.retry ?? { baseMs: 500, maxMs: 60_000 };
    this.queue = new WorkQueue(limit);
    this.quota = new QuotaBreaker({
      limit, batch: options.workers ?? DEFAULT_UPSYNC_WRITERS, release: (n) => this.queue.add(n), onChange: () => this.options.onRefusedChange?.(),
    });
  }

  /** Copies waiting for room in the mailbox's ResourceQuota: name → kube's message. */
  get refused(): ReadonlyMap<string, string> {
    return this.quota.refused;
  }

  /** A copy left the mailbox: a waiting one may fit now. */
  roomMade(): void {
    this.quota.roomMade();
  }

  start(): void {
    this.loops ??= runWorkers(this.queue, this.options.workers ?? DEFAULT_UPSYNC_WRITERS, async (k) => {
      this.busy++;
      try {
        await this.sync(k);
      } finally {
        this.busy--;
      }
    }, this.options.onError);
  }

  enqueue(name: string): void {
    this.queue.add(name);
  }

  /** The mailbox's copy went (deleted by someone, or by us): our last write no longer describes it. */
  forget(name: string): void {
    this.written.delete(name);
  }

  /** Whether nothing is queued or being written (tests). */
  idle(): boolean {
    return this.queue.length === 0 && this.busy === 0;
  }

  async stop(): Promise<void> {
    this.quota.stop();
    this.queue.shutDown();
    await this.loops;
  }

  async sync(name: string): Promise<void> {
    try {
      await this.write(name);
    } finally {
      this.quota.settled(name);
    }
  }

  /** Brings one copy in line (a failure throws: retried with backoff; a quota's refusal does not). */
  private async write(name: string): Promise<void> {
    const d = this.options.desired(name);
    const held = this.options.held(name);
    if (held && this.options.hold?.(name)) return;
    let mine = this.written.get(name);
    // A copy newer than our last write (someone else wrote it): only the copy says what is there.
    if (mine && held && newerResourceVersion(held.metadata.resourceVersion, mine.rv)) mine = undefined;
    const path = `${upsyncedObjectsPath(this.options.cluster)}/${encodeURIComponent(name)}`;
    if (!d) {
      this.quota.dropped(name);
      if ((!held && !mine) || !this.options.mayDelete(held)) return;
      expectOk(await upstreamRequest(this.options.its, 'DELETE', path), `delete ${path}`, [404]);
      this.written.delete(name);
      this.writes.delete++;
      return;
    }
    const sig = copySignature(d, d.wds);
    if (mine?.sig === sig || (held && copySignature(held, held.metadata.labels?.[UPSYNC_WDS_LABEL]) === sig)) {
      this.quota.dropped(name);
      return;
    }
    // Our last write when the informer has not caught up with it, else the informer's copy.
    const rv = mine?.rv ?? held?.metadata.resourceVersion;
    // A create while copies wait for room in the quota: this one waits too, unless released.
    if (rv === undefined && !this.quota.mayCreate(name)) {
      this.quota.wait(name);
      return;
    }
    let res = rv === undefined
      ? await upstreamRequest(this.options.its, 'POST', upsyncedObjectsPath(this.options.cluster), { body: copyObject(this.options.cluster, d) })
      : await upstreamRequest(this.options.its, 'PUT', path, { body: copyObject(this.options.cluster, d, rv) });
    if (res.status === 409 || res.status === 404) {
      // Our idea of the copy was stale (created meanwhile, changed, or deleted): read it again, once.
      const now = await upstreamRequest(this.options.its, 'GET', path);
      const fresh = now.status === 200 ? (JSON.parse(now.body.toString('utf8')) as UpsyncedObject).metadata.resourceVersion : undefined;
      res = fresh === undefined
        ? await upstreamRequest(this.options.its, 'POST', upsyncedObjectsPath(this.options.cluster), { body: copyObject(this.options.cluster, d) })
        : await upstreamRequest(this.options.its, 'PUT', path, { body: copyObject(this.options.cluster, d, fresh) });
    }
    const refusal = quotaRefusal(res);
    if (refusal !== undefined) {
      this.quota.refusedBy(name, refusal);
      this.options.onRefused?.(name, refusal);
      return;
    }
    if (res.status >= 300) this.quota.dropped(name);
    const stored = JSON.parse(expectOk(res, `write ${path}`).body.toString('utf8')) as UpsyncedObject;
    if (res.status === 201) this.writes.create++;
    else this.writes.update++;
    this.written.set(name, { sig, rv: stored.metadata?.resourceVersion ?? '' });
    this.quota.written(name);
  }
}
