// The API group view.kubestellar.io/v1alpha1 itself: its legacy and aggregated discovery, and the
// OpenAPI v2/v3 documents the aggregator merges. They list this group only: the aggregator merges
// every key a backend lists, so the view's own OpenAPI lives under the view root instead.
// Also what the view adds of its own to the WDS's discovery and OpenAPI: the same virtual Bindings
// as bindings.control.kubestellar.io/v1alpha1, KubeStellar's group (./view-proxy.ts injects them).
export const GROUP = 'view.kubestellar.io';
export const VERSION = 'v1alpha1';
export const GROUP_VERSION = `${GROUP}/${VERSION}`;
/** KubeStellar's group, where its tools read Bindings; inside the view it holds only them. */
export const CONTROL_GROUP = 'control.kubestellar.io';
export const CONTROL_GROUP_VERSION = `${CONTROL_GROUP}/${VERSION}`;

/** The Bindings' discovery entries, the same in both groups: short name `bdg` as KubeStellar's CRD. */
function bindingsResource() {
  return { name: 'bindings', singularName: 'binding', namespaced: false, kind: 'Binding', verbs: ['get', 'list', 'watch'], shortNames: ['bdg'], categories: ['kubestellar'] };
}

function bindingsAggregatedResource(group: string) {
  return {
    resource: 'bindings', singularResource: 'binding', scope: 'Cluster',
    responseKind: { group, version: VERSION, kind: 'Binding' },
    verbs: ['get', 'list', 'watch'], shortNames: ['bdg'], categories: ['kubestellar'],
  };
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
      { name: 'spaces', singularName: 'space', namespaced: false, kind: 'Space', verbs: ['get', 'list', 'watch'], categories: ['kubestellar'] },
      { name: 'spaces/proxy', singularName: '', namespaced: false, kind: 'Space', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      bindingsResource(),
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
          verbs: ['get', 'list', 'watch'], categories: ['kubestellar'],
          subresources: [{ subresource: 'proxy', responseKind: { group: GROUP, version: VERSION, kind: 'Space' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] }],
        }, bindingsAggregatedResource(GROUP)],
      }],
    }],
  };
}

/** The schema of a kind of this group: apiVersion, kind, ObjectMeta, and its own spec and status. */
function kindSchema(ref: (n: string) => string, kind: string, description: string, spec: object, status: object, group = GROUP) {
  return {
    description,
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta') },
      spec,
      status,
    },
    'x-kubernetes-group-version-kind': [{ group, version: VERSION, kind }],
  };
}

function spaceSchema(ref: (n: string) => string) {
  return kindSchema(ref, 'Space', 'Space is a Workload Definition Space served through the view. status.viewURL is the server URL of a kubeconfig for the view.', {
    type: 'object',
    properties: { type: { type: 'string', description: 'WDS' }, server: { type: 'string', description: 'URL of the WDS kube-apiserver.' } },
  }, {
    type: 'object',
    properties: {
      phase: { type: 'string' },
      viewPath: { type: 'string', description: 'Path of the view root on the WDS kube-apiserver.' },
      viewURL: { type: 'string', description: 'URL of the view root.' },
    },
  });
}

/** OpenAPI schema names of a group's kinds, as kube-apiserver names a CRD's: io.kubestellar.view.v1alpha1.Binding. */
const schemaPrefix = (group: string) => `${group.split('.').reverse().join('.')}.${VERSION}`;

