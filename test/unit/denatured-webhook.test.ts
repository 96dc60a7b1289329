// The admission webhook of direct writes of denatured.kubestellar.io objects
// (src/apiserver/admission/denatured-webhook.ts) through the app, without spaces: a real registry synced
// against the mock upstream, ksview-native faked. A forged annotation and an object Kubernetes
// refuses are denied with their 422; a valid write is allowed; while it cannot judge (kinds not
// synced, ksview-native down) it denies, failing closed; what is not its business is allowed;
// reviews of two 3 MiB objects are read. The ValidatingWebhookConfiguration registration writes
// is checked too.
import t, { type Test } from 'tap';
import { DENATURED_ADMISSION_PATH, DENATURED_WEBHOOK_NAME } from '../../src/apiserver/admission/denatured-webhook.js';
import { denaturedWebhookConfiguration } from '../../src/apiserver/wds-registration.js';
import { errors } from '../../src/kube/status.js';
import { DenaturedRegistry } from '../../src/storage/denatured-registry.js';
import { answerDenaturedKinds, type FixtureResource } from '../fixtures/denatured-kinds.js';
import { FakeNativeCode } from '../fixtures/fake-native-code.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';
import { testApp } from '../fixtures/view-app.js';

const RESOURCES: FixtureResource[] = ['clusterroles', 'roles'];

