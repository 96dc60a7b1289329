// The executor of works, end to end on the test spaces (docs/placement.md, "Executor"):
// - a BindingPolicy naming an executor allowed only in one namespace of wec1 delivers a Deployment
//   there (applied, Available) and a ClusterRoleBinding that wec1 refuses with its own Forbidden
//   words, on the manifest's condition in the ManifestWork and in the policy's status.errors;
//   nothing else of the work is held back;
// - who may name an executor: a policy naming one its author may not impersonate in wds1 is
//   refused at admission with a 403 saying so; allowed once the author may;
// - a policy naming none runs as the spaces' default executor, and says so (Executor condition);
//   that executor never writes in the system, executors' or agents' namespaces, nor sets or changes
//   a Namespace's Pod Security labels;
// - the upgrade case: a ManifestWork without executor (as written before executors) keeps being
//   applied by the agent with its own rights.
// Constants are spelled out (not imported from src/spaces) so this file also runs against older code.
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { bindingPolicy, deployment, get, manifestOf, policy, work, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, uniqueName, waitUntil } from '../fixtures/spaces.js';

const WAIT = 240_000;
const EXECUTORS_NS = 'kubestellar-view-executors';
const condition = (p: Obj | undefined, type: string) => (p?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
const crbId = (name: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespace: '', name });
const deployId = (ns: string) => ({ group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name: 'nginx' });
const appliedOf = (w: Obj | undefined, kind: string) => ((w?.status?.resourceStatus?.manifests ?? []) as Obj[])
  .find((m) => m.resourceMeta?.kind === kind)?.conditions?.find((c: Obj) => c.type === 'Applied') as Obj | undefined;

/** A namespace `team-a-…` in wds1 and wec1, with ServiceAccount deployer in wec1 allowed everything in that namespace only. */
function teamNamespace(t: Test): string {
  const ns = uniqueName('team-a');
  kcOk('wds1', ['create', 'namespace', ns]);
  kcOk('wec1', ['apply', '-f', '-'], [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer', namespace: ns } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'all-here', namespace: ns }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'deployer-all-here', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'all-here' }, subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }] },
  ].map((o) => YAML.stringify(o)).join('---\n'));
  t.teardown(() => { for (const s of ['wds1', 'wec1']) kc(s, ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); });
  return ns;
}

