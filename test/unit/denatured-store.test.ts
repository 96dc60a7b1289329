// Unit tests of the denatured store (src/storage/denatured-store.ts) without spaces: the WDS's
// denatured.kubestellar.io CRD endpoints are played by the mock upstream, and each test checks
// what a client of the view gets (native apiVersion, names, Status wording) and what reached the
// WDS (the stored form, nothing at all for an invalid object).
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { DenaturedStore } from '../../src/storage/denatured-store.js';
import type { Caller, Target } from '../../src/storage/denatured-verbs.js';
import { kindStrategy } from '../../src/storage/denatured-strategy.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { StatusError } from '../../src/kube/status.js';
import { denaturedKind, type FixtureResource } from '../fixtures/denatured-kinds.js';
import { mockUpstream, requestBody, type MockUpstream } from '../fixtures/mock-upstream.js';
import { FakeNativeCode } from '../fixtures/fake-native-code.js';
import { VALIDATION_USER } from '../../src/storage/native-code.js';

const D = '/apis/denatured.kubestellar.io/v1';
const NATIVE_NAME = 'view.kubestellar.io/native-name';
/** The stored name of a native name that is not a DNS-1123 subdomain. */
const enc = (n: string) => 'kv-' + createHash('sha256').update(n).digest('hex').slice(0, 40);
const json = { headers: { 'content-type': 'application/json' } };
const caller: Caller = { headers: { 'impersonate-user': 'alice', 'impersonate-group': ['team-a', 'system:authenticated'], 'user-agent': 'kubectl/v1.33' } };
const q = (s = '') => new URLSearchParams(s);
const target = (name: string, namespace = '', subresource = ''): Target => ({ version: 'v1', namespace, name, subresource });
const pathOnly = (p: string) => p.split('?')[0];
const queryOf = (p: string) => new URL(p, 'https://wds.test').searchParams;

function setup(t: Test, resource: FixtureResource): { m: MockUpstream; store: DenaturedStore; native: FakeNativeCode } {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const native = new FakeNativeCode();
  return { m, store: new DenaturedStore({ up: m.up, strategy: kindStrategy(denaturedKind(resource)), native }), native };
}

/** An answer that returns the object sent, with what the WDS adds on write. */
const echo = (statusCode: number, meta: Record<string, unknown> = {}) => (opts: { body?: unknown }) => {
  const o = requestBody(opts) as KubeObject;
  return { statusCode, data: { ...o, metadata: { ...o.metadata, uid: 'uid-1', resourceVersion: '10', creationTimestamp: '2025-01-02T03:04:05Z', ...meta } }, responseOptions: json };
};

/** A Status as the WDS answers it for the CRD. */
const wdsStatus = (code: number, reason: string, message: string, details?: Record<string, unknown>) =>
  ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) });

async function rejection(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError, got a result');
}

const storedClusterRole = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
  metadata: { name: enc(name), annotations: { [NATIVE_NAME]: name }, uid: 'uid-1', resourceVersion: '5', generation: 1, creationTimestamp: '2025-01-02T03:04:05Z' },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  ...extra,
});

t.test('get: the stored object comes back native, asked for as the caller', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:foo';
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'GET' })
    .reply(200, storedClusterRole(name), { headers: { ...json.headers, warning: '299 - "a warning from the WDS"' } });

  const r = await store.get(caller, target(name), q());
  t.same(r.value, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
    metadata: { name, uid: 'uid-1', resourceVersion: '5', creationTimestamp: '2025-01-02T03:04:05Z' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  }, 'native apiVersion and name, no annotation of the view, no generation (RBAC has none)');
  t.same(r.warnings, ['299 - "a warning from the WDS"'], 'warnings of the WDS are passed on');
  const [call] = m.calls();
  t.equal(call!.headers['impersonate-user'], 'alice', 'the WDS is asked as the caller');
  t.same(call!.headers['impersonate-group'], ['team-a', 'system:authenticated']);
});

t.test('get: a 404 of the WDS is the native NotFound, naming the native name', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:gone';
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'GET' }).reply(404,
    wdsStatus(404, 'NotFound', `clusterroles.denatured.kubestellar.io "${enc(name)}" not found`, { name: enc(name), group: 'denatured.kubestellar.io', kind: 'clusterroles' }), json);
  const err = await rejection(store.get(caller, target(name), q()));
  t.equal(err.code, 404);
  t.equal(err.status.reason, 'NotFound');
  t.equal(err.status.message, `clusterroles.rbac.authorization.k8s.io "${name}" not found`);
  t.same(err.status.details, { name, group: 'rbac.authorization.k8s.io', kind: 'clusterroles' });

  const core = setup(t, 'serviceaccounts');
  core.m.pool.intercept({ path: `${D}/namespaces/ns1/serviceaccounts/robot`, method: 'GET' }).reply(404,
    wdsStatus(404, 'NotFound', 'serviceaccounts.denatured.kubestellar.io "robot" not found', { name: 'robot', group: 'denatured.kubestellar.io', kind: 'serviceaccounts' }), json);
  const coreErr = await rejection(core.store.get(caller, target('robot', 'ns1'), q()));
  t.equal(coreErr.status.message, 'serviceaccounts "robot" not found', 'the core group is not named');
  t.same(coreErr.status.details, { name: 'robot', kind: 'serviceaccounts' });
});

