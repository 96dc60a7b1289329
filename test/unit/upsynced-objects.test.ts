// The virtual UpsyncedObjects over HTTP (src/apiserver/groups/upsyncedobjects-resource.ts through the app): the
// agents' copies of WEC objects as upsyncedobjects.view.kubestellar.io, directly and inside the view; names, labels and label selectors by cluster and kind; Tables; watches;
// stale marking; a reader sees only the copies of objects they may get in the WDS; writes 405.
import t from 'tap';
import type { ResourceAttributes } from '../../src/apiserver/auth/authz.js';
import type { UserInfo } from '../../src/kube/user.js';
import { copy, CREATED, FakeUpsyncedSource } from '../fixtures/fake-upsynced-source.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

const VIEW = '/apis/view.kubestellar.io/v1alpha1';
const IN_VIEW = `${ROOT}/apis/view.kubestellar.io/v1alpha1`;
const ADMIN = { 'x-test-user': 'admin' };
const ALICE = { 'x-test-user': 'alice' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const CM = copy('wec1', ['', 'v1', 'configmaps'], 'ConfigMap', 'ns1', 'cm1', { labels: { app: 'a' }, body: { data: { k: 'v' } } });
const RS = copy('wec1', ['apps', 'v1', 'replicasets'], 'ReplicaSet', 'ns1', 'web-7d9f');
const CM2 = copy('wec2', ['', 'v1', 'configmaps'], 'ConfigMap', 'ns2', 'cm1');
const NS = copy('wec2', ['', 'v1', 'namespaces'], 'Namespace', '', 'team-a');
const source = () => new FakeUpsyncedSource([CM, RS, CM2, NS]);
type Item = { metadata: { name: string; namespace?: string; labels: Record<string, string>; resourceVersion: string; uid: string; creationTimestamp: string }; spec: any; status: any };
const names = (body: { items: Item[] }) => body.items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
const resourceOf = (a: unknown) => (a as { resource?: ResourceAttributes }).resource;

t.test('list, get: names, labels, spec and status; both groups share one collection', async (t) => {
  const asked: unknown[] = [];
  const { app, close } = await testApp({ upsynced: source(), onAuthorize: (_u, a) => asked.push(a) });
  t.teardown(close);
  const all = await app.inject({ url: `${VIEW}/upsyncedobjects`, headers: ADMIN });
  t.equal(all.statusCode, 200);
  t.match(all.json(), { apiVersion: 'view.kubestellar.io/v1alpha1', kind: 'UpsyncedObjectList', metadata: { resourceVersion: /^\d+$/ } });
  t.same(names(all.json()), ['/wec2:namespaces:team-a', 'ns1/wec1:configmaps:cm1', 'ns1/wec1:replicasets.apps:web-7d9f', 'ns2/wec2:configmaps:cm1']);
  const cm = all.json().items[1] as Item;
  t.same(cm.metadata.labels, { 'view.kubestellar.io/cluster': 'wec1', 'view.kubestellar.io/kind': 'ConfigMap' });
  t.equal(cm.metadata.creationTimestamp, CREATED, 'created when the source object was');
  t.match(cm.metadata.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.same(cm.spec.source, CM.source);
  t.same(cm.spec.object, CM.object);
  t.equal(cm.spec.cluster, 'wec1');
  t.match(cm.status, { lastSeen: CM.lastSeen, stale: false, conditions: [{ type: 'Stale', status: 'False' }] });
  t.notOk('namespace' in (all.json().items[0] as Item).metadata, 'a cluster-scoped source: no namespace');

  const one = await app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects/wec1:replicasets.apps:web-7d9f`, headers: ADMIN });
  t.equal(one.statusCode, 200);
  t.equal(one.json().spec.source.kind, 'ReplicaSet');
  const again = await app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects/wec1:replicasets.apps:web-7d9f`, headers: ADMIN });
  t.equal(again.json().metadata.uid, one.json().metadata.uid, 'the uid is stable');
  const inView = await app.inject({ url: `${IN_VIEW}/namespaces/ns1/upsyncedobjects`, headers: ADMIN });
  t.equal(inView.json().apiVersion, 'view.kubestellar.io/v1alpha1');
  t.same(names(inView.json()), ['ns1/wec1:configmaps:cm1', 'ns1/wec1:replicasets.apps:web-7d9f']);
  t.equal(inView.json().metadata.resourceVersion, all.json().metadata.resourceVersion, 'one feed behind both paths');
  t.same(asked.slice(0, 2), [
    { resource: { verb: 'list', group: 'view.kubestellar.io', resource: 'upsyncedobjects' } },
    { resource: { verb: 'get', group: 'view.kubestellar.io', resource: 'upsyncedobjects', namespace: 'ns1', name: 'wec1:replicasets.apps:web-7d9f' } },
  ]);
  const missing = await app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects/wec1:configmaps:nope`, headers: ADMIN });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().message, 'upsyncedobjects.view.kubestellar.io "wec1:configmaps:nope" not found');
});

t.test('label selectors by cluster and kind, field selectors', async (t) => {
  const { app, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  const get = async (q: string) => app.inject({ url: `${VIEW}/upsyncedobjects?${q}`, headers: ADMIN });
  t.same(names((await get('labelSelector=view.kubestellar.io/cluster%3Dwec2')).json()), ['/wec2:namespaces:team-a', 'ns2/wec2:configmaps:cm1']);
  t.same(names((await get('labelSelector=view.kubestellar.io/kind%3DConfigMap,view.kubestellar.io/cluster%3Dwec1')).json()), ['ns1/wec1:configmaps:cm1']);
  t.same(names((await get('fieldSelector=metadata.namespace%3Dns2')).json()), ['ns2/wec2:configmaps:cm1']);
  t.equal((await get('labelSelector=%3D%3D%3D')).statusCode, 400, 'a malformed selector is a 400');
});

t.test('Table: Name, Cluster, Kind, Age, Last-Seen, Stale', async (t) => {
  // The server's clock is the test's: ages are exact, however long the test takes to get there.
  const now = new Date('2024-03-01T12:00:00Z');
  const seen = copy('wec1', ['', 'v1', 'configmaps'], 'ConfigMap', 'ns1', 'cm1', { lastSeen: '2024-03-01T11:59:30Z' });
  const { app, close } = await testApp({ upsynced: new FakeUpsyncedSource([seen, RS]), now: () => now });
  t.teardown(close);
  const res = await app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects`, headers: { ...ADMIN, accept: TABLE } });
  t.equal(res.json().kind, 'Table');
  t.same(res.json().columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Cluster', 'Kind', 'Age', 'Last-Seen', 'Stale']);
  const [row] = res.json().rows;
  t.equal(row.cells[0], 'wec1:configmaps:cm1');
  t.equal(row.cells[1], 'wec1');
  t.equal(row.cells[2], 'ConfigMap');
  t.equal(row.cells[3], '60d', 'age of the source object');
  t.equal(row.cells[4], '30s', 'since the agent last saw it');
  t.equal(row.cells[5], 'false');
});

