// Discovery of one cluster's upsynced objects (docs/upsync.md; ./upsynced-cluster-view.ts): a Kubernetes
// API that holds exactly the kinds upsynced from that cluster, as kube-apiserver would describe it —
// /api (APIVersions: v1 when a core kind is there), /apis (APIGroupList of the groups present),
// /apis/<group> (APIGroup), /api/v1 and /apis/<group>/<version> (APIResourceList), each resource
// read-only (get, list, watch), and the aggregated forms of /api and /apis (v2, v2beta1) that
// kubectl asks first. A group, version or resource not upsynced is absent (the caller's 404).
import type { UpsyncedObject } from '../../kube/upsync-api.js';

export interface ClusterKind {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** From the WEC's discovery, as the agent copied it (absent from older copies: the lowercase kind, none). */
  singular: string;
  shortNames: string[];
}

const READ_VERBS = ['get', 'list', 'watch'];

/** The kinds of a cluster's copies (a copy of a cluster-scoped object has no source namespace), sorted. */
export function kindsOf(copies: readonly UpsyncedObject[]): ClusterKind[] {
  const kinds = new Map<string, ClusterKind>();
  for (const { source: s } of copies) {
    const key = `${s.group}/${s.version}/${s.resource}`;
    if (!kinds.has(key)) {
      kinds.set(key, {
        group: s.group, version: s.version, resource: s.resource, kind: s.kind, namespaced: s.namespace !== '',
        singular: s.singular || s.kind.toLowerCase(), shortNames: Array.isArray(s.shortNames) ? s.shortNames : [],
      });
    }
  }
  return [...kinds.values()].sort((a, b) => a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.resource.localeCompare(b.resource));
}

const groupVersionOf = (group: string, version: string) => (group ? `${group}/${version}` : version);

/** The versions of a group, in order (the first is the preferred one). */
function versionsOf(kinds: readonly ClusterKind[], group: string): string[] {
  return [...new Set(kinds.filter((k) => k.group === group).map((k) => k.version))];
}

/** /api */
export function apiVersions(kinds: readonly ClusterKind[]) {
  return { kind: 'APIVersions', versions: versionsOf(kinds, ''), serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
}

/** /apis/<group>, undefined when nothing of the group is upsynced. */
export function apiGroup(kinds: readonly ClusterKind[], group: string) {
  const versions = versionsOf(kinds, group).map((version) => ({ groupVersion: `${group}/${version}`, version }));
  if (group === '' || versions.length === 0) return undefined;
  return { name: group, versions, preferredVersion: versions[0]! };
}

/** /apis */
export function apiGroupList(kinds: readonly ClusterKind[]) {
  const groups = [...new Set(kinds.map((k) => k.group).filter((g) => g !== ''))];
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => apiGroup(kinds, g)!) };
}

/** /api/v1 or /apis/<group>/<version>, undefined when nothing of it is upsynced. */
export function apiResourceList(kinds: readonly ClusterKind[], group: string, version: string) {
  const resources = kinds.filter((k) => k.group === group && k.version === version);
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersionOf(group, version),
    resources: resources.map((k) => ({
      name: k.resource, singularName: k.singular, namespaced: k.namespaced, kind: k.kind, verbs: READ_VERBS, ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}),
    })),
  };
}

/** Aggregated discovery of /api (`core`) or /apis. */
export function aggregatedDiscovery(kinds: readonly ClusterKind[], which: 'core' | 'groups', version: 'v2' | 'v2beta1') {
  const groups = [...new Set(kinds.map((k) => k.group))].filter((g) => (which === 'core' ? g === '' : g !== ''));
  return {
    kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {},
    items: groups.map((group) => ({
      metadata: { ...(group ? { name: group } : {}), creationTimestamp: null },
      versions: versionsOf(kinds, group).map((v) => ({
        version: v, freshness: 'Current',
        resources: kinds.filter((k) => k.group === group && k.version === v).map((k) => ({
          resource: k.resource, singularResource: k.singular, scope: k.namespaced ? 'Namespaced' : 'Cluster', ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}),
          responseKind: { group, version: v, kind: k.kind }, verbs: READ_VERBS,
        })),
      })),
    })),
  };
}