t.test('an executor allowed only in team-a: the Deployment is applied and Available there, the ClusterRoleBinding refused by wec1 in its own words', async (t) => {
  const ns = teamNamespace(t);
  const run = ns;
  const crb = `${run}-view`;
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify(deployment(ns, run, 1)));
  // Cluster RBAC is written through the view: data in wds1, a grant only where placement sends it.
  kcOk('wds1-view', ['apply', '-f', '-'], YAML.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: crb, labels: { app: run } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${run}-user` }],
  }));
  t.teardown(() => { kc('wds1-view', ['delete', 'clusterrolebinding', crb, '--ignore-not-found']); kc('wec1', ['delete', 'clusterrolebinding', crb, '--ignore-not-found']); });
  const name = `${run}-exec`;
  bindingPolicy(t, name, {
    clusterSelectors: [{ matchLabels: { name: 'wec1' } }],
    downsync: [{ objectSelectors: [{ matchLabels: { app: run } }] }],
    executor: { serviceAccount: { namespace: ns, name: 'deployer' } },
  });

  const w = await waitUntil('the ClusterRoleBinding\'s work to report Applied False', () => {
    const x = work('wec1', crbId(crb));
    return appliedOf(x, 'ClusterRoleBinding')?.status === 'False' ? x : undefined;
  }, WAIT, 500);
  t.same(w.spec.executor, { subject: { type: 'ServiceAccount', serviceAccount: { namespace: ns, name: 'deployer' } } }, 'the work names the policy\'s executor (OCM\'s spec.executor.subject)');
  const refused = appliedOf(w, 'ClusterRoleBinding')!;
  // wec1 decides, as the executor, in its own words (the agent applies impersonating it).
  const forbidden = new RegExp(`clusterrolebindings\\.rbac\\.authorization\\.k8s\\.io "${crb}" is forbidden: User "system:serviceaccount:${ns}:deployer" cannot \\w+ resource "clusterrolebindings" in API group "rbac\\.authorization\\.k8s\\.io" at the cluster scope`);
  t.match(refused.message, forbidden, `wec1's own Forbidden words on the manifest's condition: ${refused.message as string}`);
  const native = kc('wec1', ['--as', `system:serviceaccount:${ns}:deployer`, 'apply', '--server-side', '--field-manager', 'work-agent-kubestellar-wds1', '-f', '-'], YAML.stringify(manifestOf(w)));
  const words = forbidden.exec(String(refused.message))![0];
  t.ok(native.status !== 0 && native.stderr.includes(words), `the same words as wec1 gives the same write made natively as that ServiceAccount: ${native.stderr.trim()}`);
  t.equal(kc('wec1', ['get', 'clusterrolebinding', crb]).status, 1, 'and no such binding in wec1');
  t.equal(kc('wec1', ['auth', 'can-i', 'list', 'pods', '--as', `${run}-user`]).stdout.trim(), 'no', 'the user gained nothing in wec1');

  const dep = await waitUntil('the Deployment Available in wec1', () => {
    const d = get('wec1', ns, ['deployment', 'nginx']);
    return d?.status?.availableReplicas === 1 ? d : undefined;
  }, WAIT, 500);
  t.equal(dep.metadata.name, 'nginx', 'the Deployment the same policy sends is applied and Available: nothing else of the policy is held back');
  t.same(work('wec1', deployId(ns))?.spec?.executor, w.spec.executor, 'applied as the same executor');

  const p = await waitUntil('the refusal in the policy\'s status', () => {
    const x = policy(name);
    return ((x?.status?.errors ?? []) as string[]).some((e) => e.startsWith(`cluster wec1 did not apply clusterrolebindings.rbac.authorization.k8s.io ${crb}: `)) ? x : undefined;
  }, WAIT, 500);
  const line = (p.status.errors as string[]).find((e) => e.startsWith('cluster wec1 did not apply'))!;
  t.match(line, forbidden, `the policy says it in wec1's words: ${line}`);
  t.match(condition(p, 'Executor'), { status: 'True', reason: 'PolicyExecutor', message: `works of this policy are applied in the WECs as ServiceAccount ${ns}/deployer (spec.executor)` });
});

