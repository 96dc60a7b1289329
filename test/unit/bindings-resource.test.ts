// The virtual Bindings over HTTP (src/apiserver/groups/bindings-resource.ts through the app): the same
// Binding as bindings.view.kubestellar.io and, inside the view, as KubeStellar's
// bindings.control.kubestellar.io — each in its own apiVersion, authorized on its own group;
// the view's discovery and OpenAPI list them in control.kubestellar.io; writes are 405.
import t from 'tap';
import { Store } from '../../src/kube/informer.js';
import type { BindingPolicy, ManagedCluster } from '../../src/controllers/model/api.js';
import { Bindings } from '../../src/controllers/placement/bindings.js';
import type { BindingSource } from '../../src/apiserver/groups/bindings-resource.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

const VIEW_BINDINGS = '/apis/view.kubestellar.io/v1alpha1/bindings';
const CONTROL_BINDINGS = `${ROOT}/apis/control.kubestellar.io/v1alpha1/bindings`;
const ADMIN = { 'x-test-user': 'admin' };
const JSON_HEADERS = { 'content-type': 'application/json' };

function source(): BindingSource {
  const policies = new Store<BindingPolicy>({}, [{
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
    metadata: { name: 'edge', uid: 'policy-uid', generation: 1, creationTimestamp: new Date(Date.now() - 20 * 60_000).toISOString() },
    spec: { clusterSelectors: [{ matchLabels: { location: 'edge' } }] }, status: { observedGeneration: 1 },
  }]);
  const clusters = new Store<ManagedCluster>({}, [{ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'c1', labels: { location: 'edge' } } }]);
  const b = new Bindings(policies, clusters);
  b.record('web', {
    id: { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web' }, resourceVersion: '5', policies: ['edge'],
    modulations: { edge: { createOnly: true, wantSingletonReportedState: true, wantMultiWECReportedState: false, statusCollectors: ['ready'], clusters: ['c1'] } },
  });
  return { bindings: () => b.list(), binding: (n) => b.binding(n), onBindingChange: (cb) => b.onChange(cb) };
}