t.test('stale clusters: objects stay, marked; the change is a watch event', async (t) => {
  const src = source();
  const { app, close } = await testApp({ upsynced: src });
  t.teardown(close);
  const list = await app.inject({ url: `${VIEW}/upsyncedobjects`, headers: ADMIN });
  const rv = list.json().metadata.resourceVersion;
  const watching = app.inject({ url: `${VIEW}/upsyncedobjects?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, headers: ADMIN });
  await sleep(50);
  src.setStale('wec1', '2024-05-01T00:00:00Z');
  const events = (await watching).body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  t.same(events.map((e) => `${e.type} ${e.object.metadata.name}`).sort(), ['MODIFIED wec1:configmaps:cm1', 'MODIFIED wec1:replicasets.apps:web-7d9f']);
  t.match(events[0].object.status, { stale: true, conditions: [{ type: 'Stale', status: 'True', reason: 'AgentLeaseStale', lastTransitionTime: '2024-05-01T00:00:00Z' }] });
  const after = await app.inject({ url: `${VIEW}/upsyncedobjects?labelSelector=view.kubestellar.io/cluster%3Dwec1`, headers: ADMIN });
  t.same(after.json().items.map((o: Item) => o.status.stale), [true, true], 'still listed, marked stale');
});

t.test('watch: added, modified, deleted copies', async (t) => {
  const src = source();
  const { app, close } = await testApp({ upsynced: src });
  t.teardown(close);
  const rv = (await app.inject({ url: `${VIEW}/upsyncedobjects`, headers: ADMIN })).json().metadata.resourceVersion;
  const watching = app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects?watch=true&resourceVersion=${rv}&timeoutSeconds=1`, headers: ADMIN });
  await sleep(50);
  src.put(copy('wec3', ['', 'v1', 'configmaps'], 'ConfigMap', 'ns1', 'new'));
  src.put({ ...CM, source: { ...CM.source, resourceVersion: '43' } });
  src.remove(RS);
  src.put(copy('wec3', ['', 'v1', 'configmaps'], 'ConfigMap', 'other', 'elsewhere'));
  const events = (await watching).body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  t.same(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED wec3:configmaps:new', 'MODIFIED wec1:configmaps:cm1', 'DELETED wec1:replicasets.apps:web-7d9f']);
  t.ok(events.every((e, i) => i === 0 || Number(e.object.metadata.resourceVersion) > Number(events[i - 1].object.metadata.resourceVersion)));
});

t.test('a reader sees only the copies of objects the WDS lets them get', async (t) => {
  // alice may read upsyncedobjects, and get configmaps in ns1 only.
  const aliceMay = (u: UserInfo, a: unknown) => {
    const r = resourceOf(a);
    if (u.username !== 'alice' || !r) return false;
    if (r.resource === 'upsyncedobjects') return true;
    return r.verb === 'get' && r.group === '' && r.resource === 'configmaps' && r.namespace === 'ns1';
  };
  const { app, close } = await testApp({ upsynced: source(), allow: aliceMay });
  t.teardown(close);
  const all = await app.inject({ url: `${VIEW}/upsyncedobjects`, headers: ALICE });
  t.equal(all.statusCode, 200);
  t.same(names(all.json()), ['ns1/wec1:configmaps:cm1'], 'the others are left out');
  const hidden = await app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects/wec1:replicasets.apps:web-7d9f`, headers: ALICE });
  t.equal(hidden.statusCode, 404, 'a hidden object is a 404');
  const hiddenCm = await app.inject({ url: `${VIEW}/namespaces/ns2/upsyncedobjects/wec2:configmaps:cm1`, headers: ALICE });
  t.equal(hiddenCm.statusCode, 404, 'configmaps of another namespace too');
  const seen = await app.inject({ url: `${IN_VIEW}/namespaces/ns1/upsyncedobjects/wec1:configmaps:cm1`, headers: ALICE });
  t.equal(seen.statusCode, 200);
  const bob = await app.inject({ url: `${VIEW}/upsyncedobjects`, headers: { 'x-test-user': 'bob' } });
  t.equal(bob.statusCode, 403, 'without the upsyncedobjects right: 403 first');
});

t.test('writes: 403 without the right, else 405; no source: empty; discovery', async (t) => {
  const { app, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  const del = await app.inject({ method: 'DELETE', url: `${VIEW}/namespaces/ns1/upsyncedobjects/wec1:configmaps:cm1`, headers: ADMIN });
  t.equal(del.statusCode, 405);
  t.equal(del.json().reason, 'MethodNotAllowed');
  const denied = await app.inject({ method: 'POST', url: `${VIEW}/namespaces/ns1/upsyncedobjects`, headers: { ...ALICE, 'content-type': 'application/json' }, payload: '{}' });
  t.equal(denied.statusCode, 403);
  const disc = await app.inject({ url: VIEW, headers: ADMIN });
  t.match(disc.json().resources.find((r: { name: string }) => r.name === 'upsyncedobjects'), { namespaced: true, kind: 'UpsyncedObject', verbs: ['get', 'list', 'watch'] });
  const inView = await app.inject({ url: IN_VIEW, headers: ADMIN });
  t.same(inView.json().resources.map((r: { name: string }) => r.name), ['upsyncedobjects'], 'inside the view, the group holds only upsyncedobjects');
  t.equal((await app.inject({ url: `${ROOT}/apis/control.kubestellar.io/v1alpha1/upsyncedobjects`, headers: ADMIN })).statusCode, 404,
    'not in control.kubestellar.io, where the ITS keeps the agents\' copies');
  const v3 = await app.inject({ url: `/openapi/v3${VIEW}`, headers: ADMIN });
  t.ok(v3.json().components.schemas['io.kubestellar.view.v1alpha1.UpsyncedObject'], 'an OpenAPI schema');
  const none = await testApp();
  t.teardown(none.close);
  const empty = await none.app.inject({ url: `${VIEW}/upsyncedobjects`, headers: ADMIN });
  t.same(empty.json().items, []);
});

t.test('a denatured kind is authorized where the view serves it, in both the fleet list and the cluster view', async (t) => {
  // Roles are stored denatured in the WDS (served from denatured.kubestellar.io): a right there is
  // what lets a reader see them through the view, so it is what lets them see upsynced Roles.
  const ROLE = copy('wec1', ['rbac.authorization.k8s.io', 'v1', 'roles'], 'Role', 'ns1', 'reader');
  const mayOn = (group: string) => (u: UserInfo, a: unknown) => {
    const r = resourceOf(a);
    if (u.username !== 'alice' || !r) return false;
    if (r.resource === 'upsyncedobjects') return true;
    return r.group === group && r.resource === 'roles' && r.namespace === 'ns1';
  };
  for (const [group, shown] of [['denatured.kubestellar.io', true], ['rbac.authorization.k8s.io', false]] as const) {
    const { app, close } = await testApp({ upsynced: new FakeUpsyncedSource([ROLE]), allow: mayOn(group) });
    t.teardown(close);
    const fleet = await app.inject({ url: `${VIEW}/namespaces/ns1/upsyncedobjects`, headers: ALICE });
    t.same(names(fleet.json()), shown ? ['ns1/wec1:roles.rbac.authorization.k8s.io:reader'] : [], `fleet list with roles granted in ${group}`);
    const one = await app.inject({ url: `${ROOT}/clusters/wec1/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/reader`, headers: ALICE });
    t.equal(one.statusCode, shown ? 200 : 403, `cluster view with roles granted in ${group}`);
  }
});

t.test('OpenAPI inside the view: view.kubestellar.io/v1alpha1 with the UpsyncedObject only, v3 and v2', async (t) => {
  const { app, upstream, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  const json = { headers: { 'content-type': 'application/json' } };
  upstream.pool.intercept({ path: '/openapi/v3', method: 'GET' }).reply(200, JSON.stringify({
    paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=A' }, 'apis/view.kubestellar.io/v1alpha1': { serverRelativeURL: '/openapi/v3/apis/view.kubestellar.io/v1alpha1?hash=B' } },
  }), json);
  upstream.pool.intercept({ path: '/api', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', items: [{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ resource: 'configmaps' }] }] }] }), json);
  upstream.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, JSON.stringify({ kind: 'APIGroupDiscoveryList', items: [] }), json);
  const url = (await app.inject({ url: `${ROOT}/openapi/v3`, headers: ADMIN })).json().paths['apis/view.kubestellar.io/v1alpha1'].serverRelativeURL as string;
  t.match(url, new RegExp(`^${ROOT}/openapi/v3/apis/view.kubestellar.io/v1alpha1\\?hash=[0-9A-F]{32}$`), 'the view\'s own document, not the aggregated one of the WDS');
  const doc = (await app.inject({ url, headers: ADMIN })).json();
  t.same(Object.keys(doc.paths), [`/apis/view.kubestellar.io/v1alpha1/upsyncedobjects`, `/apis/view.kubestellar.io/v1alpha1/namespaces/{namespace}/upsyncedobjects`,
    `/apis/view.kubestellar.io/v1alpha1/namespaces/{namespace}/upsyncedobjects/{name}`], 'only what the group serves inside the view');
  t.same(doc.components.schemas['io.kubestellar.view.v1alpha1.UpsyncedObject']['x-kubernetes-group-version-kind'], [{ group: 'view.kubestellar.io', version: 'v1alpha1', kind: 'UpsyncedObject' }]);
  // The WDS's document has the aggregated view.kubestellar.io (the Spaces) and a ConfigMap.
  upstream.pool.intercept({ path: '/openapi/v2', method: 'GET' }).reply(200, JSON.stringify({
    swagger: '2.0',
    paths: {
      '/apis/view.kubestellar.io/v1alpha1/spaces': { get: { responses: { 200: { schema: { $ref: '#/definitions/io.kubestellar.view.v1alpha1.Space' } } } } },
      '/api/v1/namespaces/{namespace}/configmaps': { get: { responses: { 200: { schema: { $ref: '#/definitions/io.k8s.api.core.v1.ConfigMap' } } } } },
    },
    definitions: { 'io.kubestellar.view.v1alpha1.Space': { type: 'object' }, 'io.k8s.api.core.v1.ConfigMap': { type: 'object' } },
  }), json);
  const v2 = (await app.inject({ url: `${ROOT}/openapi/v2`, headers: ADMIN })).json();
  t.ok(v2.paths['/apis/view.kubestellar.io/v1alpha1/namespaces/{namespace}/upsyncedobjects/{name}'], 'v2 too');
  t.ok(v2.definitions['io.kubestellar.view.v1alpha1.UpsyncedObject']);
  t.notOk(v2.paths['/apis/view.kubestellar.io/v1alpha1/spaces'], 'not the WDS\'s Spaces, which the view does not serve');
  t.notOk(v2.definitions['io.kubestellar.view.v1alpha1.Space']);
  t.ok(v2.paths['/api/v1/namespaces/{namespace}/configmaps'], 'the WDS\'s own kinds stay');
});