/** KubeStellar v0.29's Binding (api/control/v1alpha1/types.go), descriptions our own. */
function bindingSchema(ref: (n: string) => string, group: string) {
  const clause = (namespaced: boolean) => ({
    type: 'object',
    required: ['group', 'version', 'resource', ...(namespaced ? ['namespace'] : []), 'name', 'resourceVersion'],
    properties: {
      group: { type: 'string' }, version: { type: 'string' }, resource: { type: 'string' },
      ...(namespaced ? { namespace: { type: 'string', description: 'Namespace of the object.' } } : {}),
      name: { type: 'string', description: 'Name of the object.' },
      resourceVersion: { type: 'string', description: 'The resourceVersion of the object that was placed.' },
      createOnly: { type: 'boolean', description: 'In each cluster, the object is created but never updated once it exists.' },
      statusCollectors: { type: 'array', items: { type: 'string' }, description: 'Names of the StatusCollectors applied to the object.' },
      wantSingletonReportedState: { type: 'boolean', description: 'The status from the one cluster the object goes to is wanted back in the WDS.' },
      wantMultiWECReportedState: { type: 'boolean', description: 'The status from several clusters is wanted back, combined, in the WDS.' },
    },
  });
  return kindSchema(ref, 'Binding', 'Binding is the resolution of one BindingPolicy (same name, its owner): which workload objects go to which clusters, and how. Virtual: computed by kubestellar-view\'s placement controllers, never stored.', {
    type: 'object',
    properties: {
      workload: {
        type: 'object',
        properties: {
          clusterScope: { type: 'array', items: clause(false), description: 'Cluster-scoped objects the policy selects, with the policy\'s modulation of each.' },
          namespaceScope: { type: 'array', items: clause(true), description: 'Namespaced objects the policy selects, with the policy\'s modulation of each.' },
        },
      },
      destinations: { type: 'array', items: { type: 'object', required: ['clusterId'], properties: { clusterId: { type: 'string' } } }, description: 'The clusters the policy selects.' },
    },
  }, {
    type: 'object',
    required: ['observedGeneration'],
    properties: {
      observedGeneration: { type: 'integer', format: 'int64', description: 'The generation of the BindingPolicy the placement controllers have acted on.' },
      errors: { type: 'array', items: { type: 'string' }, description: 'The BindingPolicy\'s errors.' },
    },
  }, group);
}

/** The schema of `<kind>List` for a kind of this group. */
function listSchema(ref: (n: string) => string, kind: string, group = GROUP) {
  return {
    type: 'object', required: ['items'],
    properties: {
      apiVersion: { type: 'string' }, kind: { type: 'string' },
      metadata: { $ref: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta') },
      items: { type: 'array', items: { $ref: ref(`${schemaPrefix(group)}.${kind}`) } },
    },
    'x-kubernetes-group-version-kind': [{ group, version: VERSION, kind: `${kind}List` }],
  };
}

const ownerReference = {
  type: 'object', required: ['apiVersion', 'kind', 'name', 'uid'],
  properties: {
    apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, uid: { type: 'string' },
    controller: { type: 'boolean' }, blockOwnerDeletion: { type: 'boolean' },
  },
};
const objectMeta = {
  type: 'object',
  properties: {
    name: { type: 'string' }, uid: { type: 'string' }, resourceVersion: { type: 'string' }, generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' }, labels: { type: 'object', additionalProperties: { type: 'string' } },
    ownerReferences: { type: 'array', items: ownerReference },
  },
};
const listMeta = { type: 'object', properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' } } };

const base = `/apis/${GROUP_VERSION}/spaces`;

/** An operation's 200 response, in OpenAPI v3's or v2's form. */
function okResponse(ref: (n: string) => string, v3: boolean, schema: string) {
  return v3
    ? { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: ref(schema) } } } } }
    : { 200: { description: 'OK', schema: { $ref: ref(schema) } } };
}

/** The `{name}` path parameter, in OpenAPI v3's or v2's form. */
const nameParameter = (v3: boolean) => [v3 ? { name: 'name', in: 'path', required: true, schema: { type: 'string' } } : { name: 'name', in: 'path', required: true, type: 'string' }];

