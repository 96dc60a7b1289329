// The OpenAPI v2 and v3 documents of view.kubestellar.io/v1alpha1 that the aggregator merges (they
// list this group only: the aggregator merges every key a backend lists, so the view's own OpenAPI
// lives under the view root instead), and what the view adds of its own to the WDS's OpenAPI: the
// virtual resources as control.kubestellar.io/v1alpha1 and the UpsyncedObjects in this group
// (../view/view-discovery.ts serves them). Paths and operation ids are those kube-apiserver gives a CRD of
// the same scope, so that clients generated from them and `kubectl explain` find what they
// expect. Schemas: ./view-schemas.ts.
import { CONTROL_GROUP, CONTROL_KINDS, GROUP, GROUP_VERSION, IN_VIEW_KINDS, VERSION, VIRTUAL_KINDS } from './view-group.js';
import type { VirtualKind } from '../virtual/read-only-resource.js';
import { listMeta, objectMeta, schemaPrefix, spaceSchemas, virtualSchemas } from './view-schemas.js';

type Ref = (n: string) => string;

/** An operation's 200 response, in OpenAPI v3's or v2's form. */
function okResponse(ref: Ref, v3: boolean, schema: string) {
  return v3
    ? { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: ref(schema) } } } } }
    : { 200: { description: 'OK', schema: { $ref: ref(schema) } } };
}

/** Path parameters (`name`, `namespace`), in OpenAPI v3's or v2's form. */
const pathParameters = (v3: boolean, names: string[]) =>
  names.map((name) => (v3 ? { name, in: 'path', required: true, schema: { type: 'string' } } : { name, in: 'path', required: true, type: 'string' }));

/** kube-apiserver's operation id stem for a group: view.kubestellar.io → ViewKubestellarIoV1alpha1. */
function idStem(group: string): { stem: string; tag: string } {
  const camel = group.split('.').map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
  return { stem: `${camel[0]!.toUpperCase()}${camel.slice(1)}V1alpha1`, tag: `${camel}_v1alpha1` };
}

/**
 * get and list of one virtual kind in `group`, as kube-apiserver lists a CRD's: a cluster-scoped
 * one at `<resource>` and `<resource>/{name}`; a namespaced one across namespaces
 * (…ForAllNamespaces), in a namespace and by name in it (…Namespaced…).
 */
function virtualOperations(ref: Ref, v3: boolean, group: string, k: VirtualKind) {
  const ok = (schema: string) => okResponse(ref, v3, schema);
  const gvk = { group, version: VERSION, kind: k.kind };
  const { stem, tag } = idStem(group);
  const prefix = schemaPrefix(group);
  const op = (id: string, action: string, schema: string) =>
    ({ operationId: id, tags: [tag], responses: ok(`${prefix}.${schema}`), 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk });
  const all = `/apis/${group}/${VERSION}/${k.resource}`;
  if (!k.namespaced) {
    return {
      [all]: { get: op(`list${stem}${k.kind}`, 'list', `${k.kind}List`) },
      [`${all}/{name}`]: { get: op(`read${stem}${k.kind}`, 'get', k.kind), parameters: pathParameters(v3, ['name']) },
    };
  }
  const inNamespace = `/apis/${group}/${VERSION}/namespaces/{namespace}/${k.resource}`;
  return {
    [all]: { get: op(`list${stem}${k.kind}ForAllNamespaces`, 'list', `${k.kind}List`) },
    [inNamespace]: { get: op(`list${stem}Namespaced${k.kind}`, 'list', `${k.kind}List`), parameters: pathParameters(v3, ['namespace']) },
    [`${inNamespace}/{name}`]: { get: op(`read${stem}Namespaced${k.kind}`, 'get', k.kind), parameters: pathParameters(v3, ['name', 'namespace']) },
  };
}

function virtualPaths(ref: Ref, v3: boolean, group: string, kinds: readonly VirtualKind[] = VIRTUAL_KINDS) {
  return Object.assign({}, ...kinds.map((k) => virtualOperations(ref, v3, group, k))) as Record<string, unknown>;
}

const spaces = `/apis/${GROUP_VERSION}/spaces`;

function operations(ref: Ref, v3: boolean) {
  const ok = (schema: string) => okResponse(ref, v3, schema);
  const action = (verb: string) => ({ 'x-kubernetes-action': verb, 'x-kubernetes-group-version-kind': { group: GROUP, version: VERSION, kind: 'Space' } });
  return {
    [spaces]: { get: { operationId: 'listViewKubestellarIoV1alpha1Space', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.SpaceList'), ...action('list') } },
    [`${spaces}/{name}`]: {
      get: { operationId: 'readViewKubestellarIoV1alpha1Space', tags: ['viewKubestellarIo_v1alpha1'], responses: ok('io.kubestellar.view.v1alpha1.Space'), ...action('get') },
      parameters: pathParameters(v3, ['name']),
    },
    ...virtualPaths(ref, v3, GROUP),
  };
}

/** The schemas of this group's kinds, for OpenAPI v2 definitions and v3 components alike. */
function kindSchemas(ref: Ref) {
  return { ...spaceSchemas(ref), ...virtualSchemas(ref, GROUP) };
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

/** The view's own groups inside the view, each with the virtual kinds it serves there. */
const IN_VIEW_GROUPS: readonly (readonly [string, readonly VirtualKind[]])[] = [[CONTROL_GROUP, CONTROL_KINDS], [GROUP, IN_VIEW_KINDS]];

/** What the view adds to the WDS's OpenAPI v2 document (ObjectMeta and ListMeta are the WDS's own). */
export function inViewOpenAPIV2() {
  const ref = (n: string) => `#/definitions/${n}`;
  return {
    paths: Object.assign({}, ...IN_VIEW_GROUPS.map(([g, kinds]) => virtualPaths(ref, false, g, kinds))) as Record<string, unknown>,
    definitions: Object.assign({}, ...IN_VIEW_GROUPS.map(([g, kinds]) => virtualSchemas(ref, g, kinds))) as Record<string, unknown>,
  };
}

/** The OpenAPI v3 documents the view serves of its own groups, by index path (`apis/<group>/<version>`). */
export function inViewOpenAPIV3(): Map<string, object> {
  const ref = (n: string) => `#/components/schemas/${n}`;
  return new Map(IN_VIEW_GROUPS.map(([group, kinds]) => [`apis/${group}/${VERSION}`, {
    openapi: '3.0.0',
    info: { title: 'kubestellar-view', version: VERSION },
    paths: virtualPaths(ref, true, group, kinds),
    components: {
      schemas: {
        ...virtualSchemas(ref, group, kinds),
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMeta,
        'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta': listMeta,
      },
    },
  }]));
}
