import t from 'tap';
import { KindCategories } from '../../src/storage/kind-categories.js';
import { filterOpenAPIDocument, filterOpenAPIV3Index, pathGroupResource } from '../../src/storage/openapi-filter.js';

const cats = new KindCategories();

t.test('pathGroupResource', async (t) => {
  const cases: Array<[string, { group: string; resource: string } | undefined]> = [
    ['/api/v1/namespaces/{namespace}/pods', { group: '', resource: 'pods' }],
    ['/api/v1/namespaces/{namespace}/pods/{name}/status', { group: '', resource: 'pods' }],
    ['/api/v1/nodes/{name}/proxy/{path}', { group: '', resource: 'nodes' }],
    ['/api/v1/watch/namespaces/{namespace}/events', { group: '', resource: 'events' }],
    ['/api/v1/namespaces', { group: '', resource: 'namespaces' }],
    ['/api/v1/namespaces/{name}', { group: '', resource: 'namespaces' }],
    ['/api/v1/namespaces/{name}/status', { group: '', resource: 'namespaces' }],
    ['/api/v1/namespaces/{name}/finalize', { group: '', resource: 'namespaces' }],
    ['/apis/apps/v1/namespaces/{namespace}/deployments/{name}', { group: 'apps', resource: 'deployments' }],
    ['/apis/coordination.k8s.io/v1/watch/leases', { group: 'coordination.k8s.io', resource: 'leases' }],
    ['/apis/rbac.authorization.k8s.io/v1/clusterroles', { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }],
    ['/api/v1/', undefined],
    ['/apis/apps/v1/', undefined],
    ['/apis/apps/', undefined],
    ['/version/', undefined],
    ['/.well-known/openid-configuration', undefined],
  ];
  for (const [p, want] of cases) t.strictSame(pathGroupResource(p), want, p);
});

const ref3 = (n: string) => ({ $ref: `#/components/schemas/${n}` });
const op3 = (n: string) => ({ get: { responses: { 200: { content: { 'application/json': { schema: ref3(n) } } } } } });
const v3Doc = () => ({
  openapi: '3.0.0',
  info: { title: 'Kubernetes', version: 'v1.33.0' },
  paths: {
    '/api/v1/namespaces/{namespace}/configmaps': op3('ConfigMapList'),
    '/api/v1/namespaces/{namespace}/events': op3('EventList'),
    '/api/v1/watch/namespaces/{namespace}/events': op3('WatchEvent'),
    '/api/v1/nodes/{name}/status': op3('Node'),
    '/api/v1/': op3('APIResourceList'),
  },
  components: {
    securitySchemes: { BearerToken: { type: 'apiKey', in: 'header', name: 'authorization' } },
    schemas: {
      ConfigMap: { properties: { metadata: { allOf: [ref3('ObjectMeta')] } } },
      ConfigMapList: { properties: { items: { type: 'array', items: { allOf: [ref3('ConfigMap')] } }, metadata: ref3('ListMeta') } },
      Event: { properties: { metadata: ref3('ObjectMeta'), involvedObject: ref3('ObjectReference') } },
      EventList: { properties: { items: { items: ref3('Event') }, metadata: ref3('ListMeta') } },
      ObjectReference: { type: 'object' },
      Node: { properties: { metadata: ref3('ObjectMeta'), status: ref3('NodeStatus') } },
      NodeStatus: { type: 'object' },
      WatchEvent: { properties: { object: { type: 'object' } } },
      ObjectMeta: { properties: { ownerReferences: { items: ref3('OwnerReference') } } },
      OwnerReference: { type: 'object' },
      ListMeta: { type: 'object' },
      APIResourceList: { type: 'object' },
      Status: { type: 'object' },
    },
  },
});

t.test('a v3 document: hidden paths and the schemas only they use removed', async (t) => {
  const input = v3Doc();
  const out = filterOpenAPIDocument(input, cats);
  t.strictSame(Object.keys(out.paths!), ['/api/v1/namespaces/{namespace}/configmaps', '/api/v1/']);
  t.strictSame(Object.keys(out.components!.schemas!).sort(),
    ['APIResourceList', 'ConfigMap', 'ConfigMapList', 'ListMeta', 'ObjectMeta', 'OwnerReference', 'Status']);
  t.strictSame(out.components!.securitySchemes, v3Doc().components.securitySchemes, 'other components kept');
  t.strictSame(out.info, v3Doc().info);
  t.equal(out.openapi, '3.0.0');
  t.strictSame(out.components!.schemas!.ConfigMapList, v3Doc().components.schemas.ConfigMapList, 'kept schemas unchanged');
  t.strictSame(input, v3Doc(), 'input not modified');
});

t.test('a schema used by a hidden path stays when a visible schema still references it', async (t) => {
  const doc = v3Doc();
  (doc.components.schemas as Record<string, unknown>).ConfigMap = { properties: { ref: ref3('ObjectReference') } };
  const out = filterOpenAPIDocument(doc, cats);
  t.ok(out.components!.schemas!.ObjectReference, 'ObjectReference still reachable from ConfigMap');
  t.notOk(out.components!.schemas!.Event);
  t.notOk(out.components!.schemas!.NodeStatus);
});

