// Unit tests of the HTTP side of denatured kinds (src/apiserver/view/denatured-handler.ts) without
// spaces: the smallest fastify app that routes the view's paths to handleDenatured as
// src/apiserver/view/view-plugin.ts does (buffered body, request info, the authenticated user,
// errors as Status), with a real denatured registry synced against the mock upstream, driven
// with app.inject as kubectl would call it: JSON, YAML, Tables, watches, the media types it refuses.
import { FakeNativeCode } from '../fixtures/fake-native-code.js';
import Fastify, { type FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { handleDenatured } from '../../src/apiserver/view/denatured-handler.js';
import { parseRequestInfo } from '../../src/kube/request-info.js';
import { toStatus } from '../../src/kube/status.js';
import type { UserInfo } from '../../src/kube/user.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { DenaturedRegistry } from '../../src/storage/denatured-registry.js';
import type { ProtobufDecoder } from '../../src/storage/protobuf-decoder.js';
import { answerDenaturedKinds, denaturedKind, type FixtureResource } from '../fixtures/denatured-kinds.js';
import { mockUpstream, requestBody, type MockUpstream } from '../fixtures/mock-upstream.js';

const ROOT = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
const D = '/apis/denatured.kubestellar.io/v1';
const RBAC = `${ROOT}/apis/rbac.authorization.k8s.io/v1`;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const RESOURCES: FixtureResource[] = ['clusterroles', 'rolebindings', 'serviceaccounts', 'flowschemas'];
const alice: UserInfo = { username: 'alice', groups: ['team-a', 'system:authenticated'], extra: {} };
const json = { headers: { 'content-type': 'application/json' } };
const noLog = { info: () => {}, error: () => {} };

interface View {
  app: FastifyInstance;
  m: MockUpstream;
  native: FakeNativeCode;
  /** What reached the WDS's denatured.kubestellar.io endpoints (not the registry's own sync). */
  wdsCalls(): ReturnType<MockUpstream['calls']>;
}

/**
 * The app: every path under the view root goes to handleDenatured, as
 * src/apiserver/view/view-plugin.ts routes denatured kinds. The registry has synced (`ok`), not
 * yet (`none`), or failed its sync (`failed`).
 */
async function view(t: Test, opts: { sync?: 'ok' | 'none' | 'failed'; protobuf?: ProtobufDecoder } = {}): Promise<View> {
  const m = mockUpstream();
  const native = new FakeNativeCode();
  const registry = new DenaturedRegistry(m.up, RESOURCES.map((r) => ({ group: denaturedKind(r).group, resource: r })), noLog, native);
  const sync = opts.sync ?? 'ok';
  if (sync === 'ok') {
    answerDenaturedKinds(m.pool, RESOURCES);
    await registry.sync();
  } else if (sync === 'failed') {
    m.pool.intercept({ path: '/api', method: 'GET' }).reply(500, 'etcd is down');
    m.pool.intercept({ path: '/apis', method: 'GET' }).reply(500, 'etcd is down');
    await registry.sync().catch(() => undefined);
  }
  const app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err, _req, reply) => {
    const s = toStatus(err);
    void reply.code(s.code).header('content-type', 'application/json').send(s);
  });
  app.all(`${ROOT}/*`, (req, reply) =>
    handleDenatured(req, reply, parseRequestInfo(req.url.slice(ROOT.length).split('?')[0]!), alice, { registry, up: m.up, protobuf: opts.protobuf }));
  t.teardown(async () => {
    await app.close();
    await m.close();
  });
  return { app, m, native, wdsCalls: () => m.calls().filter((c) => c.path.startsWith(D)) };
}

const storedRole = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
  metadata: { name, uid: `uid-${name}`, resourceVersion: '5', creationTimestamp: '2025-01-02T03:04:05Z' },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], ...extra,
});
const echo = (statusCode: number) => (opts: { body?: unknown }) => {
  const o = requestBody(opts) as KubeObject;
  return { statusCode, data: { ...o, metadata: { ...o.metadata, uid: 'uid-new', resourceVersion: '9' } }, responseOptions: json };
};

