// The executor of a policy's works (docs/placement.md, "Executor"): the policy's own spec.executor, else the server's
// --default-executor, written into each ManifestWork as OCM's spec.executor.subject; a conflict
// when the policies sending an object to one cluster name different ones; the Executor condition
// of the policy's status. Run on the controller fixture: what reaches the ITS and the WDS.
import t from 'tap';
import type { BindingPolicy, ManagedCluster, WorkloadObject } from '../../src/controllers/model/api.js';
import { objectKey, policyKey } from '../../src/controllers/model/keys.js';
import { CLEANUP_FINALIZER } from '../../src/controllers/placement/policy-status.js';
import { parseServiceAccountRef } from '../../src/kube/service-account-ref.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { manifestWorkName, type ManifestWork } from '../../src/controllers/model/wrapping.js';
import { controllerFixture, update } from '../fixtures/controller-fixture.js';

const CONFIGMAPS: WorkloadResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, native: { group: '', resource: 'configmaps' }, bypassesView: false, hasStatus: false };
const NAMESPACES: WorkloadResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, native: { group: '', resource: 'namespaces' }, bypassesView: false, hasStatus: false };

const cluster = (name: string, labels: Record<string, string>): ManagedCluster => ({
  apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels, resourceVersion: '1' },
});
const SETTINGS: WorkloadObject = {
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'demo', labels: { app: 'nginx' }, uid: 'uid-settings', resourceVersion: '7' }, data: { a: '1' },
};
const DEMO: WorkloadObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo', uid: 'uid-demo', resourceVersion: '3' } };
const policy = (name: string, clusters: string, executor?: unknown, generation = 1): BindingPolicy => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
  metadata: { name, uid: `uid-${name}`, generation, resourceVersion: '5', finalizers: [CLEANUP_FINALIZER] },
  spec: {
    clusterSelectors: [{ matchLabels: { 'location-group': clusters } }],
    downsync: [{ namespaces: ['demo'], objectSelectors: [{ matchLabels: { app: 'nginx' } }] }],
    ...(executor !== undefined ? { executor: executor as never } : {}),
  },
});
const CLUSTERS = [cluster('c1', { 'location-group': 'edge' }), cluster('c2', { 'location-group': 'edge', extra: 'yes' })];
const settingsKey = objectKey(CONFIGMAPS, 'demo', 'settings');
const settingsWork = manifestWorkName('wds1', { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'settings' });
const sa = (namespace: string, name: string) => ({ serviceAccount: { namespace, name } });
const subject = (namespace: string, name: string) => ({ subject: { type: 'ServiceAccount', serviceAccount: { namespace, name } } });

function fixture(policies: BindingPolicy[], defaultExecutor?: { namespace: string; name: string }, works?: ManifestWork[]) {
  return controllerFixture({
    clusters: CLUSTERS, policies, defaultExecutor, works,
    workload: [{ resource: CONFIGMAPS, objects: [SETTINGS] }, { resource: NAMESPACES, objects: [DEMO] }],
  });
}
const workWrites = (f: ReturnType<typeof fixture>) => f.writes().filter((w) => w.server === 'its' && w.method === 'PATCH').map((w) => w.body as ManifestWork);
const statusOf = (f: ReturnType<typeof fixture>) =>
  (f.writes().filter((w) => w.path.endsWith('/status')).at(-1)?.body as { status: { errors: string[] | null; conditions: { type: string; status: string; reason: string; message: string }[] } }).status;

t.test('the policy\'s executor goes into each of its works as OCM\'s spec.executor.subject', async (t) => {
  const f = fixture([policy('edge', 'edge', sa('team-a', 'deployer'))], { namespace: 'ops', name: 'restricted' });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const works = workWrites(f);
  t.equal(works.length, 2, 'c1 and c2');
  for (const w of works) t.same(w.spec?.executor, subject('team-a', 'deployer'), `in ${w.metadata.namespace}: the policy's own, not the default`);
});

t.test('a policy naming none gets the server\'s default; with no default, works carry no executor (as before)', async (t) => {
  const f = fixture([policy('edge', 'edge')], { namespace: 'ops', name: 'restricted' });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  for (const w of workWrites(f)) t.same(w.spec?.executor, subject('ops', 'restricted'));
  const g = fixture([policy('edge', 'edge')]);
  t.teardown(() => g.close());
  await g.reconcile(settingsKey);
  const works = workWrites(g);
  t.equal(works.length, 2);
  for (const w of works) t.notOk(w.spec && 'executor' in w.spec, 'no executor: the agent applies with its own rights');
});

t.test('a change of executor rewrites the works', async (t) => {
  const f = fixture([policy('edge', 'edge', sa('team-a', 'deployer'))]);
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.equal(workWrites(f).length, 2);
  f.clear();
  update(f.caches.policies, policy('edge', 'edge', sa('team-a', 'other'), 2));
  await f.reconcile(settingsKey);
  const works = workWrites(f);
  t.equal(works.length, 2, 'both works written again');
  for (const w of works) t.same(w.spec?.executor, subject('team-a', 'other'));
});

