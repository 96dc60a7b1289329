// Handing an object over between two works of ours in one cluster (a bundled work repacked, the
// works' layout changed with --max-objects-per-work, a work renamed): what becomes of an object a
// work releases (drops from its manifests, or is deleted). OCM's agent spares an object only when
// another AppliedManifestWork already owns it; ours also waits for a live work that carries it but
// has not applied it yet, so the object is never deleted and re-created (its uid, pods and data
// stay) and never left without an owner:
// - `applied`: another AppliedManifestWork of ours records it — the releasing work's owner
//   reference goes, the object stays (OCM's rule);
// - `awaiting`: a live ManifestWork of the same WDS carries it (its manifest is there, named by its
//   manifestConfig or by what the agent applied of that work, not ReadOnly) but no other
//   AppliedManifestWork of ours records it yet — not applied, or refused (e.g. to its executor):
//   the releasing work keeps it, owned and recorded, and stays (a deleting work keeps its
//   finalizer) until the receiver has applied it, or stops carrying it — then the object is
//   removed as any object no work selects;
// - undefined: nothing of ours carries it — it is deleted.
// Only a work of the same WDS as the releasing one counts (label view.kubestellar.io/wds: the same
// field manager applies it), never a ReadOnly manifest (it would not own the object): another WDS's
// work over the same object is a conflict, its content not ours. A releasing work that is gone (or
// not ours: no WDS label) awaits nothing: OCM's rule alone.
import { WDS_LABEL, type AppliedManifestResourceMeta, type ManifestWork } from '../../kube/ocm-api.js';
import type { ManifestApplyResult } from '../shared/contract.js';
import { splitApiVersion } from '../../kube/api-version.js';

type Resource = Pick<AppliedManifestResourceMeta, 'group' | 'resource' | 'namespace' | 'name'>;

/** How a released object is handed over (see the header). */
export type Handover = 'applied' | 'awaiting' | undefined;

const same = (a: { group?: string; resource?: string; namespace?: string; name?: string }, r: Resource): boolean =>
  (a.group ?? '') === r.group && a.resource === r.resource && (a.namespace ?? '') === (r.namespace ?? '') && a.name === r.name;

/** Whether `w` (live, not being deleted) carries the resource `r`, applied or not. */
export function workCarries(w: ManifestWork, r: Resource, results: readonly ManifestApplyResult[] | undefined): boolean {
  if (w.metadata.deletionTimestamp) return false;
  const manifests = w.spec?.workload?.manifests ?? [];
  const configs = w.spec?.manifestConfigs ?? [];
  return manifests.some((raw, i) => {
    const m = raw as { apiVersion?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    if (m.metadata?.name !== r.name || (m.metadata?.namespace ?? '') !== (r.namespace ?? '')) return false;
    if (splitApiVersion(typeof m.apiVersion === 'string' ? m.apiVersion : '').group !== r.group) return false;
    const config = configs.find((c) => c.resourceIdentifier.name === r.name && (c.resourceIdentifier.namespace ?? '') === (r.namespace ?? '')
      && (c.resourceIdentifier.group ?? '') === r.group);
    if (config?.updateStrategy?.type === 'ReadOnly') return false;
    if (config) return config.resourceIdentifier.resource === r.resource;
    // No config: what the agent made of that ordinal (applied or not) names its resource; a result of
    // another object there (an older generation of the work) says nothing of this one.
    const found = results?.find((x) => x.ordinal === i);
    return found !== undefined && same(found.resourceMeta, r);
  });
}

/** Whether a live work of `works`, of the same WDS as the releasing work, carries `r` (see the header). */
export function carriedByLiveWork(works: Iterable<ManifestWork>, releasing: ManifestWork | undefined, r: Resource,
  resultsOf: (work: string) => readonly ManifestApplyResult[] | undefined): boolean {
  const wds = releasing?.metadata.labels?.[WDS_LABEL];
  if (!releasing || !wds) return false;
  for (const w of works) {
    if (w.metadata.name === releasing.metadata.name || w.metadata.labels?.[WDS_LABEL] !== wds) continue;
    if (workCarries(w, r, resultsOf(w.metadata.name))) return true;
  }
  return false;
}

/** The handover of `r`: `recordedElsewhere` (another AppliedManifestWork of ours records it) first, then a live carrier. */
export function handoverOf(recordedElsewhere: boolean, carriedByLive: () => boolean): Handover {
  if (recordedElsewhere) return 'applied';
  return carriedByLive() ? 'awaiting' : undefined;
}
