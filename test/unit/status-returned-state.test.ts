// Returned status, pure: KubeStellar's singleton and multi-WEC rules, and the combination over
// clusters of the kinds that have one.
import t from 'tap';
import { combineConditions, combineStatuses } from '../../src/controllers/status/combine.js';
import { returnedState, returnPlan, returnRequest, statusInWdsTerms } from '../../src/controllers/status/returned-state.js';

const DEPLOYMENT = { group: 'apps', kind: 'Deployment' };
const CONFIGMAP = { group: '', kind: 'ConfigMap' };
const mod = (clusters: string[], singleton = false, multi = false) => ({ wantSingletonReportedState: singleton, wantMultiWECReportedState: multi, clusters });

t.test('the request: the clusters of the policies asking, per kind of return', async (t) => {
  t.same(returnRequest(undefined), { singleton: false, singletonClusters: [], multi: false, multiClusters: [] }, 'no policy');
  t.same(returnRequest({ a: mod(['wec2'], true), b: mod(['wec1', 'wec2'], true), c: mod(['wec3']) }),
    { singleton: true, singletonClusters: ['wec1', 'wec2'], multi: false, multiClusters: [] }, 'a plain policy\'s clusters do not qualify');
  t.same(returnRequest({ a: mod(['wec1'], true), b: mod(['wec1', 'wec2'], false, true) }),
    { singleton: true, singletonClusters: ['wec1'], multi: true, multiClusters: ['wec1', 'wec2'] });
});

t.test('the plan: KubeStellar\'s table', async (t) => {
  const req = (s: string[] | undefined, m: string[] | undefined) => ({ singleton: s !== undefined, singletonClusters: s ?? [], multi: m !== undefined, multiClusters: m ?? [] });
  t.same(returnPlan(req(undefined, undefined), DEPLOYMENT), { kind: 'none', why: 'not requested' });
  t.same(returnPlan(req(['wec1'], undefined), DEPLOYMENT), { kind: 'copy', cluster: 'wec1' }, 'singleton, one cluster: copied');
  t.same(returnPlan(req(['wec1', 'wec2'], undefined), DEPLOYMENT), { kind: 'none', why: '2 clusters qualify' }, 'singleton, two: nothing');
  t.same(returnPlan(req([], undefined), DEPLOYMENT), { kind: 'none', why: '0 clusters qualify' }, 'singleton, none');
  t.same(returnPlan(req(undefined, ['wec2']), DEPLOYMENT), { kind: 'copy', cluster: 'wec2' }, 'multi-WEC, one cluster: copied');
  t.same(returnPlan(req(undefined, ['wec1', 'wec2']), DEPLOYMENT), { kind: 'combine', clusters: ['wec1', 'wec2'] }, 'multi-WEC, two: combined');
  t.same(returnPlan(req(['wec1', 'wec2'], ['wec1', 'wec2']), DEPLOYMENT), { kind: 'combine', clusters: ['wec1', 'wec2'] }, 'both, two: multi-WEC wins');
  t.same(returnPlan(req(undefined, ['wec1', 'wec2']), CONFIGMAP), { kind: 'none', why: 'the status of a ConfigMap is not combined over clusters' });
});

t.test('the state: label while singleton is asked, status copied or combined, cleared only when returned before', async (t) => {
  const one = { singleton: true, singletonClusters: ['wec1'], multi: false, multiClusters: [] };
  const reported = new Map([['wec1', { readyReplicas: 2 }], ['wec2', { readyReplicas: 3 }]]);
  t.same(returnedState(one, { kind: 'copy', cluster: 'wec1' }, reported, DEPLOYMENT, false),
    { executingCount: '1', returnedFrom: 'wec1', status: { readyReplicas: 2 } });
  t.same(returnedState(one, { kind: 'copy', cluster: 'wec1' }, new Map(), DEPLOYMENT, false),
    { executingCount: '1', returnedFrom: undefined, status: undefined }, 'nothing reported yet, nothing returned before: status left alone');
  const two = { singleton: true, singletonClusters: ['wec1', 'wec2'], multi: false, multiClusters: [] };
  t.same(returnedState(two, { kind: 'none', why: '2 clusters qualify' }, reported, DEPLOYMENT, true),
    { executingCount: '2', returnedFrom: undefined, status: {} }, 'a status returned before is cleared');
  t.same(returnedState({ singleton: false, singletonClusters: [], multi: false, multiClusters: [] }, { kind: 'none', why: 'not requested' }, reported, DEPLOYMENT, false),
    { executingCount: undefined, returnedFrom: undefined, status: undefined }, 'not requested, never returned: the label absent, the status (the WDS\'s own) untouched');
  const multi = { singleton: false, singletonClusters: [], multi: true, multiClusters: ['wec1', 'wec2', 'wec3'] };
  t.same(returnedState(multi, { kind: 'combine', clusters: ['wec1', 'wec2', 'wec3'] }, reported, DEPLOYMENT, false),
    { executingCount: undefined, returnedFrom: 'wec1,wec2', status: { readyReplicas: 5 } }, 'combined over the clusters that reported');
});

