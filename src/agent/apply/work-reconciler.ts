// Reconciles one ManifestWork of the cluster's mailbox by name, as OCM's work agent controllers
// do together (finalizercontroller, manifestcontroller, appliedmanifestcontroller, unmanaged/stale
// AppliedManifestWork handling):
// - a live work: finalizer held; its AppliedManifestWork ensured; applied through the WorkApplier;
//   owner references set per deleteOption (ours when the work owns the object, removed otherwise),
//   as the work's executor when it names one (a refusal fails that manifest alone);
//   resources dropped since the last apply collected (uid and other-owner rules; a manifest still
//   in the work whose apply failed is not dropped: it stays recorded; one handed over to another
//   work of ours stays owned and recorded until that work has applied it, ./handover.ts);
//   appliedResources recorded; the applied objects watched; results handed to the status writer.
//   A manifest that failed while another work still holds its object says so in its message (the
//   object lives on in the WEC as that work applied it), so the policy's status and the Binding tell.
// - a work being deleted (Foreground/Orphan/SelectivelyOrphan all go through owner references):
//   its resources deleted and waited for, then its AppliedManifestWork deleted, then the finalizer
//   removed so the ManifestWork goes.
// - no work (gone while we were down): its AppliedManifestWork's resources collected, then it.
// - a work with a manifest that failed to apply (whatever the reason: a Namespace that another work
//   has not created yet, a kind the WEC lacks, another field manager's ownership — the same object
//   from two WDSs): requeued with backoff (FAILURE_RETRY_*: 1 s doubling to a minute; at most
//   the apply engine's retryAfterMs, 5 s, for a failure that may pass by itself), as OCM requeues
//   a failed work rate-limited; and every such work at once when a work of the cluster released
//   its objects (deleted, or its resources collected), since that is when a conflict usually ends —
//   the other WDS's object went.
// - a work keeping objects for a handover is looked at again with the failure backoff, and at once
//   when a work of the cluster records what it applied or changes (awaitingHandover, retryAwaiting).
// Never mutates the cached ManifestWork; requeues (enqueueAfter) while deletions are pending.
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { newerResourceVersion, type KubeObject } from '../../kube/objects.js';
import { MANIFEST_WORK_FINALIZER, manifestWorksPath, type AppliedManifestResourceMeta, type AppliedManifestWork, type ManifestWork } from '../../kube/ocm-api.js';
import type { ManifestApplyResult, WorkApplier } from '../shared/contract.js';
import type { AgentMetrics } from '../shared/agent-metrics.js';
import { untracked, ownerOf, type AppliedWorks } from './applied-works.js';
import { deleteAppliedResources, desiredOwners, ownedByTheWork, patchOwners } from './garbage-collector.js';
import type { AppliedRef } from '../status/applied-watcher.js';
import type { StatusWriter } from '../status/work-status-writer.js';
import { executorHeaders, executorOf } from '../shared/work-executor.js';
import { appliedCondition } from '../status/manifest-conditions.js';
import { setCondition } from '../../kube/conditions.js';
import { AppliedAs } from './applied-as.js';
import { handoverOf, type Handover } from './handover.js';

const nowTime = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** How soon a work with deletions still pending is looked at again (OCM requeues likewise). */
export const PENDING_REQUEUE_MS = 1000;
/** A work with a failed manifest is retried after 1 s, doubling per attempt up to a minute, until it applies. */
export const FAILURE_RETRY_BASE_MS = 1000;
export const FAILURE_RETRY_MAX_MS = 60_000;

/** The backoff before attempt `n + 1` of a work that failed `n` times in a row. */
export function failureRetryMs(n: number): number {
  return Math.min(FAILURE_RETRY_BASE_MS * 2 ** Math.min(n, 16), FAILURE_RETRY_MAX_MS);
}

export interface WorkReconcilerDeps {
  cluster: string;
  its: Upstream;
  wec: Upstream;
  applier: WorkApplier;
  applied: AppliedWorks;
  status: StatusWriter;
  watcher: { setWork(work: string, refs: readonly AppliedRef[]): void; removeWork(work: string): void; cached?(r: AppliedRef): KubeObject | undefined };
  work: (name: string) => ManifestWork | undefined;
  enqueueAfter: (name: string, ms: number) => void;
  metrics: AgentMetrics;
  log: (msg: string) => void;
  /** Called with the resourceVersion of each object applied, so its own watch event is not taken for drift. */
  noteApplied?: (ref: AppliedRef, resourceVersion: string | undefined) => void;
  /** Whether a live work of the mailbox, of the same WDS as the releasing `work` (undefined: gone), carries the object (./handover.ts); absent: none does. */
  carriedByWork?: (r: AppliedManifestResourceMeta, work: ManifestWork | undefined) => boolean;
}

