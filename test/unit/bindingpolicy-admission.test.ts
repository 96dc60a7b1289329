// Who may name an executor (src/apiserver/admission/bindingpolicies-webhook.ts) through the app, without spaces: a
// BindingPolicy naming ServiceAccount X is admitted only if its author (the AdmissionReview's
// userInfo) may impersonate X — the SubjectAccessReview asked is checked, with the author's
// groups, extra and uid; a refusal is a 403 in kube's Status shape; a review the WDS cannot decide
// is denied (503), never allowed; updates that leave the spec as it was are not asked about.
// The ValidatingWebhookConfiguration registration writes is checked too.
import t, { type Test } from 'tap';
import { POLICY_ADMISSION_PATH, POLICY_WEBHOOK_NAME } from '../../src/apiserver/admission/bindingpolicies-webhook.js';
import { POLICY_NAMES_EXECUTOR, policyWebhookConfiguration } from '../../src/apiserver/wds-registration.js';
import type { UserInfo } from '../../src/kube/user.js';
import { testApp } from '../fixtures/view-app.js';

const MALLORY = { username: 'mallory', uid: 'uid-m', groups: ['team-a-devs', 'system:authenticated'], extra: { 'scopes.example.com': ['x'] } };
const policy = (executor?: unknown, downsync: unknown[] = [{ objectSelectors: [{ matchLabels: { app: 'x' } }] }]) => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: 'p' },
  spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync, ...(executor !== undefined ? { executor } : {}) },
});
const review = (object: unknown, operation = 'CREATE', oldObject?: unknown, userInfo: unknown = MALLORY) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid: 'u-1', operation, name: 'p', resource: { group: 'control.kubestellar.io', version: 'v1alpha1', resource: 'bindingpolicies' },
    userInfo, object, ...(oldObject ? { oldObject } : {}),
  },
});
const ADMIN_SA = { serviceAccount: { namespace: 'kubestellar-view-executors', name: 'admin-executor' } };
const TEAM_SA = { serviceAccount: { namespace: 'team-a', name: 'deployer' } };

/** The app with Mallory allowed to impersonate team-a/deployer only; every review asked is recorded. */

async function app(t: Test, decide?: (user: UserInfo, attrs: unknown) => boolean) {
  const asked: [UserInfo, unknown][] = [];
  const a = await testApp({
    kubeApiserver: true,
    onDecide: (user, attrs) => { asked.push([user, attrs]); },
    allow: decide ?? ((user, attrs) => user.username === 'mallory' && JSON.stringify(attrs) === JSON.stringify({
      resource: { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'team-a', name: 'deployer' },
    })),
  });
  t.teardown(a.close);
  const send = async (body: object) => {
    const res = await a.app.inject({ method: 'POST', url: POLICY_ADMISSION_PATH, payload: body });
    t.equal(res.statusCode, 200, 'an AdmissionReview answer is a 200');
    return res.json().response as { uid: string; allowed: boolean; status?: { status: string; code: number; reason: string; message: string; details?: { name?: string; causes?: { field: string }[] } } };
  };
  return { send, asked };
}

t.test('naming an executor the author may not impersonate: 403 Forbidden, naming the missing right', async (t) => {
  const { send, asked } = await app(t);
  const r = await send(review(policy(ADMIN_SA)));
  t.equal(r.uid, 'u-1');
  t.equal(r.allowed, false);
  t.match(r.status, {
    status: 'Failure', code: 403, reason: 'Forbidden',
    message: 'BindingPolicy "p" may not name executor ServiceAccount kubestellar-view-executors/admin-executor: User "mallory" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kubestellar-view-executors" (its works would be applied in the WECs as that ServiceAccount; naming it takes the right to impersonate it)',
    details: { name: 'p' },
  });
  t.same(asked, [[MALLORY, { resource: { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'kubestellar-view-executors', name: 'admin-executor' } }]],
    'one SubjectAccessReview, as the author with their groups, extra and uid');
});