t.test('policies sending one object to one cluster with different executors: a conflict, not sent there, said by both', async (t) => {
  const existing: ManifestWork = {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: settingsWork, namespace: 'c2', resourceVersion: '9', generation: 1, labels: { 'view.kubestellar.io/wds': 'wds1', 'bindingpolicy.view.kubestellar.io/a': '' } },
    spec: { workload: { manifests: [{ kind: 'ConfigMap' }] } },
  };
  const narrow: BindingPolicy = { ...policy('b', 'edge', sa('team-a', 'strong')), spec: { ...policy('b', 'edge', sa('team-a', 'strong')).spec, clusterSelectors: [{ matchLabels: { extra: 'yes' } }] } };
  const f = fixture([policy('a', 'edge', sa('team-a', 'weak')), narrow], undefined, [existing]);
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const works = workWrites(f);
  t.same(works.map((w) => w.metadata.namespace), ['c1'], 'c1 (only a sends it there) is written; c2 is not');
  t.same(works[0]!.spec?.executor, subject('team-a', 'weak'));
  t.notOk(f.writes().some((w) => w.method === 'DELETE'), 'the work already in c2 stays as it was: nothing is deleted in the WEC');
  const message = 'conflict: configmaps demo/settings is not sent to cluster c2: the policies sending it there name different executors (a → ServiceAccount team-a/weak; b → ServiceAccount team-a/strong)';
  for (const p of ['a', 'b']) {
    f.clear();
    await f.reconcile(policyKey(p));
    t.same(statusOf(f).errors, [message], `policy ${p} says why`);
  }
});

t.test('a policy with no executor and one with an executor, same cluster: a conflict too (no executor is the agent\'s full rights)', async (t) => {
  const f = fixture([policy('a', 'edge'), policy('b', 'edge', sa('team-a', 'x'))]);
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.same(workWrites(f), [], 'sent nowhere');
  await f.reconcile(policyKey('a'));
  t.match(statusOf(f).errors![0], /a → no executor; b → ServiceAccount team-a\/x/);
});

t.test('the Executor condition: the policy\'s own, the default, or the agents\' rights (AgentRights)', async (t) => {
  const cases: [string, BindingPolicy, { namespace: string; name: string } | undefined, object][] = [
    ['own', policy('edge', 'edge', sa('team-a', 'deployer')), { namespace: 'ops', name: 'restricted' },
      { type: 'Executor', status: 'True', reason: 'PolicyExecutor', message: 'works of this policy are applied in the WECs as ServiceAccount team-a/deployer (spec.executor)' }],
    ['default', policy('edge', 'edge'), { namespace: 'ops', name: 'restricted' },
      { type: 'Executor', status: 'True', reason: 'DefaultExecutor', message: 'works of this policy are applied in the WECs as ServiceAccount ops/restricted, the server\'s default (--default-executor)' }],
    ['none', policy('edge', 'edge'), undefined,
      { type: 'Executor', status: 'False', reason: 'AgentRights', message: 'works of this policy are applied with the agents\' full rights in the WECs; name spec.executor or start ksview serve with --default-executor' }],
  ];
  for (const [what, p, dflt, condition] of cases) {
    const f = fixture([p], dflt);
    t.teardown(() => f.close());
    await f.reconcile(policyKey('edge'));
    t.match(statusOf(f).conditions.find((c) => c.type === 'Executor'), condition, what);
  }
});

t.test('a malformed executor (a CRD without our validation stored it): the policy selects nothing and says why; no fallback to the agent\'s rights', async (t) => {
  const f = fixture([policy('edge', 'edge', sa('Team_A', ''))], { namespace: 'ops', name: 'restricted' });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.same(workWrites(f), [], 'nothing is sent');
  await f.reconcile(policyKey('edge'));
  const s = statusOf(f);
  t.match(s.errors, [/^spec\.executor\.serviceAccount\.name: Required value$/, /^spec\.executor\.serviceAccount\.namespace: Invalid value: "Team_A"/]);
  t.match(s.conditions.find((c) => c.type === 'Executor'), { status: 'False', reason: 'InvalidExecutor' });
});

t.test('--default-executor NS/NAME: parsed as kube validates a namespace and a ServiceAccount name', async (t) => {
  t.same(parseServiceAccountRef('kubestellar-view-executors/default-executor'), { namespace: 'kubestellar-view-executors', name: 'default-executor' });
  t.throws(() => parseServiceAccountRef('nope'), /no single "\/"/);
  t.throws(() => parseServiceAccountRef('a/b/c'), /no single "\/"/);
  t.throws(() => parseServiceAccountRef('a.b/c'), /namespace: Invalid value: "a.b"/, 'a namespace is a label: no dots');
  t.throws(() => parseServiceAccountRef('a/UPPER'), /name: Invalid value: "UPPER"/);
  t.throws(() => parseServiceAccountRef('/x'), /namespace: Required value/);
});
