// The API group view.kubestellar.io/v1alpha1 itself: its legacy and aggregated discovery, and the
// OpenAPI v2/v3 documents the aggregator merges. They list this group only: the aggregator merges
// every key a backend lists, so the view's own OpenAPI lives under the view root instead.
export const GROUP = 'view.kubestellar.io';
export const VERSION = 'v1alpha1';
export const GROUP_VERSION = `${GROUP}/${VERSION}`;

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
      { name: 'bindings', singularName: 'binding', namespaced: false, kind: 'Binding', verbs: ['get', 'list', 'watch'], categories: ['kubestellar'] },
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
        }, {
          resource: 'bindings', singularResource: 'binding', scope: 'Cluster',
          responseKind: { group: GROUP, version: VERSION, kind: 'Binding' },
          verbs: ['get', 'list', 'watch'], categories: ['kubestellar'],
        }],
      }],
    }],
  };
}

/** The schema of a kind of this group: apiVersion, kind, ObjectMeta, and its own spec and status. */
function kindSchema(ref: (n: string) => string, kind: string, description: string, spec: object, status: object) {
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
    'x-kubernetes-group-version-kind': [{ group: GROUP, version: VERSION, kind }],
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

function bindingSchema(ref: (n: string) => string) {
  const objectRef = (namespaced: boolean) => ({
    type: 'object',
    properties: {
      group: { type: 'string' }, version: { type: 'string' }, resource: { type: 'string' },
      ...(namespaced ? { namespace: { type: 'string' } } : {}),
      name: { type: 'string' }, resourceVersion: { type: 'string' },
    },
  });
  return kindSchema(ref, 'Binding', 'Binding is the resolution of one BindingPolicy (same name): which workload objects go to which clusters. Virtual: computed by the placement controllers, never stored.', {
    type: 'object',
    properties: {
      workload: {
        type: 'object',
        properties: {
          clusterScope: { type: 'array', items: objectRef(false), description: 'Cluster-scoped objects the policy selects.' },
          namespaceScope: { type: 'array', items: objectRef(true), description: 'Namespaced objects the policy selects.' },
        },
      },
      destinations: { type: 'array', items: { type: 'object', properties: { clusterId: { type: 'string' } } }, description: 'The clusters the policy selects.' },
    },
  }, { type: 'object', properties: { observedGeneration: { type: 'integer', format: 'int64' }, errors: { type: 'array', items: { type: 'string' } } } });
}

/** The schema of `<kind>List` for a kind of this group. */
function listSchema(ref: (n: string) => string, kind: string) {
  return {
    type: 'object', required: ['items'],
    properties: {
      apiVersion: { type: 'string' }, kind: { type: 'string' },
      metadata: { $ref: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta') },
      items: { type: 'array', items: { $ref: ref(`io.kubestellar.view.v1alpha1.${kind}`) } },
    },
    'x-kubernetes-group-version-kind': [{ group: GROUP, version: VERSION, kind: `${kind}List` }],
  };
}

const objectMeta = { type: 'object', properties: { name: { type: 'string' }, uid: { type: 'string' }, resourceVersion: { type: 'string' }, creationTimestamp: { type: 'string', format: 'date-time' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } };
const listMeta = { type: 'object', properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' } } };

const base = `/apis/${GROUP_VERSION}/spaces`;
const bindingsBase = `/apis/${GROUP_VERSION}/bindings`;

function operations(ref: (n: string) => string, v3: boolean) {
  const ok = (schema: string) => (v3
    ? { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: ref(schema) } } } } }
    : { 200: { description: 'OK', schema: { $ref: ref(schema) } } });
  const action = (verb: string, kind = 'Space') => ({ 'x-kubernetes-action': verb, 'x-kubernetes-group-version-kind': { group: GROUP, version: VERSION, kind } });
  const nameParam = [v3 ? { name: 'name', in: 'path', required: true, schema: { type: 'string' } } : { name: 'name', in: 'path', required: true, type: 'string' }];
  return {
    [base]: { get: { operationId: 'listViewKubestellarIoV1alpha1Space', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.SpaceList'), ...action('list') } },
    [`${base}/{name}`]: {
      get: { operationId: 'readViewKubestellarIoV1alpha1Space', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.Space'), ...action('get') },
      parameters: nameParam,
    },
    [bindingsBase]: { get: { operationId: 'listViewKubestellarIoV1alpha1Binding', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.BindingList'), ...action('list', 'Binding') } },
    [`${bindingsBase}/{name}`]: {
      get: { operationId: 'readViewKubestellarIoV1alpha1Binding', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.Binding'), ...action('get', 'Binding') },
      parameters: nameParam,
    },
  };
}

/** The schemas of this group's kinds, for OpenAPI v2 definitions and v3 components alike. */
function kindSchemas(ref: (n: string) => string) {
  return {
    'io.kubestellar.view.v1alpha1.Space': spaceSchema(ref),
    'io.kubestellar.view.v1alpha1.SpaceList': listSchema(ref, 'Space'),
    'io.kubestellar.view.v1alpha1.Binding': bindingSchema(ref),
    'io.kubestellar.view.v1alpha1.BindingList': listSchema(ref, 'Binding'),
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
