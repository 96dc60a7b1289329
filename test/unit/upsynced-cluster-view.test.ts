// The per-cluster views of upsynced objects (src/apiserver/groups/upsynced-cluster-view.ts through the
// app): below `<view root>/clusters/<cluster>`, a read-only Kubernetes API of exactly the kinds
// upsynced from that cluster — discovery, get/list/watch of native objects with the feed's
// resourceVersions, selectors, Tables, 405 on writes, 403 without the WDS right, 404 for unknown
// clusters and kinds.
import t from 'tap';
import type { ResourceAttributes } from '../../src/apiserver/auth/authz.js';
import { RequestLimits } from '../../src/apiserver/http/request-limits.js';
import type { UserInfo } from '../../src/kube/user.js';
import { copy, FakeUpsyncedSource } from '../fixtures/fake-upsynced-source.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

const WEC1 = `${ROOT}/clusters/wec1`;
const ADMIN = { 'x-test-user': 'admin' };
const ALICE = { 'x-test-user': 'alice' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const resourceOf = (a: unknown) => (a as { resource?: ResourceAttributes }).resource;

const POD = copy('wec1', ['', 'v1', 'pods'], 'Pod', 'ns1', 'web-1', {
  labels: { app: 'web' }, rv: '777',
  body: {
    spec: { containers: [{ name: 'c', image: 'nginx' }], nodeName: 'kwok-node-0' },
    status: { phase: 'Running', podIP: '10.0.0.5', containerStatuses: [{ name: 'c', ready: true, restartCount: 2, state: { running: {} } }] },
  },
});
const POD2 = copy('wec1', ['', 'v1', 'pods'], 'Pod', 'ns2', 'job-1', {
  labels: { app: 'job' },
  body: { spec: { containers: [{ name: 'c' }] }, status: { phase: 'Pending', containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ImagePullBackOff' } } }] } },
});
const CM = copy('wec1', ['', 'v1', 'configmaps'], 'ConfigMap', 'ns1', 'cm1', { body: { data: { a: '1', b: '2' } } });
// As the agent copies it: with the WEC's discovery of the resource (kubectl's `get cm`).
CM.source.shortNames = ['cm'];
const DEPLOY = copy('wec1', ['apps', 'v1', 'deployments'], 'Deployment', 'ns1', 'web', {
  body: { spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } } }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } },
});
const NODE_POOL = copy('wec1', ['example.com', 'v1alpha1', 'widgets'], 'Widget', '', 'w1');
const OTHER = copy('wec2', ['batch', 'v1', 'jobs'], 'Job', 'ns1', 'j');
const source = () => new FakeUpsyncedSource([POD, POD2, CM, DEPLOY, NODE_POOL, OTHER], ['wec3']);
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; resourceVersion: string; annotations: Record<string, string> } };
const names = (body: { items: Obj[] }) => body.items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);

