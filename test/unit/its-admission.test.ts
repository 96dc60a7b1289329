// The ITS's ManagedCluster admission policy as serve installs it: the policy and its binding from
// manifests/its/managedcluster-admission.yaml, created when absent, replaced when they carry our
// managed-by label, left alone when they are someone else's. (What the policy refuses is checked
// against a real kube-apiserver: test/integration/agent-its-identity.test.ts.)
import t from 'tap';
import { ensureItsAdmission, itsAdmissionObjects } from '../../src/controllers/its-admission.js';
import { mockUpstream, requestBody } from '../fixtures/mock-upstream.js';

const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const NAME = 'kubestellar-view-managedclusters';

t.test('the manifest: a policy on creates and updates of ManagedClusters (not their status), bound to deny', async (t) => {
  const [policy, binding] = itsAdmissionObjects() as any[];
  t.equal(policy.kind, 'ValidatingAdmissionPolicy');
  t.same(policy.spec.matchConstraints.resourceRules, [{ apiGroups: ['cluster.open-cluster-management.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['managedclusters'] }]);
  t.equal(policy.spec.failurePolicy, 'Fail', 'an error in a rule refuses, never admits');
  t.ok(policy.spec.validations.every((v: any) => v.reason === 'Forbidden' && v.messageExpression), 'every refusal is a 403 saying why');
  t.match(policy.spec.variables.find((v: any) => v.name === 'accepter').expression, /register\.open-cluster-management\.io.*managedclusters.*subresource\('accept'\).*check\('update'\)/s, 'OCM\'s accept right');
  t.same(binding.spec, { policyName: NAME, validationActions: ['Deny'] });
});

t.test('created when absent, replaced when ours, left alone when someone else\'s', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: `${VAP}/${NAME}`, method: 'GET' }).reply(404, { kind: 'Status', code: 404 });
  m.pool.intercept({ path: VAP, method: 'POST' }).reply(201, {});
  m.pool.intercept({ path: `${VAPB}/${NAME}`, method: 'GET' }).reply(404, { kind: 'Status', code: 404 });
  m.pool.intercept({ path: VAPB, method: 'POST' }).reply(201, {});
  t.same(await ensureItsAdmission(m.up), [NAME, NAME], 'both created');
  t.match(m.calls().filter((c) => c.method === 'POST').map((c) => c.body), [{ kind: 'ValidatingAdmissionPolicy' }, { kind: 'ValidatingAdmissionPolicyBinding', spec: { policyName: NAME } }]);

  const ours = { metadata: { name: NAME, resourceVersion: '7', labels: { 'app.kubernetes.io/managed-by': 'kubestellar-view' } } };
  m.pool.intercept({ path: `${VAP}/${NAME}`, method: 'GET' }).reply(200, ours);
  let put: any;
  m.pool.intercept({ path: `${VAP}/${NAME}`, method: 'PUT' }).reply(200, (opts) => { put = requestBody(opts); return {}; });
  m.pool.intercept({ path: `${VAPB}/${NAME}`, method: 'GET' }).reply(200, { metadata: { name: NAME, resourceVersion: '8' } });
  t.same(await ensureItsAdmission(m.up), [], 'nothing created');
  t.match(put, { metadata: { resourceVersion: '7' }, spec: { failurePolicy: 'Fail' } }, 'ours: replaced by the manifest\'s, at the version read');
  t.notOk(m.calls().some((c) => c.method === 'PUT' && c.path.startsWith(VAPB)), 'a binding without our label is the admin\'s: left alone');
});