t.test('an error of the WDS without a Status body is a Status with its code; a WDS that does not answer is 503', async (t) => {
  const { m, store } = setup(t, 'serviceaccounts');
  m.pool.intercept({ path: `${D}/namespaces/ns1/serviceaccounts/robot`, method: 'GET' }).reply(500, 'etcdserver: request timed out\n');
  const err = await rejection(store.get(caller, target('robot', 'ns1'), q()));
  t.equal(err.code, 500);
  t.equal(err.status.reason, 'InternalError');
  t.equal(err.status.message, 'etcdserver: request timed out');

  // Nothing answers this one (the mock refuses unknown requests, as a closed port would).
  const down = await rejection(store.get(caller, target('other', 'ns1'), q()));
  t.equal(down.code, 503);
  t.match(down.status.message, /^the WDS did not answer: /);
});

t.test('list: native list and items; a field selector on a native name selects its stored name', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const odd = 'system:controller:foo';
  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/clusterroles`, method: 'GET' }).reply(200, {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRoleList', metadata: { resourceVersion: '42' },
    items: [storedClusterRole(odd), { ...storedClusterRole('plain'), metadata: { name: 'plain', resourceVersion: '6' } }],
  }, json);

  const r = await store.list(caller, target(''), q(`fieldSelector=${encodeURIComponent(`metadata.name=${odd}`)}&limit=10`));
  t.equal(r.value.apiVersion, 'rbac.authorization.k8s.io/v1');
  t.equal(r.value.kind, 'ClusterRoleList');
  t.same(r.value.metadata, { resourceVersion: '42' });
  t.same(r.value.items.map((i) => [i.apiVersion, i.metadata?.name, i.metadata?.annotations]),
    [['rbac.authorization.k8s.io/v1', odd, undefined], ['rbac.authorization.k8s.io/v1', 'plain', undefined]]);
  const sent = queryOf(m.calls()[0]!.path);
  t.equal(sent.get('fieldSelector'), `metadata.name=${enc(odd)}`, 'the WDS is asked for the stored name');
  t.equal(sent.get('limit'), '10', 'other parameters travel as they are');

  const bad = await rejection(store.list(caller, target(''), q('fieldSelector=metadata.name%3Da%5Cb')));
  t.equal(bad.code, 400, 'a field selector that does not parse is a bad request');
  t.equal(m.calls().length, 1, 'and is not sent');
});

t.test('list of a namespaced core kind: in the namespace, apiVersion v1', async (t) => {
  const { m, store } = setup(t, 'serviceaccounts');
  m.pool.intercept({ path: `${D}/namespaces/ns1/serviceaccounts`, method: 'GET' }).reply(200, {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccountList', metadata: { resourceVersion: '3' },
    items: [{ apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'ns1', generation: 1 } }],
  }, json);
  const r = await store.list(caller, target('', 'ns1'), q());
  t.same(r.value, { apiVersion: 'v1', kind: 'ServiceAccountList', metadata: { resourceVersion: '3' },
    items: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'ns1' } }] });
});

t.test('delete: a Success Status naming the native object, or the object while finalizers are pending', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:foo';
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'DELETE' }).reply(200, storedClusterRole(name), json);
  const gone = await store.delete(caller, target(name), { propagationPolicy: 'Foreground' }, q());
  t.same(gone.value, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
    details: { name, group: 'rbac.authorization.k8s.io', kind: 'clusterroles', uid: 'uid-1' } });
  t.same(m.calls()[0]!.body, { propagationPolicy: 'Foreground' }, 'delete options are sent');

  const pending = storedClusterRole('held');
  pending.metadata = { ...pending.metadata, name: 'held', uid: 'uid-held', resourceVersion: '6', deletionTimestamp: '2025-01-02T03:04:06Z', finalizers: ['example.com/hold'] } as typeof pending.metadata;
  delete (pending.metadata.annotations as Record<string, string>)[NATIVE_NAME];
  m.pool.intercept({ path: `${D}/clusterroles/held`, method: 'DELETE' }).reply(200, pending, json);
  const held = await store.delete(caller, target('held'), undefined, q());
  t.equal(held.value.kind, 'ClusterRole', 'still there: the object is returned');
  t.equal((held.value as KubeObject).apiVersion, 'rbac.authorization.k8s.io/v1');

  m.pool.intercept({ path: `${D}/clusterroles/st`, method: 'DELETE' }).reply(200,
    { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'st', group: 'denatured.kubestellar.io', kind: 'clusterroles' } }, json);
  const status = await store.delete(caller, target('st'), undefined, q());
  t.same(status.value, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'st', group: 'rbac.authorization.k8s.io', kind: 'clusterroles' } },
    'a Status of the WDS is reworded for the native kind');
});

t.test('deletecollection: the deleted items come back native', async (t) => {
  const { m, store } = setup(t, 'serviceaccounts');
  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/namespaces/ns1/serviceaccounts`, method: 'DELETE' }).reply(200, {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccountList', metadata: {},
    items: [{ apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'ns1' } }],
  }, json);
  const r = await store.deleteCollection(caller, target('', 'ns1'), undefined, q('labelSelector=app%3Dx'));
  t.same(r.value.items, [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'ns1' } }]);
  t.equal(queryOf(m.calls()[0]!.path).get('labelSelector'), 'app=x');
});

