// The executor of a work (docs/agent.md, "Executors"): over a recorded mock WEC, every request of the apply path
// (each strategy's reads and writes, the read after a failure, the owner references) impersonates
// the executor's ServiceAccount with no group (kube-apiserver adds a ServiceAccount's groups), a
// manifest the WEC refuses to it fails alone in the WEC's words, a malformed or non-ServiceAccount
// executor fails every manifest without a single request as the agent, an owned object needs the
// executor's `delete` (SubjectAccessReview, as OCM), and a work without executor is applied with
// the agent's identity as before. Deletion of what a work applied stays with the agent's identity.
import t from 'tap';
import { ApplyEngine } from '../../src/agent/apply/apply-engine.js';
import { DeleteRights, executorOf, serviceAccountGroups, type Executor } from '../../src/agent/shared/work-executor.js';
import { createAgentMetrics } from '../../src/agent/shared/agent-metrics.js';
import { AppliedWorks } from '../../src/agent/apply/applied-works.js';
import { StatusWriter } from '../../src/agent/status/work-status-writer.js';
import { WorkReconciler } from '../../src/agent/apply/work-reconciler.js';
import { manifestWorksPath, type ManifestWork } from '../../src/kube/ocm-api.js';
import { FakeApplier } from '../fixtures/agent/fake-applier.js';
import { cm, discoveryDocument, manifestWork, ns, mailboxWork as fakeWork, type ServedResource } from '../fixtures/agent/builders.js';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { mockUpstream, requestBody, type RecordedCall } from '../fixtures/mock-upstream.js';

const SERVED: ServedResource[] = [
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
];

const SA = 'system:serviceaccount:team-a:deployer';
const CRB_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
/** What kube-apiserver answers a ServiceAccount that may not touch ClusterRoleBindings. */
const forbidden = (verb: string, name: string) => ({
  kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403,
  message: `clusterrolebindings.rbac.authorization.k8s.io "${name}" is forbidden: User "${SA}" cannot ${verb} resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`,
});

/**
 * A fake WEC: discovery, objects by path; an impersonated request on ClusterRoleBindings is
 * Forbidden (the executor's RBAC), and SubjectAccessReviews answer `sarAllowed(attributes)`.
 */
function fakeWec(opts: { objects?: Record<string, unknown>; sarAllowed?: (attrs: Record<string, string>) => boolean } = {}) {
  const m = mockUpstream('https://wec.test:6443');
  const objects = new Map(Object.entries(opts.objects ?? {}));
  m.pool.intercept({ path: () => true, method: () => true }).reply((o) => {
    const path = String(o.path);
    const plain = path.split('?')[0]!;
    const body = requestBody(o) as Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
    const headers = o.headers as Record<string, string>;
    const as = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === 'impersonate-user')?.[1];
    if (path === '/api') return { statusCode: 200, data: discoveryDocument(SERVED, true) };
    if (path === '/apis') return { statusCode: 200, data: discoveryDocument(SERVED, false) };
    if (plain === '/apis/authorization.k8s.io/v1/subjectaccessreviews') {
      const allowed = (opts.sarAllowed ?? (() => true))(body!.spec.resourceAttributes);
      return { statusCode: 201, data: { ...body, status: { allowed, ...(allowed ? {} : { reason: 'no RBAC policy matched' }) } } };
    }
    if (as && plain.startsWith(CRB_PATH)) {
      const verb = o.method === 'GET' ? 'get' : o.method === 'PATCH' ? 'patch' : o.method === 'POST' ? 'create' : 'update';
      return { statusCode: 403, data: forbidden(verb, plain.slice(CRB_PATH.length + 1) || (body?.metadata?.name ?? '')) };
    }
    if (path.includes('dryRun=All')) return { statusCode: o.method === 'POST' ? 201 : 200, data: { ...body, metadata: { ...body!.metadata, uid: 'dry' } } };
    if (o.method === 'GET') return objects.has(plain) ? { statusCode: 200, data: objects.get(plain) as object } : { statusCode: 404, data: { kind: 'Status', message: 'not found' } };
    if (o.method === 'POST') {
      const md = (body!.metadata ?? {}) as { name: string };
      objects.set(`${plain}/${md.name}`, { ...body, metadata: { ...md, uid: 'u-' + md.name, resourceVersion: '1' } });
      return { statusCode: 201, data: objects.get(`${plain}/${md.name}`) as object };
    }
    const stored = { ...body, metadata: { ...(body!.metadata as object), uid: 'u1', resourceVersion: '2' } };
    objects.set(plain, stored);
    return { statusCode: 200, data: stored };
  }).persist();
  return { ...m, objects };
}

