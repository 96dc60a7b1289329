// The ITS's admission policies as serve installs them: each policy and its binding from
// manifests/its/ (managedcluster-admission.yaml, mailbox-bounds.yaml), created when absent, replaced
// when they carry our managed-by label, left alone when they are someone else's. (What the policy refuses is checked
// against a real kube-apiserver: test/integration/agent-its-identity.test.ts.) Its rule that an agent
// registers only its own cluster is also evaluated here, with a CEL library, over OCM's identities:
// the group every agent holds (`…:managed-clusters`) names no cluster.
import { run, type CelInput } from '@bufbuild/cel';
import t from 'tap';
import { ensureItsAdmission, itsAdmissionObjects } from '../../src/controllers/install/its-admission.js';
import { mockUpstream, requestBody } from '../fixtures/mock-upstream.js';

const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const NAME = 'kubestellar-view-managedclusters';
const BOUNDS = 'kubestellar-view-mailbox-bounds';

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
  for (const name of [NAME, BOUNDS]) {
    m.pool.intercept({ path: `${VAP}/${name}`, method: 'GET' }).reply(404, { kind: 'Status', code: 404 });
    m.pool.intercept({ path: VAP, method: 'POST' }).reply(201, {});
    m.pool.intercept({ path: `${VAPB}/${name}`, method: 'GET' }).reply(404, { kind: 'Status', code: 404 });
    m.pool.intercept({ path: VAPB, method: 'POST' }).reply(201, {});
  }
  t.same(await ensureItsAdmission(m.up), [NAME, NAME, BOUNDS, BOUNDS], 'both policies and bindings created');
  t.match(m.calls().filter((c) => c.method === 'POST').map((c) => c.body), [{ kind: 'ValidatingAdmissionPolicy' }, { kind: 'ValidatingAdmissionPolicyBinding', spec: { policyName: NAME } },
    { kind: 'ValidatingAdmissionPolicy', metadata: { name: BOUNDS } }, { kind: 'ValidatingAdmissionPolicyBinding', spec: { policyName: BOUNDS } }]);

  const ours = { metadata: { name: NAME, resourceVersion: '7', labels: { 'app.kubernetes.io/managed-by': 'kubestellar-view' } } };
  m.pool.intercept({ path: `${VAP}/${NAME}`, method: 'GET' }).reply(200, ours);
  let put: any;
  m.pool.intercept({ path: `${VAP}/${NAME}`, method: 'PUT' }).reply(200, (opts) => { put = requestBody(opts); return {}; });
  m.pool.intercept({ path: `${VAPB}/${NAME}`, method: 'GET' }).reply(200, { metadata: { name: NAME, resourceVersion: '8' } });
  for (const path of [`${VAP}/${BOUNDS}`, `${VAPB}/${BOUNDS}`]) m.pool.intercept({ path, method: 'GET' }).reply(200, { metadata: { name: BOUNDS, resourceVersion: '9' } });
  t.same(await ensureItsAdmission(m.up), [], 'nothing created');
  t.match(put, { metadata: { resourceVersion: '7' }, spec: { failurePolicy: 'Fail' } }, 'ours: replaced by the manifest\'s, at the version read');
  t.notOk(m.calls().some((c) => c.method === 'PUT' && c.path.startsWith(VAPB)), 'a binding without our label is the admin\'s: left alone');
});

const OCM = 'system:open-cluster-management:';

/**
 * Whether the policy's "own cluster" rule lets `user` in `groups` create ManagedCluster `name`.
 * The policy's variables are evaluated in order as kube-apiserver does; the test's CEL library has
 * no optional fields (`x.?f.orValue(d)`), so the one such read the rule needs — the request's
 * groups, always given here — is read plainly, and variables it cannot evaluate (the authorizer's)
 * stay unset: the rule must not need them (if it did, evaluating it fails the test).
 */
function ownCluster(user: string, groups: string[], name: string): unknown {
  const [policy] = itsAdmissionObjects() as any[];
  const plain = (e: string) => e.replaceAll('request.userInfo.?groups.orValue([])', 'request.userInfo.groups');
  const env: Record<string, CelInput> = { request: { operation: 'CREATE', userInfo: { username: user, groups } }, object: { metadata: { name }, spec: {} } };
  const variables: Record<string, CelInput> = {};
  for (const v of policy.spec.variables) {
    try {
      const out = run(plain(v.expression), { ...env, variables });
      variables[v.name] = (typeof out === 'object' && out !== null && Symbol.iterator in out ? [...(out as Iterable<CelInput>)] : out) as CelInput;
    } catch { /* kube's CEL only: not read by the rule */ }
  }
  const rule = policy.spec.validations.find((v: any) => /may register only its own cluster/.test(v.messageExpression));
  return run(plain(rule.expression), { ...env, variables });
}

t.test('an agent registers only the cluster its identity names; the group every agent holds names none (not a cluster called managed-clusters)', async (t) => {
  const agentOf = (cluster: string): [string, string[]] => [`${OCM}${cluster}:agent`, [`${OCM}${cluster}`, `${OCM}managed-clusters`, 'system:authenticated']];
  t.equal(ownCluster(...agentOf('wec-a'), 'wec-a'), true, 'its own cluster');
  t.equal(ownCluster(...agentOf('wec-a'), 'wec-b'), false, 'another cluster: refused');
  t.equal(ownCluster(...agentOf('wec-a'), 'managed-clusters'), false, 'a cluster named managed-clusters: refused (every agent holds that group)');
  t.equal(ownCluster(`${OCM}managed-clusters:agent`, [`${OCM}managed-clusters`], 'managed-clusters'), false, 'an identity in the common group alone names no cluster');
  t.equal(ownCluster(`${OCM}wec-b:agent`, [`${OCM}wec-a`, `${OCM}managed-clusters`], 'wec-a'), false, 'a user name of another cluster: refused (OCM ties both)');
  t.equal(ownCluster(`${OCM}wec-a:agent`, [`${OCM}wec-a`, `${OCM}wec-b`, `${OCM}managed-clusters`], 'wec-a'), false, 'two cluster groups name no single cluster');
  t.equal(ownCluster(`${OCM}wec-a:agent`, [`${OCM}wec-a`], 'wec-b'), false, 'the per-cluster group the shipped RBAC binds, without the common one: still an agent, kept to its own cluster');
  t.equal(ownCluster(`${OCM}wec-a:agent`, [`${OCM}wec-a`], 'wec-a'), true, 'and its own cluster is let in');
  t.equal(ownCluster('kubernetes-admin', ['system:masters', 'system:authenticated'], 'managed-clusters'), true, 'a hub admin is not an agent: the rule does not apply');
  t.equal(ownCluster(`${OCM}cluster:wec-a:addon:x:agent:y`, [`${OCM}cluster:wec-a:addon:x`, `${OCM}addon:x`], 'wec-b'), true, "an add-on's groups are no cluster's (their names have more parts)");
});