t.test('watch: native events until the WDS ends the stream; a refused watch throws its Status', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:foo';
  const lines = [
    { type: 'ADDED', object: storedClusterRole(name) },
    { type: 'BOOKMARK', object: { apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole', metadata: { resourceVersion: '9' } } },
  ].map((e) => JSON.stringify(e) + '\n').join('');
  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/clusterroles`, method: 'GET' }).reply(200, lines, json);

  const events: { type: string; object: KubeObject }[] = [];
  const { done } = await store.watch(caller, target(''), q('resourceVersion=5'), (e) => events.push(e as { type: string; object: KubeObject }), new AbortController().signal);
  await done;
  t.same(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata?.name]),
    [['ADDED', 'rbac.authorization.k8s.io/v1', name], ['BOOKMARK', 'rbac.authorization.k8s.io/v1', undefined]]);
  const sent = queryOf(m.calls()[0]!.path);
  t.equal(sent.get('watch'), 'true');
  t.equal(sent.get('resourceVersion'), '5');

  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/clusterroles`, method: 'GET' }).reply(403, wdsStatus(403, 'Forbidden',
    'clusterroles.denatured.kubestellar.io is forbidden: User "alice" cannot watch resource "clusterroles" in API group "denatured.kubestellar.io" at the cluster scope',
    { group: 'denatured.kubestellar.io', kind: 'clusterroles' }), json);
  const refused = await rejection(store.watch(caller, target(''), q(), () => {}, new AbortController().signal));
  t.equal(refused.code, 403);
  t.match(refused.status.message, /^clusterroles\.rbac\.authorization\.k8s\.io is forbidden: User "alice"/);
});

t.test('an object in the WDS whose native-name annotation does not match its name is an internal error, not a wrong answer', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  m.pool.intercept({ path: `${D}/clusterroles/${enc('a:b')}`, method: 'GET' }).reply(200,
    { ...storedClusterRole('a:b'), metadata: { name: enc('a:b'), annotations: { [NATIVE_NAME]: 'c:d' } } }, json);
  const err = await rejection(store.get(caller, target('a:b'), q()));
  t.equal(err.code, 500);
  t.match(err.status.message, /does not match the name/);
});

t.test('deletecollection answered without a list is an empty native list', async (t) => {
  const { m, store } = setup(t, 'serviceaccounts');
  m.pool.intercept({ path: `${D}/namespaces/ns1/serviceaccounts`, method: 'DELETE' }).reply(200,
    { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }, json);
  const r = await store.deleteCollection(caller, target('', 'ns1'), undefined, q());
  t.same(r.value, { apiVersion: 'v1', kind: 'ServiceAccountList', metadata: {}, items: [] });
});

// Writes: Kubernetes' registry (ksview-native, a fake here) computes the object; the store
// stores it with the live resourceVersion as precondition.
/** A stored ClusterRole whose name is stored as is. */
const plainStored = (name: string) => ({ ...storedClusterRole(name), metadata: { name, uid: 'uid-1', resourceVersion: '5', creationTimestamp: '2025-01-02T03:04:05Z' } });
const w = (method: 'POST' | 'PUT' | 'PATCH', body: unknown, contentType = 'application/json') =>
  ({ method, contentType, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), userAgent: 'kubectl/v1.32' });
const nativeRole = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, generation: 3,
    managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'rbac.authorization.k8s.io/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:rules': {} } }] },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], ...extra,
});