export class WorkReconciler {
  /** Works with a manifest that failed to apply → how many attempts in a row failed. */
  private readonly failing = new Map<string, number>();
  /** What each work's last apply applied: a changed work applies again only what changed in it (./applied-as.ts). */
  private readonly appliedAs = new AppliedAs();
  /** Works keeping released objects for a handover (./handover.ts) → how many, and attempts in a row. */
  private readonly awaiting = new Map<string, { objects: number; attempts: number }>();

  constructor(private readonly agent: WorkReconcilerDeps) {}

  /** The works with a manifest that failed to apply, waiting for their next try (tests). */
  failingWorks(): string[] {
    return [...this.failing.keys()].sort();
  }

  /** The works keeping released objects until the work that carries them now has applied them. */
  awaitingHandover(): string[] {
    return [...this.awaiting.keys()].sort();
  }

  async reconcile(name: string): Promise<void> {
    const work = this.agent.work(name);
    if (!work) return this.cleanupGone(name);
    if (work.metadata.deletionTimestamp) return this.cleanupDeleting(work);
    let current = work;
    if (!(work.metadata.finalizers ?? []).includes(MANIFEST_WORK_FINALIZER)) {
      current = await this.setFinalizers(work, [...(work.metadata.finalizers ?? []), MANIFEST_WORK_FINALIZER]);
    }
    await this.apply(current);
  }

  private async apply(work: ManifestWork): Promise<void> {
    const { cluster, metrics } = this.agent;
    const name = work.metadata.name;
    let amw = await this.agent.applied.ensure(name);
    const end = metrics.applyDuration.startTimer({ cluster });
    const watcher = this.agent.watcher;
    const unchanged = watcher.cached && this.appliedAs.unchanged(work, this.agent.status.resultsOf(name),
      (r) => watcher.cached!({ group: r.resourceMeta.group, version: r.resourceMeta.version, resource: r.resourceMeta.resource, namespace: r.resourceMeta.namespace, name: r.resourceMeta.name, ordinal: r.ordinal }),
      (ordinal, live, prior) => this.agent.applier.observe(work, ordinal, live, prior));
    const results = await this.agent.applier.applyWork(work, unchanged);
    end();
    const owner = ownerOf(amw);
    const executor = executorOf(work);
    const now: AppliedManifestResourceMeta[] = [];
    const refs: AppliedRef[] = [];
    let retryAfter: number | undefined;
    const finalResults: ManifestApplyResult[] = [];
    if (results.some((r) => r.conditions.find((c) => c.type === 'Applied')?.status !== 'True')) {
      const n = this.failing.get(name) ?? 0;
      this.failing.set(name, n + 1);
      retryAfter = failureRetryMs(n);
    } else {
      this.failing.delete(name);
    }
    for (const r of results) {
      const applied = r.conditions.find((c) => c.type === 'Applied')?.status === 'True';
      metrics.applies.inc({ cluster, outcome: applied ? 'applied' : 'failed' });
      if (r.retryAfterMs !== undefined) retryAfter = Math.min(retryAfter ?? Infinity, r.retryAfterMs);
      const m = r.resourceMeta;
      let live = r.live;
      if (r.owned && live && m.resource) {
        const ref: AppliedRef = { group: m.group, version: m.version, resource: m.resource, namespace: m.namespace, name: m.name, ordinal: r.ordinal };
        const owners = desiredOwners(live, owner, ownedByTheWork(m, work.spec?.deleteOption));
        if (owners) {
          try {
            live = await patchOwners(this.agent.wec, ref, live, owners, executorHeaders(executor));
          } catch (err) {
            // Refused to the executor (or a conflict): this manifest failed, nothing else is held back.
            const failed = { ...r, owned: false, conditions: setCondition(r.conditions, appliedCondition((err as Error).message, work.metadata.generation), nowTime()) };
            if (!this.failing.has(name)) this.failing.set(name, 1);
            retryAfter = Math.min(retryAfter ?? Infinity, failureRetryMs(0));
            finalResults.push(failed);
            continue;
          }
        }
        now.push({ group: m.group, version: m.version, resource: m.resource, namespace: m.namespace, name: m.name, uid: live.metadata?.uid });
        refs.push(ref);
        this.agent.noteApplied?.(ref, live.metadata?.resourceVersion);
      }
      finalResults.push(live === r.live ? r : { ...r, live });
    }
    // Objects dropped from the work since the last apply: collected per OCM's rules; those still
    // going stay recorded until gone.
    // A recorded object whose manifest is still in the work but failed this time (a conflict: another
    // manager took its fields; or WEC or discovery trouble) stays recorded: only what left the work
    // is collected. An object this work never applied (another WDS's, refused by a conflict) is not
    // recorded, so it never counts as carried by this work when its owner's work goes.
    const stillInWork = (e: AppliedManifestResourceMeta) => results.some((r) => r.resourceMeta.group === e.group
      && r.resourceMeta.namespace === e.namespace && r.resourceMeta.name === e.name && (r.resourceMeta.resource === '' || r.resourceMeta.resource === e.resource));
    for (const e of untracked(amw.status?.appliedResources ?? [], now)) if (stillInWork(e)) now.push(e);
    const dropped = untracked(amw.status?.appliedResources ?? [], now);
    const { pending, awaitMs } = await this.collectDropped(name, amw, dropped);
    const before = amw;
    amw = await this.agent.applied.setApplied(amw, [...now, ...pending]);
    if (amw !== before) this.retryAwaiting(name);
    this.heldElsewhere(finalResults, amw.metadata.name);
    this.appliedAs.record(work, finalResults);
    this.agent.watcher.setWork(name, refs);
    this.agent.status.setResults(name, finalResults, work);
    // Watch events of these objects between the apply and setWork found no work to tell (e.g. a
    // Deployment becoming available meanwhile): what the watch holds now is observed once more.
    for (const ref of refs) {
      const seen = this.agent.watcher.cached?.(ref);
      const had = finalResults.find((r) => r.ordinal === ref.ordinal)?.live;
      if (seen && newerResourceVersion(seen.metadata?.resourceVersion, had?.metadata?.resourceVersion)) this.agent.status.observe(name, ref.ordinal, seen);
    }
    if (pending.length) retryAfter = Math.min(retryAfter ?? Infinity, awaitMs ?? PENDING_REQUEUE_MS);
    if (retryAfter !== undefined) this.agent.enqueueAfter(name, retryAfter);
  }

