// Which collections of the WDS hold the workload, i.e. what the view shows: every listable and
// watchable resource (preferred version) of aggregated discovery, minus hidden kinds and groups,
// minus the native denatured kinds (the WDS's own RBAC, webhooks... are not workload), plus the
// denatured.kubestellar.io resources, which stand for their native kinds. Pure over discovery.
import { discoveredResources, type AggregatedDiscovery } from '../kube/discovery.js';
import { DENATURED_GROUP } from '../storage/crd-schema.js';
import type { KindCategories } from '../storage/kind-categories.js';
import type { KubeObject } from '../kube/objects.js';

export interface WorkloadResource {
  /** Where the objects are listed and watched. */
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** The native kind the objects stand for (itself, or the native kind of a denatured resource). */
  native: { group: string; resource: string };
}

/**
 * The workload resources; `denaturedFrom(resource)` maps a denatured.kubestellar.io plural to the
 * native group it stands for (undefined: not one of ours).
 */
export function workloadResources(docs: AggregatedDiscovery[], cats: KindCategories, denaturedFrom: (plural: string) => string | undefined): WorkloadResource[] {
  const out: WorkloadResource[] = [];
  for (const r of docs.flatMap(discoveredResources)) {
    if (!r.preferred || !r.verbs.includes('list') || !r.verbs.includes('watch')) continue;
    const base = { group: r.group, version: r.version, resource: r.resource, kind: r.kind, namespaced: r.namespaced };
    if (r.group === DENATURED_GROUP) {
      const nativeGroup = denaturedFrom(r.resource);
      if (nativeGroup !== undefined) out.push({ ...base, native: { group: nativeGroup, resource: r.resource } });
      continue;
    }
    if (cats.categorize({ group: r.group, resource: r.resource }) !== 'natured') continue;
    out.push({ ...base, native: { group: r.group, resource: r.resource } });
  }
  return out;
}

/** Objects that exist in every cluster by themselves and are never sent. */
export function isSystemObject(native: { group: string; resource: string }, obj: KubeObject): boolean {
  const name = obj.metadata?.name;
  if (native.group !== '') return false;
  if (native.resource === 'configmaps') return name === 'kube-root-ca.crt';
  if (native.resource === 'serviceaccounts') return name === 'default';
  if (native.resource === 'secrets') return obj.type === 'kubernetes.io/service-account-token' || obj.type === 'bootstrap.kubernetes.io/token';
  if (native.resource === 'namespaces') return ['default', 'kube-system', 'kube-public', 'kube-node-lease'].includes(name ?? '');
  return false;
}
