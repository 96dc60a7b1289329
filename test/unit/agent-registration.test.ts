// Registration as OCM's agent does it: the ManagedCluster created unaccepted with only what OCM's
// agent sets (no labels, no lease duration), nothing started until the hub accepts, the Lease
// renewed, status (Joined, Available, capacity summed from Nodes, version, claims) written only when
// it changed, and after the create nothing but the status subresource is ever written. Push mode
// never creates one.
import t from 'tap';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { Registration, nodeResources, reportClusterCondition } from '../../src/agent/registration/cluster-registration.js';
import { sumResources } from '../../src/agent/registration/quantity.js';
import { leasePath, renewClusterLease } from '../../src/agent/registration/cluster-lease.js';

const MC = '/apis/cluster.open-cluster-management.io/v1/managedclusters/wec1';

function wecWithNodes() {
  const wec = fakeCluster('https://wec1.test:6443');
  wec.raw.set('/livez', { status: 200, body: 'ok' });
  wec.raw.set('/version', { status: 200, body: { gitVersion: 'v1.34.1' } });
  wec.put('/api/v1/nodes/n1', { metadata: { name: 'n1' }, status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '3500m', memory: '7Gi', pods: '110' } } });
  wec.put('/api/v1/nodes/n2', { metadata: { name: 'n2' }, status: { capacity: { cpu: '2', memory: '8Gi', pods: '110' }, allocatable: { cpu: '2', memory: '8Gi', pods: '110' } } });
  wec.put('/api/v1/nodes/n3', { metadata: { name: 'n3' }, spec: { unschedulable: true }, status: { capacity: { cpu: '1', memory: '1Gi', pods: '10' }, allocatable: { cpu: '1', memory: '1Gi', pods: '10' } } });
  wec.put('/apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims/id.k8s.io', { metadata: { name: 'id.k8s.io' }, spec: { value: 'wec1-uid' } });
  wec.put('/apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims/private', { metadata: { name: 'private', labels: { 'open-cluster-management.io/spoke-only': '' } }, spec: { value: 'x' } });
  return wec;
}

t.test('quantities sum exactly and keep their form', async (t) => {
  t.same(sumResources([{ cpu: '500m', memory: '8Gi' }, { cpu: '1500m', memory: '8Gi' }]), { cpu: '2', memory: '16Gi' });
  t.same(sumResources([{ cpu: '250m' }, { cpu: '1' }]), { cpu: '1250m' });
  t.same(sumResources([{ memory: '1000Ki' }, { memory: '24Ki' }]), { memory: '1Mi' });
  t.same(sumResources([{ storage: '1G' }, { storage: '1e9' }]), { storage: '2000000000' });
  t.same(nodeResources([{ status: { capacity: { cpu: '1' }, allocatable: { cpu: '1' } } }, { spec: { unschedulable: true }, status: { capacity: { cpu: '2' }, allocatable: { cpu: '2' } } }]),
    { capacity: { cpu: '3' }, allocatable: { cpu: '1' } }, 'allocatable leaves out unschedulable nodes');
});