t.test('naming one the author may impersonate is admitted; naming none asks nothing', async (t) => {
  const { send, asked } = await app(t);
  t.equal((await send(review(policy(TEAM_SA)))).allowed, true);
  t.equal(asked.length, 1);
  t.equal((await send(review(policy()))).allowed, true, 'no executor: the default applies, the admin\'s choice');
  t.equal(asked.length, 1, 'no review for it');
});

t.test('an UPDATE: checked when the spec changes (even with the same executor: more objects would run as it), not otherwise', async (t) => {
  const { send, asked } = await app(t, () => false);
  const before = policy(ADMIN_SA);
  t.equal((await send(review({ ...before, metadata: { name: 'p', labels: { a: 'b' }, finalizers: ['x'] } }, 'UPDATE', before))).allowed, true,
    'labels and finalizers of a policy an admin wrote: allowed, no review');
  t.equal(asked.length, 0);
  const widened = policy(ADMIN_SA, [{ objectSelectors: [{ matchLabels: { app: 'mallory' } }] }]);
  const r = await send(review(widened, 'UPDATE', before));
  t.equal(r.allowed, false, 'a new selector under someone else\'s executor: refused');
  t.equal(r.status?.code, 403);
  t.equal((await send(review(policy(), 'UPDATE', before))).allowed, true, 'removing the executor is not this webhook\'s business');
  t.equal((await send({ ...review(policy(ADMIN_SA), 'DELETE') })).allowed, true, 'a deletion: allowed');
});

t.test('a malformed executor (a CRD without our schema): 422 Invalid with the fields', async (t) => {
  const { send, asked } = await app(t);
  const r = await send(review(policy({ serviceAccount: { namespace: 'Bad_NS' } })));
  t.equal(r.allowed, false);
  t.equal(r.status?.code, 422);
  t.equal(r.status?.reason, 'Invalid');
  t.same(r.status?.details?.causes?.map((c) => c.field), ['spec.executor.serviceAccount.namespace', 'spec.executor.serviceAccount.name']);
  t.equal(asked.length, 0);
});

t.test('the WDS cannot answer the review: denied with a 503 (fail closed), never allowed', async (t) => {
  const { send } = await app(t, () => { throw new Error('connect ECONNREFUSED'); });
  const r = await send(review(policy(TEAM_SA)));
  t.equal(r.allowed, false);
  t.equal(r.status?.code, 503);
  t.match(r.status?.message, /cannot tell whether User "mallory" may impersonate ServiceAccount team-a\/deployer/);
});

t.test('not an AdmissionReview: a 400 Status; only kube-apiserver may call', async (t) => {
  const { app: a, close } = await testApp({ kubeApiserver: true });
  t.teardown(close);
  const res = await a.inject({ method: 'POST', url: POLICY_ADMISSION_PATH, payload: { hello: 1 } });
  t.equal(res.statusCode, 400);
  t.equal(res.json().kind, 'Status');
  const other = await testApp({ kubeApiserver: false });
  t.teardown(other.close);
  const denied = await other.app.inject({ method: 'POST', url: POLICY_ADMISSION_PATH, payload: review(policy(ADMIN_SA)), headers: { 'x-test-user': 'admin' } });
  t.equal(denied.statusCode, 403, 'a user, even admin, is not the kube-apiserver');
});

t.test('the registered configuration: failurePolicy Fail, BindingPolicies naming an executor', async (t) => {
  const c = policyWebhookConfiguration({ namespace: 'kubestellar-view', service: 'ksview', port: 9443, caBundlePem: 'CA' }) as {
    webhooks: { name: string; failurePolicy: string; rules: unknown[]; matchConditions: unknown[]; clientConfig: { service: { path: string } } }[];
  };
  const w = c.webhooks[0]!;
  t.equal(w.name, POLICY_WEBHOOK_NAME);
  t.equal(w.failurePolicy, 'Fail');
  t.equal(w.clientConfig.service.path, POLICY_ADMISSION_PATH);
  t.same(w.rules, [{ apiGroups: ['control.kubestellar.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['bindingpolicies'], scope: 'Cluster' }]);
  t.same(w.matchConditions, [{ name: 'names-an-executor', expression: POLICY_NAMES_EXECUTOR }]);
});