t.test('create: the registry sees the request as sent and no live object; its object is stored, native metadata in the annotation', async (t) => {
  const { m, store, native } = setup(t, 'clusterroles');
  const name = 'system:foo';
  native.answer = () => ({ status: 201, json: nativeRole(name), warnings: ['299 - "unknown field \\"x\\""'], write: 'create' });
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  const r = await store.write(caller, target(''), w('POST', '{"kind":"ClusterRole"}'), q('fieldValidation=Warn'));
  t.equal(native.writes.length, 1);
  t.match(native.writes[0], { method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldValidation=Warn', contentType: 'application/json', userAgent: 'kubectl/v1.32', live: undefined });
  t.equal(native.writes[0]!.body.toString(), '{"kind":"ClusterRole"}', 'the body is handed on untouched');
  const sent = m.calls()[0]!;
  t.equal(sent.path, `${D}/clusterroles`, 'no query reaches the WDS: the registry applied it');
  t.match(sent.headers, { 'impersonate-user': 'alice' }, 'stored as the caller');
  const stored = sent.body as Record<string, any>;
  t.equal(stored.apiVersion, 'denatured.kubestellar.io/v1');
  t.equal(stored.metadata.name, enc(name));
  t.notOk(stored.metadata.managedFields, 'the WDS keeps its own managedFields');
  t.same(JSON.parse(stored.metadata.annotations['view.kubestellar.io/native-metadata']), { managedFields: nativeRole(name).metadata.managedFields, generation: 3 });
  t.equal(r.code, 201);
  t.equal(r.value.metadata?.name, name);
  t.equal(r.value.metadata?.resourceVersion, '10', 'the WDS\'s resourceVersion');
  t.equal(r.value.metadata?.uid, 'uid-1', 'and uid');
  t.same(r.warnings, ['299 - "unknown field \\"x\\""'], 'the registry\'s warnings reach the client');
});

t.test('update (PUT): the live object goes to the registry in native form; the result is a PUT with the live resourceVersion', async (t) => {
  const { m, store, native } = setup(t, 'clusterroles');
  const name = 'system:foo';
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'GET' }).reply(200, { ...storedClusterRole(name), metadata: { ...storedClusterRole(name).metadata,
    annotations: { [NATIVE_NAME]: name, 'view.kubestellar.io/native-metadata': JSON.stringify({ managedFields: nativeRole(name).metadata.managedFields }) } } }, json);
  native.answer = () => ({ status: 200, json: { ...nativeRole(name), metadata: { ...nativeRole(name).metadata, resourceVersion: '5', labels: { a: 'b' } } }, warnings: [], write: 'update' });
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'PUT' }).reply(echo(200, { resourceVersion: '6' }));
  const r = await store.write(caller, target(name), w('PUT', nativeRole(name)), q());
  const live = native.writes[0]!.liveObject as Record<string, any>;
  t.equal(live.apiVersion, 'rbac.authorization.k8s.io/v1', 'the registry sees the native live object');
  t.equal(live.metadata.name, name);
  t.same(live.metadata.managedFields, nativeRole(name).metadata.managedFields, 'with its native managedFields');
  t.equal(native.writes[0]!.path, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${encodeURIComponent(name)}`);
  const put = m.calls().find((c) => c.method === 'PUT')!;
  t.equal((put.body as Record<string, any>).metadata.resourceVersion, '5', 'precondition: the live resourceVersion');
  t.equal(r.code, 200);
  t.equal(r.value.metadata?.resourceVersion, '6');
  t.same(r.value.metadata?.labels, { a: 'b' });
});

t.test('patch: the result is stored with a PUT and the live resourceVersion; a lost race is computed again', async (t) => {
  const { m, store, native } = setup(t, 'clusterroles');
  const name = 'viewer';
  const stored = plainStored(name);
  m.pool.intercept({ path: `${D}/clusterroles/${name}`, method: 'GET' }).reply(200, stored, json).times(2);
  native.answer = () => ({ status: 200, json: { ...nativeRole(name), metadata: { name, uid: 'uid-1', resourceVersion: '5', creationTimestamp: '2025-01-02T03:04:05Z', labels: { x: 'y' } }, rules: null }, warnings: [], write: 'update' });
  m.pool.intercept({ path: `${D}/clusterroles/${name}`, method: 'PUT' })
    .reply(409, wdsStatus(409, 'Conflict', 'Operation cannot be fulfilled on clusterroles.denatured.kubestellar.io "viewer": the object has been modified'), json);
  m.pool.intercept({ path: `${D}/clusterroles/${name}`, method: 'PUT' }).reply(200, { ...stored, metadata: { ...stored.metadata, resourceVersion: '7' } }, json);
  const r = await store.write(caller, target(name), w('PATCH', '{"metadata":{"labels":{"x":"y"}}}', 'application/merge-patch+json'), q());
  t.equal(native.writes.length, 2, 'the registry ran again on the new live object');
  t.equal(native.writes[1]!.contentType, 'application/merge-patch+json', 'with the patch as sent');
  const puts = m.calls().filter((c) => c.method === 'PUT');
  t.equal(puts.length, 2);
  const body = puts[1]!.body as Record<string, any>;
  t.equal(body.metadata.resourceVersion, '5', 'precondition');
  t.same(body.metadata.labels, { x: 'y' }, 'the change');
  t.notOk('rules' in body, 'a null field is not sent (the CRD has no nulls)');
  t.equal(r.value.metadata?.resourceVersion, '7');
  t.equal(r.value.rules, null, 'the client sees it as natively');
});

t.test('a Status of the registry is the answer and nothing is stored; a write that changes nothing or a dry run stores nothing', async (t) => {
  const { m, store, native } = setup(t, 'clusterroles');
  const invalid = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422, message: 'ClusterRole.rbac.authorization.k8s.io "x" is invalid: rules[0].verbs: Required value',
    details: { name: 'x', group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'rules[0].verbs' }] } };
  native.answer = () => ({ status: 422, json: invalid, warnings: [], write: 'none' });
  const err = await rejection(store.write(caller, target(''), w('POST', {}), q()));
  t.same(err.status, invalid, 'the native Status as is');
  native.answer = () => ({ status: 201, json: nativeRole('x'), warnings: [], write: 'create' });
  const dry = await store.write(caller, target(''), w('POST', {}), q('dryRun=All'));
  t.equal(dry.code, 201);
  m.pool.intercept({ path: `${D}/clusterroles/x`, method: 'GET' }).reply(200, plainStored('x'), json);
  native.answer = () => ({ status: 200, json: nativeRole('x'), warnings: [], write: 'none' });
  const same = await store.write(caller, target('x'), w('PATCH', '{}', 'application/merge-patch+json'), q());
  t.equal(same.code, 200);
  t.same(m.calls().map((c) => c.method), ['GET'], 'only the live object was read');
});

t.test('a write whose races never end answers the last conflict', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  m.pool.intercept({ path: `${D}/clusterroles/x`, method: 'GET' }).reply(200, plainStored('x'), json).persist();
  m.pool.intercept({ path: `${D}/clusterroles/x`, method: 'PUT' }).reply(409, wdsStatus(409, 'Conflict', 'the object has been modified'), json).persist();
  const err = await rejection(store.write(caller, target('x'), w('PUT', nativeRole('x')), q()));
  t.equal(err.code, 409);
  t.equal(m.calls().filter((c) => c.method === 'PUT').length, 5);
});

t.test('an object read again unchanged (same uid and resourceVersion) is shown without ksview-native; a write\'s answer is what a read shows', async (t) => {
  const { m, store, native } = setup(t, 'clusterroles');
  m.pool.intercept({ path: `${D}/clusterroles/x`, method: 'GET' }).reply(200, plainStored('x'), json).times(2);
  const first = await store.get(caller, target('x'), q());
  const second = await store.get(caller, target('x'), q());
  t.same(second.value, first.value);
  t.equal(native.normalized.length, 1, 'normalized once');
  second.value.metadata!.name = 'changed';
  m.pool.intercept({ path: `${D}/clusterroles/x`, method: 'GET' }).reply(200, plainStored('x'), json);
  t.equal((await store.get(caller, target('x'), q())).value.metadata?.name, 'x', 'what a caller does to its copy does not reach the cache');
  native.answer = () => ({ status: 201, json: { kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', metadata: { name: 'y', uid: 'helper-uid', creationTimestamp: 'helper-time', managedFields: [] }, rules: null }, warnings: [], write: 'create' });
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  const created = await store.write(caller, target(''), w('POST', '{}'), q());
  t.same(Object.keys(created.value.metadata!), ['name', 'uid', 'resourceVersion', 'creationTimestamp', 'managedFields'], 'metadata in the order kube-apiserver writes it');
  t.match(created.value.metadata, { uid: 'uid-1', resourceVersion: '10', creationTimestamp: '2025-01-02T03:04:05Z' }, 'what the WDS assigned');
  m.pool.intercept({ path: `${D}/clusterroles/y`, method: 'GET' }).reply(200, { ...plainStored('y'), metadata: { ...plainStored('y').metadata, resourceVersion: '10' } }, json);
  t.same((await store.get(caller, target('y'), q())).value, created.value, 'a read right after shows the write\'s answer');
  t.equal(native.normalized.length, 1, 'without ksview-native');
});

// One stored object the view cannot show (written around it, before its admission webhook) must
// never fail reads of the others (docs/security.md D10).
const NATIVE_METADATA = 'view.kubestellar.io/native-metadata';
const storedRole = (name: string, namespace: string, annotations: Record<string, string> = {}, uid = `uid-${name}`) => ({
  apiVersion: 'denatured.kubestellar.io/v1', kind: 'Role',
  metadata: { name, namespace, uid, resourceVersion: '5', creationTimestamp: '2025-01-02T03:04:05Z', ...(Object.keys(annotations).length ? { annotations } : {}) },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
});
const roleList = (items: unknown[]) => ({ apiVersion: 'denatured.kubestellar.io/v1', kind: 'RoleList', metadata: { resourceVersion: '42' }, items });
/** A time Kubernetes' decoder refuses, in native metadata otherwise well-formed. */
const UNDECODABLE = JSON.stringify({ managedFields: [{ manager: 'x', operation: 'Update', time: 'yesterday' }] });

function roleStore(t: Test, logs: string[] = []) {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const native = new FakeNativeCode();
  native.undecodable = (o) => (JSON.stringify(o).includes('yesterday') ? 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"' : undefined);
  const store = new DenaturedStore({ up: m.up, strategy: kindStrategy(denaturedKind('roles')), native, log: (l) => logs.push(l) });
  return { m, native, store };
}

t.test('list: an object whose stored form cannot be read is left out and named in a Warning, the others are answered; each is logged once', async (t) => {
  const logs: string[] = [];
  const { m, store } = roleStore(t, logs);
  const items = [storedRole('good', 'ns1'), storedRole('bad', 'ns1', { [NATIVE_METADATA]: 'not-json' }), storedRole('odd', 'ns2', { [NATIVE_METADATA]: UNDECODABLE }), storedRole('also-good', 'ns2')];
  m.pool.intercept({ path: `${D}/roles`, method: 'GET' }).reply(200, roleList(items), json).times(2);
  const r = await store.list(caller, target(''), q());
  t.same(r.value.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`), ['ns1/good', 'ns2/also-good'], 'the readable objects, in order');
  t.equal(r.value.kind, 'RoleList');
  t.same(r.warnings, [
    '299 - "roles.rbac.authorization.k8s.io \\"bad\\" in namespace \\"ns1\\" cannot be read: annotation view.kubestellar.io/native-metadata is not JSON (stored in the WDS as roles.denatured.kubestellar.io \\"bad\\", written there around the view)"',
    `299 - ${JSON.stringify('roles.rbac.authorization.k8s.io "odd" in namespace "ns2" cannot be read: Kubernetes cannot decode it: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006" (stored in the WDS as roles.denatured.kubestellar.io "odd", written there around the view)'.slice(0, 256))}`,
  ], 'each named in a Warning header, as kube-apiserver writes them (cut at 256 characters)');
  t.equal(logs.length, 2, 'both logged');
  t.match(logs[0], /^denatured: roles.rbac.authorization.k8s.io "bad" in namespace "ns1" cannot be read: annotation view.kubestellar.io\/native-metadata is not JSON/);
  await store.list(caller, target(''), q());
  t.equal(logs.length, 2, 'a second list logs them no more');
});

