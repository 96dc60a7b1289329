// serve's side of upsync without spaces: which UpsyncRequests a policy asks for (pure; with the
// executor whose rights bound what is upsynced), what the request controller writes to a mock ITS
// (applies, deletes, nothing when unchanged, nothing when not leading), each policy's
// status.upsync from the agents' counts, and which copies the view is shown (only those a current
// request asks for; stale clusters reported).
import t from 'tap';
import { desiredRequests, downsyncedOf, type UpsyncBinding, type UpsyncPolicy } from '../../src/controllers/upsync/desired-requests.js';
import { UpsyncRequestController, UPSYNC_FIELD_MANAGER } from '../../src/controllers/upsync/request-controller.js';
import { staleSince, UpsyncedCache } from '../../src/controllers/upsync/upsynced-cache.js';
import { LEASE_STOPPED_REASON } from '../../src/controllers/clusters/cluster-health.js';
import { upsyncedObjectName, upsyncRequestName, type UpsyncedObject, type UpsyncRequest } from '../../src/kube/upsync-api.js';
import type { ManagedCluster } from '../../src/kube/ocm-api.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const LIMITS = { maxObjects: 100, maxObjectBytes: 1024 };
const policy = (name: string, upsync: unknown[] | undefined, extra: Partial<UpsyncPolicy['metadata']> = {}): UpsyncPolicy =>
  ({ metadata: { name, ...extra }, spec: { upsync: upsync as never } });
const binding = (clusters: string[], objects: { group: string; resource: string; namespace?: string; name: string }[] = []): UpsyncBinding => ({
  spec: {
    workload: { namespaceScope: objects.filter((o) => o.namespace), clusterScope: objects.filter((o) => !o.namespace) },
    destinations: clusters.map((clusterId) => ({ clusterId })),
  },
});

