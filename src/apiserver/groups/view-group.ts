// The API group view.kubestellar.io/v1alpha1 itself: its names, its resources and its legacy and
// aggregated discovery (its OpenAPI: ./view-openapi.ts). Also the view's own part of KubeStellar's
// group control.kubestellar.io, which ../view/view-discovery.ts adds to the WDS's discovery: the same virtual
// resources (Bindings, CombinedStatuses) as KubeStellar's tools read them; and what of this group
// the view serves too (UpsyncedObjects, IN_VIEW_KINDS).
import type { VirtualKind } from '../virtual/read-only-resource.js';

export const GROUP = 'view.kubestellar.io';
export const VERSION = 'v1alpha1';
export const GROUP_VERSION = `${GROUP}/${VERSION}`;
/** KubeStellar's group, where its tools read Bindings and CombinedStatuses; inside the view it holds only them. */
export const CONTROL_GROUP = 'control.kubestellar.io';
export const CONTROL_GROUP_VERSION = `${CONTROL_GROUP}/${VERSION}`;


export const BINDINGS: VirtualKind = { resource: 'bindings', singular: 'binding', kind: 'Binding', namespaced: false, shortNames: ['bdg'] };
export const COMBINED_STATUSES: VirtualKind = { resource: 'combinedstatuses', singular: 'combinedstatus', kind: 'CombinedStatus', namespaced: true, shortNames: ['cs'] };
/** The objects born in the WECs that the agents copy back (docs/upsync.md; ./upsyncedobjects-resource.ts); no short name (KubeStellar has none). */
export const UPSYNCED_OBJECTS: VirtualKind = { resource: 'upsyncedobjects', singular: 'upsyncedobject', kind: 'UpsyncedObject', namespaced: true, shortNames: [] };
/** This group's virtual resources, in discovery order. */
export const VIRTUAL_KINDS: readonly VirtualKind[] = [BINDINGS, COMBINED_STATUSES, UPSYNCED_OBJECTS];
/** Those served inside the view as KubeStellar's (control.kubestellar.io), where its tools read them. */
export const CONTROL_KINDS: readonly VirtualKind[] = [BINDINGS, COMBINED_STATUSES];
/**
 * Those served inside the view in this group (the rest of it is hidden there): KubeStellar has no
 * UpsyncedObject of this shape, and the ITS's upsyncedobjects.control.kubestellar.io (the agents'
 * copies) is another; users' RBAC grants them here (../wds-registration.ts).
 */
export const IN_VIEW_KINDS: readonly VirtualKind[] = [UPSYNCED_OBJECTS];

const READ_VERBS = ['get', 'list', 'watch'];

/** The virtual resources' entries in a legacy APIResourceList, the same in both groups. */
function virtualResources(kinds: readonly VirtualKind[] = VIRTUAL_KINDS) {
  return kinds.map((k) => ({
    name: k.resource, singularName: k.singular, namespaced: k.namespaced, kind: k.kind, verbs: READ_VERBS, ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}), categories: ['kubestellar'],
  }));
}

function virtualAggregatedResources(group: string, kinds: readonly VirtualKind[] = VIRTUAL_KINDS) {
  return kinds.map((k) => ({
    resource: k.resource, singularResource: k.singular, scope: k.namespaced ? 'Namespaced' : 'Cluster',
    responseKind: { group, version: VERSION, kind: k.kind },
    verbs: READ_VERBS, ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}), categories: ['kubestellar'],
  }));
}

/** The view root of a WDS: the server URL a kubeconfig for the view uses, on kube-apiserver. */
export const viewRoot = (wdsName: string) => `/apis/${GROUP_VERSION}/spaces/${wdsName}/proxy`;

export const apiGroup = {
  name: GROUP,
  versions: [{ groupVersion: GROUP_VERSION, version: VERSION }],
  preferredVersion: { groupVersion: GROUP_VERSION, version: VERSION },
};

export function apiGroupList() {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup] };
}

export function apiResourceList() {
  return {
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION,
    resources: [
      { name: 'spaces', singularName: 'space', namespaced: false, kind: 'Space', verbs: READ_VERBS, categories: ['kubestellar'] },
      { name: 'spaces/proxy', singularName: '', namespaced: false, kind: 'Space', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      ...virtualResources(),
    ],
  };
}

export function aggregatedDiscovery(version: 'v2' | 'v2beta1') {
  return {
    kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {},
    items: [{
      metadata: { name: GROUP, creationTimestamp: null },
      versions: [{
        version: VERSION,
        freshness: 'Current',
        resources: [{
          resource: 'spaces', singularResource: 'space', scope: 'Cluster',
          responseKind: { group: GROUP, version: VERSION, kind: 'Space' },
          verbs: READ_VERBS, categories: ['kubestellar'],
          subresources: [{ subresource: 'proxy', responseKind: { group: GROUP, version: VERSION, kind: 'Space' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
        }, ...virtualAggregatedResources(GROUP)],
      }],
    }],
  };
}

// The view's own part of KubeStellar's group control.kubestellar.io: its virtual resources. The
// WDS's control.kubestellar.io CRDs (BindingPolicy, CustomTransform, StatusCollector) stay hidden
// in the view; a real bindings or combinedstatuses CRD of the WDS (a KubeStellar install) is
// hidden too, shadowed by these.

export const controlApiGroup = {
  name: CONTROL_GROUP,
  versions: [{ groupVersion: CONTROL_GROUP_VERSION, version: VERSION }],
  preferredVersion: { groupVersion: CONTROL_GROUP_VERSION, version: VERSION },
};

export function controlResourceList() {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: CONTROL_GROUP_VERSION, resources: virtualResources(CONTROL_KINDS) };
}

/** The group's entry in aggregated discovery (v2 and v2beta1 alike). */
export function controlAggregatedGroup() {
  return {
    metadata: { name: CONTROL_GROUP, creationTimestamp: null },
    versions: [{ version: VERSION, freshness: 'Current', resources: virtualAggregatedResources(CONTROL_GROUP, CONTROL_KINDS) }],
  };
}

/** Inside the view, this group's resource list: only IN_VIEW_KINDS. */
export function inViewResourceList() {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION, resources: virtualResources(IN_VIEW_KINDS) };
}

/** Inside the view, this group's entry in aggregated discovery (v2 and v2beta1 alike). */
export function inViewAggregatedGroup() {
  return {
    metadata: { name: GROUP, creationTimestamp: null },
    versions: [{ version: VERSION, freshness: 'Current', resources: virtualAggregatedResources(GROUP, IN_VIEW_KINDS) }],
  };
}
