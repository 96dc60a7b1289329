// Event-driven status of one cluster's works, written coalesced (../shared/coalescer.ts): per work, the
// latest apply/observe results; a write builds the ManifestWork status from them and PATCHes the
// status subresource only when it differs from what the ITS holds, and server-side-applies one
// WorkStatus per applied object whose content changed (and deletes those no longer applied). A
// missing WorkStatus CRD (`ksview serve` installs it) is retried, never fatal.
// A bundled work (many objects in one) carries its objects' statuses itself, in each manifest's
// statusFeedback (../../kube/status-in-work.ts): one write per work, not one per object; only a status
// that does not fit there has a WorkStatus. Writes are ordered so that a reader always finds each
// status in one place or the other: WorkStatuses written, then the work, then WorkStatuses deleted.
// A WorkStatus the ITS refuses (the mailbox's quota is full, or past its size bound) is said once,
// left unwritten and tried again at the work's next status write (never in a loop of its own); the
// work's status is written all the same.
import { expectOk, serverSideApply, upstreamRequest, UpstreamError, type Upstream } from '../../kube/upstream.js';
import { BUNDLE_ANNOTATION, workStatusesPath, type FeedbackValue, type ManifestWork, type WorkStatus } from '../../kube/ocm-api.js';
import { newerResourceVersion, type KubeObject } from '../../kube/objects.js';
import type { ManifestApplyResult, PlacedResource, WorkApplier } from '../shared/contract.js';
import { Coalescer } from '../shared/coalescer.js';
import { buildWorkStatusObject, sourceGenerations } from './workstatus.js';
import { MAX_WORK_BYTES, statusValues } from '../../kube/status-in-work.js';
import { workStatus } from './work-conditions.js';

const FIELD_MANAGER = 'ksview-agent';

/** What was last written of one WorkStatus: the object (spec, labels, statusDetails) and its status, as JSON. */
interface Written { object: string; status: string }

export interface StatusWriterOptions {
  cluster: string;
  its: Upstream;
  applier: WorkApplier;
  /** The ManifestWork as the ITS informer holds it. */
  work: (name: string) => ManifestWork | undefined;
  onError: (where: string, err: unknown) => void;
  debounceMs?: number;
}

/** The ITS's refusal of what an agent stores: its mailbox's ResourceQuota, or its size bound (413). */
const storageRefused = (err: unknown): boolean => err instanceof UpstreamError
  && (err.upstreamStatus === 413 || (err.upstreamStatus === 403 && /exceeded quota|status unknown for quota/.test(err.message)));

/** What the status builder looks at, without timestamps. */
const comparable = (s: unknown): string => JSON.stringify(s, (k, v: unknown) => (k === 'lastTransitionTime' ? undefined : v));

export class StatusWriter {
  private readonly results = new Map<string, ManifestApplyResult[]>();
  /** Per work: the work generation whose results are held, and the work that says the WDS generations it carried (cached: never mutated). */
  private readonly applied = new Map<string, { generation: number | undefined; source: ManifestWork | undefined }>();
  /** WorkStatus name → what was last written, per work. */
  private readonly written = new Map<string, Map<string, Written>>();
  /**
   * Per work, the status our last write stored and the resourceVersion it got: the informer's copy
   * may not have it yet, and comparing with that stale copy would write the same status again.
   */
  private readonly lastWrite = new Map<string, { resourceVersion?: string; status: ManifestWork['status'] }>();
  private unreachable: string | undefined;
  /** WorkStatuses the ITS refused, said once each until one is written again. */
  private readonly refused = new Set<string>();
  private readonly coalescer: Coalescer;
  /** Counts of writes, for tests and metrics. */
  readonly writes = { work: 0, workStatus: 0 };

  constructor(private readonly report: StatusWriterOptions) {
    this.coalescer = new Coalescer((k) => this.write(k), report.debounceMs ?? 100, (_k, err) => report.onError('status', err));
  }

  /** The results of applying `work` (its manifests as the reconciler applied them). */
  setResults(workName: string, results: ManifestApplyResult[], work?: ManifestWork): void {
    this.results.set(workName, results);
    if (work) {
      // The WDS generations a spec carries can move while it is applied (an annotation-only write of
      // the work, which refresh() skipped for want of results): the informer's copy of the same
      // generation is the later word, never the copy this apply started from.
      const now = this.report.work(workName);
      const source = now && now.metadata.generation === work.metadata.generation ? now : work;
      this.applied.set(workName, { generation: work.metadata.generation, source });
    }
    this.coalescer.mark(workName);
  }