async function webhook(t: Test, o: { synced?: boolean } = {}) {
  const m = mockUpstream();
  const native = new FakeNativeCode();
  native.answer = () => ({ status: 201, json: {}, warnings: [], write: 'create' });
  const registry = new DenaturedRegistry(m.up, RESOURCES.map((resource) => ({ group: 'rbac.authorization.k8s.io', resource })), { info: () => {}, error: () => {} }, native);
  if (o.synced ?? true) {
    answerDenaturedKinds(m.pool, RESOURCES);
    await registry.sync();
  }
  const logs: string[] = [];
  const app = await testApp({ denatured: registry, log: (l) => logs.push(l), kubeApiserver: true });
  t.teardown(async () => { await app.close(); await m.close(); });
  const review = async (request: Record<string, unknown>) => {
    const res = await app.app.inject({ method: 'POST', url: DENATURED_ADMISSION_PATH, payload: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1', ...request } } });
    t.equal(res.statusCode, 200, 'an AdmissionReview is answered');
    return res.json().response as { uid: string; allowed: boolean; status?: { code: number; reason: string; message: string }; warnings?: string[] };
  };
  return { app: app.app, native, logs, review };
}

const ROLES = { group: 'denatured.kubestellar.io', version: 'v1', resource: 'roles' };
const role = (annotations?: Record<string, string>) => ({
  apiVersion: 'denatured.kubestellar.io/v1', kind: 'Role', metadata: { name: 'r', namespace: 'ns1', ...(annotations ? { annotations } : {}) },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
});
const mallory = { username: 'mallory', groups: ['system:authenticated'] };

t.test('a direct create with forged native metadata is denied with a 422 naming the annotation', async (t) => {
  const { review, native } = await webhook(t);
  const r = await review({ operation: 'CREATE', resource: ROLES, namespace: 'ns1', userInfo: mallory,
    object: role({ 'view.kubestellar.io/native-metadata': '{"generation":42}' }) });
  t.equal(r.uid, 'u-1');
  t.equal(r.allowed, false);
  t.match(r.status, { code: 422, reason: 'Invalid', message: /^Role\.denatured\.kubestellar\.io "r" is invalid: metadata\.annotations\[view\.kubestellar\.io\/native-metadata\]: Forbidden: set only by the view/ });
  t.equal(native.writes.length, 0);
});

t.test('Kubernetes\' validation decides the rest: its refusal is the denial, else allowed', async (t) => {
  const { review, native } = await webhook(t);
  native.answer = () => ({ status: 422, warnings: [], write: 'none', json: errors.invalid({ group: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    [{ reason: 'FieldValueRequired', field: 'rules[0].verbs', message: 'Required value: verbs must contain at least one value' }]).status });
  const r = await review({ operation: 'CREATE', resource: ROLES, namespace: 'ns1', userInfo: mallory, object: role() });
  t.equal(r.allowed, false);
  t.equal(r.status?.message, 'Role.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value');
  t.match(native.writes[0], { method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles?fieldManager=kubestellar-view-admission' });
  native.answer = () => ({ status: 201, json: {}, warnings: [], write: 'create' });
  t.same(await review({ operation: 'CREATE', resource: ROLES, namespace: 'ns1', userInfo: mallory, object: role() }), { uid: 'u-1', allowed: true });
  const upd = await review({ operation: 'UPDATE', subResource: 'status', resource: ROLES, namespace: 'ns1', userInfo: mallory,
    object: { ...role(), rules: [] }, oldObject: role() });
  t.equal(upd.allowed, true);
  t.match(native.writes[2], { method: 'PUT', path: '/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/r/status?fieldManager=kubestellar-view-admission' }, 'an update of the status subresource, by its rules');
});

t.test('while it cannot judge, it denies (failing closed) and says why', async (t) => {
  const notSynced = await webhook(t, { synced: false });
  const r = await notSynced.review({ operation: 'CREATE', resource: ROLES, userInfo: mallory, object: role() });
  t.equal(r.allowed, false);
  t.match(r.status, { code: 503, reason: 'ServiceUnavailable', message: /^the view's denatured kinds are not ready yet/ });

  const { review, native, logs } = await webhook(t);
  native.write = async () => { throw errors.serviceUnavailable('ksview-native (Kubernetes\' registries for denatured kinds) is starting again'); };
  const down = await review({ operation: 'CREATE', resource: ROLES, userInfo: mallory, object: role() });
  t.equal(down.allowed, false);
  t.match(down.status, { code: 503, message: /is starting again/ });
  t.match(logs, [/^denatured admission: roles\.denatured\.kubestellar\.io: ksview-native/], 'logged');
});

t.test('what is not its business is allowed: other groups, deletes, subresources other than status, kinds the view does not serve', async (t) => {
  const { review, native } = await webhook(t);
  t.same(await review({ operation: 'CREATE', resource: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' }, object: role() }), { uid: 'u-1', allowed: true });
  t.same(await review({ operation: 'DELETE', resource: ROLES, oldObject: role() }), { uid: 'u-1', allowed: true });
  t.same(await review({ operation: 'UPDATE', resource: ROLES, subResource: 'scale', object: role(), oldObject: role() }), { uid: 'u-1', allowed: true });
  const other = await review({ operation: 'CREATE', resource: { ...ROLES, resource: 'leftovers' }, object: role() });
  t.equal(other.allowed, true);
  t.match(other.warnings, [/^leftovers\.denatured\.kubestellar\.io\/v1 is not a kind the view serves: its objects are neither shown nor sent/]);
  t.equal(native.writes.length, 0);
});

t.test('a review that is not one is a 400; one of two objects of 3 MiB is read (a larger body is a 413)', async (t) => {
  const { app } = await webhook(t);
  const bad = await app.inject({ method: 'POST', url: DENATURED_ADMISSION_PATH, payload: { kind: 'AdmissionReview' } });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { kind: 'Status', code: 400, message: /AdmissionReview with request\.uid/ });
  const noObject = await app.inject({ method: 'POST', url: DENATURED_ADMISSION_PATH, payload: { request: { uid: 'x', operation: 'UPDATE', resource: ROLES, object: role() } } });
  t.match(noObject.json().response, { allowed: false, status: { code: 400, message: /carries no object or old object/ } });
  const big = { ...role(), metadata: { ...role().metadata, annotations: { note: 'x'.repeat(3 * 1024 * 1024 - 4096) } } };
  const payload = JSON.stringify({ request: { uid: 'big', operation: 'UPDATE', resource: ROLES, object: big, oldObject: big } });
  const res = await app.inject({ method: 'POST', url: DENATURED_ADMISSION_PATH, headers: { 'content-type': 'application/json' }, payload });
  t.equal(res.statusCode, 200);
  t.equal(res.json().response.allowed, true, 'a change of metadata only: allowed');
  const tooBig = await app.inject({ method: 'POST', url: DENATURED_ADMISSION_PATH, headers: { 'content-type': 'application/json' }, payload: payload + ' '.repeat(512 * 1024) });
  t.equal(tooBig.statusCode, 413);
});

t.test('the ValidatingWebhookConfiguration: every create and update of the group and its status, but the view\'s own; failing closed', async (t) => {
  const cfg = denaturedWebhookConfiguration({ namespace: 'kubestellar-view', service: 'ksview', port: 443, caBundlePem: 'PEM' }) as Record<string, any>;
  t.equal(cfg.metadata.name, 'kubestellar-view-denatured');
  const [w] = cfg.webhooks;
  t.equal(w.name, DENATURED_WEBHOOK_NAME);
  t.same(w.clientConfig, { service: { namespace: 'kubestellar-view', name: 'ksview', port: 443, path: DENATURED_ADMISSION_PATH }, caBundle: Buffer.from('PEM').toString('base64') });
  t.same(w.rules, [{ apiGroups: ['denatured.kubestellar.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*', '*/status'], scope: '*' }]);
  t.equal(w.failurePolicy, 'Fail');
  t.same(w.matchConditions, [{ name: 'not-written-by-the-view', expression: '!has(request.userInfo.extra) || !(\'view.kubestellar.io/admitted-by\' in request.userInfo.extra)' }]);
});