t.test('one Binding, two paths: each in its own apiVersion, authorized on its own group', async (t) => {
  const asked: unknown[] = [];
  const { app, upstream, close } = await testApp({ bindings: source(), onAuthorize: (_u, a) => asked.push(a) });
  t.teardown(close);
  const view = await app.inject({ url: `${VIEW_BINDINGS}/edge`, headers: ADMIN });
  const control = await app.inject({ url: `${CONTROL_BINDINGS}/edge`, headers: ADMIN });
  t.equal(view.statusCode, 200);
  t.equal(control.statusCode, 200);
  t.equal(view.json().apiVersion, 'view.kubestellar.io/v1alpha1');
  t.equal(control.json().apiVersion, 'control.kubestellar.io/v1alpha1');
  t.same({ ...view.json(), apiVersion: 'x' }, { ...control.json(), apiVersion: 'x' }, 'otherwise the same Binding');
  t.strictSame(control.json().spec.workload.namespaceScope, [{
    group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web', resourceVersion: '5', createOnly: true, statusCollectors: ['ready'], wantSingletonReportedState: true,
  }]);
  t.strictSame(control.json().metadata.ownerReferences, [{ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', name: 'edge', uid: 'policy-uid', controller: true, blockOwnerDeletion: false }]);
  t.same(asked, [
    { resource: { verb: 'get', group: 'view.kubestellar.io', resource: 'bindings', name: 'edge' } },
    { resource: { verb: 'get', group: 'control.kubestellar.io', resource: 'bindings', name: 'edge' } },
  ], 'a SubjectAccessReview on bindings in the group of the path');
  t.same(upstream.calls(), [], 'the WDS is never asked: its own control.kubestellar.io bindings (if any) are shadowed');

  const list = await app.inject({ url: `${CONTROL_BINDINGS}?fieldSelector=metadata.name%3Dedge`, headers: ADMIN });
  t.match(list.json(), { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingList', items: [{ apiVersion: 'control.kubestellar.io/v1alpha1', metadata: { name: 'edge' } }] });
  const none = await app.inject({ url: `${CONTROL_BINDINGS}?fieldSelector=metadata.name%3Dother`, headers: ADMIN });
  t.same(none.json().items, []);
  const missing = await app.inject({ url: `${CONTROL_BINDINGS}/nope`, headers: ADMIN });
  t.equal(missing.statusCode, 404);
  t.match(missing.json(), { kind: 'Status', reason: 'NotFound', details: { group: 'control.kubestellar.io', kind: 'bindings', name: 'nope' } });
  const denied = await app.inject({ url: CONTROL_BINDINGS, headers: { 'x-test-user': 'alice' } });
  t.equal(denied.statusCode, 403, 'no list right, no list');

  const table = await app.inject({ url: CONTROL_BINDINGS, headers: { ...ADMIN, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  t.same(table.json().columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Objects', 'Clusters', 'Ready', 'Available', 'Age']);
  t.same(table.json().rows[0].cells, ['edge', 1, 'c1', '<unknown>', '<none>', '20m'], 'no status yet: Ready unknown; no outcomes: no availability');
});

t.test('writes to either path: authorized as the write, then 405 MethodNotAllowed', async (t) => {
  const asked: unknown[] = [];
  const { app, upstream, close } = await testApp({ bindings: source(), onAuthorize: (_u, a) => asked.push(a) });
  t.teardown(close);
  const cases: Array<[string, string, string]> = [
    ['POST', VIEW_BINDINGS, 'create'], ['PUT', `${VIEW_BINDINGS}/edge`, 'update'], ['PATCH', `${VIEW_BINDINGS}/edge`, 'patch'], ['DELETE', `${VIEW_BINDINGS}/edge`, 'delete'],
    ['POST', CONTROL_BINDINGS, 'create'], ['PUT', `${CONTROL_BINDINGS}/edge`, 'update'], ['PATCH', `${CONTROL_BINDINGS}/edge`, 'patch'],
    ['DELETE', `${CONTROL_BINDINGS}/edge`, 'delete'], ['DELETE', CONTROL_BINDINGS, 'deletecollection'],
  ];
  for (const [method, url, verb] of cases) {
    asked.length = 0;
    const res = await app.inject({ method: method as 'POST', url, headers: { ...ADMIN, ...JSON_HEADERS }, payload: '{}' });
    t.equal(res.statusCode, 405, `${method} ${url}`);
    t.match(res.json(), { kind: 'Status', status: 'Failure', reason: 'MethodNotAllowed', code: 405 });
    t.match(asked, [{ resource: { verb, resource: 'bindings' } }], `${method} ${url}: authorized as ${verb}`);
  }
  const forbidden = await app.inject({ method: 'DELETE', url: `${CONTROL_BINDINGS}/edge`, headers: { 'x-test-user': 'alice' } });
  t.equal(forbidden.statusCode, 403, 'without the right: 403 first, as kube-apiserver');
  t.same(upstream.calls(), []);
});

t.test('discovery of the view lists bindings in control.kubestellar.io, short name bdg; the group holds only the view\'s virtual resources', async (t) => {
  const { app, upstream, close } = await testApp({ bindings: source() });
  t.teardown(close);
  const headers = { 'x-test-user': 'alice' };
  const wdsAggregated = {
    kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {},
    items: [
      { metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ resource: 'deployments', scope: 'Namespaced', verbs: ['get'] }] }] },
      { metadata: { name: 'control.kubestellar.io' }, versions: [{ version: 'v1alpha1', resources: [{ resource: 'bindingpolicies', scope: 'Cluster', verbs: ['get'] }] }] },
    ],
  };
  const aggregatedHeaders = { 'content-type': 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' };
  upstream.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, JSON.stringify(wdsAggregated), { headers: aggregatedHeaders });
  const agg = await app.inject({ url: `${ROOT}/apis`, headers: { ...headers, accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
  t.equal(agg.statusCode, 200);
  const items = agg.json().items;
  t.same(items.map((g: { metadata: { name: string } }) => g.metadata.name), ['apps', 'control.kubestellar.io', 'view.kubestellar.io'], 'view.kubestellar.io: its upsyncedobjects');
  t.strictSame(items[1].versions, [{
    version: 'v1alpha1', freshness: 'Current',
    resources: [{
      resource: 'bindings', singularResource: 'binding', scope: 'Cluster', responseKind: { group: 'control.kubestellar.io', version: 'v1alpha1', kind: 'Binding' },
      verbs: ['get', 'list', 'watch'], shortNames: ['bdg'], categories: ['kubestellar'],
    }, {
      resource: 'combinedstatuses', singularResource: 'combinedstatus', scope: 'Namespaced', responseKind: { group: 'control.kubestellar.io', version: 'v1alpha1', kind: 'CombinedStatus' },
      verbs: ['get', 'list', 'watch'], shortNames: ['cs'], categories: ['kubestellar'],
    }],
  }], 'the WDS\'s bindingpolicies stay hidden; the view\'s bindings and combinedstatuses are there');

  const group = await app.inject({ url: `${ROOT}/apis/control.kubestellar.io`, headers });
  t.match(group.json(), { kind: 'APIGroup', name: 'control.kubestellar.io', preferredVersion: { groupVersion: 'control.kubestellar.io/v1alpha1' } });
  const resources = await app.inject({ url: `${ROOT}/apis/control.kubestellar.io/v1alpha1`, headers });
  t.strictSame(resources.json(), {
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'control.kubestellar.io/v1alpha1',
    resources: [
      { name: 'bindings', singularName: 'binding', namespaced: false, kind: 'Binding', verbs: ['get', 'list', 'watch'], shortNames: ['bdg'], categories: ['kubestellar'] },
      { name: 'combinedstatuses', singularName: 'combinedstatus', namespaced: true, kind: 'CombinedStatus', verbs: ['get', 'list', 'watch'], shortNames: ['cs'], categories: ['kubestellar'] },
    ],
  });
  t.equal((await app.inject({ url: `${ROOT}/apis/control.kubestellar.io/v1beta1`, headers })).statusCode, 404);
  t.equal((await app.inject({ url: `${ROOT}/apis/control.kubestellar.io/v1alpha1/bindingpolicies`, headers })).statusCode, 404, 'the WDS\'s policies stay hidden');
  t.equal(upstream.calls().length, 1, 'only the WDS\'s /apis was asked');

  const own = await app.inject({ url: '/apis/view.kubestellar.io/v1alpha1', headers });
  t.match(own.json().resources.find((r: { name: string }) => r.name === 'bindings'), { shortNames: ['bdg'], categories: ['kubestellar'] }, 'bdg in view.kubestellar.io too');
});

t.test('legacy /apis of the view: control.kubestellar.io with its one version', async (t) => {
  const { app, upstream, close } = await testApp({ bindings: source() });
  t.teardown(close);
  const gv = (g: string, v: string) => ({ groupVersion: `${g}/${v}`, version: v });
  upstream.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, JSON.stringify({
    kind: 'APIGroupList', apiVersion: 'v1',
    groups: [{ name: 'apps', versions: [gv('apps', 'v1')], preferredVersion: gv('apps', 'v1') }, { name: 'control.kubestellar.io', versions: [gv('control.kubestellar.io', 'v1alpha1')], preferredVersion: gv('control.kubestellar.io', 'v1alpha1') }],
  }), { headers: JSON_HEADERS });
  upstream.pool.intercept({ path: '/api', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', items: [{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ resource: 'configmaps' }] }] }] }), { headers: JSON_HEADERS });
  upstream.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', items: [{ metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ resource: 'deployments' }] }] }] }), { headers: JSON_HEADERS });
  const res = await app.inject({ url: `${ROOT}/apis`, headers: { 'x-test-user': 'alice', accept: 'application/json' } });
  t.equal(res.statusCode, 200);
  t.same(res.json().groups.map((g: { name: string; versions: Array<{ groupVersion: string }> }) => [g.name, g.versions.map((v) => v.groupVersion)]),
    [['apps', ['apps/v1']], ['control.kubestellar.io', ['control.kubestellar.io/v1alpha1']], ['view.kubestellar.io', ['view.kubestellar.io/v1alpha1']]]);
});

t.test('OpenAPI of the view: v3 lists control.kubestellar.io/v1alpha1 under the view root, its document has the Binding; v2 has it too', async (t) => {
  const { app, upstream, close } = await testApp({ bindings: source() });
  t.teardown(close);
  const headers = { 'x-test-user': 'alice' };
  upstream.pool.intercept({ path: '/openapi/v3', method: 'GET' }).reply(200, JSON.stringify({
    paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=A' }, 'apis/control.kubestellar.io/v1alpha1': { serverRelativeURL: '/openapi/v3/apis/control.kubestellar.io/v1alpha1?hash=B' } },
  }), { headers: JSON_HEADERS });
  upstream.pool.intercept({ path: '/api', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', items: [{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ resource: 'configmaps' }] }] }] }), { headers: JSON_HEADERS });
  upstream.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', items: [] }), { headers: JSON_HEADERS });
  const index = await app.inject({ url: `${ROOT}/openapi/v3`, headers });
  const paths = index.json().paths;
  t.same(Object.keys(paths), ['api/v1', 'apis/control.kubestellar.io/v1alpha1', 'apis/view.kubestellar.io/v1alpha1']);
  const url = paths['apis/control.kubestellar.io/v1alpha1'].serverRelativeURL as string;
  t.match(url, new RegExp(`^${ROOT}/openapi/v3/apis/control.kubestellar.io/v1alpha1\\?hash=[0-9A-F]{32}$`), 'the view\'s own document, not the WDS\'s');
  const doc = await app.inject({ url: url.slice(0), headers });
  t.equal(doc.statusCode, 200);
  const binding = doc.json().components.schemas['io.kubestellar.control.v1alpha1.Binding'];
  t.same(binding['x-kubernetes-group-version-kind'], [{ group: 'control.kubestellar.io', version: 'v1alpha1', kind: 'Binding' }]);
  t.same(Object.keys(binding.properties.spec.properties.workload.properties.namespaceScope.items.properties),
    ['group', 'version', 'resource', 'namespace', 'name', 'resourceVersion', 'createOnly', 'statusCollectors', 'wantSingletonReportedState', 'wantMultiWECReportedState']);
  t.ok(doc.json().paths['/apis/control.kubestellar.io/v1alpha1/bindings/{name}']);
  t.ok(doc.headers.etag);

  upstream.pool.intercept({ path: '/openapi/v2', method: 'GET' }).reply(200, JSON.stringify({
    swagger: '2.0', paths: { '/api/v1/namespaces/{namespace}/configmaps': { get: {} } }, definitions: { 'io.k8s.api.core.v1.ConfigMap': { type: 'object' } },
  }), { headers: JSON_HEADERS });
  const v2 = (await app.inject({ url: `${ROOT}/openapi/v2`, headers })).json();
  t.ok(v2.definitions['io.k8s.api.core.v1.ConfigMap'], 'the WDS\'s definitions stay');
  t.ok(v2.definitions['io.kubestellar.control.v1alpha1.Binding'] && v2.definitions['io.kubestellar.control.v1alpha1.BindingList']);
  t.ok(v2.paths['/apis/control.kubestellar.io/v1alpha1/bindings']);
});
