// Lease staleness as OCM's hub decides it (checkLease), checked by the requests sent to a mock ITS,
// with the clock given.
import t from 'tap';
import { checkLease, gracePeriodMs, LEASE_STOPPED_REASON, type Lease } from '../../src/controllers/clusters/cluster-health.js';
import type { ManagedCluster } from '../../src/kube/ocm-api.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const T0 = Date.parse('2026-11-23T12:00:00Z');
const cluster = (extra: Partial<ManagedCluster> = {}): ManagedCluster => ({
  apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'wec1', resourceVersion: '9' },
  spec: { hubAcceptsClient: true, leaseDurationSeconds: 10 },
  status: { conditions: [
    { type: 'ManagedClusterJoined', status: 'True', reason: 'Joined', message: '', lastTransitionTime: '2026-11-23T11:00:00Z' },
    { type: 'ManagedClusterConditionAvailable', status: 'True', reason: 'Available', message: '', lastTransitionTime: '2026-11-23T11:00:00Z' },
  ] },
  ...extra,
});
const lease = (renewedAt: number): Lease => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
  metadata: { name: 'managed-cluster-lease', namespace: 'wec1' }, spec: { renewTime: new Date(renewedAt).toISOString() } });

t.test('grace period: 5 × leaseDurationSeconds, 60 s when unset', async (t) => {
  t.equal(gracePeriodMs(cluster()), 50_000);
  t.equal(gracePeriodMs(cluster({ spec: { hubAcceptsClient: true } })), 300_000);
  t.equal(gracePeriodMs(cluster({ spec: { hubAcceptsClient: true, leaseDurationSeconds: 0 } })), 300_000, 'zero is unset (OCM #183)');
});

t.test('a fresh lease: nothing written, checked again when it would go stale', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  t.equal(await checkLease(its.up, cluster(), lease(T0), T0 + 20_000, true), 30_000);
  t.same(its.calls(), []);
});

t.test('a lease 5 durations stale: Available=Unknown with OCM reason, other conditions kept', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  its.pool.intercept({ path: '/apis/cluster.open-cluster-management.io/v1/managedclusters/wec1/status', method: 'PATCH' }).reply(200, {});
  t.equal(await checkLease(its.up, cluster(), lease(T0), T0 + 50_000, true), 50_000, 'stale at exactly the grace period; checked again after one more');
  const [call] = its.calls();
  t.equal(call?.method, 'PATCH');
  t.equal(call?.headers['content-type'], 'application/merge-patch+json');
  const body = call?.body as { metadata: { resourceVersion: string }; status: { conditions: { type: string; status: string; reason: string; message: string }[] } };
  t.equal(body.metadata.resourceVersion, '9', 'a concurrent renewal is a conflict');
  t.same(body.status.conditions.map((c) => c.type), ['ManagedClusterJoined', 'ManagedClusterConditionAvailable']);
  t.match(body.status.conditions[1], { status: 'Unknown', reason: LEASE_STOPPED_REASON, message: 'Registration agent stopped updating its lease.' });
});

t.test('already Unknown, not leading, not accepted, or no lease: nothing written', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  const unknown = cluster();
  unknown.status!.conditions![1] = { ...unknown.status!.conditions![1]!, status: 'Unknown' };
  t.equal(await checkLease(its.up, unknown, lease(T0), T0 + 60_000, true), 50_000);
  t.equal(await checkLease(its.up, cluster(), lease(T0), T0 + 60_000, false), 50_000, 'not the leader');
  t.equal(await checkLease(its.up, cluster({ spec: { hubAcceptsClient: false } }), lease(T0), T0 + 60_000, true), undefined, 'never accepted');
  t.equal(await checkLease(its.up, cluster(), undefined, T0 + 60_000, true), undefined, 'no lease yet');
  t.same(its.calls(), []);
});