t.test('combined with a cluster that has not reported: not Available everywhere yet', async (t) => {
  const multi = { singleton: false, singletonClusters: [], multi: true, multiClusters: ['wec1', 'wec2'] };
  const available = { availableReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] };
  t.same(returnedState(multi, { kind: 'combine', clusters: ['wec1', 'wec2'] }, new Map([['wec1', available]]), DEPLOYMENT, false),
    { executingCount: undefined, returnedFrom: 'wec1', status: { availableReplicas: 2, conditions: [{ type: 'Available', status: 'Unknown' }] } });
});

t.test('Deployments across clusters: counts summed, the least observed generation, Available only when available everywhere', async (t) => {
  const a = { observedGeneration: 3, replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', lastTransitionTime: '2026-01-01T00:00:01Z' },
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', lastTransitionTime: '2026-01-01T00:00:02Z' }] };
  const b = { observedGeneration: 2, replicas: 2, readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 1, updatedReplicas: 2, collisionCount: 1,
    conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'no', lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', lastTransitionTime: '2026-01-01T00:00:05Z' }] };
  t.same(combineStatuses(DEPLOYMENT, [a, b]), {
    observedGeneration: 2, replicas: 4, updatedReplicas: 4, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1, collisionCount: 1,
    conditions: [
      { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'no', lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', lastTransitionTime: '2026-01-01T00:00:05Z' },
    ],
  });
});

t.test('conditions: a negative type is True when True anywhere; a type some cluster lacks is Unknown', async (t) => {
  const out = combineConditions([
    [{ type: 'Complete', status: 'True' }, { type: 'Failed', status: 'False' }],
    [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
  ]);
  t.same(out, [{ type: 'Complete', status: 'Unknown' }, { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }]);
});

t.test('Jobs and StatefulSets: times and revisions', async (t) => {
  t.same(combineStatuses({ group: 'batch', kind: 'Job' }, [
    { succeeded: 1, startTime: '2026-01-01T00:00:05Z', completionTime: '2026-01-01T00:01:00Z' },
    { succeeded: 1, startTime: '2026-01-01T00:00:02Z', completionTime: '2026-01-01T00:02:00Z' },
  ]), { succeeded: 2, startTime: '2026-01-01T00:00:02Z', completionTime: '2026-01-01T00:02:00Z' }, 'earliest start, latest completion');
  t.same(combineStatuses({ group: 'batch', kind: 'Job' }, [{ active: 1, startTime: 'x' }, { succeeded: 1, startTime: 'y', completionTime: 'z' }]),
    { active: 1, succeeded: 1, startTime: 'x' }, 'no completion until every cluster completed');
  t.same(combineStatuses({ group: 'apps', kind: 'StatefulSet' }, [{ replicas: 1, currentRevision: 'r1', updateRevision: 'r2' }, { replicas: 1, currentRevision: 'r1', updateRevision: 'r3' }]),
    { replicas: 2, currentRevision: 'r1' }, 'a revision only when the same everywhere');
  t.throws(() => combineStatuses(CONFIGMAP, []), /no combination/);
});

t.test('statusInWdsTerms: observedGeneration in the WDS object\'s generations when the agent says which it holds', async (t) => {
  const ws = (status: Record<string, unknown> | undefined, statusDetails?: { lastGeneration: number; lastGenerationIsApplied: boolean }) => ({
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus', metadata: { name: 'deployment-ns-d', namespace: 'wec1' },
    spec: { sourceRef: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'ns', name: 'd' } },
    ...(status ? { status } : {}), ...(statusDetails ? { statusDetails } : {}),
  });
  t.same(statusInWdsTerms(ws({ observedGeneration: 2, readyReplicas: 2 }, { lastGeneration: 5, lastGenerationIsApplied: true })), { observedGeneration: 5, readyReplicas: 2 }, 'in effect: the WDS generation');
  t.same(statusInWdsTerms(ws({ observedGeneration: 2 }, { lastGeneration: 5, lastGenerationIsApplied: false })), { observedGeneration: 4 }, 'not yet: the one before, so a client waits');
  t.same(statusInWdsTerms(ws({ observedGeneration: 9 })), { observedGeneration: 9 }, 'no statusDetails (KubeStellar\'s, OCM\'s agent): the WEC\'s number');
  t.same(statusInWdsTerms(ws({ phase: 'Running' }, { lastGeneration: 5, lastGenerationIsApplied: true })), { phase: 'Running' }, 'a status without observedGeneration gets none');
  t.equal(statusInWdsTerms(ws(undefined, { lastGeneration: 5, lastGenerationIsApplied: true })), undefined);
  t.same(statusInWdsTerms(ws({ observedGeneration: 2 }, { lastGeneration: 0, lastGenerationIsApplied: true })), { observedGeneration: 2 }, 'a generation that is not one: ignored');
  const cached = ws({ observedGeneration: 1 }, { lastGeneration: 3, lastGenerationIsApplied: true });
  statusInWdsTerms(cached);
  t.same(cached.status, { observedGeneration: 1 }, 'the cached WorkStatus is not changed');
});
