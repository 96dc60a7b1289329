// Unit tests of the HTTP side of denatured kinds (src/apiserver/denatured-handler.ts) without
// spaces: the smallest fastify app that routes the view's paths to handleDenatured as
// view-proxy.ts does (buffered body, request info, the authenticated user, errors as Status),
// with a real denatured registry synced against the mock upstream, driven with app.inject as
// kubectl would call it: JSON, YAML, Tables, watches, the media types it refuses.
import Fastify, { type FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { handleDenatured } from '../../src/apiserver/denatured-handler.js';
import { parseRequestInfo } from '../../src/kube/request-info.js';
import { toStatus } from '../../src/kube/status.js';
import type { UserInfo } from '../../src/kube/user.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { DenaturedRegistry } from '../../src/storage/denatured-registry.js';
import { DecodeError, ProtobufDecoder } from '../../src/storage/protobuf-decoder.js';
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
  /** What reached the WDS's denatured.kubestellar.io endpoints (not the registry's own sync). */
  wdsCalls(): ReturnType<MockUpstream['calls']>;
}

/**
 * The app: every path under the view root goes to handleDenatured, as view-proxy.ts routes
 * denatured kinds. The registry has synced (`ok`), not yet (`none`), or failed its sync (`failed`).
 */
async function view(t: Test, opts: { sync?: 'ok' | 'none' | 'failed'; protobuf?: ProtobufDecoder } = {}): Promise<View> {
  const m = mockUpstream();
  const registry = new DenaturedRegistry(m.up, RESOURCES.map((r) => ({ group: denaturedKind(r).group, resource: r })), noLog);
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
  return { app, m, wdsCalls: () => m.calls().filter((c) => c.path.startsWith(D)) };
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

t.test('POST with a YAML body creates the object (201), stored denatured in the WDS', async (t) => {
  const { app, m, wdsCalls } = await view(t);
  m.pool.intercept({ path: `${D}/namespaces/ns1/rolebindings`, method: 'POST' }).reply(echo(201));
  const res = await app.inject({ method: 'POST', url: `${RBAC}/namespaces/ns1/rolebindings`, headers: { 'content-type': 'application/yaml', 'accept-encoding': 'gzip' }, payload: [
    'apiVersion: rbac.authorization.k8s.io/v1', 'kind: RoleBinding', 'metadata:', '  name: readers',
    'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}', 'subjects: [{kind: Group, name: team-a}]',
  ].join('\n') });
  t.equal(res.statusCode, 201);
  t.match(res.json(), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'readers', namespace: 'ns1', uid: 'uid-new' } });
  const [call] = wdsCalls();
  t.match(call!.body, { apiVersion: 'denatured.kubestellar.io/v1', kind: 'RoleBinding', metadata: { name: 'readers', namespace: 'ns1' } });
  t.equal(call!.headers['content-type'], 'application/json', 'the WDS gets JSON');
  const length = call!.headers['content-length'];
  t.ok(length === undefined || Number(length) === Buffer.byteLength(JSON.stringify(call!.body)), 'no content-length of the client\'s YAML body');
  t.notOk('accept-encoding' in call!.headers, 'nor its accept-encoding: the answer is read here');
});

t.test('POST of an invalid object is 422 with causes, and nothing reaches the WDS', async (t) => {
  const { app, wdsCalls } = await view(t);
  const res = await app.inject({ method: 'POST', url: `${RBAC}/namespaces/ns1/rolebindings`, headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb' } }) });
  t.equal(res.statusCode, 422);
  t.match(res.json(), { kind: 'Status', reason: 'Invalid', details: { causes: [{ field: 'roleRef' }] } });
  t.same(wdsCalls(), []);
});

t.test('bodies: unknown media types are 415, protobuf without a decoder says to send JSON, bad JSON is 400', async (t) => {
  const { app, wdsCalls } = await view(t);
  const post = (contentType: string, payload: string | Buffer) =>
    app.inject({ method: 'POST', url: `${ROOT}/api/v1/namespaces/ns1/serviceaccounts`, headers: { 'content-type': contentType }, payload });

  const text = await post('text/plain', 'name: x');
  t.equal(text.statusCode, 415);
  t.equal(text.json().reason, 'UnsupportedMediaType');
  t.equal(text.json().message, 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');

  const proto = await post('application/vnd.kubernetes.protobuf', Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a]));
  t.equal(proto.statusCode, 415);
  t.match(proto.json().message, /application\/vnd\.kubernetes\.protobuf is not decoded for kinds the view stores denatured: send JSON/);

  const bad = await post('application/json', '{"metadata":');
  t.equal(bad.statusCode, 400);
  t.match(bad.json().message, /^the request body is not valid JSON: /);
  t.same(wdsCalls(), [], 'none reached the WDS');
});

t.test('a protobuf body is decoded when the server has a decoder; one it cannot decode is 400', async (t) => {
  class ScriptedDecoder extends ProtobufDecoder {
    constructor() { super('/nonexistent/ksview-protojson'); }
    override async decode(body: Buffer): Promise<unknown> {
      if (body[0] === 0xff) throw new Error('ksview-protojson exited (2)');
      if (body[0] !== 0x6b) throw new DecodeError('not a kubernetes protobuf envelope');
      return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } };
    }
  }
  const { app, m, wdsCalls } = await view(t, { protobuf: new ScriptedDecoder() });
  m.pool.intercept({ path: `${D}/namespaces/ns1/serviceaccounts`, method: 'POST' }).reply(echo(201));
  const post = (payload: Buffer) => app.inject({ method: 'POST', url: `${ROOT}/api/v1/namespaces/ns1/serviceaccounts`,
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf, application/json' }, payload });

  const ok = await post(Buffer.from([0x6b, 0x38, 0x73, 0x00]));
  t.equal(ok.statusCode, 201);
  t.match(ok.headers['content-type'], /^application\/json/, 'answered in JSON, which the client also accepts');
  t.match(ok.json(), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'ns1' } });
  t.match(wdsCalls()[0]!.body, { apiVersion: 'denatured.kubestellar.io/v1', metadata: { name: 'robot' } });

  const bad = await post(Buffer.from([0x00]));
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().message, 'the protobuf body could not be decoded: not a kubernetes protobuf envelope');
  const broken = await post(Buffer.from([0xff]));
  t.equal(broken.statusCode, 500, 'a decoder that fails is the server\'s fault');
  t.equal(broken.json().message, 'Internal error occurred: decoding a protobuf body: ksview-protojson exited (2)');
});