t.test('list: past ten unreadable objects, the rest are counted in one Warning', async (t) => {
  const { m, store } = roleStore(t);
  const bad = Array.from({ length: 13 }, (_, i) => storedRole(`bad-${i}`, 'ns1', { [NATIVE_METADATA]: 'null' }));
  m.pool.intercept({ path: `${D}/namespaces/ns1/roles`, method: 'GET' }).reply(200, roleList([...bad, storedRole('good', 'ns1')]), json);
  const r = await store.list(caller, target('', 'ns1'), q());
  t.same(r.value.items.map((i) => i.metadata?.name), ['good']);
  t.equal(r.warnings.length, 11);
  t.equal(r.warnings[10], '299 - "3 more roles cannot be read and are left out (ksview serve\'s log names each)"');
});

t.test('get of an object that cannot be read: a 500 naming it and why; a name annotation that does not match names the stored object', async (t) => {
  const { m, store } = roleStore(t);
  m.pool.intercept({ path: `${D}/namespaces/ns1/roles/bad`, method: 'GET' }).reply(200, storedRole('bad', 'ns1', { [NATIVE_METADATA]: '{"generation":"42"}' }), json);
  const err = await rejection(store.get(caller, target('bad', 'ns1'), q()));
  t.equal(err.code, 500);
  t.equal(err.status.reason, 'InternalError');
  t.equal(err.status.message, 'Internal error occurred: roles.rbac.authorization.k8s.io "bad" in namespace "ns1" cannot be read: annotation view.kubestellar.io/native-metadata ' +
    'has a generation that is not a non-negative integer (stored in the WDS as roles.denatured.kubestellar.io "bad", written there around the view)');
  m.pool.intercept({ path: `${D}/namespaces/ns1/roles/${enc('a:b')}`, method: 'GET' }).reply(200, storedRole(enc('a:b'), 'ns1', { [NATIVE_NAME]: 'c:d' }), json);
  const mismatch = await rejection(store.get(caller, target('a:b', 'ns1'), q()));
  t.match(mismatch.status.message, `roles.rbac.authorization.k8s.io "${enc('a:b')}" in namespace "ns1" cannot be read: annotation view.kubestellar.io/native-name="c:d" does not match the name`);
});

