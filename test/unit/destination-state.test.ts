// How an object fares in a cluster, read from its ManifestWork and the ManagedCluster
// (src/controllers/placement/destination-state.ts): each state KubeFed's propagation status tells
// apart, the destinations' counts with a capped list of broken objects, and the Ready condition.
import t from 'tap';
import { clusterReadiness, destinationStatuses, MAX_BROKEN_OBJECTS, objectOutcome, readyCondition } from '../../src/controllers/placement/destination-state.js';
import type { Condition, ManagedCluster, ManifestWork } from '../../src/kube/ocm-api.js';

const UP = { ready: true };
const cond = (type: string, status: Condition['status'], reason = type, message = '', observedGeneration?: number): Condition =>
  ({ type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z', ...(observedGeneration ? { observedGeneration } : {}) });

function work(conditions: Condition[] | undefined, o: { kind?: string; replicas?: number; feedback?: Record<string, number | string>; manifest?: Condition[]; generation?: number; deleting?: boolean } = {}): ManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: 'w', namespace: 'wec1', generation: o.generation ?? 1, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { workload: { manifests: [{ apiVersion: 'apps/v1', kind: o.kind ?? 'Deployment', metadata: { name: 'web' }, ...(o.replicas !== undefined ? { spec: { replicas: o.replicas } } : {}) }] } },
    ...(conditions ? { status: { conditions, resourceStatus: { manifests: [{
      resourceMeta: { ordinal: 0, group: 'apps', version: 'v1', kind: o.kind ?? 'Deployment', resource: 'deployments', namespace: 'demo', name: 'web' },
      conditions: o.manifest ?? [],
      statusFeedback: { values: Object.entries(o.feedback ?? {}).map(([name, v]) => ({ name, fieldValue: typeof v === 'number' ? { type: 'Integer' as const, integer: v } : { type: 'String' as const, string: v } })) },
    }] } } } : {}),
  };
}
const applied = [cond('Applied', 'True', 'AppliedManifestWorkComplete', '', 1), cond('Available', 'True', 'ResourcesAvailable')];

t.test('each state, from the work and the cluster', async (t) => {
  t.same(objectOutcome(work(applied, { replicas: 2, feedback: { AvailableReplicas: 2 } }), UP), { state: 'Available' });
  t.same(objectOutcome(work(applied, { replicas: 3, feedback: { AvailableReplicas: 2 } }), UP), { state: 'Applied', message: '2 of 3 replicas available' }, 'a Deployment short of replicas');
  t.same(objectOutcome(work(applied, { kind: 'Pod', feedback: { PodPhase: 'Pending' } }), UP), { state: 'Applied', message: 'pod Pending, not Ready' });
  t.same(objectOutcome(work(applied, { kind: 'Job', feedback: { JobComplete: 'True' } }), UP), { state: 'Available' });
  t.same(objectOutcome(work(applied, { kind: 'ConfigMap' }), UP), { state: 'Available' }, 'a kind without health: present is available');
  t.same(objectOutcome(work(applied, { kind: 'Job' }), UP), { state: 'Applied', message: 'status not reported yet' }, 'a kind with health but no feedback yet is not Available');
  t.same(objectOutcome(work(applied, { replicas: 0 }), UP), { state: 'Available' }, 'a Deployment scaled to 0 has nothing to report');
  t.same(objectOutcome(work([applied[0]!, cond('Available', 'False', 'ResourcesNotAvailable', '1 of 1 resources are not available')]), UP),
    { state: 'Applied', message: 'ResourcesNotAvailable: 1 of 1 resources are not available' });
  t.same(objectOutcome(work([cond('Applied', 'False', 'AppliedManifestWorkFailed', 'Failed to apply manifest work', 1)], {
    manifest: [cond('Applied', 'False', 'AppliedManifestFailed', 'Failed to apply manifest: no matches for kind "Widget" in version "example.com/v1"')],
  }), UP), { state: 'ApplyFailed', message: 'no matches for kind "Widget" in version "example.com/v1"' }, 'the agent\'s words');
  t.same(objectOutcome(work([cond('Applied', 'False', 'AppliedManifestWorkFailed', '', 1)], {
    manifest: [cond('Applied', 'False', 'AppliedManifestFailed', 'Failed to apply manifest: Apply failed with 1 conflict: conflict with "other": .data.a')],
  }), UP).state, 'Conflict');
  t.same(objectOutcome(work([...applied, cond('Degraded', 'True', 'ManifestsTooLarge', 'too large')]), UP), { state: 'ApplyFailed', message: 'too large' });
  t.same(objectOutcome(work(applied, { generation: 2 }), UP), { state: 'Pending', message: 'the agent has not reported generation 2 of the work yet' }, 'status of an older generation');
  t.same(objectOutcome(work(undefined), UP).state, 'Pending', 'no status yet');
  t.same(objectOutcome(undefined, UP), { state: 'Pending', message: 'no ManifestWork yet' });
  t.same(objectOutcome(work(applied), { ready: false, message: 'lease stale' }), { state: 'ClusterNotReady', message: 'lease stale' });
  t.same(objectOutcome(work(applied, { deleting: true }), UP).state, 'WaitingForRemoval');
});

t.test('a cluster is ready when ManagedClusterConditionAvailable is True; a stale lease is not', async (t) => {
  const cluster = (c?: Condition): ManagedCluster => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'wec1' }, status: { conditions: c ? [c] : [] } });
  t.same(clusterReadiness(cluster(cond('ManagedClusterConditionAvailable', 'True'))), { ready: true });
  t.same(clusterReadiness(cluster(cond('ManagedClusterConditionAvailable', 'Unknown', 'ManagedClusterLeaseUpdateStopped', 'Registration agent stopped updating its lease.'))),
    { ready: false, message: 'ManagedClusterConditionAvailable Unknown: ManagedClusterLeaseUpdateStopped (Registration agent stopped updating its lease.)' });
  t.same(clusterReadiness(cluster()), { ready: false, message: 'no ManagedClusterConditionAvailable yet' });
  t.same(clusterReadiness(undefined), { ready: false, message: 'no such ManagedCluster' });
});

t.test('destinations: counts per state, the first broken objects, and Ready', async (t) => {
  const ids = Array.from({ length: 15 }, (_, i) => ({ group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: `cm${i}` }));
  const dests = destinationStatuses(['wec2', 'wec1'], () => ids,
    (c, id) => (c === 'wec2' && id.name !== 'cm0' ? { state: 'ApplyFailed', message: 'denied' } : { state: 'Available' }), (c) => ({ ready: c === 'wec1' }));
  t.same(dests.map((d) => [d.clusterId, d.ready, d.objects, d.states]), [['wec1', true, 15, { Available: 15 }], ['wec2', false, 15, { Available: 1, ApplyFailed: 14 }]]);
  t.notOk(dests[0]!.brokenObjects, 'nothing broken in wec1');
  t.equal(dests[1]!.brokenObjects!.length, MAX_BROKEN_OBJECTS, 'capped');
  t.same(dests[1]!.brokenObjects![0], { group: '', resource: 'configmaps', namespace: 'demo', name: 'cm1', state: 'ApplyFailed', message: 'denied' });
  t.same(readyCondition(dests), { status: 'False', reason: 'Unavailable', message: '14 of 30 placements are not available; wec2: configmaps demo/cm1 ApplyFailed (denied)' });
  t.same(readyCondition([dests[0]!]), { status: 'True', reason: 'Available', message: 'all 15 placements are available' });
  t.same(readyCondition([]), { status: 'True', reason: 'Available', message: 'no object is selected for any cluster' });
});
