// Resolution of "what goes where": for one workload object, the BindingPolicies whose downsync
// clauses select it, and the clusters (ManagedClusters of the ITS) their clusterSelectors pick,
// with KubeStellar's semantics (api/control/v1alpha1 DownsyncObjectTest):
// - apiGroup: absent matches every group, "" is the core group;
// - resources, objectNames: empty or "*" match all, else the list must hold the object's;
// - namespaces: empty or "*" match all ("*" is the only way to match a cluster-scoped object
//   once the list is non-empty), else the list must hold the object's namespace;
// - namespaceSelectors: empty matches all; a namespaced object needs one matching its
//   Namespace's labels, a cluster-scoped one needs one that is `{}`;
// - objectSelectors: empty matches all, else one must match the object's labels;
// - clusterSelectors: a cluster is picked when any matches its labels (none: no cluster).
// Across policies clusters are unioned, createOnly is OR-ed, statusCollectors are unioned.
// Each selecting policy also gets its own modulation (KubeStellar's DownsyncModulation: what its
// matching clauses ask, OR-ed and unioned over them; the spec's wantSingletonReportedState counts
// for every clause), which its Binding shows per object. wantSingletonReportedState never narrows
// the clusters (KubeStellar since v0.25): the object goes to every selected cluster, and more than
// one is reported, not silently withheld. Pure functions; malformed selectors throw
// LabelSelectorError.
import { matchesLabelSelector, type LabelSelector, type Labels } from '../../kube/label-selector.js';
import { clauseMatches as objectTestMatches, type ObjectTest, type SelectedObjectRef } from '../../kube/object-selection.js';
import type { UpsyncClause } from '../../kube/upsync-api.js';

/** What resolution reads of a workload object (the object test's view of it). */
export type WorkloadRef = SelectedObjectRef;

/** KubeStellar's downsync clause: an object test plus its modulations. */
export interface DownsyncClause extends ObjectTest {
  createOnly?: boolean;
  wantSingletonReportedState?: boolean;
  wantMultiWECReportedState?: boolean;
  statusCollectors?: string[];
}

export interface BindingPolicySpec {
  clusterSelectors?: LabelSelector[];
  downsync?: DownsyncClause[];
  wantSingletonReportedState?: boolean;
  /**
   * Our extension (not KubeStellar's, whose CRD prunes it): the ServiceAccount of the WECs the
   * policy's works are applied as (./executor.ts).
   */
  executor?: { serviceAccount?: { namespace?: string; name?: string } } | null;
  /** Our extension too: what the selected WECs' agents copy back (../upsync/, docs/upsync.md). */
  upsync?: UpsyncClause[] | null;
}

export interface Policy {
  name: string;
  spec: BindingPolicySpec;
}

export interface Cluster {
  name: string;
  labels: Labels;
}

/** How the clauses selecting an object ask for it to be handled (KubeStellar's DownsyncModulation). */
export interface Modulation {
  createOnly: boolean;
  wantSingletonReportedState: boolean;
  wantMultiWECReportedState: boolean;
  /** Sorted. */
  statusCollectors: string[];
}

export interface Resolution extends Modulation {
  /** Destination clusters, sorted by name. */
  clusters: string[];
  /** The policies selecting the object, sorted by name. */
  policies: string[];
  /** Each selecting policy's own modulation of the object, and the clusters it picks. */
  byPolicy: Record<string, Modulation & { clusters: string[] }>;
}

/** Whether one clause selects the object (the object test lives in ../../kube/object-selection.ts, shared with the agent's upsync). */
export const clauseMatches: (c: DownsyncClause, obj: WorkloadRef, namespaceLabels: Labels | undefined) => boolean = objectTestMatches;

/** The clusters a policy picks, sorted by name. */
export function policyClusters(spec: BindingPolicySpec, clusters: readonly Cluster[]): string[] {
  const selectors = spec.clusterSelectors ?? [];
  return clusters.filter((c) => selectors.some((s) => matchesLabelSelector(s, c.labels))).map((c) => c.name).sort();
}

export function resolve(obj: WorkloadRef, namespaceLabels: Labels | undefined, policies: readonly Policy[], clusters: readonly Cluster[]): Resolution {
  const picked = new Set<string>();
  const byPolicy: Resolution['byPolicy'] = {};
  for (const p of policies) {
    const clauses = (p.spec.downsync ?? []).filter((c) => clauseMatches(c, obj, namespaceLabels));
    if (clauses.length === 0) continue;
    const collectors = new Set(clauses.flatMap((c) => c.statusCollectors ?? []));
    const own = {
      createOnly: clauses.some((c) => c.createOnly === true),
      wantSingletonReportedState: p.spec.wantSingletonReportedState === true || clauses.some((c) => c.wantSingletonReportedState === true),
      wantMultiWECReportedState: clauses.some((c) => c.wantMultiWECReportedState === true),
      statusCollectors: [...collectors].sort(),
      clusters: policyClusters(p.spec, clusters),
    };
    byPolicy[p.name] = own;
    for (const c of own.clusters) picked.add(c);
  }
  const mods = Object.values(byPolicy);
  return {
    clusters: [...picked].sort(),
    policies: Object.keys(byPolicy).sort(),
    byPolicy,
    createOnly: mods.some((m) => m.createOnly),
    wantSingletonReportedState: mods.some((m) => m.wantSingletonReportedState),
    wantMultiWECReportedState: mods.some((m) => m.wantMultiWECReportedState),
    statusCollectors: [...new Set(mods.flatMap((m) => m.statusCollectors))].sort(),
  };
}