t.test('naming an executor its author may not impersonate: refused at admission with a 403 saying so; allowed once granted', async (t) => {
  const user = uniqueName('mallory');
  const name = `${user}-p`;
  // Mallory may write BindingPolicies, and nothing else.
  kcOk('wds1', ['apply', '-f', '-'], [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${user}-policies` }, rules: [{ apiGroups: ['control.kubestellar.io'], resources: ['bindingpolicies'], verbs: ['*'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${user}-policies` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${user}-policies` }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] },
  ].map((o) => YAML.stringify(o)).join('---\n'));
  t.teardown(() => {
    kc('wds1', ['delete', 'clusterrolebinding', `${user}-policies`, '--ignore-not-found']);
    kc('wds1', ['delete', 'clusterrole', `${user}-policies`, '--ignore-not-found']);
    kc('wds1', ['-n', EXECUTORS_NS, 'delete', 'rolebinding,role', `${user}-impersonate`, '--ignore-not-found']);
    kc('wds1', ['delete', 'bindingpolicy', name, '--ignore-not-found', '--wait=false']);
  });
  const manifest = YAML.stringify({
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name },
    spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: user } }] }],
      executor: { serviceAccount: { namespace: EXECUTORS_NS, name: 'admin-executor' } } },
  });
  const as = ['--as', user, '--as-group', 'system:authenticated'];
  const denied = kc('wds1', [...as, 'create', '-f', '-'], manifest);
  t.not(denied.status, 0, 'kubectl create fails');
  t.match(denied.stderr, new RegExp(`admission webhook "bindingpolicies\\.view\\.kubestellar\\.io" denied the request: BindingPolicy "${name}" may not name executor ServiceAccount ${EXECUTORS_NS}/admin-executor: User "${user}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${EXECUTORS_NS}"`),
    `a clear message: ${denied.stderr.trim()}`);
  t.equal(kc('wds1', ['get', 'bindingpolicy', name]).status, 1, 'nothing stored');
  const noExecutor = YAML.parse(manifest) as Obj;
  delete noExecutor.spec.executor;
  const plain = kc('wds1', [...as, 'create', '-f', '-'], YAML.stringify(noExecutor));
  t.equal(plain.status, 0, `a policy naming none is Mallory's to write (the default executor applies): ${plain.stderr}`);
  const widened = kc('wds1', [...as, 'apply', '--server-side', '--force-conflicts', '-f', '-'], manifest);
  t.not(widened.status, 0, 'adding the executor by an update: refused too');
  t.match(widened.stderr, /may not name executor/);
  kc('wds1', ['delete', 'bindingpolicy', name, '--wait=false']);
  await waitUntil('the policy gone', () => kc('wds1', ['get', 'bindingpolicy', name]).status !== 0, 60_000, 250);

  // The admin grants Mallory this one ServiceAccount (impersonate, by name, in its namespace).
  kc('wds1', ['create', 'namespace', EXECUTORS_NS]); // may exist already
  kcOk('wds1', ['-n', EXECUTORS_NS, 'create', 'role', `${user}-impersonate`, '--verb=impersonate', '--resource=serviceaccounts', '--resource-name=admin-executor']);
  kcOk('wds1', ['-n', EXECUTORS_NS, 'create', 'rolebinding', `${user}-impersonate`, `--role=${user}-impersonate`, `--user=${user}`]);
  const allowed = await waitUntil('the policy admitted once Mallory may impersonate it (decisions are cached 10 s)', () => {
    const r = kc('wds1', [...as, 'create', '-f', '-'], manifest);
    return r.status === 0 ? r : undefined;
  }, 60_000, 1000);
  t.equal(allowed.status, 0, 'admitted');
  t.same(policy(name)?.spec?.executor, { serviceAccount: { namespace: EXECUTORS_NS, name: 'admin-executor' } }, 'and stored with its executor');
});

t.test('a policy naming none runs as the spaces\' default executor and says so', async (t) => {
  const ns = uniqueName('dflt');
  kcOk('wds1', ['create', 'namespace', ns]);
  t.teardown(() => { for (const s of ['wds1', 'wec1']) kc(s, ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); });
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify(deployment(ns, ns, 1)));
  const name = `${ns}-p`;
  bindingPolicy(t, name, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: ns } }] }] });
  const w = await waitUntil('its work', () => work('wec1', deployId(ns)), WAIT, 500);
  t.same(w.spec.executor, { subject: { type: 'ServiceAccount', serviceAccount: { namespace: EXECUTORS_NS, name: 'default-executor' } } });
  await waitUntil('the Deployment Available in wec1 (the Namespace created by the default executor)', () => get('wec1', ns, ['deployment', 'nginx'])?.status?.availableReplicas === 1, WAIT, 500);
  const p = await waitUntil('the Executor condition', () => condition(policy(name), 'Executor') && policy(name), WAIT, 500);
  t.match(condition(p, 'Executor'), { status: 'True', reason: 'DefaultExecutor', message: /ServiceAccount kubestellar-view-executors\/default-executor, the server's default/ });
});

t.test('the spaces\' default executor writes a team\'s namespace, never the system, executors\' or agents\' namespaces (their ServiceAccounts are stronger)', async (t) => {
  const ns = uniqueName('dflt-w');
  t.teardown(() => kc('wec1', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']));
  const as = ['--as', `system:serviceaccount:${EXECUTORS_NS}:default-executor`];
  kcOk('wec1', [...as, 'create', 'namespace', ns]);
  kcOk('wec1', [...as, '-n', ns, 'create', 'configmap', 'c', '--from-literal=a=b']);
  for (const [where, sa] of [['kube-system', 'default'], [EXECUTORS_NS, 'admin-executor']] as const) {
    // A Pod there would run as a ServiceAccount of that namespace (kube-system's, admin-executor).
    const pod = YAML.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: where }, spec: { serviceAccountName: sa, containers: [{ name: 'c', image: 'x' }] } });
    const r = kc('wec1', [...as, 'create', '--dry-run=server', '-f', '-'], pod);
    t.not(r.status, 0, `a Pod in ${where} is refused`);
    t.match(r.stderr, new RegExp(`the default executor may not write in namespace ${where}`), 'in the policy\'s words');
  }
  const patch = kc('wec1', [...as, 'label', 'namespace', 'kube-system', 'x=y', '--dry-run=server']);
  t.not(patch.status, 0, 'nor relabel kube-system (Pod Security labels)');
});