t.test('discovery lists exactly the kinds upsynced from the cluster', async (t) => {
  const { app, upstream, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  const api = await app.inject({ url: `${WEC1}/api`, headers: ADMIN });
  t.match(api.json(), { kind: 'APIVersions', versions: ['v1'] });
  const apis = await app.inject({ url: `${WEC1}/apis`, headers: ADMIN });
  t.same(apis.json().groups.map((g: { name: string }) => g.name), ['apps', 'example.com'], 'batch is wec2\'s');
  const v1 = await app.inject({ url: `${WEC1}/api/v1`, headers: ADMIN });
  t.same(v1.json().resources, [
    { name: 'configmaps', singularName: 'configmap', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'watch'], shortNames: ['cm'] },
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list', 'watch'] },
  ], 'with the short names the WEC\'s discovery gave the agent (none on a copy without them)');
  const widgets = await app.inject({ url: `${WEC1}/apis/example.com/v1alpha1`, headers: ADMIN });
  t.match(widgets.json().resources, [{ name: 'widgets', namespaced: false, kind: 'Widget' }]);
  const group = await app.inject({ url: `${WEC1}/apis/apps`, headers: ADMIN });
  t.match(group.json(), { kind: 'APIGroup', name: 'apps', preferredVersion: { groupVersion: 'apps/v1' } });
  t.equal((await app.inject({ url: `${WEC1}/apis/batch/v1`, headers: ADMIN })).statusCode, 404, 'a group not upsynced there');
  const agg = await app.inject({ url: `${WEC1}/apis`, headers: { ...ADMIN, accept: AGGREGATED } });
  t.equal(agg.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  t.same(agg.json().items.map((i: { metadata: { name: string } }) => i.metadata.name), ['apps', 'example.com']);
  const aggCore = await app.inject({ url: `${WEC1}/api`, headers: { ...ADMIN, accept: AGGREGATED } });
  t.same(aggCore.json().items[0].versions[0].resources.map((r: { resource: string }) => r.resource), ['configmaps', 'pods']);
  t.same(aggCore.json().items[0].versions[0].resources[0].shortNames, ['cm']);
  const empty = await app.inject({ url: `${ROOT}/clusters/wec3/api`, headers: ADMIN });
  t.same(empty.json().versions, [], 'a cluster with a request and nothing upsynced yet: empty');
  t.equal((await app.inject({ url: `${ROOT}/clusters/wec3/api/v1`, headers: ADMIN })).statusCode, 404);
  t.equal((await app.inject({ url: `${WEC1}/openapi/v3`, headers: ADMIN })).statusCode, 404, 'no OpenAPI: kubectl get does without');
  t.same(upstream.calls(), [], 'nothing asked of the WDS');
});

t.test('get and list: native objects with the feed\'s resourceVersion, the source\'s in an annotation', async (t) => {
  const asked: unknown[] = [];
  const { app, close } = await testApp({ upsynced: source(), onAuthorize: (_u, a) => asked.push(a) });
  t.teardown(close);
  const pod = await app.inject({ url: `${WEC1}/api/v1/namespaces/ns1/pods/web-1`, headers: ADMIN });
  t.equal(pod.statusCode, 200);
  t.match(pod.json(), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'ns1', labels: { app: 'web' } }, status: { phase: 'Running' } });
  t.equal(pod.json().metadata.annotations['view.kubestellar.io/source-resource-version'], '777');
  t.not(pod.json().metadata.resourceVersion, '777');
  const all = await app.inject({ url: `${WEC1}/api/v1/pods`, headers: ADMIN });
  t.match(all.json(), { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: /^\d+$/ } });
  t.same(names(all.json()), ['ns1/web-1', 'ns2/job-1'], 'all namespaces');
  t.equal(all.json().items[0].metadata.resourceVersion, pod.json().metadata.resourceVersion);
  const inNs = await app.inject({ url: `${WEC1}/apis/apps/v1/namespaces/ns1/deployments`, headers: ADMIN });
  t.match(inNs.json(), { apiVersion: 'apps/v1', kind: 'DeploymentList', items: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } }] });
  const widget = await app.inject({ url: `${WEC1}/apis/example.com/v1alpha1/widgets/w1`, headers: ADMIN });
  t.match(widget.json(), { kind: 'Widget', metadata: { name: 'w1' } });
  t.notOk('namespace' in widget.json().metadata, 'cluster-scoped');
  t.same(asked.slice(0, 3).map(resourceOf), [
    { verb: 'get', group: '', resource: 'pods', namespace: 'ns1', name: 'web-1' },
    { verb: 'list', group: '', resource: 'pods' },
    { verb: 'list', group: 'apps', resource: 'deployments', namespace: 'ns1' },
  ], 'each request authorized as the same request on the WDS');
  const missing = await app.inject({ url: `${WEC1}/api/v1/namespaces/ns2/pods/web-1`, headers: ADMIN });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().message, 'pods "web-1" not found');
  const missingApps = await app.inject({ url: `${WEC1}/apis/apps/v1/namespaces/ns1/deployments/nope`, headers: ADMIN });
  t.equal(missingApps.json().message, 'deployments.apps "nope" not found');
});