t.test('PUT of a missing ClusterRole creates it (201); PATCH merges; DELETE answers a Success Status', async (t) => {
  const { app, m, wdsCalls } = await view(t);
  m.pool.intercept({ path: `${D}/clusterroles/new`, method: 'GET' }).reply(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound',
    message: 'clusterroles.denatured.kubestellar.io "new" not found', details: { name: 'new', group: 'denatured.kubestellar.io', kind: 'clusterroles' } }, json);
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  const put = await app.inject({ method: 'PUT', url: `${RBAC}/clusterroles/new`, headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'new' }, rules: [] }) });
  t.equal(put.statusCode, 201);

  m.pool.intercept({ path: `${D}/clusterroles/reader`, method: 'GET' }).reply(200, storedRole('reader'), json);
  m.pool.intercept({ path: `${D}/clusterroles/reader`, method: 'PUT' }).reply(echo(200));
  const patch = await app.inject({ method: 'PATCH', url: `${RBAC}/clusterroles/reader`, headers: { 'content-type': 'application/merge-patch+json' },
    payload: JSON.stringify({ metadata: { labels: { tier: 'b' } } }) });
  t.equal(patch.statusCode, 200);
  t.same(patch.json().metadata.labels, { tier: 'b' });

  m.pool.intercept({ path: `${D}/clusterroles/reader`, method: 'DELETE' }).reply(200, storedRole('reader'), json);
  const del = await app.inject({ method: 'DELETE', url: `${RBAC}/clusterroles/reader` });
  t.equal(del.statusCode, 200);
  t.same(del.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
    details: { name: 'reader', group: 'rbac.authorization.k8s.io', kind: 'clusterroles', uid: 'uid-reader' } });
  t.same(wdsCalls().map((c) => c.method), ['GET', 'POST', 'GET', 'PUT', 'DELETE']);
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

t.test('patches: an unknown patch type is 415, force without apply is 400, an empty patch is 400', async (t) => {
  const { app, wdsCalls } = await view(t);
  const patch = (contentType: string, payload: string, query = '') =>
    app.inject({ method: 'PATCH', url: `${RBAC}/clusterroles/reader${query}`, headers: { 'content-type': contentType }, payload });
  const unknown = await patch('application/json', '{}');
  t.equal(unknown.statusCode, 415);
  t.match(unknown.json().message, /application\/json-patch\+json, application\/merge-patch\+json, application\/strategic-merge-patch\+json, application\/apply-patch\+yaml$/);
  const force = await patch('application/merge-patch+json', '{}', '?force=true');
  t.equal(force.statusCode, 400);
  t.equal(force.json().message, 'force: Forbidden: may not be specified for non-apply patch');
  const empty = await patch('application/merge-patch+json', '');
  t.equal(empty.statusCode, 400);
  t.equal(empty.json().message, 'the patch is empty');
  t.same(wdsCalls(), []);
});

t.test('server-side apply with dryRun=All: one dry-run apply in the WDS, the result as the native kind', async (t) => {
  const { app, m, wdsCalls } = await view(t);
  m.pool.intercept({ path: (p) => p.startsWith(`${D}/clusterroles/applied?`), method: 'PATCH' }).reply(echo(200));
  const res = await app.inject({ method: 'PATCH', url: `${RBAC}/clusterroles/applied?fieldManager=kubectl&dryRun=All&force=true`,
    headers: { 'content-type': 'application/apply-patch+yaml' },
    payload: 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: applied\nrules: []\n' });
  t.equal(res.statusCode, 200);
  t.equal(res.json().apiVersion, 'rbac.authorization.k8s.io/v1');
  t.same(wdsCalls().map((c) => new URL(c.path, 'https://wds.test').searchParams.get('dryRun')), ['All']);
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
