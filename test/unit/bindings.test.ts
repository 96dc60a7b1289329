// The virtual Bindings as the placement controllers compute them (src/controllers/placement/bindings.ts),
// over caches filled by hand: KubeStellar v0.29's Binding JSON, exactly — per-object modulation with
// Go's omitempty, the ownerReference KubeStellar's binding controller sets, KubeStellar's order.
import t from 'tap';
import { Store } from '../../src/kube/informer.js';
import type { BindingPolicy, ManagedCluster } from '../../src/controllers/model/api.js';
import { Bindings, modulationJSON } from '../../src/controllers/placement/bindings.js';
import type { Placement } from '../../src/controllers/model/sent.js';
import type { Modulation } from '../../src/controllers/model/resolution.js';

const PLAIN: Modulation = { createOnly: false, wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors: [] };

const policy = (name: string, uid: string, status?: BindingPolicy['status']): BindingPolicy => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
  metadata: { name, uid, generation: 3, creationTimestamp: '2025-01-02T03:04:05Z' },
  spec: { clusterSelectors: [{ matchLabels: { location: 'edge' } }], downsync: [{ objectNames: ['*'] }] },
  ...(status ? { status } : {}),
});
const cluster = (name: string, labels: Record<string, string>): ManagedCluster => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels } });

function fixture() {
  const policies = new Store<BindingPolicy>({}, [
    policy('edge', '11111111-2222-3333-4444-555555555555', { observedGeneration: 2, errors: ['more than one cluster qualifies for singleton status return: c1, c2'] }),
    policy('other', '66666666-7777-8888-9999-000000000000'),
  ]);
  const clusters = new Store<ManagedCluster>({}, [cluster('c2', { location: 'edge' }), cluster('c1', { location: 'edge' }), cluster('c3', { location: 'core' })]);
  return new Bindings(policies, clusters);
}

const place = (group: string, version: string, resource: string, namespace: string, name: string, rv: string, modulations: Record<string, Modulation>): Placement => ({
  id: { group, version, resource, namespace, name }, resourceVersion: rv, policies: Object.keys(modulations).sort(),
  modulations: Object.fromEntries(Object.entries(modulations).map(([p, m]) => [p, { ...m, clusters: [] }])),
});

t.test('modulationJSON: only what is set, as Go\'s omitempty serializes DownsyncModulation', async (t) => {
  t.strictSame(modulationJSON(PLAIN), {});
  t.strictSame(modulationJSON(undefined), {});
  t.strictSame(modulationJSON({ createOnly: true, wantSingletonReportedState: true, wantMultiWECReportedState: true, statusCollectors: ['z', 'a'] }),
    { createOnly: true, statusCollectors: ['a', 'z'], wantSingletonReportedState: true, wantMultiWECReportedState: true });
});

t.test('the Binding of a policy: KubeStellar\'s JSON, each object with this policy\'s modulation', async (t) => {
  const b = fixture();
  b.record('deploy', place('apps', 'v1', 'deployments', 'demo', 'web', '12', {
    edge: { ...PLAIN, createOnly: true, statusCollectors: ['replicas'], wantSingletonReportedState: true },
    other: PLAIN,
  }));
  b.record('cm', place('', 'v1', 'configmaps', 'demo', 'settings', '7', { edge: PLAIN }));
  b.record('role', place('rbac.authorization.k8s.io', 'v1', 'clusterroles', '', 'reader', '9', { edge: { ...PLAIN, wantMultiWECReportedState: true } }));
  const edge = JSON.parse(JSON.stringify(b.binding('edge')));
  t.strictSame(edge, {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'Binding',
    metadata: {
      name: 'edge', uid: edge.metadata.uid, creationTimestamp: '2025-01-02T03:04:05Z', resourceVersion: b.resourceVersion(), generation: 3,
      ownerReferences: [{
        apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', name: 'edge', uid: '11111111-2222-3333-4444-555555555555',
        controller: true, blockOwnerDeletion: false,
      }],
    },
    spec: {
      workload: {
        clusterScope: [{ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', name: 'reader', resourceVersion: '9', wantMultiWECReportedState: true }],
        // KubeStellar's order: "group/version, Resource=resource" — "/v1, …" sorts before "apps/v1, …".
        namespaceScope: [
          { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'settings', resourceVersion: '7' },
          { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web', resourceVersion: '12', createOnly: true, statusCollectors: ['replicas'], wantSingletonReportedState: true },
        ],
      },
      destinations: [{ clusterId: 'c1' }, { clusterId: 'c2' }],
    },
    status: { observedGeneration: 2, errors: ['more than one cluster qualifies for singleton status return: c1, c2'] },
  });
  t.match(edge.metadata.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a uid of its own');
  t.not(edge.metadata.uid, '11111111-2222-3333-4444-555555555555', 'not its owner\'s');
  t.equal(b.binding('edge')!.metadata.uid, edge.metadata.uid, 'stable');

  const other = b.binding('other')!;
  t.strictSame(other.spec.workload, { namespaceScope: [{ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web', resourceVersion: '12' }] },
    'the same object in another policy\'s Binding: that policy\'s modulation (none); no clusterScope at all when empty');
  t.strictSame(other.status, { observedGeneration: 0 }, 'observedGeneration always there, errors only when some');
  t.notOk(other.metadata.uid === edge.metadata.uid);
});

t.test('a policy selecting nothing anywhere: empty workload, no destinations key; no policy, no Binding', async (t) => {
  const policies = new Store<BindingPolicy>({}, [{ ...policy('none', 'u-1'), spec: { clusterSelectors: [{ matchLabels: { location: 'moon' } }] } }]);
  const b = new Bindings(policies, new Store<ManagedCluster>());
  t.strictSame(JSON.parse(JSON.stringify(b.binding('none')!.spec)), { workload: {} });
  t.equal(b.binding('absent'), undefined);
  t.same(b.list().map((x) => x.metadata.name), ['none']);
});

t.test('a change of modulation alone is a change of the Binding', async (t) => {
  const b = fixture();
  const heard: string[] = [];
  b.onChange((p) => heard.push(p));
  b.record('cm', place('', 'v1', 'configmaps', 'demo', 'settings', '7', { edge: PLAIN }));
  const rv = b.resourceVersion();
  b.record('cm', place('', 'v1', 'configmaps', 'demo', 'settings', '7', { edge: PLAIN }));
  t.equal(b.resourceVersion(), rv, 'the same placement again changes nothing');
  b.record('cm', place('', 'v1', 'configmaps', 'demo', 'settings', '7', { edge: { ...PLAIN, createOnly: true } }));
  t.not(b.resourceVersion(), rv);
  t.same(heard, ['edge', 'edge']);
  t.equal(b.binding('edge')!.spec.workload.namespaceScope![0]!.createOnly, true);
});