t.test('creates the ManagedCluster unaccepted and starts nothing until the hub accepts', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  const wec = wecWithNodes();
  const accepted: boolean[] = [];
  const lines: string[] = [];
  const reg = new Registration({ cluster: 'wec1', its: its.up, wec: wec.up, log: (l) => lines.push(l), onAccepted: (a) => accepted.push(a), syncMs: 3_600_000 });
  reg['stopped'] = false; // drive syncs by hand
  await reg.syncOnce();
  const mc = its.get(MC) as { metadata: Record<string, unknown>; spec: { hubAcceptsClient: boolean }; status?: unknown };
  t.same(mc.spec, { hubAcceptsClient: false }, 'never accepts itself, and sets no lease duration (the hub\'s, defaulted by the CRD)');
  t.notOk(mc.metadata.labels, 'no labels: what placement selects on is the hub admin\'s');
  t.same(accepted, [], 'not accepted: nothing started');
  t.equal(mc.status, undefined, 'no status written before acceptance');
  t.notOk(its.get(leasePath('wec1')), 'no lease before acceptance');
  t.match(lines.join('\n'), /waiting for the hub to accept/);

  // The hub admin accepts.
  its.put(MC, { ...mc, spec: { ...mc.spec, hubAcceptsClient: true, leaseDurationSeconds: 40 } } as never);
  await reg.syncOnce();
  t.same(accepted, [true], 'accepted: the front is told to start the worker');
  const st = (its.get(MC) as { status: Record<string, any> }).status;
  t.match(st.conditions, [{ type: 'ManagedClusterJoined', status: 'True', reason: 'ManagedClusterJoined' },
    { type: 'ManagedClusterConditionAvailable', status: 'True', reason: 'ManagedClusterAvailable', message: 'Managed cluster is available' }]);
  t.same(st.capacity, { cpu: '7', memory: '17Gi', pods: '230' });
  t.same(st.allocatable, { cpu: '5500m', memory: '15Gi', pods: '220' });
  t.same(st.version, { kubernetes: 'v1.34.1' });
  t.same(st.clusterClaims, [{ name: 'id.k8s.io', value: 'wec1-uid' }], 'spoke-only claims stay in the WEC');
  await t.resolves(async () => {
    for (let i = 0; i < 100 && !its.get(leasePath('wec1')); i++) await new Promise((r) => setTimeout(r, 10));
  });
  t.match(its.get(leasePath('wec1')), { spec: { leaseDurationSeconds: 40, renewTime: /^\d{4}-.*\.\d{6}Z$/ } }, 'lease created with the cluster\'s duration');

  // Nothing changed: no status write.
  const writes = () => its.calls().filter((c) => c.method === 'PATCH' && c.path.startsWith(`${MC}/status`)).length;
  const before = writes();
  await reg.syncOnce();
  t.equal(writes(), before, 'unchanged status is not written again');

  // The WEC stops answering /livez.
  wec.fail.push({ match: (p) => p === '/livez', status: 'down' });
  await reg.syncOnce();
  t.match((its.get(MC) as any).status.conditions.find((c: any) => c.type === 'ManagedClusterConditionAvailable'), { status: 'Unknown' });
  wec.fail.length = 0;
  wec.fail.push({ match: (p) => p === '/livez' || p === '/healthz', status: 500 });
  await reg.syncOnce();
  t.match((its.get(MC) as any).status.conditions.find((c: any) => c.type === 'ManagedClusterConditionAvailable'),
    { status: 'False', reason: 'ManagedClusterKubeAPIServerUnavailable' });

  // Refused by fleet: Available False, HeldByAnotherFleet.
  wec.fail.length = 0;
  reg.setHeldByAnotherFleet('fleet other, holder x');
  await reg.syncOnce();
  t.match((its.get(MC) as any).status.conditions.find((c: any) => c.type === 'ManagedClusterConditionAvailable'),
    { status: 'False', reason: 'HeldByAnotherFleet', message: /fleet other/ });

  // The hub revokes acceptance.
  its.put(MC, { ...(its.get(MC) as any), spec: { hubAcceptsClient: false } });
  await reg.syncOnce();
  t.same(accepted, [true, false]);
  await reg.stop();
  // What the agent's RBAC allows (charts/kubestellar-view/files/agent/its-rbac.yaml): one create, then the status subresource only.
  const writes2 = its.calls().filter((c) => c.method !== 'GET' && c.path.startsWith('/apis/cluster.open-cluster-management.io/'));
  t.same([...new Set(writes2.map((c) => `${c.method} ${c.path.split('?')[0]}`))],
    ['POST /apis/cluster.open-cluster-management.io/v1/managedclusters', `PATCH ${MC}/status`], 'the ManagedCluster is created once, then only its status written');
});

t.test('push mode never creates the ManagedCluster: the hub admin creates and accepts the clusters it serves', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  const lines: string[] = [];
  const reg = new Registration({ cluster: 'wec1', its: its.up, wec: wecWithNodes().up, log: (l) => lines.push(l), onAccepted: () => t.fail('never accepted'), create: false });
  reg['stopped'] = false;
  await reg.syncOnce();
  t.notOk(its.get(MC), 'not created');
  t.notOk(its.calls().some((c) => c.method === 'POST'), 'no create asked for');
  t.match(reg.itsError, /not found: the hub admin creates and accepts/);
});

t.test('a condition reported on a ManagedCluster is written once, with its transition time, over the others', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  its.put(MC, { metadata: { name: 'wec1' }, spec: { hubAcceptsClient: true }, status: { conditions: [
    { type: 'ManagedClusterJoined', status: 'True', reason: 'ManagedClusterJoined', message: 'Managed cluster joined', lastTransitionTime: '2026-01-01T00:00:00Z' }] } } as never);
  const c = { type: 'ManagedClusterConditionAvailable', status: 'False' as const, reason: 'KubeconfigRefused', message: 'refused' };
  await reportClusterCondition(its.up, 'wec1', c, Date.parse('2026-02-01T00:00:00Z'));
  await reportClusterCondition(its.up, 'wec1', c, Date.parse('2026-02-02T00:00:00Z'));
  t.match((its.get(MC) as any).status.conditions, [{ type: 'ManagedClusterJoined' }, { ...c, lastTransitionTime: '2026-02-01T00:00:00Z' }]);
  t.equal(its.calls().filter((x) => x.method === 'PATCH').length, 1, 'unchanged: not written again');
});

t.test('ITS rejecting the credentials is one log line, kept in itsError, no throw', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  const wec = wecWithNodes();
  its.fail.push({ match: () => true, status: 401 });
  const lines: string[] = [];
  const reg = new Registration({ cluster: 'wec1', its: its.up, wec: wec.up, log: (l) => lines.push(l), onAccepted: () => t.fail('never accepted') });
  reg['stopped'] = false;
  await reg.syncOnce();
  await reg.syncOnce();
  t.match(reg.itsError, /401/);
  t.equal(lines.filter((l) => /401/.test(l)).length, 1, 'logged once');
});

t.test('the cluster lease is renewed with a later renewTime', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  await renewClusterLease(its.up, 'wec1', 60, Date.parse('2026-01-01T00:00:00Z'));
  t.match(its.get(leasePath('wec1')), { spec: { renewTime: '2026-01-01T00:00:00.000000Z', leaseDurationSeconds: 60 } });
  await renewClusterLease(its.up, 'wec1', 60, Date.parse('2026-01-01T00:00:15Z'));
  t.match(its.get(leasePath('wec1')), { spec: { renewTime: '2026-01-01T00:00:15.000000Z' } });
});
