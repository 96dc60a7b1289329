// The virtual CombinedStatuses over HTTP (src/apiserver/groups/combinedstatuses-resource.ts through the
// app): namespaced, the same objects as combinedstatuses.view.kubestellar.io and, inside the view,
// as KubeStellar's combinedstatuses.control.kubestellar.io, each in its own apiVersion, authorized
// on its own group and namespace; label selectors on KubeStellar's five labels, field selectors on
// name and namespace; Tables with a RESULTS summary; watches from a list's resourceVersion; writes
// 405; discovery and OpenAPI of both groups.
import t from 'tap';
import type { ResourceAttributes } from '../../src/apiserver/auth/authz.js';
import type { CombinedStatusSource } from '../../src/apiserver/groups/combinedstatuses-resource.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

const VIEW = '/apis/view.kubestellar.io/v1alpha1';
const CONTROL = `${ROOT}/apis/control.kubestellar.io/v1alpha1`;
const ADMIN = { 'x-test-user': 'admin' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Value { type: string; string?: string; float?: string; bool?: boolean; object?: unknown; array?: unknown }
interface Result { name: string; columnNames: string[]; rows?: { columns: Value[] }[]; errors?: string[] }

/** A CombinedStatus as the status controller makes it (KubeStellar's apiVersion, no resourceVersion). */
function combinedStatus(namespace: string, name: string, subject: [string, string, string, string], policy: string, results?: Result[]): KubeObject {
  const [group, resource, ns, objectName] = subject;
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'CombinedStatus',
    metadata: {
      name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp: new Date(Date.now() - 20 * 60_000).toISOString(),
      labels: {
        'status.kubestellar.io/api-group': group, 'status.kubestellar.io/resource': resource, 'status.kubestellar.io/namespace': ns,
        'status.kubestellar.io/name': objectName, 'status.kubestellar.io/binding-policy': policy,
      },
    },
    ...(results ? { results } : {}),
  } as KubeObject;
}

const count = (n: string): Result[] => [{ name: 'count-wecs', columnNames: ['count'], rows: [{ columns: [{ type: 'Number', float: n }] }] }];
const NGINX = combinedStatus('nginx', 'o1.p1', ['apps', 'deployments', 'nginx', 'nginx-deployment'], 'nginx-bindingpolicy', count('2'));
const NGINX_OTHER = combinedStatus('nginx', 'o1.p2', ['apps', 'deployments', 'nginx', 'nginx-deployment'], 'other-policy', [{ name: 'empty', columnNames: ['n'] }]);
const READER = combinedStatus('kubestellar-report', 'o2.p3', ['rbac.authorization.k8s.io', 'clusterroles', '', 'reader'], 'rbac-policy', [{
  name: 'per-wec', columnNames: ['wec', 'ready', 'spec', 'ports', 'gone'],
  rows: [
    { columns: [{ type: 'String', string: 'wec1' }, { type: 'Bool', bool: true }, { type: 'Object', object: { a: 1 } }, { type: 'Array', array: [1] }, { type: 'Null' }] },
    { columns: [{ type: 'String', string: 'wec2' }, { type: 'Bool', bool: false }, { type: 'Object', object: {} }, { type: 'Array', array: [] }, { type: 'Null' }] },
  ],
  errors: ['wec2: select expression (x) failed: no such key: x'],
}]);

/** The status controller's side: objects by `<namespace>/<name>`, and the change announcements. */
class FakeSource implements CombinedStatusSource {
  private readonly objects = new Map<string, KubeObject>();
  private readonly listeners = new Set<(key: string) => void>();
  constructor(objs: KubeObject[]) {
    for (const o of objs) this.objects.set(`${o.metadata!.namespace}/${o.metadata!.name}`, o);
  }
  combinedStatuses() { return [...this.objects.values()]; }
  combinedStatus(namespace: string, name: string) { return this.objects.get(`${namespace}/${name}`); }
  onCombinedStatusChange(cb: (key: string) => void) {
    this.listeners.add(cb);
    return () => { this.listeners.delete(cb); };
  }
  put(o: KubeObject) {
    const key = `${o.metadata!.namespace}/${o.metadata!.name}`;
    this.objects.set(key, o);
    for (const l of this.listeners) l(key);
  }
  remove(namespace: string, name: string) {
    this.objects.delete(`${namespace}/${name}`);
    for (const l of this.listeners) l(`${namespace}/${name}`);
  }
}

