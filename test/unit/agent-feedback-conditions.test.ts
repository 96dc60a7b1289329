// Status feedback (OCM's well-known rules and JSONPaths), per-manifest conditions with
// lastTransitionTime kept while unchanged, condition rules, and OCM's work-level aggregation.
import t from 'tap';
import { feedbackOf, wellKnownStatusKinds } from '../../src/agent/status/status-feedback.js';
import { evalJsonPath } from '../../src/agent/status/jsonpath.js';
import { manifestStatus } from '../../src/agent/status/manifest-conditions.js';
import { workStatus } from '../../src/agent/status/work-conditions.js';
import { applyOrder, isProtected } from '../../src/agent/apply/manifest-order.js';
import { ApplyEngine } from '../../src/agent/apply/apply-engine.js';
import { findManifestConfig } from '../../src/agent/apply/manifest-config.js';
import type { ManifestWork } from '../../src/kube/ocm-api.js';
import type { ManifestApplyResult } from '../../src/agent/shared/contract.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, status: { replicas: 2, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }, { type: 'Progressing', status: 'True' }] } };
const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } };
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } };

t.test('WellKnownStatus: OCM v1.2.0 names, paths and types', async (t) => {
  t.same(feedbackOf(deployment, [{ type: 'WellKnownStatus' }]).values, [
    { name: 'ReadyReplicas', fieldValue: { type: 'Integer', integer: 1 } },
    { name: 'Replicas', fieldValue: { type: 'Integer', integer: 2 } },
    { name: 'AvailableReplicas', fieldValue: { type: 'Integer', integer: 1 } },
  ]);
  t.same(feedbackOf(job, [{ type: 'WellKnownStatus' }]).values, [
    { name: 'JobComplete', fieldValue: { type: 'String', string: 'True' } },
    { name: 'JobSucceeded', fieldValue: { type: 'Integer', integer: 1 } },
  ]);
  const p = feedbackOf(pod, [{ type: 'WellKnownStatus' }]);
  t.same(p.values, [{ name: 'PodReady', fieldValue: { type: 'String', string: 'False' } }, { name: 'PodPhase', fieldValue: { type: 'String', string: 'Running' } }]);
  t.match(p.condition, { status: 'True', reason: 'StatusFeedbackSynced' });
  const none = feedbackOf({ apiVersion: 'v1', kind: 'ConfigMap' }, [{ type: 'WellKnownStatus' }]);
  t.match(none.condition, { status: 'False', reason: 'StatusFeedbackSyncFailed', message: /cannot find the wellknown statuses/ });
  t.match(feedbackOf(pod, undefined).condition, { status: 'True', reason: 'NoStatusFeedbackSynced' });
  t.same(wellKnownStatusKinds().map((k) => `${k.group}/${k.kind}`).sort(), ['/Pod', 'apps/DaemonSet', 'apps/Deployment', 'batch/Job']);
});

t.test('JSONPaths: filters, missing paths, lists and floats as OCM treats them', async (t) => {
  const r = feedbackOf({ ...deployment, status: { ...deployment.status, ratio: 0.5, paused: false } }, [{ type: 'JSONPaths', jsonPaths: [
    { name: 'avail', path: '.status.conditions[?(@.type=="Available")].status' },
    { name: 'missing', path: '.status.nothing.here' },
    { name: 'paused', path: '.status.paused' },
    { name: 'first', path: '.status.conditions[0].type' },
    { name: 'list', path: '.status.conditions' },
    { name: 'ratio', path: '.status.ratio' },
    { name: 'v2', version: 'v2', path: '.status.replicas' },
  ] }]);
  t.same(r.values, [
    { name: 'avail', fieldValue: { type: 'String', string: 'True' } },
    { name: 'paused', fieldValue: { type: 'Boolean', boolean: false } },
    { name: 'first', fieldValue: { type: 'String', string: 'Available' } },
  ]);
  t.match(r.condition, { status: 'False', reason: 'StatusFeedbackSyncFailed' });
  t.match(r.condition.message, /the type \[\]interface \{\} of the value for list is not found/);
  t.match(r.condition.message, /the type float64 of the value for ratio is not found/);
  t.match(r.condition.message, /version set in the path v2 is not matched/);
  t.same(evalJsonPath(deployment, `.status.conditions[*].type`), ['Available', 'Progressing']);
  t.same(evalJsonPath(deployment, `{.metadata['name']}`), ['d']);
});