const executor = (namespace = 'team-a', name = 'deployer') => ({ subject: { type: 'ServiceAccount', serviceAccount: { namespace, name } } });

const work = (manifests: Record<string, unknown>[], spec: Record<string, unknown> = {}): ManifestWork => manifestWork({ manifests, spec });

const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 1 } };
const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a' }, data: { a: '1' } };
const crb = {
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'mallory-admin' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'mallory', apiGroup: 'rbac.authorization.k8s.io' }],
};
/** The same update strategy for every resource served (OCM matches a config's group exactly). */
const strategy = (type: string) => SERVED.map((r) => ({ resourceIdentifier: { group: r.group, resource: r.resource, namespace: '*', name: '*' },
  updateStrategy: { type, ...(type === 'ServerSideApply' ? { serverSideApply: { fieldManager: 'work-agent-kubestellar-wds1' } } : {}) } }));

const isDiscovery = (c: RecordedCall) => c.path === '/api' || c.path === '/apis';
const isSar = (c: RecordedCall) => c.path.startsWith('/apis/authorization.k8s.io/');
const objectCalls = (calls: RecordedCall[]) => calls.filter((c) => !isDiscovery(c) && !isSar(c));
const applied = (r: { conditions: { type: string; status: string; reason: string; message: string }[] }) => r.conditions.find((c) => c.type === 'Applied')!;

