// Handing an object over between two works of ours in one cluster (a bundled work repacked, the
// works' layout changed with --max-objects-per-work): whether a live ManifestWork of the mailbox,
// other than the one releasing the object, still carries it. Such an object is not deleted when
// the releasing work drops it (only its owner reference goes): the work that carries it applies it
// in place, so its uid, its pods and its data stay. OCM's agent spares an object only when another
// AppliedManifestWork already owns it, so it deletes and re-creates when the releasing work is
// reconciled first; ours also looks at the works not applied yet.
// A work names each manifest's resource in its manifestConfigs (placement writes one per manifest);
// for a manifest without one (a work written by someone else), what the agent applied of that work
// (its results of that work's current generation) names it; a manifest known by neither does not
// count. Only a work of the same WDS as the releasing one counts (label view.kubestellar.io/wds: the
// same field manager applies it), never a ReadOnly manifest (it would not own the object), nor one
// the agent tried and failed to apply: those are no handover — another WDS's work over the same
// object is a conflict, its content not ours — and the object goes with the work that applied it.
// A releasing work that is gone (or not ours: no WDS label) hands over nothing: OCM's rule alone.
import { WDS_LABEL, type AppliedManifestResourceMeta, type ManifestWork } from '../kube/ocm-api.js';
import type { ManifestApplyResult } from './contract.js';
import { splitApiVersion } from './rest-mapper.js';

type Resource = Pick<AppliedManifestResourceMeta, 'group' | 'resource' | 'namespace' | 'name'>;

const same = (a: { group?: string; resource?: string; namespace?: string; name?: string }, r: Resource): boolean =>
  (a.group ?? '') === r.group && a.resource === r.resource && (a.namespace ?? '') === (r.namespace ?? '') && a.name === r.name;

/** Whether `w` (live, not being deleted) carries the resource `r`. */
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
    // A result of another object at that ordinal (an older generation of the work) says nothing of this one.
    const found = results?.find((x) => x.ordinal === i);
    const result = found && same(found.resourceMeta, r) ? found : undefined;
    const named = config ? config.resourceIdentifier.resource === r.resource : result !== undefined;
    if (!named) return false;
    return result === undefined || result.conditions.some((c) => c.type === 'Applied' && c.status === 'True');
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