t.test('GET of one object: the native object as JSON, read from the WDS as the user', async (t) => {
  const { app, m, wdsCalls } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles/reader`, method: 'GET' }).reply(200, storedRole('reader'), json);
  const res = await app.inject({ method: 'GET', url: `${RBAC}/clusterroles/reader`,
    headers: { accept: 'application/json', authorization: 'Bearer client-token', 'impersonate-user': 'root', 'user-agent': 'kubectl/v1.33.1' } });

  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^application\/json/);
  t.same(res.json(), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
    metadata: { name: 'reader', uid: 'uid-reader', resourceVersion: '5', creationTimestamp: '2025-01-02T03:04:05Z' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
  const [call] = wdsCalls();
  t.equal(call!.headers['impersonate-user'], 'alice', 'as the authenticated user, not as the client asked');
  t.same(call!.headers['impersonate-group'], ['team-a', 'system:authenticated']);
  t.notOk('authorization' in call!.headers, 'the client\'s credential is not passed on');
  t.equal(call!.headers['user-agent'], 'kubectl/v1.33.1');
});

t.test('GET as YAML', async (t) => {
  const { app, m } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles/reader`, method: 'GET' }).reply(200, storedRole('reader'), json);
  const res = await app.inject({ method: 'GET', url: `${RBAC}/clusterroles/reader`, headers: { accept: 'application/yaml' } });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/yaml');
  t.match(YAML.parse(res.payload), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' } });
});

t.test('GET of a list as a Table (kubectl get): columns, one row per object, list metadata', async (t) => {
  const { app, m } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'GET' }).reply(200, {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRoleList', metadata: { resourceVersion: '42' },
    items: [storedRole('admin'), storedRole('reader')],
  }, json);
  const res = await app.inject({ method: 'GET', url: `${RBAC}/clusterroles`, headers: { accept: `${TABLE},application/json` } });
  t.equal(res.statusCode, 200);
  const table = res.json();
  t.equal(table.kind, 'Table');
  t.equal(table.apiVersion, 'meta.k8s.io/v1');
  t.same(table.metadata, { resourceVersion: '42' });
  t.equal(table.columnDefinitions[0].name, 'Name');
  t.same(table.rows.map((r: { cells: unknown[] }) => r.cells[0]), ['admin', 'reader']);
  t.same(table.rows[0].object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: storedRole('admin').metadata },
    'rows carry the object\'s metadata by default');
});

t.test('a Table of FlowSchemas lists them by matching precedence, as kube-apiserver prints them', async (t) => {
  const { app, m } = await view(t);
  const fs = (name: string, matchingPrecedence: number) => ({ apiVersion: 'denatured.kubestellar.io/v1', kind: 'FlowSchema',
    metadata: { name }, spec: { matchingPrecedence, priorityLevelConfiguration: { name: 'global-default' } } });
  m.pool.intercept({ path: `${D}/flowschemas`, method: 'GET' }).reply(200, {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'FlowSchemaList', metadata: {}, items: [fs('b', 900), fs('z', 100), fs('a', 900)],
  }, json);
  const res = await app.inject({ method: 'GET', url: `${ROOT}/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas`, headers: { accept: TABLE } });
  t.same(res.json().rows.map((r: { cells: unknown[] }) => r.cells[0]), ['z', 'a', 'b']);
});

t.test('a watch streams native events as JSON lines until the WDS ends it; a watch of one object selects it by name', async (t) => {
  const { app, m, wdsCalls } = await view(t);
  const events = [{ type: 'ADDED', object: storedRole('reader') }, { type: 'MODIFIED', object: storedRole('reader', { rules: [] }) }];
  m.pool.intercept({ path: (p) => p.startsWith(`${D}/clusterroles?`), method: 'GET' })
    .reply(200, events.map((e) => JSON.stringify(e) + '\n').join(''), json);
  const res = await app.inject({ method: 'GET', url: `${RBAC}/clusterroles/reader?watch=true&resourceVersion=5` });
  t.equal(res.statusCode, 200);
  const lines = res.payload.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name]),
    [['ADDED', 'rbac.authorization.k8s.io/v1', 'reader'], ['MODIFIED', 'rbac.authorization.k8s.io/v1', 'reader']]);
  const sent = new URL(wdsCalls()[0]!.path, 'https://wds.test').searchParams;
  t.equal(sent.get('fieldSelector'), 'metadata.name=reader');
  t.equal(sent.get('watch'), 'true');
});

