// Handing an object over between two works of ours in one cluster (a bundled work repacked, the
// works' layout changed with --max-objects-per-work): whether a live ManifestWork of the mailbox,
// other than the one releasing the object, still carries it. Such an object is not deleted when
// the releasing work drops it (only its owner reference goes): the work that carries it applies it
// in place, so its uid, its pods and its data stay. OCM's agent spares an object only when another
// AppliedManifestWork already owns it, so it deletes and re-creates when the releasing work is
// reconciled first; ours also looks at the works not applied yet.
// A work names each manifest's resource in its manifestConfigs (placement writes one per manifest);
// for a manifest without one (a work written by someone else), what the agent applied of that work
// (its results) names it; a manifest known by neither does not count. Nor does one the agent tried
// and failed to apply: that is no handover but a conflict (the same object from two WDSs, the other
// one's content in the WEC), and the object goes with the work that applied it.
import type { AppliedManifestResourceMeta, ManifestWork } from '../kube/ocm-api.js';
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
    const result = results?.find((x) => x.ordinal === i);
    const named = config ? config.resourceIdentifier.resource === r.resource : result !== undefined && same(result.resourceMeta, r);
    if (!named) return false;
    return result === undefined || result.conditions.some((c) => c.type === 'Applied' && c.status === 'True');
  });
}

/** Whether a live work of `works` other than `except` carries `r`. */
export function carriedByLiveWork(works: Iterable<ManifestWork>, except: string, r: Resource,
  resultsOf: (work: string) => readonly ManifestApplyResult[] | undefined): boolean {
  for (const w of works) if (w.metadata.name !== except && workCarries(w, r, resultsOf(w.metadata.name))) return true;
  return false;
}