t.test('the default executor may not set, change or drop a Pod Security label of a Namespace: the WEC\'s Pod Security decides its pods', async (t) => {
  const ns = uniqueName('dflt-psa');
  t.teardown(() => { kc('wec1', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); kc('wec1', ['delete', 'namespace', `${ns}-p`, '--wait=false', '--ignore-not-found']); });
  const as = ['--as', `system:serviceaccount:${EXECUTORS_NS}:default-executor`];
  const words = (name: string) => new RegExp(`the default executor may not set or change the Pod Security labels \\(pod-security\\.kubernetes\\.io/\\*\\) of namespace ${name}`);
  kcOk('wec1', [...as, 'create', 'namespace', ns]);
  kcOk('wec1', ['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted']); // the WEC admin's level
  const privileged = kc('wec1', [...as, 'label', '--overwrite', 'namespace', ns, 'pod-security.kubernetes.io/enforce=privileged']);
  t.not(privileged.status, 0, 'labelling the namespace privileged is refused');
  t.match(privileged.stderr, words(ns), 'in the policy\'s words');
  const dropped = kc('wec1', [...as, 'label', 'namespace', ns, 'pod-security.kubernetes.io/enforce-']);
  t.not(dropped.status, 0, 'dropping the level (the cluster default may be privileged) is refused');
  const labels = () => (JSON.parse(kcOk('wec1', ['get', 'namespace', ns, '-o', 'json'])) as Obj).metadata.labels as Record<string, string>;
  t.equal(labels()['pod-security.kubernetes.io/enforce'], 'restricted', 'the level stays the admin\'s');
  const created = kc('wec1', [...as, 'create', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'Namespace',
    metadata: { name: `${ns}-p`, labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } }));
  t.not(created.status, 0, 'a new namespace carrying a Pod Security label is refused');
  t.match(created.stderr, words(`${ns}-p`));
  kcOk('wec1', [...as, 'label', 'namespace', ns, 'team=a']);
  t.equal(labels().team, 'a', 'other labels are still its to write');
  // So a hostPath pod, root on the node, is still Pod Security's to refuse.
  const pod = YAML.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root', namespace: ns },
    spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'host', hostPath: { path: '/' } }] } });
  const r = kc('wec1', [...as, 'create', '--dry-run=server', '-f', '-'], pod);
  t.not(r.status, 0);
  t.match(r.stderr, /violates PodSecurity "restricted:latest"/);
});

t.test('upgrade: a ManifestWork without executor, written as before executors, keeps being applied with the agent\'s rights', async (t) => {
  const ns = uniqueName('old');
  t.teardown(() => {
    kc('its1', ['-n', 'wec1', 'delete', 'manifestwork', ns, '--ignore-not-found', '--wait=false']);
    kc('wec1', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  });
  // What an older ksview serve wrote: the same shape, no spec.executor. A cluster-scoped
  // Namespace and a ConfigMap: the default executor could do it too, but here nobody is impersonated.
  kcOk('its1', ['apply', '-f', '-'], YAML.stringify({
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name: ns, namespace: 'wec1' },
    spec: { workload: { manifests: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: ns }, data: { a: '1' } },
    ] } },
  }));
  const cm = await waitUntil('the ConfigMap applied in wec1', () => get('wec1', ns, ['configmap', 'old']), WAIT, 500);
  t.same(cm.data, { a: '1' });
  const w = await waitUntil('the work Applied', () => {
    const x = JSON.parse(kcOk('its1', ['-n', 'wec1', 'get', 'manifestwork', ns, '-o', 'json'])) as Obj;
    return (x.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Applied')?.status === 'True' ? x : undefined;
  }, WAIT, 500);
  t.notOk(w.spec.executor, 'no executor: applied with the agent\'s own identity, as before');
});