t.test('a watch as a Table: column definitions in the first event only', async (t) => {
  const { app, m } = await view(t);
  const events = [{ type: 'ADDED', object: storedRole('a') }, { type: 'ADDED', object: storedRole('b') }];
  m.pool.intercept({ path: (p) => p.startsWith(`${D}/clusterroles?`), method: 'GET' })
    .reply(200, events.map((e) => JSON.stringify(e) + '\n').join(''), json);
  const res = await app.inject({ method: 'GET', url: `${RBAC}/clusterroles?watch=1`, headers: { accept: TABLE } });
  const lines = res.payload.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines.map((e) => [e.object.kind, 'columnDefinitions' in e.object, e.object.rows[0].cells[0]]), [['Table', true, 'a'], ['Table', false, 'b']]);
});

t.test('DELETE of an object with pending finalizers is 202 with the object; DELETE of a collection lists what went', async (t) => {
  const { app, m } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles/held`, method: 'DELETE' }).reply(200,
    storedRole('held', { metadata: { name: 'held', deletionTimestamp: '2025-01-02T03:04:06Z', finalizers: ['example.com/hold'] } }), json);
  const held = await app.inject({ method: 'DELETE', url: `${RBAC}/clusterroles/held`, headers: { 'content-type': 'application/json' }, payload: '{"propagationPolicy":"Foreground"}' });
  t.equal(held.statusCode, 202);
  t.equal(held.json().kind, 'ClusterRole');

  m.pool.intercept({ path: (p) => p.startsWith(`${D}/namespaces/ns1/serviceaccounts`), method: 'DELETE' }).reply(200, {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccountList', metadata: {},
    items: [{ apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'ns1' } }] }, json);
  const all = await app.inject({ method: 'DELETE', url: `${ROOT}/api/v1/namespaces/ns1/serviceaccounts?labelSelector=app%3Dx` });
  t.equal(all.statusCode, 200);
  t.same(all.json().items.map((i: KubeObject) => [i.apiVersion, i.metadata?.name]), [['v1', 'a']]);
});

t.test('requests the kind does not serve: 404 paths, 405 methods, 406 for protobuf-only clients, 400 for a bad dryRun', async (t) => {
  const { app, wdsCalls } = await view(t);
  const code = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string> = {}) =>
    (await app.inject({ method, url, headers, ...(method === 'POST' ? { payload: '{}', headers: { 'content-type': 'application/json', ...headers } } : {}) })).statusCode;
  t.equal(await code('GET', `${ROOT}/apis/rbac.authorization.k8s.io/v2/clusterroles`), 404, 'a version the WDS does not serve');
  t.equal(await code('GET', `${RBAC}/namespaces/ns1/clusterroles`), 404, 'a cluster-scoped kind in a namespace');
  t.equal(await code('GET', `${RBAC}/clusterroles/x/status`), 404, 'a subresource the kind does not have');
  t.equal(await code('GET', `${RBAC}/roles`), 404, 'a kind the registry does not serve');
  t.equal(await code('POST', `${RBAC}/clusterroles/x`), 405, 'POST to an object');
  t.equal(await code('POST', `${RBAC}/rolebindings`), 405, 'POST of a namespaced kind without a namespace');
  t.equal(await code('PUT', `${RBAC}/clusterroles`), 405, 'PUT to a collection');
  t.equal((await app.inject({ method: 'OPTIONS', url: `${RBAC}/clusterroles` })).statusCode, 405, 'a method kube-apiserver does not serve');
  t.equal(await code('GET', `${RBAC}/clusterroles/x`, { accept: 'application/vnd.kubernetes.protobuf' }), 406);
  t.equal(await code('GET', `${RBAC}/clusterroles/x?dryRun=Some`), 400);
  t.equal(await code('GET', `${RBAC}/clusterroles?includeObject=Everything`, { accept: TABLE }), 400);
  t.same(wdsCalls(), [], 'none reached the WDS');
});

t.test('before the denatured kinds are ready their requests are 503, with the last error', async (t) => {
  const none = await view(t, { sync: 'none' });
  const notYet = await none.app.inject({ method: 'GET', url: `${RBAC}/clusterroles` });
  t.equal(notYet.statusCode, 503);
  t.equal(notYet.json().message, 'denatured kinds are not ready yet');

  const failed = await view(t, { sync: 'failed' });
  const res = await failed.app.inject({ method: 'GET', url: `${RBAC}/clusterroles` });
  t.equal(res.statusCode, 503);
  t.equal(res.json().message, 'denatured kinds are not ready yet: GET /api: 500 etcd is down');
});

t.test('POST, PUT and PATCH hand the body as sent, with its Content-Type and the user agent, to Kubernetes\' registry; its code is the answer', async (t) => {
  const { app, m, native } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  const yaml = 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: a\nrules: []\n';
  native.answer = () => ({ status: 201, json: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'a' }, rules: null }, warnings: [], write: 'create' });
  const created = await app.inject({ method: 'POST', url: `${RBAC}/clusterroles?fieldValidation=Strict`, payload: yaml, headers: { 'content-type': 'application/yaml', 'user-agent': 'kubectl/v1.32.0' } });
  t.equal(created.statusCode, 201);
  t.equal(created.json().rules, null, 'the registry\'s object, as kube-apiserver encodes it');
  t.match(native.writes[0], { method: 'POST', contentType: 'application/yaml', userAgent: 'kubectl/v1.32.0', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldValidation=Strict' });
  t.equal(native.writes[0]!.body.toString(), yaml);
  t.same(native.writes[0]!.user, alice, 'with the authenticated user, whom Kubernetes\' RBAC escalation check asks about');
  const strict = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'BadRequest', code: 400, message: 'strict decoding error: unknown field "__proto__"' };
  native.answer = () => ({ status: 400, json: strict, warnings: [], write: 'none' });
  for (const [method, type] of [['POST', 'application/json'], ['PUT', 'application/json'], ['PATCH', 'application/merge-patch+json'], ['PATCH', 'application/strategic-merge-patch+json'],
    ['PATCH', 'application/json-patch+json'], ['PATCH', 'application/apply-patch+yaml']] as const) {
    m.pool.intercept({ path: `${D}/clusterroles/a`, method: 'GET' }).reply(200, storedRole('a'), json);
    const url = method === 'POST' ? `${RBAC}/clusterroles` : `${RBAC}/clusterroles/a`;
    const body = type === 'application/json-patch+json' ? '[{"op":"add","path":"/__proto__","value":{"polluted":1}}]' : '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}';
    const r = await app.inject({ method, url, payload: body, headers: { 'content-type': type } });
    t.equal(r.statusCode, 400, `${method} ${type}: the registry's answer`);
    t.same(r.json(), strict);
    t.equal(native.writes.at(-1)!.body.toString(), body, 'the body reached the registry as sent');
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype changed');
});

t.test('DELETE options with __proto__, constructor and prototype keys reach the WDS as data and change no prototype', async (t) => {
  const { app, m, wdsCalls } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles/a`, method: 'DELETE' }).reply(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }, json);
  const body = '{"kind":"DeleteOptions","apiVersion":"v1","__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"prototype":{"polluted":1}}';
  const r = await app.inject({ method: 'DELETE', url: `${RBAC}/clusterroles/a`, payload: body, headers: { 'content-type': 'application/json' } });
  t.equal(r.statusCode, 200);
  t.same(JSON.parse(JSON.stringify(wdsCalls()[0]!.body)), JSON.parse(body), 'sent on as the client wrote it (the WDS decodes it strictly)');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype changed');
  t.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
});