t.test('manifest conditions: OCM reasons; lastTransitionTime kept while status is unchanged', async (t) => {
  const first = manifestStatus({ applyError: undefined, read: { found: job }, option: { resourceIdentifier: { resource: 'jobs', name: 'j' }, feedbackRules: [{ type: 'WellKnownStatus' }], conditionRules: [{ condition: 'Complete', type: 'WellKnownConditions' }, { condition: 'Ok', type: 'CEL', celExpressions: ['true'] }] }, generation: 4, now: 'T1' });
  t.match(first.conditions, [
    { type: 'Applied', status: 'True', reason: 'AppliedManifestComplete', message: 'Apply manifest complete', observedGeneration: 4, lastTransitionTime: 'T1' },
    { type: 'Available', status: 'True', reason: 'ResourceAvailable', message: 'Resource is available' },
    { type: 'StatusFeedbackSynced', status: 'True', reason: 'StatusFeedbackSynced' },
    { type: 'Complete', status: 'True', reason: 'ConditionRuleEvaluated', message: 'Job is finished', observedGeneration: 4 },
    { type: 'Ok', status: 'Unknown', reason: 'ConditionRuleInvalid' },
  ]);
  const again = manifestStatus({ applyError: undefined, read: { found: job }, option: undefined, generation: 5, previous: { conditions: first.conditions, values: first.feedback }, now: 'T2' });
  t.equal(again.conditions.find((c) => c.type === 'Applied')!.lastTransitionTime, 'T1', 'same status keeps its time');
  t.equal(again.conditions.find((c) => c.type === 'Applied')!.observedGeneration, 5);
  t.equal(again.conditions.find((c) => c.type === 'StatusFeedbackSynced')!.lastTransitionTime, 'T2', 'feedback values changed → renewed');
  const failed = manifestStatus({ applyError: 'boom', read: { notFound: true }, option: undefined, generation: 5, previous: { conditions: again.conditions }, now: 'T3' });
  t.match(failed.conditions.find((c) => c.type === 'Applied'), { status: 'False', reason: 'AppliedManifestFailed', message: 'Failed to apply manifest: boom', lastTransitionTime: 'T3' });
  t.match(failed.conditions.find((c) => c.type === 'Available'), { status: 'False', reason: 'ResourceNotAvailable', lastTransitionTime: 'T3' });
});