t.test('label and field selectors', async (t) => {
  const { app, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  const get = (q: string) => app.inject({ url: `${WEC1}/api/v1/pods?${q}`, headers: ADMIN });
  t.same(names((await get('labelSelector=app%3Dweb')).json()), ['ns1/web-1']);
  t.same(names((await get('labelSelector=app+in+(web,job)')).json()), ['ns1/web-1', 'ns2/job-1']);
  t.same(names((await get('fieldSelector=metadata.name%3Djob-1')).json()), ['ns2/job-1']);
  t.same(names((await get('fieldSelector=metadata.namespace%3Dns1')).json()), ['ns1/web-1']);
  const bad = await get('labelSelector=app%3D%3D%3D');
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().kind, 'Status');
  t.equal((await get('fieldSelector=spec.nodeName%3Dx')).statusCode, 400, 'an unsupported field');
  t.equal((await get('resourceVersion=abc')).statusCode, 400);
});

t.test('Tables: kube\'s columns for pods, configmaps, deployments; NAME and AGE otherwise', async (t) => {
  const { app, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  const table = async (path: string) => (await app.inject({ url: `${WEC1}${path}`, headers: { ...ADMIN, accept: TABLE } })).json();
  const pods = await table('/api/v1/pods');
  t.same(pods.columnDefinitions.filter((c: { priority: number }) => c.priority === 0).map((c: { name: string }) => c.name), ['Name', 'Ready', 'Status', 'Restarts', 'Age']);
  t.same(pods.rows[0].cells.slice(0, 4), ['web-1', '1/1', 'Running', '2']);
  t.same(pods.rows[1].cells.slice(0, 4), ['job-1', '0/1', 'ImagePullBackOff', '0']);
  t.equal(pods.rows[0].cells[5], '10.0.0.5');
  t.match(pods.rows[0].object, { kind: 'PartialObjectMetadata', metadata: { name: 'web-1' } });
  const cms = await table('/api/v1/namespaces/ns1/configmaps');
  t.same(cms.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Data', 'Age']);
  t.same(cms.rows[0].cells.slice(0, 2), ['cm1', 2]);
  const deploys = await table('/apis/apps/v1/deployments');
  t.same(deploys.rows[0].cells.slice(0, 4), ['web', '2/3', 3, 2]);
  const widgets = await table('/apis/example.com/v1alpha1/widgets');
  t.same(widgets.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Age']);
  const one = await table('/api/v1/namespaces/ns1/pods/web-1');
  t.equal(one.kind, 'Table');
  t.equal(one.rows.length, 1);
});

t.test('watch: from a list\'s resourceVersion, only this cluster and kind, selectors applied; -w on a name', async (t) => {
  const src = source();
  const { app, close } = await testApp({ upsynced: src });
  t.teardown(close);
  const rv = (await app.inject({ url: `${WEC1}/api/v1/pods`, headers: ADMIN })).json().metadata.resourceVersion;
  const watching = app.inject({ url: `${WEC1}/api/v1/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=1&labelSelector=app%3Dweb`, headers: ADMIN });
  const byName = app.inject({ url: `${WEC1}/api/v1/namespaces/ns1/pods?watch=1&fieldSelector=metadata.name%3Dweb-1&timeoutSeconds=1`, headers: { ...ADMIN, accept: TABLE } });
  await sleep(50);
  src.put({ ...POD, source: { ...POD.source, resourceVersion: '778' }, object: { ...POD.object, metadata: { ...POD.object.metadata, resourceVersion: '778' } } });
  src.put(copy('wec1', ['', 'v1', 'pods'], 'Pod', 'ns3', 'web-2', { labels: { app: 'web' } }));
  src.put(copy('wec2', ['', 'v1', 'pods'], 'Pod', 'ns1', 'web-9', { labels: { app: 'web' } }));
  src.put(copy('wec1', ['', 'v1', 'pods'], 'Pod', 'ns1', 'not-web', { labels: { app: 'x' } }));
  // The feed gathers a key's changes for 100 ms before watches see them (src/apiserver/virtual/feed.ts).
  await sleep(250);
  src.remove(POD);
  const events = (await watching).body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  t.same(events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['MODIFIED ns1/web-1', 'ADDED ns3/web-2', 'DELETED ns1/web-1']);
  t.equal(events[0].object.metadata.annotations['view.kubestellar.io/source-resource-version'], '778');
  t.equal(events[0].object.kind, 'Pod');
  const tableEvents = (await byName).body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  t.same(tableEvents.map((e) => `${e.type} ${e.object.kind} ${e.object.rows[0].cells[0]}`), ['ADDED Table web-1', 'MODIFIED Table web-1', 'DELETED Table web-1'], 'kubectl get pod web-1 -w');
});

t.test('writes are 405 saying where the object lives; 403 before, without the right', async (t) => {
  const { app, close } = await testApp({ upsynced: source(), allow: (u, a) => u.username === 'alice' && resourceOf(a)?.verb === 'delete' });
  t.teardown(close);
  const del = await app.inject({ method: 'DELETE', url: `${WEC1}/api/v1/namespaces/ns1/pods/web-1`, headers: ALICE });
  t.equal(del.statusCode, 405);
  t.match(del.json(), { kind: 'Status', reason: 'MethodNotAllowed', message: 'pods "web-1" lives in cluster wec1: upsynced objects are read-only in the view; change it in the WEC' });
  const patch = await app.inject({ method: 'PATCH', url: `${WEC1}/apis/apps/v1/namespaces/ns1/deployments/web`, headers: { ...ADMIN, 'content-type': 'application/merge-patch+json' }, payload: '{}' });
  t.equal(patch.statusCode, 405);
  t.match(patch.json().message, /^deployments.apps "web" lives in cluster wec1/);
  const create = await app.inject({ method: 'POST', url: `${WEC1}/api/v1/namespaces/ns1/pods`, headers: { ...ALICE, 'content-type': 'application/json' }, payload: '{}' });
  t.equal(create.statusCode, 403, 'alice may not create pods');
});

t.test('403 without the WDS right; 404 for unknown clusters, kinds and subresources; no crash on odd paths', async (t) => {
  // alice may list pods in ns1 only.
  const aliceMay = (u: UserInfo, a: unknown) => {
    const r = resourceOf(a);
    return u.username === 'alice' && r?.resource === 'pods' && r.namespace === 'ns1';
  };
  const { app, close } = await testApp({ upsynced: source(), allow: aliceMay });
  t.teardown(close);
  t.equal((await app.inject({ url: `${WEC1}/api/v1/namespaces/ns1/pods`, headers: ALICE })).statusCode, 200);
  const all = await app.inject({ url: `${WEC1}/api/v1/pods`, headers: ALICE });
  t.equal(all.statusCode, 403);
  t.equal(all.json().reason, 'Forbidden');
  t.equal((await app.inject({ url: `${WEC1}/api/v1/namespaces/ns2/pods/job-1`, headers: ALICE })).statusCode, 403);
  const unknown = await app.inject({ url: `${ROOT}/clusters/nope/api/v1/pods`, headers: ADMIN });
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().kind, 'Status');
  const noKind = await app.inject({ url: `${WEC1}/api/v1/secrets`, headers: ADMIN });
  t.equal(noKind.statusCode, 404);
  t.equal(noKind.json().message, 'the server could not find the requested resource');
  t.equal((await app.inject({ url: `${ROOT}/clusters/wec2/api/v1/pods`, headers: ADMIN })).statusCode, 404, 'pods are wec1\'s');
  t.equal((await app.inject({ url: `${WEC1}/api/v1/namespaces/ns1/pods/web-1/log`, headers: ADMIN })).statusCode, 404);
  t.equal((await app.inject({ url: `${WEC1}/api/v1/pods/web-1`, headers: ADMIN })).statusCode, 404, 'a namespaced name without namespace');
  for (const url of [`${WEC1}/`, `${WEC1}//api//v1/`, `${WEC1}/apis/%zz`, `${WEC1}/x/y/z`, `${ROOT}/clusters/%E0%A4%A/api`]) {
    const res = await app.inject({ url, headers: ADMIN });
    t.ok(res.statusCode < 500 && typeof res.json() === 'object', `${url}: ${res.statusCode}`);
  }
  const badWatch = await app.inject({ url: `${WEC1}/api/v1/pods?watch=1&resourceVersion=-1`, headers: ADMIN });
  t.match(badWatch.json(), { kind: 'Status', code: 500, message: /resourceVersion: Invalid value/ }, 'a watch\'s bad resourceVersion: kube-apiserver\'s 500');
  t.equal((await app.inject({ url: `${WEC1}/api/v1`, headers: { 'x-test-user': 'nobody' } })).statusCode, 200, 'discovery: any authenticated user');
});

t.test('a watch of a cluster\'s view is long-running, as kube-apiserver counts it', async (t) => {
  // One ordinary request in flight per user at most: a watch held open must not be one.
  const limits = new RequestLimits({ longRunningPerUser: 1, longRunningTotal: 10, inflightPerUser: 1, inflightTotal: 10 });
  const { app, close } = await testApp({ upsynced: source(), limits });
  t.teardown(close);
  const watching = app.inject({ url: `${WEC1}/api/v1/pods?watch=1&timeoutSeconds=1`, headers: ADMIN });
  await sleep(50);
  t.equal((await app.inject({ url: `${WEC1}/api/v1/pods`, headers: ADMIN })).statusCode, 200, 'a list beside the watch');
  t.equal((await app.inject({ url: `${WEC1}/api/v1/pods?watch=1&timeoutSeconds=1`, headers: ADMIN })).statusCode, 429, 'a second watch is past the long-running bound');
  await watching;
});

t.test('/version is the WDS\'s, asked as the user', async (t) => {
  const { app, upstream, close } = await testApp({ upsynced: source() });
  t.teardown(close);
  upstream.pool.intercept({ path: '/version', method: 'GET' }).reply(200, JSON.stringify({ major: '1', minor: '33', gitVersion: 'v1.33.0' }), { headers: { 'content-type': 'application/json' } });
  const res = await app.inject({ url: `${WEC1}/version`, headers: ADMIN });
  t.equal(res.statusCode, 200);
  t.equal(res.json().gitVersion, 'v1.33.0');
  t.match(upstream.calls(), [{ method: 'GET', path: '/version' }]);
});

t.test('without a source: every cluster is unknown', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  t.equal((await app.inject({ url: `${WEC1}/api`, headers: ADMIN })).statusCode, 404);
});

t.test('identity from source: a copy\'s own odd metadata neither breaks a list nor shows', async (t) => {
  const odd = copy('wec1', ['example.com', 'v1alpha1', 'widgets'], 'Widget', '', 'w2');
  (odd.object.metadata as Record<string, unknown>).namespace = { not: 'a string' };
  const v2 = copy('wec1', ['example.com', 'v2', 'widgets'], 'Widget', '', 'w3');
  const { app, close } = await testApp({ upsynced: new FakeUpsyncedSource([NODE_POOL, odd, v2]) });
  t.teardown(close);
  const list = await app.inject({ url: `${WEC1}/apis/example.com/v1alpha1/widgets`, headers: ADMIN });
  t.equal(list.statusCode, 200, 'no 500 from a non-string namespace in the copied object');
  t.same(list.json().items.map((o: { metadata: { name: string; namespace?: string } }) => [o.metadata.name, o.metadata.namespace]), [['w1', undefined], ['w2', undefined]],
    'cluster-scoped as source says; the v2 copy is not listed as v1alpha1');
  t.equal((await app.inject({ url: `${WEC1}/apis/example.com/v1alpha1/widgets/w3`, headers: ADMIN })).statusCode, 404, 'nor found by name in another version');
  t.equal((await app.inject({ url: `${WEC1}/apis/example.com/v2/widgets/w3`, headers: ADMIN })).statusCode, 200);
});