  /**
   * The work changed in what its WorkStatuses say but not in what is applied (the WDS generation
   * it carries, when only the WDS object's metadata moved it): written again from the results held.
   */
  refresh(workName: string): void {
    const work = this.report.work(workName);
    const applied = this.applied.get(workName);
    // Only while the work's manifests are the ones applied (same work generation): a new spec's
    // generation is said once it is applied (setResults), never before.
    if (!work || !applied || !this.results.has(workName) || work.metadata.generation !== applied.generation) return;
    applied.source = work;
    this.coalescer.mark(workName);
  }

  /** A watch event of an applied object: recompute that manifest's result without applying. */
  observe(workName: string, ordinal: number, live: KubeObject | undefined): void {
    const work = this.report.work(workName);
    const results = this.results.get(workName);
    if (!work || !results) return;
    const i = results.findIndex((r) => r.ordinal === ordinal);
    if (i < 0) return;
    const next = [...results];
    next[i] = this.report.applier.observe(work, ordinal, live, results[i]);
    this.results.set(workName, next);
    this.coalescer.mark(workName);
  }

  resultsOf(workName: string): readonly ManifestApplyResult[] | undefined {
    return this.results.get(workName);
  }

  setUnreachable(reason: string | undefined): void {
    if (reason === this.unreachable) return;
    this.unreachable = reason;
    for (const k of this.results.keys()) this.coalescer.mark(k);
  }

  /** The work is gone or being deleted: delete its WorkStatus objects, forget its results. */
  async forget(workName: string): Promise<void> {
    this.results.delete(workName);
    this.applied.delete(workName);
    this.lastWrite.delete(workName);
    this.coalescer.forget(workName);
    const held = this.written.get(workName);
    this.written.delete(workName);
    for (const name of held?.keys() ?? []) if (!this.heldElsewhere(name, workName)) await this.deleteWorkStatus(name);
  }

  /**
   * Whether another work's results hold the WorkStatus of that name: its object moved between works
   * of the cluster (../apply/handover.ts), and the report now is that work's to write or delete.
   */
  private heldElsewhere(name: string, workName: string): boolean {
    for (const [w, held] of this.written) if (w !== workName && held.has(name)) return true;
    return false;
  }

  idle(): boolean {
    return this.coalescer.idle();
  }

  stop(): void {
    this.coalescer.stop();
  }

  placed(): PlacedResource[] {
    const out: PlacedResource[] = [];
    for (const [work, results] of this.results) {
      for (const r of results) {
        const failing = r.conditions.find((c) => (c.type === 'Applied' || c.type === 'Available') && c.status !== 'True');
        const reason = this.unreachable ?? (failing ? `${failing.reason}: ${failing.message}` : '');
        const m = r.resourceMeta;
        out.push({ cluster: this.report.cluster, work, group: m.group, version: m.version, kind: m.kind, namespace: m.namespace, name: m.name, ready: !reason, reason });
      }
    }
    return out;
  }

  private async write(workName: string): Promise<void> {
    const work = this.report.work(workName);
    const results = this.results.get(workName);
    if (!work || !results || work.metadata.deletionTimestamp) return;
    const { inWork, workStatuses } = this.reports(work, workName, results);
    await this.writeWorkStatuses(workName, workStatuses);
    const mine = this.lastWrite.get(workName);
    const current = mine && newerResourceVersion(mine.resourceVersion, work.metadata.resourceVersion) ? mine.status : work.status;
    const carried = inWork.size === 0 ? results : results.map((r) => (inWork.has(r.ordinal) ? { ...r, feedback: [...r.feedback, ...inWork.get(r.ordinal)!] } : r));
    const status = workStatus(work, carried, current, { wecUnreachable: this.unreachable });
    if (comparable(status) !== comparable(current ?? {})) {
      const path = `/apis/work.open-cluster-management.io/v1/namespaces/${work.metadata.namespace}/manifestworks/${workName}/status`;
      const res = await upstreamRequest(this.report.its, 'PATCH', path, { headers: { 'content-type': 'application/merge-patch+json' }, body: { status } });
      expectOk(res, `write status of manifestwork ${work.metadata.namespace}/${workName}`, [404]);
      if (res.status === 200) {
        const stored = JSON.parse(res.body.toString('utf8')) as ManifestWork;
        this.lastWrite.set(workName, { resourceVersion: stored.metadata?.resourceVersion, status: stored.status });
      }
      this.writes.work++;
    }
    await this.dropWorkStatuses(workName, workStatuses);
  }

