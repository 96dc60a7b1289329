// Unit tests of the denatured store (src/storage/denatured-store.ts) without spaces: the WDS's
// denatured.kubestellar.io CRD endpoints are played by the mock upstream, and each test checks
// what a client of the view gets (native apiVersion, names, Status wording) and what reached the
// WDS (the stored form, nothing at all for an invalid object).
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { DenaturedStore, kindStrategy, type Caller, type Target } from '../../src/storage/denatured-store.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { StatusError } from '../../src/kube/status.js';
import { denaturedKind, type FixtureResource } from '../fixtures/denatured-kinds.js';
import { mockUpstream, requestBody, type MockUpstream } from '../fixtures/mock-upstream.js';

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

function setup(t: Test, resource: FixtureResource): { m: MockUpstream; store: DenaturedStore } {
  const m = mockUpstream();
  t.teardown(() => m.close());
  return { m, store: new DenaturedStore(m.up, kindStrategy(denaturedKind(resource))) };
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

t.test('create: the stored form is sent, the native form comes back', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:new';
  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }];
  const r = await store.create(caller, target(''), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, creationTimestamp: null }, rules }, q());

  t.equal(r.created, true);
  t.same(r.value, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
    metadata: { name, uid: 'uid-1', resourceVersion: '10', creationTimestamp: '2025-01-02T03:04:05Z' }, rules });
  const [call] = m.calls();
  t.same(call!.body, { apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
    metadata: { name: enc(name), annotations: { [NATIVE_NAME]: name } }, rules }, 'the WDS stores the denatured form (null fields dropped)');
  t.equal(call!.headers['content-type'], 'application/json');
});

t.test('create: an object that fails the native schema is 422 Invalid with causes, and nothing is sent', async (t) => {
  const { m, store } = setup(t, 'rolebindings');
  const err = await rejection(store.create(caller, target('', 'ns1'),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb' }, subjects: [{ kind: 'User', name: 'bob' }] }, q()));
  t.equal(err.code, 422);
  t.equal(err.status.reason, 'Invalid');
  t.equal(err.status.message, 'RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef: Required value');
  t.same(err.status.details, { name: 'rb', group: 'rbac.authorization.k8s.io', kind: 'RoleBinding',
    causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'roleRef' }] });
  t.same(m.calls(), [], 'the WDS never saw it');
});