/** get and list of a group's bindings, with the operation ids kube-apiserver would give them. */
function bindingsOperations(ref: (n: string) => string, v3: boolean, group: string) {
  const ok = (schema: string) => okResponse(ref, v3, schema);
  const gvk = { group, version: VERSION, kind: 'Binding' };
  const camel = group.split('.').map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
  const id = camel[0]!.toUpperCase() + camel.slice(1) + 'V1alpha1Binding';
  const tags = [`${camel}_v1alpha1`];
  const path = `/apis/${group}/${VERSION}/bindings`;
  const prefix = schemaPrefix(group);
  return {
    [path]: { get: { operationId: `list${id}`, tags, responses: ok(`${prefix}.BindingList`), 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': gvk } },
    [`${path}/{name}`]: {
      get: { operationId: `read${id}`, tags, responses: ok(`${prefix}.Binding`), 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk },
      parameters: nameParameter(v3),
    },
  };
}

function bindingsSchemas(ref: (n: string) => string, group: string) {
  return {
    [`${schemaPrefix(group)}.Binding`]: bindingSchema(ref, group),
    [`${schemaPrefix(group)}.BindingList`]: listSchema(ref, 'Binding', group),
  };
}

function operations(ref: (n: string) => string, v3: boolean) {
  const ok = (schema: string) => okResponse(ref, v3, schema);
  const action = (verb: string) => ({ 'x-kubernetes-action': verb, 'x-kubernetes-group-version-kind': { group: GROUP, version: VERSION, kind: 'Space' } });
  return {
    [base]: { get: { operationId: 'listViewKubestellarIoV1alpha1Space', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.SpaceList'), ...action('list') } },
    [`${base}/{name}`]: {
      get: { operationId: 'readViewKubestellarIoV1alpha1Space', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.Space'), ...action('get') },
      parameters: nameParameter(v3),
    },
    ...bindingsOperations(ref, v3, GROUP),
  };
}

/** The schemas of this group's kinds, for OpenAPI v2 definitions and v3 components alike. */
function kindSchemas(ref: (n: string) => string) {
  return {
    'io.kubestellar.view.v1alpha1.Space': spaceSchema(ref),
    'io.kubestellar.view.v1alpha1.SpaceList': listSchema(ref, 'Space'),
    ...bindingsSchemas(ref, GROUP),
  };
}

export function openAPIV2() {
  const ref = (n: string) => `#/definitions/${n}`;
  return {
    swagger: '2.0',
    info: { title: 'kubestellar-view', version: VERSION },
    paths: operations(ref, false),
    // ObjectMeta and ListMeta are referenced, not defined: the aggregator merges this document
    // into kube-apiserver's, where they are, and would rename a differing copy.
    definitions: kindSchemas(ref),
  };
}

export function openAPIV3GroupVersion() {
  const ref = (n: string) => `#/components/schemas/${n}`;
  return {
    openapi: '3.0.0',
    info: { title: 'kubestellar-view', version: VERSION },
    paths: operations(ref, true),
    components: {
      schemas: {
        ...kindSchemas(ref),
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMeta,
        'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta': listMeta,
      },
    },
  };
}

export function openAPIV3Index(hash: string) {
  return { paths: { [`apis/${GROUP_VERSION}`]: { serverRelativeURL: `/openapi/v3/apis/${GROUP_VERSION}?hash=${hash}` } } };
}

// The view's own part of KubeStellar's group control.kubestellar.io: its Bindings. The WDS's
// control.kubestellar.io CRDs (BindingPolicy, CustomTransform, StatusCollector) stay hidden in the
// view; a real bindings.control.kubestellar.io CRD of the WDS (a KubeStellar install) is hidden
// too, shadowed by these.

export const controlApiGroup = {
  name: CONTROL_GROUP,
  versions: [{ groupVersion: CONTROL_GROUP_VERSION, version: VERSION }],
  preferredVersion: { groupVersion: CONTROL_GROUP_VERSION, version: VERSION },
};

export function controlResourceList() {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: CONTROL_GROUP_VERSION, resources: [bindingsResource()] };
}

/** The group's entry in aggregated discovery (v2 and v2beta1 alike). */
export function controlAggregatedGroup() {
  return {
    metadata: { name: CONTROL_GROUP, creationTimestamp: null },
    versions: [{ version: VERSION, freshness: 'Current', resources: [bindingsAggregatedResource(CONTROL_GROUP)] }],
  };
}

/** What the view adds to the WDS's OpenAPI v2 document (ObjectMeta and ListMeta are the WDS's own). */
export function controlOpenAPIV2() {
  const ref = (n: string) => `#/definitions/${n}`;
  return { paths: bindingsOperations(ref, false, CONTROL_GROUP), definitions: bindingsSchemas(ref, CONTROL_GROUP) };
}

/** The OpenAPI v3 document of control.kubestellar.io/v1alpha1 as the view serves it. */
export function controlOpenAPIV3() {
  const ref = (n: string) => `#/components/schemas/${n}`;
  return {
    openapi: '3.0.0',
    info: { title: 'kubestellar-view', version: VERSION },
    paths: bindingsOperations(ref, true, CONTROL_GROUP),
    components: {
      schemas: {
        ...bindingsSchemas(ref, CONTROL_GROUP),
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMeta,
        'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta': listMeta,
      },
    },
  };
}