  /**
   * Where each applied object's status is reported: in a bundled work, in its manifest's feedback
   * (by ordinal) while it fits there and in the work's budget; otherwise in its WorkStatus (by name).
   */
  private reports(work: ManifestWork, workName: string, results: readonly ManifestApplyResult[]): { inWork: Map<number, FeedbackValue[]>; workStatuses: Map<string, WorkStatus> } {
    const inWork = new Map<number, FeedbackValue[]>();
    const workStatuses = new Map<string, WorkStatus>();
    const bundled = work.metadata.annotations?.[BUNDLE_ANNOTATION] !== undefined;
    const generationOf = sourceGenerations(this.applied.get(workName)?.source);
    let budget = MAX_WORK_BYTES;
    for (const r of [...results].sort((a, b) => a.ordinal - b.ordinal)) {
      const ws = buildWorkStatusObject(this.report.cluster, workName, r, generationOf(r.ordinal));
      if (!ws) continue;
      const carried = bundled ? statusValues(ws.status ?? {}, ws.statusDetails) : undefined;
      if (carried && carried.bytes <= budget) {
        budget -= carried.bytes;
        inWork.set(r.ordinal, carried.values);
      } else workStatuses.set(ws.metadata.name, ws);
    }
    return { inWork, workStatuses };
  }

  /** Writes the WorkStatuses in `want` whose content changed since this agent last wrote them. */
  private async writeWorkStatuses(workName: string, want: ReadonlyMap<string, WorkStatus>): Promise<void> {
    const held = this.written.get(workName) ?? new Map<string, Written>();
    this.written.set(workName, held);
    for (const [name, ws] of want) {
      const { status, ...rest } = ws;
      const next: Written = { object: JSON.stringify(rest), status: JSON.stringify(status ?? {}) };
      const before = held.get(name);
      if (before?.object === next.object && before.status === next.status) continue;
      try {
        await this.writeInOrder(ws, before, next);
      } catch (err) {
        if (!storageRefused(err)) throw err;
        if (!this.refused.has(name)) this.report.onError('workstatus', new Error(`WorkStatus ${name} refused by the ITS, left unwritten: ${(err as Error).message.split('\n')[0]}`));
        this.refused.add(name);
        continue;
      }
      this.refused.delete(name);
      held.set(name, next);
      this.writes.workStatus++;
    }
  }

  /**
   * statusDetails (in the object) and status (its subresource) are two writes; ordered so that no
   * reader sees a status paired with a claim it does not support: a generation not yet in effect is
   * said before the status changes, one now in effect only after the status shows it.
   */
  private async writeInOrder(ws: WorkStatus, before: Written | undefined, next: Written): Promise<void> {
    const { status, ...rest } = ws;
    const path = `${workStatusesPath(this.report.cluster)}/${ws.metadata.name}`;
    const writeObject = (object = rest) => serverSideApply(this.report.its, path, object, FIELD_MANAGER);
    const writeStatus = () => serverSideApply(this.report.its, `${path}/status`, { apiVersion: ws.apiVersion, kind: ws.kind, metadata: { name: ws.metadata.name, namespace: ws.metadata.namespace }, status }, FIELD_MANAGER);
    const claims = ws.statusDetails?.lastGenerationIsApplied === true;
    const hasStatus = Object.keys(status ?? {}).length > 0;
    if (!before) {
      // First write since this agent started: the WorkStatus may already hold an older status
      // (a restart), so a claim goes in only after the status it vouches for.
      await writeObject(claims && hasStatus ? { ...rest, statusDetails: { ...ws.statusDetails!, lastGenerationIsApplied: false } } : rest);
      // An object without status (a ConfigMap) leaves a new WorkStatus's status empty: no write for it.
      if (hasStatus) await writeStatus();
      if (claims && hasStatus) await writeObject();
      return;
    }
    const objectFirst = !claims;
    if (objectFirst && before.object !== next.object) await writeObject();
    if (before.status !== next.status) await writeStatus();
    if (!objectFirst && before.object !== next.object) await writeObject();
  }

  /** Deletes the work's WorkStatuses not in `want` (unless another work of the cluster now holds that object). */
  private async dropWorkStatuses(workName: string, want: ReadonlyMap<string, WorkStatus>): Promise<void> {
    const held = this.written.get(workName);
    for (const name of [...held?.keys() ?? []]) {
      if (want.has(name)) continue;
      if (!this.heldElsewhere(name, workName)) await this.deleteWorkStatus(name);
      held!.delete(name);
    }
  }

  private async deleteWorkStatus(name: string): Promise<void> {
    this.refused.delete(name);
    const res = await upstreamRequest(this.report.its, 'DELETE', `${workStatusesPath(this.report.cluster)}/${name}`);
    expectOk(res, `delete workstatus ${this.report.cluster}/${name}`, [404]);
  }
}
