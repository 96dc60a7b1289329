// Which collections of the WDS hold the workload: every listable and watchable resource
// (preferred version) of aggregated discovery, minus hidden kinds and groups, plus the
// denatured.kubestellar.io resources, which stand for their native kinds. The native resources of
// denatured kinds are workload too (marked `bypassesView`): a ServiceAccount or RoleBinding
// written straight to the WDS (by Helm or Argo CD aimed at it) is sent, as KubeStellar sends it;
// what the WDS made itself is filtered by ../placement/system-objects.ts. Pure over discovery.
import { discoveredResources, type AggregatedDiscovery } from '../../kube/discovery.js';
import { DENATURED_GROUP } from '../../storage/crd-schema.js';
import type { KindCategories } from '../../storage/kind-categories.js';

export interface WorkloadResource {
  /** Where the objects are listed and watched. */
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** The native kind the objects stand for (itself, or the native kind of a denatured resource). */
  native: { group: string; resource: string };
  /** The native resource of a denatured kind: its objects were written to the WDS, not through the view. */
  bypassesView: boolean;
  /** It has a status subresource (returned status is written there). */
  hasStatus: boolean;
}

/**
 * The workload resources; `denaturedFrom(resource)` maps a denatured.kubestellar.io plural to the
 * native group it stands for (undefined: not one of ours).
 */
export function workloadResources(docs: AggregatedDiscovery[], cats: KindCategories, denaturedFrom: (plural: string) => string | undefined): WorkloadResource[] {
  const out: WorkloadResource[] = [];
  for (const r of docs.flatMap(discoveredResources)) {
    if (!r.preferred || !r.verbs.includes('list') || !r.verbs.includes('watch')) continue;
    const base = { group: r.group, version: r.version, resource: r.resource, kind: r.kind, namespaced: r.namespaced, hasStatus: r.hasStatus };
    if (r.group === DENATURED_GROUP) {
      const nativeGroup = denaturedFrom(r.resource);
      if (nativeGroup !== undefined) out.push({ ...base, native: { group: nativeGroup, resource: r.resource }, bypassesView: false });
      continue;
    }
    const category = cats.categorize({ group: r.group, resource: r.resource });
    if (category === 'hidden') continue;
    out.push({ ...base, native: { group: r.group, resource: r.resource }, bypassesView: category === 'denatured' });
  }
  return out;
}