  /**
   * Collects what left the work: the objects still going (deleted, not gone yet) or kept for a
   * handover stay recorded (`pending`); `awaitMs` is set when all of them are kept for a handover.
   */
  private async collectDropped(name: string, amw: AppliedManifestWork, dropped: AppliedManifestResourceMeta[]):
    Promise<{ pending: AppliedManifestResourceMeta[]; awaitMs?: number }> {
    if (!dropped.length) {
      this.noteAwaiting(name, 0);
      return { pending: [] };
    }
    const gc = await deleteAppliedResources(this.agent.wec, dropped, ownerOf(amw), (r) => this.handover(r, name, amw.metadata.name));
    for (const e of gc.errors) {
      this.agent.metrics.errors.inc({ cluster: this.agent.cluster, where: 'gc' });
      this.agent.log(`${this.agent.cluster}/${name}: ${e.message}`);
    }
    const awaitMs = this.noteAwaiting(name, gc.awaiting.length);
    if (gc.errors.length) return { pending: dropped }; // keep them recorded; try again
    const pending = [...gc.pending, ...gc.awaiting];
    if (pending.length < dropped.length) this.retryFailing(name);
    return { pending, ...(gc.pending.length === 0 && awaitMs !== undefined ? { awaitMs } : {}) };
  }

  /**
   * Records that `work` keeps `objects` objects for a handover (0: none); returns when to look at it
   * again (the failure backoff: the receiver may be refused for long; retryAwaiting comes sooner).
   */
  private noteAwaiting(work: string, objects: number): number | undefined {
    const prior = this.awaiting.get(work);
    if (objects === 0) this.awaiting.delete(work);
    else this.awaiting.set(work, { objects, attempts: (prior?.attempts ?? 0) + 1 });
    if (prior || objects) this.agent.metrics.handoverAwaiting.set({ cluster: this.agent.cluster }, [...this.awaiting.values()].reduce((n, a) => n + a.objects, 0));
    return objects ? failureRetryMs(prior?.attempts ?? 0) : undefined;
  }

  /** A work recorded what it applied, or the mailbox changed: the works keeping objects for a handover look again now. */
  retryAwaiting(except?: string): void {
    for (const w of this.awaiting.keys()) if (w !== except) this.agent.enqueueAfter(w, 0);
  }