t.test('executorOf: a ServiceAccount subject impersonated by user only; no executor is the agent; anything else an error', async (t) => {
  t.same(executorOf(work([], { executor: executor() })), {
    executor: { namespace: 'team-a', name: 'deployer', user: SA, headers: { 'impersonate-user': SA } },
  });
  t.same(executorOf(work([])), { none: true });
  t.same(executorOf(work([], { executor: null })), { none: true });
  const errors: [unknown, RegExp][] = [
    [{}, /spec\.executor\.subject is missing/],
    [{ subject: { type: 'User', serviceAccount: { namespace: 'a', name: 'b' } } }, /only support ServiceAccount type for the executor, not "User"/],
    [{ subject: { type: 'ServiceAccount' } }, /the executor service account is nil/],
    [{ subject: { type: 'ServiceAccount', serviceAccount: { namespace: 'a:b', name: 'c' } } }, /serviceAccount\.namespace "a:b" is not a valid namespace name/],
    [{ subject: { type: 'ServiceAccount', serviceAccount: { namespace: 'a', name: '' } } }, /serviceAccount\.name "" is not a valid ServiceAccount name/],
    [{ subject: { type: 'ServiceAccount', serviceAccount: { namespace: 'a', name: 'x\nImpersonate-Group: system:masters' } } }, /is not a valid ServiceAccount name/],
    ['admin', /spec\.executor is not an object/],
  ];
  for (const [ex, re] of errors) {
    const got = executorOf(work([], { executor: ex }));
    t.ok('error' in got, `${JSON.stringify(ex)} refused`);
    t.match((got as { error: string }).error, re);
    t.match((got as { error: string }).error, /nothing of this work is applied with the agent's own rights/);
  }
  t.same(serviceAccountGroups('team-a'), ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated']);
});

for (const type of ['ServerSideApply', 'Update', 'CreateOnly', 'ReadOnly']) {
  t.test(`${type}: every read and write of the apply impersonates the executor (no group), discovery and the delete review do not`, async (t) => {
    // Update also meets an existing object (GET then PUT): the Deployment is there.
    const w = fakeWec({ objects: { '/apis/apps/v1/namespaces/team-a/deployments/web': { ...deploy, metadata: { ...deploy.metadata, uid: 'd1', resourceVersion: '5' }, spec: { replicas: 3 } } } });
    const eng = new ApplyEngine({ wec: w.up });
    const res = await eng.applyWork(work([deploy, config], { executor: executor(), manifestConfigs: strategy(type) }));
    const calls = objectCalls(w.calls());
    t.ok(calls.length >= 2, `${calls.length} requests on objects`);
    for (const c of calls) {
      t.equal(c.headers['impersonate-user'], SA, `${c.method} ${c.path} as the executor`);
      t.notOk(Object.keys(c.headers).some((h) => /^impersonate-(group|uid|extra-)/.test(h)), `${c.method} ${c.path}: no group, uid or extra (the WEC adds the ServiceAccount's groups)`);
      t.equal(c.via, 'pool', 'on the pool of impersonated requests');
    }
    if (type === 'Update') t.ok(calls.some((c) => c.method === 'PUT'), 'the update of the existing Deployment');
    for (const c of w.calls().filter(isDiscovery)) t.notOk(c.headers['impersonate-user'], 'discovery as the agent');
    const sars = w.calls().filter(isSar);
    if (type === 'ReadOnly') t.equal(sars.length, 0, 'ReadOnly owns nothing: no delete review');
    else {
      t.equal(sars.length, 2, 'one delete review per owned manifest');
      for (const s of sars) {
        t.notOk(s.headers['impersonate-user'], 'the review is the agent\'s own request');
        const spec = (s.body as { spec: Record<string, any> }).spec; // eslint-disable-line @typescript-eslint/no-explicit-any
        t.equal(spec.user, SA);
        t.same(spec.groups, serviceAccountGroups('team-a'));
        t.equal(spec.resourceAttributes.verb, 'delete');
      }
    }
    for (const r of res) t.equal(applied(r).status, 'True', `${r.resourceMeta.kind} applied`);
  });
}

t.test('a manifest the executor may not write fails alone, in the WEC\'s words; the rest is applied', async (t) => {
  for (const type of ['ServerSideApply', 'Update']) {
    const w = fakeWec();
    const eng = new ApplyEngine({ wec: w.up });
    const res = await eng.applyWork(work([crb, deploy, config], { executor: executor(), manifestConfigs: strategy(type) }));
    const verb = type === 'ServerSideApply' ? 'patch' : 'get';
    t.equal(applied(res[0]!).status, 'False', `${type}: the ClusterRoleBinding is not applied`);
    t.equal(applied(res[0]!).reason, 'AppliedManifestFailed');
    t.equal(applied(res[0]!).message, `Failed to apply manifest: ${forbidden(verb, 'mallory-admin').message}`, 'the WEC\'s Forbidden message, whole');
    t.equal(res[0]!.owned, false);
    t.notOk(res[0]!.retryAfterMs, 'a refusal does not pass by itself (the reconciler\'s backoff retries it)');
    t.equal(applied(res[1]!).status, 'True', `${type}: the Deployment is applied`);
    t.equal(applied(res[2]!).status, 'True', `${type}: the ConfigMap is applied`);
    t.ok(w.objects.has('/apis/apps/v1/namespaces/team-a/deployments/web'));
    t.notOk([...w.objects.keys()].some((k) => k.startsWith(CRB_PATH)), 'no ClusterRoleBinding written');
    for (const c of objectCalls(w.calls())) t.equal(c.headers['impersonate-user'], SA, `${c.method} ${c.path} as the executor (the read after the failure too)`);
  }
});

t.test('a malformed executor or one of another type fails every manifest, with no request on any object', async (t) => {
  for (const ex of [{ subject: { type: 'User', user: { name: 'admin' } } }, { subject: { type: 'ServiceAccount' } }, { subject: { type: 'ServiceAccount', serviceAccount: { namespace: '', name: 'x' } } }]) {
    const w = fakeWec();
    const eng = new ApplyEngine({ wec: w.up });
    const res = await eng.applyWork(work([deploy, config], { executor: ex }));
    for (const r of res) {
      t.equal(applied(r).status, 'False', `${JSON.stringify(ex)}: ${r.resourceMeta.kind} not applied`);
      t.match(applied(r).message, /^Failed to apply manifest: the work's executor is refused: /);
      t.equal(r.resourceMeta.resource, r.resourceMeta.kind === 'Deployment' ? 'deployments' : 'configmaps', 'the manifest is still identified');
    }
    t.same(objectCalls(w.calls()), [], 'nothing read or written, as the agent or anyone');
    t.same(w.calls().filter(isSar), [], 'no review');
  }
});

t.test('no executor: the agent\'s own identity, no review (the behaviour before executors)', async (t) => {
  const w = fakeWec();
  const eng = new ApplyEngine({ wec: w.up });
  const res = await eng.applyWork(work([crb, deploy]));
  for (const r of res) t.equal(applied(r).status, 'True', `${r.resourceMeta.kind} applied with the agent's rights`);
  for (const c of w.calls()) t.notOk(c.headers['impersonate-user'], `${c.method} ${c.path} as the agent`);
  t.same(w.calls().filter(isSar), []);
});

t.test('an object the work would own needs the executor\'s delete (OCM\'s rule); Orphan asks for none', async (t) => {
  const w = fakeWec({ sarAllowed: (a) => a.resource !== 'configmaps' });
  const eng = new ApplyEngine({ wec: w.up });
  const res = await eng.applyWork(work([deploy, config], { executor: executor() }));
  t.equal(applied(res[0]!).status, 'True', 'the Deployment (delete allowed) is applied');
  t.equal(applied(res[1]!).status, 'False', 'the ConfigMap (no delete) is not');
  t.match(applied(res[1]!).message, `not allowed to apply the resource  configmaps, team-a settings: its executor ${SA} cannot delete it in the namespace "team-a"`);
  t.notOk(w.objects.has('/api/v1/namespaces/team-a/configmaps/settings'), 'the ConfigMap was not written');
  const sars = w.calls().filter(isSar).filter((c) => (c.body as any).spec.resourceAttributes.resource === 'configmaps'); // eslint-disable-line @typescript-eslint/no-explicit-any
  t.same(sars.map((c) => (c.body as any).spec.resourceAttributes), [ // eslint-disable-line @typescript-eslint/no-explicit-any
    { group: '', version: 'v1', resource: 'configmaps', namespace: 'team-a', verb: 'delete' },
    { group: '', version: 'v1', resource: 'configmaps', namespace: 'team-a', name: 'settings', verb: 'delete' },
  ], 'asked for the whole namespace, then (refused) for the object by name');

  const dry = w.calls().filter((c) => c.path.includes('dryRun=All'));
  t.same(dry.map((c) => [c.method, c.path, c.headers['impersonate-user']]), [['POST', '/api/v1/namespaces/team-a/configmaps?dryRun=All', SA]],
    'a dry run of the refused apply, as the executor, asked whether the WEC refuses the write too (it does not here)');

  // The write itself refused as well: the WEC's words, from the dry run, say more than the missing delete.
  const w1 = fakeWec({ sarAllowed: () => false });
  const res1 = await new ApplyEngine({ wec: w1.up }).applyWork(work([crb], { executor: executor(), manifestConfigs: strategy('ServerSideApply') }));
  t.equal(applied(res1[0]!).message, `Failed to apply manifest: ${forbidden('patch', 'mallory-admin').message}`, 'wec1\'s Forbidden words');
  t.ok(w1.calls().some((c) => c.method === 'PATCH' && c.path.includes('dryRun=All') && c.headers['impersonate-user'] === SA), 'from a dry-run apply as the executor');
  t.notOk(w1.calls().some((c) => c.method !== 'GET' && !isSar(c) && !c.path.includes('dryRun=All')), 'and no real write');

  const w2 = fakeWec({ sarAllowed: () => false });
  const res2 = await new ApplyEngine({ wec: w2.up }).applyWork(work([deploy, config], { executor: executor(), deleteOption: { propagationPolicy: 'Orphan' } }));
  for (const r of res2) t.equal(applied(r).status, 'True', `Orphan: ${r.resourceMeta.kind} applied without the right to delete it`);
  t.same(w2.calls().filter(isSar), [], 'no review when the work owns nothing');
});

t.test('the reconciler sets owner references as the executor; a dropped object is deleted as the agent', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  const wec = fakeCluster('https://wec.test:6443');
  const worksPath = manifestWorksPath('wec1');
  const w1 = fakeWork('w1', [ns('app'), cm('app', 'a'), cm('app', 'b')], { executor: executor('app', 'deployer') as never });
  its.put(`${worksPath}/w1`, w1);
  const applier = new FakeApplier(wec);
  const appliedWorks = new AppliedWorks(wec.up, 'h'.repeat(64), 'agent1');
  await appliedWorks.load();
  const getWork = (n: string) => its.objects.get(`${worksPath}/${n}`) as ManifestWork | undefined;
  const status = new StatusWriter({ cluster: 'wec1', its: its.up, applier, work: getWork, onError: () => {}, debounceMs: 5 });
  const rec = new WorkReconciler({
    cluster: 'wec1', its: its.up, wec: wec.up, applier, applied: appliedWorks, status,
    watcher: { setWork: () => {}, removeWork: () => {} }, work: getWork, enqueueAfter: () => {}, metrics: createAgentMetrics(), log: () => {},
  });
  t.teardown(async () => { status.stop(); await its.close(); await wec.close(); });
  await rec.reconcile('w1');
  const ownerPatches = wec.calls().filter((c) => c.method === 'PATCH' && /\/(namespaces\/app|configmaps\/[ab])$/.test(c.path));
  t.equal(ownerPatches.length, 3, 'an owner reference set on each object');
  for (const c of ownerPatches) t.equal(c.headers['impersonate-user'], 'system:serviceaccount:app:deployer', `${c.path}: as the executor`);

  its.put(`${worksPath}/w1`, { ...getWork('w1')!, metadata: { ...getWork('w1')!.metadata, generation: 2 }, spec: { ...w1.spec, workload: { manifests: [ns('app'), cm('app', 'a')] } } });
  await rec.reconcile('w1');
  const del = wec.calls().filter((c) => c.method === 'DELETE');
  t.equal(del.length, 1, 'the dropped ConfigMap is deleted');
  t.equal(del[0]!.path, '/api/v1/namespaces/app/configmaps/b');
  t.notOk(del[0]!.headers['impersonate-user'], 'with the agent\'s identity (OCM: the executor\'s delete was checked when it was applied)');
});

t.test('the delete review: a namespace-wide answer is reused for a while per executor, resource and namespace; without a yes there, the object is asked by name each time', async (t) => {
  let now = 1_000;
  const w = fakeWec({ sarAllowed: (a) => a.namespace === 'team-a' && !a.name });
  const rights = new DeleteRights(w.up, 10_000, () => now);
  const ex = (executorOf(work([], { executor: executor() })) as { executor: Executor }).executor;
  const cmAt = (namespace: string, name: string) => ({ group: '', version: 'v1', resource: 'configmaps', namespace, name });
  const sarsSoFar = () => w.calls().filter(isSar).length;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => rights.refusal(ex, cmAt('team-a', `c${i}`))));
  t.same(answers, Array(20).fill(undefined), '20 objects in the namespace may be deleted');
  t.equal(sarsSoFar(), 1, 'one review for all of them (shared while in flight)');
  now += 9_999;
  t.equal(await rights.refusal(ex, cmAt('team-a', 'late')), undefined);
  t.equal(sarsSoFar(), 1, 'still reused just before the TTL');
  now += 2;
  await rights.refusal(ex, cmAt('team-a', 'later'));
  t.equal(sarsSoFar(), 2, 'asked again once it expired');
  const other = (executorOf(work([], { executor: executor('team-a', 'other') })) as { executor: Executor }).executor;
  await rights.refusal(other, cmAt('team-a', 'x'));
  t.equal(sarsSoFar(), 3, 'another executor is asked for itself');
  t.match(await rights.refusal(ex, cmAt('team-b', 'y')), /cannot delete it in the namespace "team-b"/, 'another namespace: refused');
  t.match(await rights.refusal(ex, cmAt('team-b', 'y')), /cannot delete it/);
  t.equal(sarsSoFar(), 3 + 3, 'namespace-wide no (reused), then by name every time: a by-name answer is never reused');
});