t.test('desired requests: one per destination, clauses cleaned, downsynced only for associatedWith', async (t) => {
  const p = policy('p1', [{ resources: ['configmaps'], namespaces: ['demo'], createOnly: true }]);
  const d = desiredRequests('wds1', p, binding(['wec1', 'wec2'], [{ group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' }]), LIMITS);
  t.same([...d.keys()], ['wec1', 'wec2']);
  t.same(d.get('wec1'), { wds: 'wds1', policy: 'p1', clauses: [{ resources: ['configmaps'], namespaces: ['demo'] }], maxObjects: 100, maxObjectBytes: 1024 },
    'a field agents do not know (createOnly) is not passed on; no downsynced list without associatedWith');
  const a = desiredRequests('wds1', policy('p1', [{ associatedWith: 'downsync' }]),
    binding(['wec1'], [{ group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' }, { group: '', resource: 'namespaces', name: 'demo' }]), LIMITS);
  t.same(a.get('wec1')?.downsynced, [
    { group: '', resource: 'namespaces', namespace: '', name: 'demo' },
    { group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' },
  ]);
  t.equal(desiredRequests('wds1', policy('p1', []), binding(['wec1']), LIMITS).size, 0, 'no clause: no request');
  t.equal(desiredRequests('wds1', policy('p1', undefined), binding(['wec1']), LIMITS).size, 0);
  t.equal(desiredRequests('wds1', policy('p1', [{ resources: ['pods'] }], { deletionTimestamp: '2026-11-26T00:00:00Z' }), binding(['wec1']), LIMITS).size, 0, 'being deleted');
  t.equal(desiredRequests('wds1', undefined, binding(['wec1']), LIMITS).size, 0, 'policy gone');
  t.equal(desiredRequests('wds1', policy('p1', [{ resources: ['pods'] }]), binding([]), LIMITS).size, 0, 'no cluster selected');
  t.same(downsyncedOf(binding([], [{ group: 'apps', resource: 'deployments', namespace: 'a', name: 'x' }, { group: 'apps', resource: 'deployments', namespace: 'a', name: 'x' }])).length, 1);
});

t.test('desired requests carry the executor: the policy\'s, else the server\'s default, else none', async (t) => {
  const withExecutor = (executor: unknown): UpsyncPolicy => ({ metadata: { name: 'p1' }, spec: { upsync: [{ resources: ['secrets'], objectNames: ['db'] }], executor: executor as never } });
  const DEFAULT = { namespace: 'ksview', name: 'upsync-default' };
  const one = (p: UpsyncPolicy, def?: { namespace: string; name: string }) => desiredRequests('wds1', p, binding(['wec1']), LIMITS, def).get('wec1');
  t.same(one(withExecutor({ serviceAccount: { namespace: 'team-a', name: 'reader' } }), DEFAULT)?.executor, { namespace: 'team-a', name: 'reader' },
    'the policy\'s own, over the default');
  t.same(one(withExecutor(undefined), DEFAULT)?.executor, DEFAULT, 'none named: the server\'s default');
  t.same(one(withExecutor(null), DEFAULT)?.executor, DEFAULT, 'null is none');
  const none = one(withExecutor(undefined));
  t.ok(none, 'neither: a request all the same');
  t.notOk(none && 'executor' in none, 'without an executor (the agents\' own rights, as downsync)');
  t.equal(desiredRequests('wds1', withExecutor({ serviceAccount: { namespace: 'Team A', name: 'reader' } }), binding(['wec1']), LIMITS, DEFAULT).size, 0,
    'a malformed executor asks for nothing: no fallback to the default or to the agents\' rights');
  t.same([...desiredRequests('wds1', withExecutor({ serviceAccount: { namespace: 'team-a', name: 'reader' } }), binding(['wec1', 'wec2']), LIMITS).values()].map((s) => s.executor),
    [{ namespace: 'team-a', name: 'reader' }, { namespace: 'team-a', name: 'reader' }], 'in every cluster\'s request');
});

const request = (cluster: string, policyName: string, spec: Partial<UpsyncRequest['spec']> = {}, status?: UpsyncRequest['status']): UpsyncRequest => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncRequest',
  metadata: { name: upsyncRequestName('wds1', policyName), namespace: cluster, labels: { 'upsync.view.kubestellar.io/wds': 'wds1' } },
  spec: { wds: 'wds1', policy: policyName, clauses: [{ resources: ['configmaps'] }], maxObjects: 100, maxObjectBytes: 1024, ...spec },
  ...(status ? { status } : {}),
});

function controller(policies: Record<string, UpsyncPolicy>, bindings: Record<string, UpsyncBinding>, defaultExecutor?: { namespace: string; name: string }) {
  const its = mockUpstream('https://its.test:6443');
  const c = new UpsyncRequestController({
    wdsName: 'wds1', its: its.up, limits: LIMITS, log: () => {}, defaultExecutor,
    sources: { policy: (n) => policies[n], policyNames: () => Object.keys(policies), binding: (n) => bindings[n], onBindingChange: () => () => {} },
  });
  return { its, c };
}

t.test('request controller: applies what is missing or different, deletes what is no longer asked, leaves the rest', async (t) => {
  const { its, c } = controller(
    { p1: policy('p1', [{ resources: ['configmaps'] }]) },
    { p1: binding(['wec1', 'wec2']) },
  );
  t.teardown(() => its.close());
  c.requests.store.set(request('wec1', 'p1'));
  c.requests.store.set(request('wec3', 'p1'));
  const name = upsyncRequestName('wds1', 'p1');
  its.pool.intercept({ path: (p) => p.startsWith(`/apis/control.kubestellar.io/v1alpha1/namespaces/wec2/upsyncrequests/${name}?`), method: 'PATCH' }).reply(200, {});
  its.pool.intercept({ path: `/apis/control.kubestellar.io/v1alpha1/namespaces/wec3/upsyncrequests/${name}`, method: 'DELETE' }).reply(404, {});
  await c.reconcile('p1');
  t.same(its.calls(), [], 'not leading: nothing written');
  c.setLeading(true);
  await c.reconcile('p1');
  const calls = its.calls().map((x) => `${x.method} ${x.path.split('?')[0]}`);
  t.same(calls, [
    `PATCH /apis/control.kubestellar.io/v1alpha1/namespaces/wec2/upsyncrequests/${name}`,
    `DELETE /apis/control.kubestellar.io/v1alpha1/namespaces/wec3/upsyncrequests/${name}`,
  ], 'wec1 has it as asked: untouched; wec2 lacks it; wec3 is no longer selected');
  const apply = its.calls()[0]!;
  t.match(apply.path, `fieldManager=${UPSYNC_FIELD_MANAGER}`);
  t.equal(apply.headers['content-type'], 'application/apply-patch+yaml');
  t.match(apply.body, { kind: 'UpsyncRequest', metadata: { name, namespace: 'wec2', labels: { 'upsync.view.kubestellar.io/wds': 'wds1', 'upsync.view.kubestellar.io/policy': 'p1' } }, spec: { policy: 'p1', clauses: [{ resources: ['configmaps'] }] } });
});

t.test('request controller: the default executor goes into the requests of policies naming none; a changed executor is applied again', async (t) => {
  const policies: Record<string, UpsyncPolicy> = { p1: policy('p1', [{ resources: ['configmaps'] }]) };
  const { its, c } = controller(policies, { p1: binding(['wec1']) }, { namespace: 'ksview', name: 'upsync-default' });
  t.teardown(() => its.close());
  c.setLeading(true);
  const name = upsyncRequestName('wds1', 'p1');
  its.pool.intercept({ path: (p) => p.startsWith(`/apis/control.kubestellar.io/v1alpha1/namespaces/wec1/upsyncrequests/${name}?`), method: 'PATCH' }).reply(200, {}).times(2);
  await c.reconcile('p1');
  t.match(its.calls()[0]!.body, { spec: { executor: { namespace: 'ksview', name: 'upsync-default' } } });
  // What was applied is in the ITS now; then the policy names its own executor.
  c.requests.store.set(request('wec1', 'p1', { executor: { namespace: 'ksview', name: 'upsync-default' } }));
  await c.reconcile('p1');
  t.equal(its.calls().length, 1, 'unchanged: not applied again');
  policies.p1 = { metadata: { name: 'p1' }, spec: { upsync: [{ resources: ['configmaps'] }], executor: { serviceAccount: { namespace: 'team-a', name: 'reader' } } } };
  await c.reconcile('p1');
  t.equal(its.calls().length, 2);
  t.match(its.calls()[1]!.body, { spec: { executor: { namespace: 'team-a', name: 'reader' } } });
});

t.test('request controller: a failed write is retried (thrown), the others still done', async (t) => {
  const { its, c } = controller({ p1: policy('p1', [{ resources: ['pods'] }]) }, { p1: binding(['wec1', 'wec2']) });
  t.teardown(() => its.close());
  c.setLeading(true);
  const name = upsyncRequestName('wds1', 'p1');
  its.pool.intercept({ path: (p) => p.startsWith(`/apis/control.kubestellar.io/v1alpha1/namespaces/wec1/upsyncrequests/${name}?`), method: 'PATCH' }).reply(404, { kind: 'Status', message: 'namespaces "wec1" not found' });
  its.pool.intercept({ path: (p) => p.startsWith(`/apis/control.kubestellar.io/v1alpha1/namespaces/wec2/upsyncrequests/${name}?`), method: 'PATCH' }).reply(200, {});
  await t.rejects(c.reconcile('p1'), /wec1: .*404/);
  t.equal(its.calls().length, 2);
});

t.test('status.upsync: the agents\' counts per cluster, sorted', async (t) => {
  const { its, c } = controller({}, {});
  t.teardown(() => its.close());
  c.requests.store.set(request('wec2', 'p1', {}, { objects: 10, selected: 12, tooLarge: 0, message: '12 objects selected, 10 upsynced (maxObjects 10)' }));
  c.requests.store.set(request('wec1', 'p1', {}, { objects: 3, selected: 3, tooLarge: 0 }));
  c.requests.store.set(request('wec1', 'p2'));
  t.same(c.statusOf('p1'), [
    { clusterId: 'wec1', objects: 3, selected: 3 },
    { clusterId: 'wec2', objects: 10, selected: 12, message: '12 objects selected, 10 upsynced (maxObjects 10)' },
  ]);
  t.same(c.statusOf('p2'), [{ clusterId: 'wec1', objects: 0 }], 'not reported yet');
  // What a hostile agent writes is bounded before it reaches the policy's status.
  c.requests.store.set(request('wec3', 'p1', {}, { objects: -5, selected: 1.5, tooLarge: 1e300, message: 'x'.repeat(5000) } as never));
  const hostile = c.statusOf('p1').find((e) => e.clusterId === 'wec3')!;
  t.same({ ...hostile, message: hostile.message?.length }, { clusterId: 'wec3', objects: 0, message: 1024 }, 'counts that are not counts dropped, the message cut to 1,024');
});

const copy = (cluster: string, name: string, policies: string[], rv = '1'): UpsyncedObject => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
  metadata: { name: upsyncedObjectName('wds1', { group: '', resource: 'configmaps', namespace: 'demo', name }), namespace: cluster, resourceVersion: rv },
  source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'demo', name, uid: `u-${name}`, resourceVersion: rv },
  lastSeen: '2026-11-26T00:00:00Z', policies, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'demo' } },
});

t.test('upsynced cache: only copies a current request asks for are shown; changes reported; stale clusters', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  const requests = new Map<string, UpsyncRequest>([['wec1/p1', request('wec1', 'p1')]]);
  const cache = new UpsyncedCache('wds1', its.up, {
    request: (cl, p) => requests.get(`${cl}/${p}`), list: () => [...requests.values()], onRequestChange: () => () => {},
  }, () => {});
  const events: string[] = [];
  cache.onChange((type, o) => events.push(`${type} ${o.metadata.namespace}/${o.source.name}@${o.source.resourceVersion}`));
  const a = copy('wec1', 'a', ['p1']);
  const b = copy('wec2', 'b', ['p1']);
  for (const o of [a, b]) { cache.objects.store.set(o); cache.objectChanged(o.metadata.namespace, o.metadata.name, o); }
  t.same(cache.list().map((o) => o.source.name), ['a'], 'wec2 has no request: its copy is not shown');
  t.same(cache.clusters(), ['wec1']);
  const a2 = copy('wec1', 'a', ['p1'], '2');
  cache.objects.store.set(a2);
  cache.objectChanged('wec1', a2.metadata.name, a2);
  t.same(cache.ofCluster('wec1').map((o) => o.source.resourceVersion), ['2']);
  requests.set('wec2/p1', request('wec2', 'p1'));
  cache.requestChanged('wec2');
  t.same(cache.list().map((o) => o.source.name).sort(), ['a', 'b'], 'its request came: shown');
  requests.delete('wec1/p1');
  cache.requestChanged('wec1');
  t.same(cache.list().map((o) => o.source.name), ['b'], 'the clause or the cluster went: hidden at once');
  cache.clusterChanged('wec2', '2026-11-26T01:00:00Z');
  t.equal(cache.staleSince('wec2'), '2026-11-26T01:00:00Z');
  cache.clusterChanged('wec2', '2026-11-26T01:00:00Z');
  cache.objects.store.delete(b);
  cache.objectChanged('wec2', b.metadata.name, undefined);
  t.same(events, ['ADDED wec1/a@1', 'MODIFIED wec1/a@2', 'ADDED wec2/b@1', 'DELETED wec1/a@2', 'MODIFIED wec2/b@1', 'DELETED wec2/b@1'],
    'a cluster turning stale is a MODIFIED of each of its copies, once');
  t.same(cache.list(), []);
});

t.test('staleSince: only a lease the hub saw stop', async (t) => {
  const mc = (status: string, reason: string) => ({ metadata: { name: 'wec1' }, status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status, reason, message: '', lastTransitionTime: '2026-11-26T02:00:00Z' }] } }) as ManagedCluster;
  t.equal(staleSince(mc('Unknown', LEASE_STOPPED_REASON)), '2026-11-26T02:00:00Z');
  t.equal(staleSince(mc('True', 'Available')), undefined);
  t.equal(staleSince(mc('Unknown', 'Other')), undefined);
  t.equal(staleSince(undefined), undefined);
});