  /**
   * A failed manifest whose object another work of ours still records (it keeps it for this one, or
   * owns it too) says so: the object lives on in the WEC as that work applied it.
   */
  private heldElsewhere(results: ManifestApplyResult[], ownAmw: string): void {
    results.forEach((r, i) => {
      const applied = r.conditions.find((c) => c.type === 'Applied');
      if (applied?.status !== 'False' || !r.resourceMeta.resource) return;
      const holder = this.agent.applied.recordedBy(r.resourceMeta, ownAmw);
      if (!holder) return;
      const message = `${applied.message}; the object stays in the cluster as ManifestWork ${holder} applied it, until this work applies it or no work selects it`;
      results[i] = { ...r, conditions: r.conditions.map((c) => (c === applied ? { ...c, message } : c)) };
    });
  }

  /** Foreground deletion: objects gone, then the AppliedManifestWork, then the finalizer. */
  private async cleanupDeleting(work: ManifestWork): Promise<void> {
    if (!(work.metadata.finalizers ?? []).includes(MANIFEST_WORK_FINALIZER)) return;
    const name = work.metadata.name;
    if (!(await this.cleanupApplied(name))) return;
    await this.setFinalizers(work, (work.metadata.finalizers ?? []).filter((f) => f !== MANIFEST_WORK_FINALIZER));
  }

  /** The work vanished (e.g. while the agent was down): collect what its AppliedManifestWork recorded. */
  private async cleanupGone(name: string): Promise<void> {
    await this.cleanupApplied(name);
  }

  /** Deletes the work's resources and then its AppliedManifestWork; false while some are still going. */
  private async cleanupApplied(name: string): Promise<boolean> {
    const amw: AppliedManifestWork | undefined = this.agent.applied.get(name);
    this.agent.watcher.removeWork(name);
    if (amw) {
      const gc = await deleteAppliedResources(this.agent.wec, amw.status?.appliedResources ?? [], ownerOf(amw),
        (r) => this.handover(r, name, amw.metadata.name));
      for (const e of gc.errors) {
        this.agent.metrics.errors.inc({ cluster: this.agent.cluster, where: 'gc' });
        this.agent.log(`${this.agent.cluster}/${name}: ${e.message}`);
      }
      const awaitMs = this.noteAwaiting(name, gc.awaiting.length);
      if (gc.errors.length) throw gc.errors[0]!;
      if (gc.pending.length || gc.awaiting.length) {
        this.agent.enqueueAfter(name, gc.pending.length ? PENDING_REQUEUE_MS : awaitMs!);
        return false;
      }
      await this.agent.applied.delete(amw);
      this.appliedAs.forget(name);
      this.failing.delete(name);
      this.retryFailing(name);
    }
    this.failing.delete(name);
    await this.agent.status.forget(name);
    return true;
  }

  /**
   * What another work of ours does with an object `work` releases: records it already (released
   * to it), or carries it without having applied it (kept, awaiting), or nothing (./handover.ts).
   */
  private handover(r: AppliedManifestResourceMeta, work: string, amw: string): Handover {
    return handoverOf(this.agent.applied.carriedElsewhere(r, amw), () => this.agent.carriedByWork?.(r, this.agent.work(work)) ?? false);
  }

  /** A watch event of an object the work applied (./applied-as.ts): a drift or deletion, or not. */
  observed(work: string, ordinal: number, obj: KubeObject, drift: boolean): void {
    this.appliedAs.observed(work, ordinal, obj, drift);
  }

  /** A work released objects in the WEC: the failing works (a conflict over some object ends so) try again now. */
  private retryFailing(releasedBy: string): void {
    for (const w of this.failing.keys()) if (w !== releasedBy) this.agent.enqueueAfter(w, 0);
  }

  /** Writes the finalizer list (merge patch with the resourceVersion read: a concurrent change is a 409 and a retry). */
  private async setFinalizers(work: ManifestWork, finalizers: string[]): Promise<ManifestWork> {
    const path = `${manifestWorksPath(this.agent.cluster)}/${work.metadata.name}`;
    const body = { metadata: { finalizers, resourceVersion: work.metadata.resourceVersion } };
    const res = await upstreamRequest(this.agent.its, 'PATCH', path, { headers: { 'content-type': 'application/merge-patch+json' }, body });
    expectOk(res, `set finalizers of manifestwork ${this.agent.cluster}/${work.metadata.name}`, [404]);
    if (res.status === 404) return work;
    return JSON.parse(res.body.toString('utf8')) as ManifestWork;
  }
}

export type { KubeObject };