t.test('watch: an unreadable object\'s events are skipped (its deletion is sent by identity), and the stream goes on', async (t) => {
  const logs: string[] = [];
  const { m, store } = roleStore(t, logs);
  const bad = storedRole('bad', 'ns1', { [NATIVE_METADATA]: 'not-json' });
  const lines = [
    { type: 'ADDED', object: bad },
    { type: 'ADDED', object: storedRole('good', 'ns1') },
    { type: 'MODIFIED', object: { ...bad, metadata: { ...bad.metadata, resourceVersion: '6' } } },
    { type: 'DELETED', object: { ...bad, metadata: { ...bad.metadata, resourceVersion: '7' } } },
    { type: 'ADDED', object: storedRole('later', 'ns1') },
  ].map((e) => JSON.stringify(e) + '\n').join('');
  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/roles`, method: 'GET' }).reply(200, lines, json);
  const events: { type: string; object: KubeObject }[] = [];
  const { done } = await store.watch(caller, target(''), q(), (e) => events.push(e as { type: string; object: KubeObject }), new AbortController().signal);
  await done;
  t.same(events.map((e) => [e.type, e.object.metadata?.name]), [['ADDED', 'good'], ['DELETED', 'bad'], ['ADDED', 'later']]);
  t.same(events[1]!.object, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
    metadata: { name: 'bad', namespace: 'ns1', uid: 'uid-bad', resourceVersion: '7', creationTimestamp: '2025-01-02T03:04:05Z' } }, 'the deletion carries its identity only');
  t.equal(logs.length, 3, 'each version of it logged once');
});

t.test('delete of an unreadable object: it goes, and the answer names it', async (t) => {
  const { m, store } = roleStore(t);
  m.pool.intercept({ path: `${D}/namespaces/ns1/roles/bad`, method: 'DELETE' }).reply(200, storedRole('bad', 'ns1', { [NATIVE_METADATA]: 'not-json' }), json);
  const r = await store.delete(caller, target('bad', 'ns1'), undefined, q());
  t.same(r.value, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'bad', group: 'rbac.authorization.k8s.io', kind: 'roles', uid: 'uid-bad' } });
  t.match(r.warnings[0], /cannot be read: annotation view.kubestellar.io\/native-metadata is not JSON/);
});

t.test('the view\'s own writes carry its user extra (so the WDS\'s webhook for direct writes skips them); its reads do not', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'viewer';
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  await store.write(caller, target(''), w('POST', nativeRole(name)), q());
  m.pool.intercept({ path: `${D}/clusterroles/${name}`, method: 'GET' }).reply(200, plainStored(name), json);
  m.pool.intercept({ path: `${D}/clusterroles/${name}`, method: 'PUT' }).reply(echo(200));
  await store.write(caller, target(name), w('PUT', nativeRole(name)), q());
  const calls = m.calls();
  // Header names arrive in lower case; kube-apiserver unescapes the key either way.
  t.strictSame(calls.map((c) => [c.method, c.headers['impersonate-extra-view.kubestellar.io%2fadmitted-by']]),
    [['POST', 'ksview-serve'], ['GET', undefined], ['PUT', 'ksview-serve']]);
  t.equal(calls[0]!.headers['impersonate-user'], 'alice', 'still as the caller');
});

t.test('validateStored: a direct create is judged by Kubernetes\' registry as a native create, without server-set metadata', async (t) => {
  const { store, native } = roleStore(t);
  native.answer = () => ({ status: 422, json: wdsStatus(422, 'Invalid', 'Role.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value'), warnings: [], write: 'none' });
  const object = { ...storedRole('r', 'ns1'), metadata: { ...storedRole('r', 'ns1').metadata, generation: 1, managedFields: [{ manager: 'kubectl' }], labels: { a: 'b' } } };
  const refused = await store.validateStored({ operation: 'CREATE', subresource: '', version: 'v1', object });
  t.match(refused, { code: 422, reason: 'Invalid', message: /verbs must contain at least one value/ }, 'its Status');
  const sent = native.writes[0]!;
  t.equal(sent.method, 'POST');
  t.equal(sent.path, '/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles?fieldManager=kubestellar-view-admission');
  t.equal(sent.live, undefined);
  t.same(sent.bodyObject, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', namespace: 'ns1', labels: { a: 'b' } }, rules: object.rules },
    'the native object, as a client would send it');
  native.answer = (x) => ({ status: 201, json: JSON.parse(x.body.toString()), warnings: [], write: 'create' });
  t.equal(await store.validateStored({ operation: 'CREATE', subresource: '', version: 'v1', object }), undefined, 'valid: no Status');
});

t.test('validateStored: a direct update (or status update) is the native update from the old object; an unreadable old one is no base', async (t) => {
  const { store, native } = setup(t, 'resourcequotas');
  const quota = (rv: string, hard: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'denatured.kubestellar.io/v1', kind: 'ResourceQuota',
    metadata: { name: 'q', namespace: 'ns1', uid: 'u', resourceVersion: rv, generation: 2 }, spec: { hard: { pods: hard } }, ...extra });
  native.answer = () => ({ status: 200, json: {}, warnings: [], write: 'update' });
  t.equal(await store.validateStored({ operation: 'UPDATE', subresource: '', version: 'v1', object: quota('', '4'), oldObject: quota('9', '3') }), undefined);
  t.match(native.writes[0], { method: 'PUT', path: '/api/v1/namespaces/ns1/resourcequotas/q?fieldManager=kubestellar-view-admission' });
  t.match(native.writes[0]!.bodyObject, { metadata: { name: 'q', uid: 'u', resourceVersion: '9' }, spec: { hard: { pods: '4' } } }, 'with the live resourceVersion as precondition');
  t.notOk((native.writes[0]!.bodyObject as KubeObject).metadata?.generation, 'generation is computed, not taken');
  t.match(native.writes[0]!.liveObject, { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '3' } } }, 'the old object, native');
  await store.validateStored({ operation: 'UPDATE', subresource: 'status', version: 'v1', object: quota('', '3', { status: { used: { pods: '1' } } }), oldObject: quota('9', '3') });
  t.equal(native.writes[1]!.path, '/api/v1/namespaces/ns1/resourcequotas/q/status?fieldManager=kubestellar-view-admission', 'the status subresource\'s rules');
  const oldBroken = { ...quota('9', '3'), metadata: { ...quota('9', '3').metadata, annotations: { [NATIVE_METADATA]: 'not-json' } } };
  await store.validateStored({ operation: 'UPDATE', subresource: '', version: 'v1', object: quota('', '4'), oldObject: oldBroken });
  t.match(native.writes[2], { method: 'POST', path: '/api/v1/namespaces/ns1/resourcequotas?fieldManager=kubestellar-view-admission', live: undefined }, 'judged as new');
  native.answer = () => ({ status: 503, json: wdsStatus(503, 'ServiceUnavailable', 'starting'), warnings: [], write: 'none' });
  const failed = await rejection(store.validateStored({ operation: 'CREATE', subresource: '', version: 'v1', object: quota('', '1') }));
  t.equal(failed.code, 503, 'no verdict: thrown, not a refusal');
});

t.test('invalidity: what placement asks of a stored object, remembered per uid and resourceVersion', async (t) => {
  const { store, native } = roleStore(t);
  native.answer = (x) => (JSON.parse(x.body.toString()).rules.length === 0
    ? { status: 422, json: wdsStatus(422, 'Invalid', 'Role.rbac.authorization.k8s.io "r" is invalid: rules: Required value'), warnings: [], write: 'none' }
    : { status: 201, json: {}, warnings: [], write: 'create' });
  const empty = { ...storedRole('r', 'ns1'), rules: [] };
  t.equal(await store.invalidity(empty as KubeObject, 'v1'), 'Role.rbac.authorization.k8s.io "r" is invalid: rules: Required value');
  t.equal(await store.invalidity(empty as KubeObject, 'v1'), 'Role.rbac.authorization.k8s.io "r" is invalid: rules: Required value');
  t.equal(native.writes.length, 1, 'asked once');
  t.equal(await store.invalidity(storedRole('ok', 'ns1') as KubeObject, 'v1'), undefined, 'valid');
  t.match(await store.invalidity(storedRole('bad', 'ns1', { [NATIVE_METADATA]: 'not-json' }, 'u2') as KubeObject, 'v1'), /annotation view.kubestellar.io\/native-metadata is not JSON/,
    'unreadable: invalid, without asking Kubernetes');
  t.equal(native.writes.length, 2);
});

t.test('RBAC escalation: the registry is told who writes (the caller\'s user); a direct write\'s writer too; a stored object is only validated, as system:masters', async (t) => {
  const { m, store, native } = setup(t, 'rolebindings');
  const alice = { username: 'alice', uid: 'a-1', groups: ['team-a', 'system:authenticated'], extra: { 'k': ['v'] } };
  native.answer = () => ({ status: 403, json: wdsStatus(403, 'Forbidden', 'rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}'), warnings: [], write: 'none' });
  const err = await rejection(store.write({ ...caller, user: alice }, target('', 'ns1'), w('POST', '{}'), q()));
  t.same(native.writes[0]!.user, alice, 'the user of the request');
  t.match(err.status, { code: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held/ }, 'Kubernetes\' Forbidden is the answer, as it gave it');
  t.equal(m.calls().length, 0, 'nothing reaches the WDS');
  const binding = { apiVersion: 'denatured.kubestellar.io/v1', kind: 'RoleBinding', metadata: { name: 'b', namespace: 'ns1', uid: 'u', resourceVersion: '1' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [] };
  t.match(await store.validateStored({ operation: 'CREATE', subresource: '', version: 'v1', object: binding, user: alice }), { code: 403 }, 'a direct write: refused as well');
  t.same(native.writes[1]!.user, alice, 'for its writer');
  native.answer = (x) => ({ status: 201, json: JSON.parse(x.body.toString()), warnings: [], write: 'create' });
  t.equal(await store.invalidity(binding, 'v1'), undefined, 'placement\'s check of a stored object');
  t.same(native.writes[2]!.user, VALIDATION_USER, 'is validation only: it was checked when written');
  t.same(VALIDATION_USER.groups, ['system:masters']);
});