t.test('create: apiVersion, kind and namespace of the body are checked against the request', async (t) => {
  const { m, store } = setup(t, 'serviceaccounts');
  const wrongVersion = await rejection(store.create(caller, target('', 'ns1'), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ServiceAccount', metadata: { name: 'a' } }, q()));
  t.equal(wrongVersion.code, 400);
  t.equal(wrongVersion.status.message, 'the API version in the data (rbac.authorization.k8s.io/v1) does not match the expected API version (v1)');
  const wrongNs = await rejection(store.create(caller, target('', 'ns1'), { metadata: { name: 'a', namespace: 'ns2' } }, q()));
  t.equal(wrongNs.status.message, 'the namespace of the provided object does not match the namespace sent on the request');
  const notObject = await rejection(store.create(caller, target('', 'ns1'), ['a'], q()));
  t.equal(notObject.code, 400);
  t.same(m.calls(), []);

  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/namespaces/ns1/serviceaccounts`, method: 'POST' }).reply(echo(201));
  const r = await store.create(caller, target('', 'ns1'), { metadata: { name: 'robot' } }, q('dryRun=All'));
  t.same(r.value.metadata?.namespace, 'ns1', 'the namespace of the URL is filled in');
  t.equal(r.value.apiVersion, 'v1');
  t.equal(queryOf(m.calls()[0]!.path).get('dryRun'), 'All', 'a dry run is the WDS\'s dry run');
});

t.test('update: a missing object is NotFound, or created for kinds that create on update', async (t) => {
  const sa = setup(t, 'serviceaccounts');
  sa.m.pool.intercept({ path: `${D}/namespaces/ns1/serviceaccounts/robot`, method: 'GET' }).reply(404,
    wdsStatus(404, 'NotFound', 'serviceaccounts.denatured.kubestellar.io "robot" not found', { name: 'robot', group: 'denatured.kubestellar.io', kind: 'serviceaccounts' }), json);
  const err = await rejection(sa.store.update(caller, target('robot', 'ns1'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } }, q()));
  t.equal(err.code, 404);
  t.equal(err.status.message, 'serviceaccounts "robot" not found');
  t.same(sa.m.calls().map((c) => c.method), ['GET'], 'nothing written');

  const cr = setup(t, 'clusterroles');
  cr.m.pool.intercept({ path: `${D}/clusterroles/reader`, method: 'GET' }).reply(404,
    wdsStatus(404, 'NotFound', 'clusterroles.denatured.kubestellar.io "reader" not found', { name: 'reader', group: 'denatured.kubestellar.io', kind: 'clusterroles' }), json);
  cr.m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  const r = await cr.store.update(caller, target('reader'), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' } }, q());
  t.equal(r.created, true, 'PUT of a missing ClusterRole creates it, as natively');
  t.same(cr.m.calls().map((c) => `${c.method} ${c.path}`), [`GET ${D}/clusterroles/reader`, `POST ${D}/clusterroles`]);
});

t.test('update: managedFields read and sent back unchanged keep the WDS\'s own bookkeeping', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:foo';
  const storedManaged = [{
    manager: 'kubectl', operation: 'Update', apiVersion: 'denatured.kubestellar.io/v1', time: '2025-01-02T03:04:05Z', fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, [`f:${NATIVE_NAME}`]: {} } }, 'f:rules': {} },
  }];
  const live = { ...storedClusterRole(name), metadata: { ...storedClusterRole(name).metadata, managedFields: storedManaged } };
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'GET' }).reply(200, live, json).times(2);
  m.pool.intercept({ path: `${D}/clusterroles/${enc(name)}`, method: 'PUT' }).reply(echo(200, { resourceVersion: '11' }));

  const read = (await store.get(caller, target(name), q())).value;
  t.same(read.metadata?.managedFields, [{ manager: 'kubectl', operation: 'Update', apiVersion: 'rbac.authorization.k8s.io/v1', time: '2025-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:rules': {} } }],
    'the client sees native managedFields, without the view\'s annotation');
  const changed = { ...read, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] };
  const r = await store.update(caller, target(name), changed, q());
  t.equal(r.created, false);
  t.same(r.value.rules, changed.rules);
  const put = m.calls().find((c) => c.method === 'PUT')!;
  t.same((put.body as KubeObject).metadata?.managedFields, storedManaged, 'the WDS gets its own managedFields back');
  t.equal((put.body as KubeObject).metadata?.name, enc(name));
});

t.test('update of the status subresource goes to the stored status', async (t) => {
  const { m, store } = setup(t, 'resourcequotas');
  const quota = { apiVersion: 'denatured.kubestellar.io/v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns1', resourceVersion: '2' }, spec: { hard: { pods: '5' } } };
  m.pool.intercept({ path: `${D}/namespaces/ns1/resourcequotas/q`, method: 'GET' }).reply(200, quota, json);
  m.pool.intercept({ path: `${D}/namespaces/ns1/resourcequotas/q/status`, method: 'PUT' }).reply(echo(200));
  const r = await store.update(caller, target('q', 'ns1', 'status'),
    { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', resourceVersion: '2' }, spec: { hard: { pods: '5' } }, status: { hard: { pods: '5' } } }, q());
  t.same(r.value.status, { hard: { pods: '5' } });
  t.same(m.calls().map((c) => `${c.method} ${c.path}`), [`GET ${D}/namespaces/ns1/resourcequotas/q`, `PUT ${D}/namespaces/ns1/resourcequotas/q/status`]);
});

t.test('merge patch: applied to the native form, written with the live resourceVersion, retried on conflict', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:foo';
  const path = `${D}/clusterroles/${enc(name)}`;
  m.pool.intercept({ path, method: 'GET' }).reply(200, storedClusterRole(name), json);
  m.pool.intercept({ path, method: 'PUT' }).reply(409, wdsStatus(409, 'Conflict',
    `Operation cannot be fulfilled on clusterroles.denatured.kubestellar.io "${enc(name)}": the object has been modified; please apply your changes to the latest version and try again`,
    { name: enc(name), group: 'denatured.kubestellar.io', kind: 'clusterroles' }), json);
  m.pool.intercept({ path, method: 'GET' }).reply(200, { ...storedClusterRole(name), metadata: { ...storedClusterRole(name).metadata, resourceVersion: '6' } }, json);
  m.pool.intercept({ path, method: 'PUT' }).reply(echo(200, { resourceVersion: '7' }));

  const r = await store.patch(caller, target(name), 'merge', { metadata: { labels: { tier: 'b' } } }, q());
  t.same(r.value.metadata?.labels, { tier: 'b' });
  t.equal(r.value.metadata?.name, name);
  t.equal(r.created, false);
  const calls = m.calls();
  t.same(calls.map((c) => c.method), ['GET', 'PUT', 'GET', 'PUT'], 'a conflict is retried on the new live object');
  t.equal((calls[1]!.body as KubeObject).metadata?.resourceVersion, '5');
  t.equal((calls[3]!.body as KubeObject).metadata?.resourceVersion, '6', 'each write names the live resourceVersion');
  t.same((calls[3]!.body as KubeObject).metadata?.labels, { tier: 'b' });
});

t.test('merge patch: a patch naming a resourceVersion is not retried; a patch to nothing is NotFound; an invalid result is 422', async (t) => {
  const { m, store } = setup(t, 'rolebindings');
  const path = `${D}/namespaces/ns1/rolebindings/rb`;
  const rb = { apiVersion: 'denatured.kubestellar.io/v1', kind: 'RoleBinding', metadata: { name: 'rb', namespace: 'ns1', resourceVersion: '5' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } };
  m.pool.intercept({ path, method: 'GET' }).reply(200, rb, json).times(2);
  m.pool.intercept({ path, method: 'PUT' }).reply(409, wdsStatus(409, 'Conflict', 'Operation cannot be fulfilled on rolebindings.denatured.kubestellar.io "rb": the object has been modified',
    { name: 'rb', group: 'denatured.kubestellar.io', kind: 'rolebindings' }), json);

  const pinned = await rejection(store.patch(caller, target('rb', 'ns1'), 'merge', { metadata: { resourceVersion: '4', labels: { a: 'b' } } }, q()));
  t.equal(pinned.code, 409);
  t.equal(pinned.status.message, 'Operation cannot be fulfilled on rolebindings.rbac.authorization.k8s.io "rb": the object has been modified');
  t.same(m.calls().map((c) => c.method), ['GET', 'PUT'], 'the client asked for that version: no retry');

  const invalid = await rejection(store.patch(caller, target('rb', 'ns1'), 'merge', { roleRef: null }, q()));
  t.equal(invalid.code, 422);
  t.match(invalid.status.details?.causes, [{ field: 'roleRef' }]);
  t.same(m.calls().map((c) => c.method), ['GET', 'PUT', 'GET'], 'an invalid result is not written');

  m.pool.intercept({ path: `${D}/namespaces/ns1/rolebindings/none`, method: 'GET' }).reply(404,
    wdsStatus(404, 'NotFound', 'rolebindings.denatured.kubestellar.io "none" not found', { name: 'none', group: 'denatured.kubestellar.io', kind: 'rolebindings' }), json);
  const missing = await rejection(store.patch(caller, target('none', 'ns1'), 'merge', { metadata: { labels: { a: 'b' } } }, q()));
  t.equal(missing.status.message, 'rolebindings.rbac.authorization.k8s.io "none" not found');
});

t.test('server-side apply: a dry run on the stored form, validated natively, then the real apply; dryRun=All stops after the first', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const name = 'system:controller:applied';
  const path = `${D}/clusterroles/${enc(name)}`;
  m.pool.intercept({ path: (p) => pathOnly(p) === path, method: 'PATCH' }).reply(echo(200)).persist();
  const config = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };

  const dry = await store.patch(caller, target(name), 'apply', config, q('fieldManager=kubectl&dryRun=All'));
  t.equal(dry.value.metadata?.name, name);
  t.equal(dry.value.apiVersion, 'rbac.authorization.k8s.io/v1');
  let calls = m.calls();
  t.equal(calls.length, 1, 'a dry run sends one request');
  t.equal(queryOf(calls[0]!.path).get('dryRun'), 'All');
  t.equal(queryOf(calls[0]!.path).get('fieldManager'), 'kubectl');
  t.equal(calls[0]!.headers['content-type'], 'application/apply-patch+yaml');
  t.same(calls[0]!.body, { ...config, apiVersion: 'denatured.kubestellar.io/v1', metadata: { name: enc(name), annotations: { [NATIVE_NAME]: name } } });

  await store.patch(caller, target(name), 'apply', config, q('fieldManager=kubectl'));
  calls = m.calls().slice(1);
  t.same(calls.map((c) => queryOf(c.path).get('dryRun')), ['All', null], 'the trial, then the real apply');

  const noKind = await rejection(store.patch(caller, target(name), 'apply', { apiVersion: 'rbac.authorization.k8s.io/v1', metadata: { name } }, q()));
  t.equal(noKind.code, 400);
  t.equal(noKind.status.message, 'invalid object type: kind must be set in the applied configuration');
});

t.test('server-side apply: a result that fails the native schema is 422 and only the dry run reached the WDS', async (t) => {
  const { m, store } = setup(t, 'rolebindings');
  m.pool.intercept({ path: (p) => pathOnly(p) === `${D}/namespaces/ns1/rolebindings/rb`, method: 'PATCH' }).reply(echo(200)).persist();
  const err = await rejection(store.patch(caller, target('rb', 'ns1'), 'apply', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb' } }, q('fieldManager=me')));
  t.equal(err.code, 422);
  t.same(err.status.details?.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'roleRef' }]);
  t.same(m.calls().map((c) => queryOf(c.path).get('dryRun')), ['All']);
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
  pending.metadata = { ...pending.metadata, name: 'held', deletionTimestamp: '2025-01-02T03:04:06Z', finalizers: ['example.com/hold'] } as typeof pending.metadata;
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

t.test('create and update: the view\'s own annotation is refused, names and kinds must match the request', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  const reserved = await rejection(store.create(caller, target(''),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r', annotations: { [NATIVE_NAME]: 'x' } } }, q()));
  t.equal(reserved.code, 422);
  t.same(reserved.status.details?.causes, [{ reason: 'FieldValueInvalid', field: 'metadata.annotations', message: `Invalid value: annotation ${NATIVE_NAME} is reserved` }]);
  const kind = await rejection(store.create(caller, target(''), { kind: 'Role', metadata: { name: 'r' } }, q()));
  t.equal(kind.status.message, 'the kind in the data (Role) does not match the expected kind (ClusterRole)');
  const name = await rejection(store.update(caller, target('r'), { metadata: { name: 'other' } }, q()));
  t.equal(name.status.message, 'the name of the object (other) does not match the name on the URL (r)');
  t.same(m.calls(), [], 'none of them reached the WDS');

  m.pool.intercept({ path: `${D}/clusterroles`, method: 'POST' }).reply(echo(201));
  await store.create(caller, target(''), { metadata: { name: 'r', namespace: 'ns1' } }, q());
  t.notOk((m.calls()[0]!.body as KubeObject).metadata && 'namespace' in (m.calls()[0]!.body as KubeObject).metadata!,
    'a namespace on a cluster-scoped object is cleared, as kube-apiserver does');
});

t.test('patch: a malformed patch is 400, a JSON patch that does not apply is 422 on field patch', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  m.pool.intercept({ path: `${D}/clusterroles/r`, method: 'GET' }).reply(200, { ...storedClusterRole('r'), metadata: { name: 'r', resourceVersion: '5' } }, json).persist();
  const malformed = await rejection(store.patch(caller, target('r'), 'json', { op: 'add' }, q()));
  t.equal(malformed.code, 400);
  const failedTest = await rejection(store.patch(caller, target('r'), 'json', [{ op: 'test', path: '/rules/0/verbs/0', value: 'list' }], q()));
  t.equal(failedTest.code, 422);
  t.equal(failedTest.status.details?.causes?.[0]?.field, 'patch');
  t.same(m.calls().map((c) => c.method), ['GET', 'GET'], 'nothing written');
});

t.test('patch: after five conflicts in a row the last conflict is the answer', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  m.pool.intercept({ path: `${D}/clusterroles/r`, method: 'GET' }).reply(200, { ...storedClusterRole('r'), metadata: { name: 'r', resourceVersion: '5' } }, json).persist();
  m.pool.intercept({ path: `${D}/clusterroles/r`, method: 'PUT' }).reply(409, wdsStatus(409, 'Conflict', 'Operation cannot be fulfilled on clusterroles.denatured.kubestellar.io "r": the object has been modified',
    { name: 'r', group: 'denatured.kubestellar.io', kind: 'clusterroles' }), json).persist();
  const err = await rejection(store.patch(caller, target('r'), 'strategic', { metadata: { labels: { a: 'b' } } }, q()));
  t.equal(err.code, 409);
  t.equal(err.status.message, 'Operation cannot be fulfilled on clusterroles.rbac.authorization.k8s.io "r": the object has been modified');
  t.equal(m.calls().filter((c) => c.method === 'PUT').length, 5);
});

t.test('patch: a refused read of the live object is the answer (not NotFound)', async (t) => {
  const { m, store } = setup(t, 'clusterroles');
  m.pool.intercept({ path: `${D}/clusterroles/r`, method: 'GET' }).reply(403, wdsStatus(403, 'Forbidden',
    'clusterroles.denatured.kubestellar.io "r" is forbidden: User "alice" cannot get resource "clusterroles" in API group "denatured.kubestellar.io" at the cluster scope',
    { name: 'r', group: 'denatured.kubestellar.io', kind: 'clusterroles' }), json);
  const err = await rejection(store.patch(caller, target('r'), 'merge', { metadata: { labels: { a: 'b' } } }, q()));
  t.equal(err.code, 403);
  t.equal(err.status.reason, 'Forbidden');
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