const meta = (ordinal: number) => ({ ordinal, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', name: `c${ordinal}`, namespace: 'a' });
const W: ManifestWork = { metadata: { name: 'w', namespace: 'wec1', generation: 2 }, spec: { workload: { manifests: [{}, {}] } } };

t.test('work conditions: OCM aggregation, transition times kept, limits → Degraded', async (t) => {
  const res = (avail: 'True' | 'False' | 'Unknown'): ManifestApplyResult[] => [0, 1].map((i) => ({ ordinal: i, resourceMeta: meta(i), owned: true, feedback: [],
    conditions: [{ type: 'Applied', status: 'True', reason: 'AppliedManifestComplete', message: '', lastTransitionTime: 'T' }, { type: 'Available', status: i === 1 ? avail : 'True', reason: 'x', message: '', lastTransitionTime: 'T' }] }));
  const s1 = workStatus(W, res('False'), undefined, { now: 'T1' });
  t.match(s1.conditions!.find((c) => c.type === 'Available'), { status: 'False', reason: 'ResourcesNotAvailable', message: '1 of 2 resources are not available', observedGeneration: 2 });
  const s2 = workStatus(W, res('Unknown'), s1, { now: 'T2' });
  t.match(s2.conditions!.find((c) => c.type === 'Available'), { status: 'Unknown', message: '1 of 2 resources have unknown status', lastTransitionTime: 'T2' });
  t.equal(s2.conditions!.find((c) => c.type === 'Applied')!.lastTransitionTime, 'T1');
  const s3 = workStatus(W, res('True'), s2, { wecUnreachable: 'wec1 does not answer', now: 'T3' });
  t.match(s3.conditions!.find((c) => c.type === 'Available'), { status: 'Unknown', message: 'wec1 does not answer' });
  t.equal(s3.resourceStatus!.manifests!.length, 2);
  const big = { ...W, spec: { workload: { manifests: [{ kind: 'ConfigMap', data: { x: 'y'.repeat(600 * 1024) } }] } } };
  t.match(workStatus(big, [], undefined).conditions!.find((c) => c.type === 'Degraded'), { status: 'True', reason: 'ManifestsTooLarge' });
});

t.test('order, protection and manifestConfig matching', async (t) => {
  t.same(applyOrder([{ kind: 'Deployment' }, { kind: 'MutatingWebhookConfiguration' }, { kind: 'Secret' }, { kind: 'CustomResourceDefinition' }, { kind: 'RoleBinding' }, { kind: 'ServiceAccount' }, { kind: 'Widget' }, { kind: 'Namespace' }]),
    [3, 7, 4, 5, 2, 0, 6, 1]);
  t.ok(isProtected({ group: '', resource: 'namespaces', namespace: '', name: 'kube-system' }));
  t.ok(isProtected({ group: '', resource: 'configmaps', namespace: 'kube-system', name: 'kubestellar-fleet' }));
  t.notOk(isProtected({ group: '', resource: 'namespaces', namespace: '', name: 'app' }));
  const cfg = findManifestConfig(meta(0), [
    { resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'a', name: 'other' }, updateStrategy: { type: 'ReadOnly' } },
    { resourceIdentifier: { group: '', resource: 'configmaps', namespace: '*', name: 'c*' }, feedbackRules: [{ type: 'JSONPaths', jsonPaths: [] }] },
    { resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'a', name: 'c0' }, updateStrategy: { type: 'CreateOnly' } },
  ]);
  t.equal(cfg?.updateStrategy?.type, 'CreateOnly');
  t.equal(cfg?.feedbackRules?.length, 1);
  t.equal(findManifestConfig(meta(0), []), undefined);
});

t.test('observe recomputes one manifest from a live object', async (t) => {
  const m = mockUpstream('https://wec.test:6443');
  const eng = new ApplyEngine({ wec: m.up });
  const work: ManifestWork = { metadata: { name: 'w', namespace: 'wec1', generation: 1 },
    spec: { workload: { manifests: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'a' } }] },
      manifestConfigs: [{ resourceIdentifier: { group: 'apps', resource: 'deployments', namespace: 'a', name: 'd' }, feedbackRules: [{ type: 'WellKnownStatus' }] }] },
    status: { resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0, group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', name: 'd', namespace: 'a' },
      conditions: [{ type: 'Applied', status: 'True', reason: 'AppliedManifestComplete', message: 'Apply manifest complete', lastTransitionTime: 'T0' }] }] } } };
  const r = eng.observe(work, 0, { ...deployment, metadata: { name: 'd', namespace: 'a' } });
  t.equal(r.conditions.find((c) => c.type === 'Applied')!.lastTransitionTime, 'T0');
  t.match(r.conditions.find((c) => c.type === 'Available'), { status: 'True' });
  t.equal(r.feedback.length, 3);
  const gone = eng.observe(work, 0, undefined);
  t.match(gone.conditions.find((c) => c.type === 'Available'), { status: 'False', reason: 'ResourceNotAvailable' });
  t.same(m.calls(), [], 'observe never calls the WEC');

  // The work as cached before our first status write reached the informer: no status yet. The
  // result the agent holds says applied; an event then (e.g. our own owner-reference patch) must
  // not turn it into "not applied", which would drop the object's WorkStatus.
  const stale: ManifestWork = { ...work, status: undefined };
  const prior = eng.observe(work, 0, { ...deployment, metadata: { name: 'd', namespace: 'a' } });
  t.notOk(eng.observe(stale, 0, { ...deployment, metadata: { name: 'd', namespace: 'a' } }).owned, 'without what the agent holds, a stale work reads as not applied');
  const kept = eng.observe(stale, 0, { ...deployment, metadata: { name: 'd', namespace: 'a' } }, prior);
  t.ok(kept.owned, 'with it, still applied');
  t.match(kept.conditions.find((c) => c.type === 'Applied'), { status: 'True', lastTransitionTime: 'T0' }, 'and its transition time kept');
  await m.close();
});