const source = () => new FakeSource([NGINX, NGINX_OTHER, READER]);
const names = (body: { items: KubeObject[] }) => body.items.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`);
type Event = { type: string; object: KubeObject & { results?: Result[] } };
const events = (body: string) => body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);

t.test('one CombinedStatus, two paths: each in its own apiVersion, authorized on its own group and namespace', async (t) => {
  const asked: unknown[] = [];
  const { app, upstream, close } = await testApp({ combinedStatuses: source(), onAuthorize: (_u, a) => asked.push(a) });
  t.teardown(close);
  const view = await app.inject({ url: `${VIEW}/namespaces/nginx/combinedstatuses/o1.p1`, headers: ADMIN });
  const control = await app.inject({ url: `${CONTROL}/namespaces/nginx/combinedstatuses/o1.p1`, headers: ADMIN });
  t.equal(view.statusCode, 200);
  t.equal(control.statusCode, 200);
  t.equal(view.json().apiVersion, 'view.kubestellar.io/v1alpha1');
  t.equal(control.json().apiVersion, 'control.kubestellar.io/v1alpha1');
  t.same({ ...view.json(), apiVersion: 'x' }, { ...control.json(), apiVersion: 'x' }, 'otherwise the same CombinedStatus');
  t.match(view.json(), { kind: 'CombinedStatus', metadata: { name: 'o1.p1', namespace: 'nginx', resourceVersion: /^\d+$/ }, results: count('2') });
  t.notOk('spec' in view.json() || 'status' in view.json(), 'KubeStellar\'s shape: results at the top level');
  t.same(asked, [
    { resource: { verb: 'get', group: 'view.kubestellar.io', resource: 'combinedstatuses', namespace: 'nginx', name: 'o1.p1' } },
    { resource: { verb: 'get', group: 'control.kubestellar.io', resource: 'combinedstatuses', namespace: 'nginx', name: 'o1.p1' } },
  ], 'a SubjectAccessReview on combinedstatuses in the group and namespace of the path');

  asked.length = 0;
  const all = await app.inject({ url: `${VIEW}/combinedstatuses`, headers: ADMIN });
  t.match(all.json(), { apiVersion: 'view.kubestellar.io/v1alpha1', kind: 'CombinedStatusList', metadata: { resourceVersion: /^\d+$/ } });
  t.same(names(all.json()), ['kubestellar-report/o2.p3', 'nginx/o1.p1', 'nginx/o1.p2'], 'across namespaces, by namespace then name');
  t.ok(all.json().items.every((o: KubeObject) => o.apiVersion === 'view.kubestellar.io/v1alpha1'));
  const inNginx = await app.inject({ url: `${CONTROL}/namespaces/nginx/combinedstatuses`, headers: ADMIN });
  t.match(inNginx.json(), { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'CombinedStatusList' });
  t.same(names(inNginx.json()), ['nginx/o1.p1', 'nginx/o1.p2'], 'in one namespace');
  t.same(inNginx.json().metadata.resourceVersion, all.json().metadata.resourceVersion, 'one collection behind both paths');
  const empty = await app.inject({ url: `${VIEW}/namespaces/other/combinedstatuses`, headers: ADMIN });
  t.same(empty.json().items, []);
  t.same(asked, [
    { resource: { verb: 'list', group: 'view.kubestellar.io', resource: 'combinedstatuses' } },
    { resource: { verb: 'list', group: 'control.kubestellar.io', resource: 'combinedstatuses', namespace: 'nginx' } },
    { resource: { verb: 'list', group: 'view.kubestellar.io', resource: 'combinedstatuses', namespace: 'other' } },
  ], 'a list across namespaces is authorized cluster-wide, one in a namespace there');
  t.same(upstream.calls(), [], 'the WDS is never asked: its own control.kubestellar.io combinedstatuses (if any) are shadowed');

  const denied = await app.inject({ url: `${VIEW}/namespaces/nginx/combinedstatuses`, headers: { 'x-test-user': 'alice' } });
  t.equal(denied.statusCode, 403, 'no list right, no list');
});

t.test('not found: 404 worded as kube-apiserver words it, in each group', async (t) => {
  const { app, close } = await testApp({ combinedStatuses: source() });
  t.teardown(close);
  const view = await app.inject({ url: `${VIEW}/namespaces/nginx/combinedstatuses/nope`, headers: ADMIN });
  t.equal(view.statusCode, 404);
  t.same(view.json(), {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'combinedstatuses.view.kubestellar.io "nope" not found',
    reason: 'NotFound', details: { name: 'nope', group: 'view.kubestellar.io', kind: 'combinedstatuses' }, code: 404,
  });
  const control = await app.inject({ url: `${CONTROL}/namespaces/other/combinedstatuses/o1.p1`, headers: ADMIN });
  t.equal(control.statusCode, 404, 'a name is looked up in the path\'s namespace only');
  t.equal(control.json().message, 'combinedstatuses.control.kubestellar.io "o1.p1" not found');
});

t.test('without a source (no ITS): empty lists, gets 404', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  for (const url of [`${VIEW}/combinedstatuses`, `${CONTROL}/namespaces/nginx/combinedstatuses`]) {
    const res = await app.inject({ url, headers: ADMIN });
    t.equal(res.statusCode, 200, url);
    t.same(res.json().items, [], url);
  }
  t.equal((await app.inject({ url: `${VIEW}/namespaces/nginx/combinedstatuses/o1.p1`, headers: ADMIN })).statusCode, 404);
});

t.test('selectors: KubeStellar\'s labels find an object\'s CombinedStatuses; fields are name and namespace', async (t) => {
  const { app, close } = await testApp({ combinedStatuses: source() });
  t.teardown(close);
  const list = async (url: string) => app.inject({ url, headers: ADMIN });
  const object = 'status.kubestellar.io/api-group=apps,status.kubestellar.io/resource=deployments,status.kubestellar.io/namespace=nginx,status.kubestellar.io/name=nginx-deployment';
  t.same(names((await list(`${VIEW}/combinedstatuses?labelSelector=${encodeURIComponent(object)}`)).json()), ['nginx/o1.p1', 'nginx/o1.p2'], 'by the object');
  t.same(names((await list(`${CONTROL}/combinedstatuses?labelSelector=${encodeURIComponent(`${object},status.kubestellar.io/binding-policy=nginx-bindingpolicy`)}`)).json()),
    ['nginx/o1.p1'], 'by the object and the policy');
  t.same(names((await list(`${VIEW}/combinedstatuses?labelSelector=${encodeURIComponent('status.kubestellar.io/namespace=')}`)).json()), ['kubestellar-report/o2.p3'], 'a cluster-scoped object\'s');
  t.same(names((await list(`${VIEW}/combinedstatuses?fieldSelector=metadata.namespace%3Dkubestellar-report`)).json()), ['kubestellar-report/o2.p3']);
  t.same(names((await list(`${VIEW}/namespaces/nginx/combinedstatuses?fieldSelector=metadata.name!%3Do1.p1`)).json()), ['nginx/o1.p2']);
  t.same(names((await list(`${VIEW}/namespaces/nginx/combinedstatuses?fieldSelector=metadata.namespace%3Dkubestellar-report`)).json()), [], 'the path\'s namespace still holds');

  const unsupported = await list(`${VIEW}/combinedstatuses?fieldSelector=spec.x%3D1`);
  t.equal(unsupported.statusCode, 400);
  t.match(unsupported.json(), { kind: 'Status', code: 400, reason: 'BadRequest', message: 'field label not supported: spec.x' });
  const malformed = await list(`${CONTROL}/combinedstatuses?labelSelector=${encodeURIComponent('a in (b')}`);
  t.equal(malformed.statusCode, 400);
});

t.test('writes to any path: authorized as the write in the path\'s namespace, then 405 MethodNotAllowed', async (t) => {
  const asked: ResourceAttributes[] = [];
  const { app, upstream, close } = await testApp({ combinedStatuses: source(), onAuthorize: (_u, a) => { if ('resource' in a) asked.push(a.resource); } });
  t.teardown(close);
  const named = `${VIEW}/namespaces/nginx/combinedstatuses/o1.p1`;
  const cases: Array<[string, string, string, string | undefined]> = [
    ['POST', `${VIEW}/namespaces/nginx/combinedstatuses`, 'create', 'nginx'], ['PUT', named, 'update', 'nginx'], ['PATCH', named, 'patch', 'nginx'],
    ['DELETE', named, 'delete', 'nginx'], ['DELETE', `${CONTROL}/namespaces/nginx/combinedstatuses`, 'deletecollection', 'nginx'],
    ['POST', `${CONTROL}/combinedstatuses`, 'create', undefined], ['PATCH', `${CONTROL}/namespaces/nginx/combinedstatuses/o1.p1`, 'patch', 'nginx'],
  ];
  for (const [method, url, verb, namespace] of cases) {
    asked.length = 0;
    const res = await app.inject({ method: method as 'POST', url, headers: { ...ADMIN, ...JSON_HEADERS }, payload: '{}' });
    t.equal(res.statusCode, 405, `${method} ${url}`);
    t.match(res.json(), { kind: 'Status', status: 'Failure', reason: 'MethodNotAllowed', code: 405 });
    t.equal(asked.length, 1);
    t.match(asked[0], { verb, resource: 'combinedstatuses' }, `${method} ${url}: authorized as ${verb}`);
    t.equal(asked[0]!.namespace, namespace, `${method} ${url}: in namespace ${namespace ?? '(none)'}`);
  }
  const forbidden = await app.inject({ method: 'DELETE', url: named, headers: { 'x-test-user': 'alice' } });
  t.equal(forbidden.statusCode, 403, 'without the right: 403 first, as kube-apiserver');
  t.same(upstream.calls(), []);
});

t.test('Tables: KubeStellar\'s columns from the five labels, and a RESULTS summary of each result', async (t) => {
  const src = source();
  const { app, close } = await testApp({ combinedStatuses: src });
  t.teardown(close);
  const table = (await app.inject({ url: `${VIEW}/combinedstatuses`, headers: { ...ADMIN, accept: TABLE } })).json();
  t.same(table.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'SUBJECT_GROUP', 'SUBJECT_RSC', 'SUBJECT_NS', 'SUBJECT_NAME', 'BINDINGPOLICY', 'RESULTS', 'Age']);
  t.ok(table.columnDefinitions.every((c: { priority: number }) => c.priority === 0), 'all shown by default');
  t.same(table.rows.map((r: { cells: unknown[] }) => r.cells), [
    ['o2.p3', 'rbac.authorization.k8s.io', 'clusterroles', '', 'reader', 'rbac-policy', 'per-wec: wec=wec1,ready=true,spec={…},ports=[…],gone=null (+1 row) (1 error)', '20m'],
    ['o1.p1', 'apps', 'deployments', 'nginx', 'nginx-deployment', 'nginx-bindingpolicy', 'count-wecs: count=2', '20m'],
    ['o1.p2', 'apps', 'deployments', 'nginx', 'nginx-deployment', 'other-policy', 'empty: (no rows)', '20m'],
  ]);
  t.match(table.rows[0].object, { kind: 'PartialObjectMetadata', metadata: { name: 'o2.p3', namespace: 'kubestellar-report' } });

  src.put(combinedStatus('ns', 'long', ['', 'configmaps', 'ns', 'cm'], 'p', [
    ...count('3'),
    { name: 'texts', columnNames: ['a', 'b'], rows: [{ columns: [{ type: 'String', string: 'x'.repeat(80) }, { type: 'Number', float: '1.5' }] }, { columns: [] }, { columns: [] }] },
  ]));
  src.put(combinedStatus('ns', 'none', ['', 'configmaps', 'ns', 'cm2'], 'p'));
  const one = async (name: string) => (await app.inject({ url: `${CONTROL}/namespaces/ns/combinedstatuses/${name}`, headers: { ...ADMIN, accept: TABLE } })).json().rows[0].cells[6] as string;
  const long = await one('long');
  t.equal([...long].length, 120, 'kept to 120 characters');
  t.match(long, /^count-wecs: count=3; texts: a=xxxx.*…$/);
  t.equal(await one('none'), '<none>', 'no results');
});

t.test('a watch from a list\'s resourceVersion: MODIFIED on a change the source reports, DELETED with the last state, in either group', async (t) => {
  const src = source();
  const { app, close } = await testApp({ combinedStatuses: src });
  t.teardown(close);
  const listed = (await app.inject({ url: `${VIEW}/namespaces/nginx/combinedstatuses`, headers: ADMIN })).json();
  const rv = Number(listed.metadata.resourceVersion);
  // From the view group's resourceVersion, on KubeStellar's group: one collection behind both.
  const watching = app.inject({ url: `${CONTROL}/namespaces/nginx/combinedstatuses?watch=true&timeoutSeconds=2&resourceVersion=${rv}`, headers: ADMIN });
  const everywhere = app.inject({ url: `${VIEW}/combinedstatuses?watch=1&timeoutSeconds=2&resourceVersion=${rv}&labelSelector=${encodeURIComponent('status.kubestellar.io/binding-policy=nginx-bindingpolicy')}`, headers: ADMIN });
  await sleep(300);
  src.put(combinedStatus('nginx', 'o1.p1', ['apps', 'deployments', 'nginx', 'nginx-deployment'], 'nginx-bindingpolicy', count('3')));
  src.put(READER); // announced, unchanged: no event
  src.put(combinedStatus('kubestellar-report', 'o2.p3', ['rbac.authorization.k8s.io', 'clusterroles', '', 'reader'], 'rbac-policy', count('1')));
  await sleep(300);
  src.remove('nginx', 'o1.p1');
  src.put({ ...NGINX_OTHER, metadata: { ...NGINX_OTHER.metadata, labels: { ...NGINX_OTHER.metadata!.labels, 'status.kubestellar.io/binding-policy': 'nginx-bindingpolicy' } } });

  const inNginx = events((await watching).body);
  t.same(inNginx.map((e) => [e.type, e.object.metadata!.name, e.object.apiVersion]), [
    ['MODIFIED', 'o1.p1', 'control.kubestellar.io/v1alpha1'],
    ['DELETED', 'o1.p1', 'control.kubestellar.io/v1alpha1'],
    ['MODIFIED', 'o1.p2', 'control.kubestellar.io/v1alpha1'],
  ], 'no replay of what the list had; nothing of another namespace');
  t.same(inNginx[0]!.object.results, count('3'));
  t.same(inNginx[1]!.object.results, count('3'), 'DELETED carries the last state');
  t.ok(Number(inNginx[1]!.object.metadata!.resourceVersion) > Number(inNginx[0]!.object.metadata!.resourceVersion), 'the deletion has its own resourceVersion');

  const selected = events((await everywhere).body);
  t.same(selected.map((e) => [e.type, e.object.metadata!.name, e.object.apiVersion]), [
    ['MODIFIED', 'o1.p1', 'view.kubestellar.io/v1alpha1'],
    ['DELETED', 'o1.p1', 'view.kubestellar.io/v1alpha1'],
    ['ADDED', 'o1.p2', 'view.kubestellar.io/v1alpha1'],
  ], 'an object entering the label selection is ADDED');
});

t.test('discovery: combinedstatuses, namespaced, short name cs, in view.kubestellar.io and inside the view in control.kubestellar.io', async (t) => {
  const { app, upstream, close } = await testApp({ combinedStatuses: source() });
  t.teardown(close);
  const headers = { 'x-test-user': 'alice' };
  const legacy = { name: 'combinedstatuses', singularName: 'combinedstatus', namespaced: true, kind: 'CombinedStatus', verbs: ['get', 'list', 'watch'], shortNames: ['cs'], categories: ['kubestellar'] };
  const aggregated = (group: string) => ({
    resource: 'combinedstatuses', singularResource: 'combinedstatus', scope: 'Namespaced', responseKind: { group, version: 'v1alpha1', kind: 'CombinedStatus' },
    verbs: ['get', 'list', 'watch'], shortNames: ['cs'], categories: ['kubestellar'],
  });
  const find = (list: Array<{ name?: string; resource?: string }>) => list.find((r) => (r.name ?? r.resource) === 'combinedstatuses');
  const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

  t.strictSame(find((await app.inject({ url: VIEW, headers })).json().resources), legacy);
  const own = (await app.inject({ url: '/apis', headers: { ...headers, accept: AGGREGATED } })).json();
  t.strictSame(find(own.items[0].versions[0].resources), aggregated('view.kubestellar.io'));

  t.strictSame(find((await app.inject({ url: CONTROL, headers })).json().resources), legacy);
  upstream.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items: [] }), { headers: { 'content-type': AGGREGATED } });
  const view = (await app.inject({ url: `${ROOT}/apis`, headers: { ...headers, accept: AGGREGATED } })).json();
  const control = view.items.find((g: { metadata: { name: string } }) => g.metadata.name === 'control.kubestellar.io');
  t.strictSame(find(control.versions[0].resources), aggregated('control.kubestellar.io'));
});

t.test('OpenAPI: the paths of a namespaced resource with kube-apiserver\'s operation ids, and KubeStellar\'s schema, in both groups', async (t) => {
  const { app, upstream, close } = await testApp({ combinedStatuses: source() });
  t.teardown(close);
  const headers = { 'x-test-user': 'alice' };
  type Json = any; // OpenAPI documents, read deep
  const check = (doc: Json, schemas: Json, group: string, stem: string, prefix: string) => {
    const base = `/apis/${group}/v1alpha1`;
    t.equal(doc.paths[`${base}/combinedstatuses`].get.operationId, `list${stem}CombinedStatusForAllNamespaces`, group);
    t.equal(doc.paths[`${base}/namespaces/{namespace}/combinedstatuses`].get.operationId, `list${stem}NamespacedCombinedStatus`, group);
    t.equal(doc.paths[`${base}/namespaces/{namespace}/combinedstatuses/{name}`].get.operationId, `read${stem}NamespacedCombinedStatus`, group);
    const cs = schemas[`${prefix}.CombinedStatus`];
    t.same(cs['x-kubernetes-group-version-kind'], [{ group, version: 'v1alpha1', kind: 'CombinedStatus' }]);
    t.same(Object.keys(cs.properties), ['apiVersion', 'kind', 'metadata', 'results'], 'no spec, no status');
    const result = cs.properties.results.items;
    t.same(result.required, ['name', 'columnNames']);
    t.same(Object.keys(result.properties), ['name', 'columnNames', 'rows', 'errors']);
    const value = result.properties.rows.items.properties.columns.items.properties;
    t.same(value.type, { type: 'string', enum: ['String', 'Number', 'Bool', 'Null', 'Object', 'Array'] });
    t.match(value, {
      string: { type: 'string' }, float: { type: 'string' }, bool: { type: 'boolean' },
      object: { 'x-kubernetes-preserve-unknown-fields': true }, array: { 'x-kubernetes-preserve-unknown-fields': true },
    }, 'KubeStellar\'s Value: a Number is a string under `float`; objects and arrays any JSON');
    t.same(schemas[`${prefix}.CombinedStatusList`].properties.items.items, { $ref: doc.swagger ? `#/definitions/${prefix}.CombinedStatus` : `#/components/schemas/${prefix}.CombinedStatus` });
  };

  const v2 = (await app.inject({ url: '/openapi/v2', headers })).json();
  check(v2, v2.definitions, 'view.kubestellar.io', 'ViewKubestellarIoV1alpha1', 'io.kubestellar.view.v1alpha1');
  const v3 = (await app.inject({ url: '/openapi/v3/apis/view.kubestellar.io/v1alpha1', headers })).json();
  check(v3, v3.components.schemas, 'view.kubestellar.io', 'ViewKubestellarIoV1alpha1', 'io.kubestellar.view.v1alpha1');
  t.same(v3.paths['/apis/view.kubestellar.io/v1alpha1/namespaces/{namespace}/combinedstatuses/{name}'].parameters.map((p: { name: string }) => p.name), ['name', 'namespace']);

  const controlV3 = (await app.inject({ url: `${ROOT}/openapi/v3/apis/control.kubestellar.io/v1alpha1`, headers })).json();
  check(controlV3, controlV3.components.schemas, 'control.kubestellar.io', 'ControlKubestellarIoV1alpha1', 'io.kubestellar.control.v1alpha1');
  upstream.pool.intercept({ path: '/openapi/v2', method: 'GET' }).reply(200, JSON.stringify({ swagger: '2.0', paths: {}, definitions: {} }), { headers: JSON_HEADERS });
  const controlV2 = (await app.inject({ url: `${ROOT}/openapi/v2`, headers })).json();
  check(controlV2, controlV2.definitions, 'control.kubestellar.io', 'ControlKubestellarIoV1alpha1', 'io.kubestellar.control.v1alpha1');
});
