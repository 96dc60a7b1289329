// What a WEC said when applying one of this WDS's ManifestWorks: the manifests whose condition
// `Applied` is False in the work's status (`status.resourceStatus.manifests[].conditions`, written
// by the cluster's agent — ours or OCM's), with the agent's words. A server-side apply conflict with
// another WDS's field manager is the case that matters: the WEC refused our content and kept the
// other's. Pure functions over works; reconciliation reads them from the works cache.
//
// Also which changes of one of our works concern its object's reconciliation. Our own writes are
// recognised by ./works.ts (their echo); an agent's status write is not ours, but it changes
// nothing reconciliation computes unless what failed changed, so only then is the object queued:
// a Deployment's feedback ticking in the status every few seconds costs nothing here.
import type { ManifestWork } from '../model/wrapping.js';

export interface ApplyFailure {
  /** `<kind> <namespace>/<name>` of the manifest, as the agent identified it. */
  manifest: string;
  /** The agent's message (OCM: "Failed to apply manifest: <the WEC's words>"). */
  message: string;
}

/** The WEC's own words in an agent's message (OCM prefixes them with "Failed to apply manifest: "). */
export const wecWords = (message: string) => message.replace(/^Failed to apply manifest: /, '');

/** How a policy's status.errors says a cluster did not apply an object (`what`, e.g. `configmaps demo/settings`). */
export function applyFailureError(cluster: string, what: string, message: string): string {
  return `cluster ${cluster} did not apply ${what}: ${wecWords(message)}`;
}

/**
 * Whether an error of a policy's status is a WEC's, not the policy's reconciliation's: one of
 * those, or a cluster's status report that was refused or capped (`cluster <c> reported …`,
 * src/controllers/status/status-controller.ts).
 */
export function isApplyFailureError(error: string): boolean {
  return /^cluster \S+ (did not apply|reported) /.test(error);
}

/** The manifests of a work that its cluster did not apply, in manifest order. */
export function applyFailures(w: ManifestWork | undefined): ApplyFailure[] {
  const out: ApplyFailure[] = [];
  for (const m of w?.status?.resourceStatus?.manifests ?? []) {
    const applied = (m.conditions ?? []).find((c) => c.type === 'Applied');
    if (applied?.status !== 'False') continue;
    const r = m.resourceMeta ?? {};
    out.push({ manifest: `${r.kind ?? ''} ${r.namespace ? `${r.namespace}/` : ''}${r.name ?? ''}`.trim(), message: applied.message ?? applied.reason ?? '' });
  }
  return out;
}

/**
 * Whether `now` differs from `old` only in its status (and the bookkeeping metadata that goes with
 * any write). A spec change is told by the generation, which kube-apiserver bumps on every change
 * of a ManifestWork's spec: the works cache keeps only a sliver of the spec (./works.ts slimWork).
 */
export function statusOnlyChange(old: ManifestWork, now: ManifestWork): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  return old.metadata.generation === now.metadata.generation
    && same(old.spec, now.spec)
    && same(old.metadata.labels, now.metadata.labels)
    && same(old.metadata.annotations, now.metadata.annotations)
    && same(old.metadata.deletionTimestamp, now.metadata.deletionTimestamp);
}

/**
 * Whether a change of one of this WDS's works should queue the object it carries: a deletion
 * always; the echo of our own write never; a status-only change when what failed to apply changed;
 * anything else (someone else changed or created it) always.
 */
export function workChangeConcernsObject(type: 'ADDED' | 'MODIFIED' | 'DELETED', now: ManifestWork, old: ManifestWork | undefined, isEcho: boolean): boolean {
  if (type === 'DELETED') return true;
  if (isEcho) return false;
  if (type === 'MODIFIED' && old && statusOnlyChange(old, now)) {
    return JSON.stringify(applyFailures(old)) !== JSON.stringify(applyFailures(now));
  }
  return true;
}