const ref2 = (n: string) => ({ $ref: `#/definitions/${n}` });
const op2 = (n: string) => ({ get: { responses: { 200: { schema: ref2(n) } } } });
const v2Doc = () => ({
  swagger: '2.0',
  info: { title: 'Kubernetes', version: 'v1.33.0' },
  paths: {
    '/apis/apps/v1/namespaces/{namespace}/deployments': op2('io.k8s.api.apps.v1.DeploymentList'),
    '/apis/apps/v1/namespaces/{namespace}/controllerrevisions': op2('io.k8s.api.apps.v1.ControllerRevisionList'),
    '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}': op2('io.k8s.api.coordination.v1.Lease'),
  },
  definitions: {
    'io.k8s.api.apps.v1.Deployment': { properties: { metadata: ref2('ObjectMeta') } },
    'io.k8s.api.apps.v1.DeploymentList': { properties: { items: { items: ref2('io.k8s.api.apps.v1.Deployment') } } },
    'io.k8s.api.apps.v1.ControllerRevision': { properties: { metadata: ref2('ObjectMeta'), data: ref2('RawExtension') } },
    'io.k8s.api.apps.v1.ControllerRevisionList': { properties: { items: { items: ref2('io.k8s.api.apps.v1.ControllerRevision') } } },
    'io.k8s.api.coordination.v1.Lease': { properties: { metadata: ref2('ObjectMeta'), spec: ref2('io.k8s.api.coordination.v1.LeaseSpec') } },
    'io.k8s.api.coordination.v1.LeaseSpec': { type: 'object' },
    RawExtension: { type: 'object' },
    ObjectMeta: { type: 'object' },
  },
});

t.test('a v2 document: hidden paths and their definitions removed, shared ones kept', async (t) => {
  const out = filterOpenAPIDocument(v2Doc(), cats);
  t.strictSame(Object.keys(out.paths!), ['/apis/apps/v1/namespaces/{namespace}/deployments']);
  t.strictSame(Object.keys(out.definitions!).sort(), ['ObjectMeta', 'io.k8s.api.apps.v1.Deployment', 'io.k8s.api.apps.v1.DeploymentList']);
  t.equal(out.swagger, '2.0');
  t.equal(out.components, undefined, 'no components added to a v2 document');
});

t.test('documents with nothing hidden are returned unchanged', async (t) => {
  const v3 = v3Doc();
  for (const p of ['/api/v1/namespaces/{namespace}/events', '/api/v1/watch/namespaces/{namespace}/events', '/api/v1/nodes/{name}/status']) {
    delete (v3.paths as Record<string, unknown>)[p];
  }
  const snapshot = JSON.parse(JSON.stringify(v3)) as unknown;
  t.strictSame(filterOpenAPIDocument(v3, cats), snapshot, 'unreferenced schemas are not pruned');
  const v2 = { swagger: '2.0', paths: { '/apis/apps/v1/deployments': op2('D') }, definitions: { D: {}, Orphan: {} } };
  t.strictSame(filterOpenAPIDocument(v2, cats), { swagger: '2.0', paths: { '/apis/apps/v1/deployments': op2('D') }, definitions: { D: {}, Orphan: {} } });
});

t.test('filterOpenAPIV3Index: hidden group versions removed, URLs under the view root', async (t) => {
  const root = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
  const e = (p: string) => ({ serverRelativeURL: `/openapi/v3/${p}?hash=ABC` });
  const index = { paths: Object.fromEntries([
    'api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/coordination.k8s.io', 'apis/coordination.k8s.io/v1',
    'apis/control.kubestellar.io/v1alpha1', 'apis/view.kubestellar.io/v1alpha1', 'apis/example.com/v1', 'apis/example.com/v2',
    'version', '.well-known/openid-configuration',
  ].map((p) => [p, e(p)])) };
  const visible = new Set(['v1', 'apps/v1', 'example.com/v1', 'control.kubestellar.io/v1alpha1']);
  const out = filterOpenAPIV3Index(index, visible, cats, root);
  t.strictSame(Object.keys(out.paths!).sort(),
    ['.well-known/openid-configuration', 'api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/example.com/v1', 'version']);
  t.equal(out.paths!['apis/apps/v1']!.serverRelativeURL, `${root}/openapi/v3/apis/apps/v1?hash=ABC`);
  t.equal(out.paths!.version!.serverRelativeURL, `${root}/openapi/v3/version?hash=ABC`);
  t.equal(out.paths!['api/v1']!.serverRelativeURL, `${root}/openapi/v3/api/v1?hash=ABC`);
  t.equal(index.paths['apis/apps/v1']!.serverRelativeURL, '/openapi/v3/apis/apps/v1?hash=ABC', 'input not modified');
});
