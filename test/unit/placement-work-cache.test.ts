// The works cache's copy of a work (src/controllers/placement/works.ts slimWork): every answer
// placement reads from a work — the object's state in its cluster, what failed to apply, whether
// a change was the agent's status only — is the same from the copy as from the work; what repeats
// between clusters is one shared, frozen object. The same for other WDSs' works and the conflicts
// index. And the interner under them stays bounded, as does what is kept of an agent's status
// whatever it writes (docs/security.md), and a policy's status.errors.
import t from 'tap';
import { applyFailures, statusOnlyChange } from '../../src/controllers/placement/apply-failures.js';
import { conflictCopy, Conflicts } from '../../src/controllers/placement/conflicts.js';
import { objectOutcome } from '../../src/controllers/placement/destination-state.js';
import { MAX_AGENT_MESSAGE, slimWork, Works } from '../../src/controllers/placement/works.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';
import { boundedErrors, MAX_ERROR_LENGTH, MAX_POLICY_ERRORS } from '../../src/controllers/placement/policy-status.js';
import { Interner } from '../../src/kube/interner.js';
import type { Condition, FeedbackValue, ManifestWork } from '../../src/kube/ocm-api.js';
import { MAX_FIELDS, statusFromValues, statusValues } from '../../src/kube/status-in-work.js';

const at = '2026-11-24T09:00:00Z';
const c = (type: string, status: Condition['status'], reason: string, message = '', observedGeneration?: number): Condition =>
  ({ type, status, reason, message, lastTransitionTime: at, ...(observedGeneration !== undefined ? { observedGeneration } : {}) });
const meta = (i: number, kind: string, name: string) => ({ ordinal: i, group: kind === 'ConfigMap' ? '' : 'apps', version: 'v1', kind, resource: `${kind.toLowerCase()}s`, namespace: 'demo', name });

/** A work as kube-apiserver returns it: two manifests, managedFields, the agent's conditions. */
function work(cluster: string, o: { work?: Condition[]; first?: Condition[]; second?: Condition[]; available?: number; replicas?: number; generation?: number; deleting?: boolean; kind?: string } = {}): ManifestWork {
  const kind = o.kind ?? 'Deployment';
  return {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: {
      name: 'wds1-0123456789abcdef', namespace: cluster, uid: `uid-${cluster}`, resourceVersion: `${cluster.length}42`, generation: o.generation ?? 1, creationTimestamp: at,
      labels: { 'view.kubestellar.io/wds': 'wds1', 'bindingpolicy.view.kubestellar.io/p': '' },
      annotations: { 'view.kubestellar.io/source': 'o|apps|v1|deployments|demo|web', 'view.kubestellar.io/source-generation': '4' },
      managedFields: [{ manager: 'kubestellar-view-wds1', operation: 'Apply', time: at, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }] as never,
      ...(o.deleting ? { deletionTimestamp: at, finalizers: ['cluster.open-cluster-management.io/manifest-work-cleanup'] } : {}),
    },
    spec: {
      workload: { manifests: [
        { apiVersion: 'apps/v1', kind, metadata: { name: 'web', namespace: 'demo' }, spec: { replicas: o.replicas ?? 2, template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'demo' }, data: { a: '1' } },
      ] },
      deleteOption: { propagationPolicy: 'Foreground' },
      manifestConfigs: [{ resourceIdentifier: { group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' }, feedbackRules: [{ type: 'WellKnownStatus' }] }] as never,
    },
    status: {
      conditions: o.work ?? [c('Applied', 'True', 'AppliedManifestWorkComplete', 'Apply manifest work complete', 1), c('Progressing', 'False', 'Done'), c('Available', 'True', 'ResourcesAvailable', 'All resources are available', 1)],
      resourceStatus: { manifests: [
        { resourceMeta: meta(0, kind, 'web'), conditions: o.first ?? [c('Applied', 'True', 'AppliedManifestComplete', 'Apply manifest complete'), c('Available', 'True', 'ResourceAvailable', 'Resource is available')],
          statusFeedback: { values: [{ name: 'ReadyReplicas', fieldValue: { type: 'Integer', integer: o.available ?? 2 } }, { name: 'AvailableReplicas', fieldValue: { type: 'Integer', integer: o.available ?? 2 } }] } },
        { resourceMeta: meta(1, 'ConfigMap', 'settings'), conditions: o.second ?? [c('Applied', 'True', 'AppliedManifestComplete', 'Apply manifest complete')] },
      ] },
    },
  };
}

const failed = [c('Applied', 'False', 'AppliedManifestWorkFailed', 'Failed to apply manifest work', 1)];
const VARIANTS: [string, Parameters<typeof work>[1]][] = [
  ['available', {}],
  ['short of replicas', { available: 1, replicas: 3 }],
  ['a newer generation not reported', { generation: 2 }],
  ['being deleted', { deleting: true }],
  ['not available', { work: [c('Applied', 'True', 'AppliedManifestWorkComplete', '', 1), c('Available', 'False', 'ResourcesNotAvailable', '1 of 2 not available', 1)] }],
  ['degraded', { work: [c('Applied', 'True', 'AppliedManifestWorkComplete', '', 1), c('Degraded', 'True', 'ManifestsTooLarge', 'too large')] }],
  ['second manifest conflicts', { work: failed, second: [c('Applied', 'False', 'AppliedManifestFailed', 'Failed to apply manifest: Apply failed with 1 conflict: conflict with "other": .data.a')] }],
  ['first manifest fails', { work: failed, first: [c('Applied', 'False', 'AppliedManifestFailed', 'Failed to apply manifest: no matches for kind')] }],
  ['a Job not complete', { kind: 'Job' }],
];

t.test('every answer placement reads is the same from the cache copy', async (t) => {
  for (const cluster of [{ ready: true }, { ready: false, message: 'stale lease' }]) {
    for (const [what, o] of VARIANTS) {
      const w = work('wec1', o);
      const slim = slimWork(structuredClone(w));
      t.same(objectOutcome(slim, cluster), objectOutcome(w, cluster), `${what}, cluster ready ${cluster.ready}: the state`);
      t.same(applyFailures(slim), applyFailures(w), `${what}: what failed to apply`);
      t.same([slim.metadata.name, slim.metadata.namespace, slim.metadata.resourceVersion, slim.metadata.generation, slim.metadata.labels, slim.metadata.annotations],
        [w.metadata.name, w.metadata.namespace, w.metadata.resourceVersion, w.metadata.generation, w.metadata.labels, w.metadata.annotations], `${what}: identity, labels, annotations`);
    }
  }
  const states = VARIANTS.map(([, o]) => objectOutcome(work('wec1', o), { ready: true }).state);
  t.same([...new Set(states)].sort(), ['Applied', 'ApplyFailed', 'Available', 'Conflict', 'Pending', 'WaitingForRemoval'], 'the variants cover every state a work tells');
});

t.test('an agent\'s status write is status-only on the copies too; a spec change (new generation) or label change is not', async (t) => {
  const before = slimWork(work('wec1'));
  t.ok(statusOnlyChange(before, slimWork(work('wec1', { available: 1 }))), 'feedback moved');
  t.notOk(statusOnlyChange(before, slimWork(work('wec1', { generation: 2 }))), 'spec changed: kube-apiserver moved the generation');
  const relabelled = work('wec1');
  relabelled.metadata.labels = { ...relabelled.metadata.labels, 'bindingpolicy.view.kubestellar.io/q': '' };
  t.notOk(statusOnlyChange(before, slimWork(relabelled)), 'another policy\'s label');
  t.notOk(statusOnlyChange(before, slimWork(work('wec1', { deleting: true }))), 'deletion');
});

t.test('what repeats from cluster to cluster is one frozen object; the rest is dropped', async (t) => {
  const a = slimWork(work('wec1'));
  const b = slimWork(work('wec2'));
  t.equal(a.metadata.annotations, b.metadata.annotations, 'annotations shared');
  t.equal(a.metadata.labels, b.metadata.labels, 'labels shared');
  t.equal(a.spec, b.spec, 'the kept spec shared');
  t.equal(a.status!.conditions![0], b.status!.conditions![0], 'equal conditions shared');
  t.equal(a.status!.resourceStatus!.manifests![0]!.statusFeedback, b.status!.resourceStatus!.manifests![0]!.statusFeedback, 'equal feedback shared');
  t.ok(Object.isFrozen(a.metadata.annotations) && Object.isFrozen(a.status!.conditions![0]), 'shared parts are frozen');
  const w = work('wec1');
  t.same(a.spec, {
    workload: { manifests: [{ kind: 'Deployment', spec: { replicas: 2 } }, { kind: 'ConfigMap' }] },
    manifestConfigs: w.spec!.manifestConfigs!.map((c) => ({ resourceIdentifier: c.resourceIdentifier })),
  }, 'of the spec: each manifest\'s kind and replicas, and which object it is');
  t.same(a.status!.conditions!.map((x) => x.type), ['Applied', 'Available'], 'of the work\'s conditions: those read');
  t.notOk(a.status!.conditions![0]!.lastTransitionTime, 'no timestamps');
  t.notOk(a.metadata.managedFields || a.metadata.uid || a.metadata.creationTimestamp, 'no managedFields, uid, creationTimestamp');
  t.notOk(a.status!.resourceStatus!.manifests![1]!.statusFeedback, 'no feedback where the agent gave none');
});

t.test('another WDS\'s work: the conflicts index finds the same from the copy', async (t) => {
  const other = (cluster: string, wds: string) => {
    const w = work(cluster);
    w.metadata.labels = { 'view.kubestellar.io/wds': wds };
    w.metadata.name = `${wds}-0123456789abcdef`;
    return w;
  };
  const id = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web' };
  const full = new Conflicts();
  const copied = new Conflicts();
  for (const w of [other('wec1', 'wds2'), other('wec1', 'wds3'), other('wec2', 'wds2')]) {
    t.same(copied.index(false, conflictCopy(structuredClone(w))), full.index(false, w), `${w.metadata.namespace}: the same identity`);
  }
  t.same(copied.otherWDSs('wec1', id), ['wds2', 'wds3']);
  t.same(copied.otherWDSs('wec2', id), full.otherWDSs('wec2', id));
  const c = conflictCopy(other('wec1', 'wds2'));
  t.same(Object.keys(c.metadata).sort(), ['labels', 'name', 'namespace', 'resourceVersion'], 'identity and labels only');
  t.same(c.spec, { manifestConfigs: [{ resourceIdentifier: { group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' } }] });
  t.equal(c.spec, conflictCopy(other('wec2', 'wds2')).spec, 'shared between clusters');
});

t.test('Interner: equal values are one instance; it forgets the least recently used beyond its entries or size', async (t) => {
  const i = new Interner({ entries: 2, bytes: 6_400 });
  const x = i.value({ a: [1, 2] });
  t.equal(i.value({ a: [1, 2] }), x, 'equal value: the same instance');
  t.not(i.value({ a: [1, 3] }), x, 'different value: its own');
  t.ok(Object.isFrozen(x) && Object.isFrozen(x.a), 'frozen, deep');
  const s1 = ['long-string-', 'one'].join('');
  t.equal(i.string(s1), s1);
  t.equal(i.string(['long-string-', 'one'].join('')), s1, 'an equal string: the first instance');
  i.value({ b: 1 });
  i.value({ c: 1 });
  t.not(i.value({ a: [1, 2] }), x, 'pushed out by two newer values: a fresh instance');
  const big = { s: 'x'.repeat(200) };
  t.equal(i.value(big), big, 'a value over a sixteenth of the size is returned as it is');
  t.not(i.value({ s: 'x'.repeat(200) }), big, '… and not kept');
  const sized = new Interner({ entries: 100, bytes: 6_400 });
  const first = sized.value({ n: 0, pad: 'y'.repeat(80) });
  for (let n = 1; n < 30; n++) sized.value({ n, pad: 'y'.repeat(80) });
  t.not(sized.value({ n: 0, pad: 'y'.repeat(80) }), first, 'pushed out by size before the entry limit');
  t.equal(i.value(undefined), undefined);
  t.equal(i.value(3), 3, 'scalars as they are');
});

t.test("what is kept of an agent's status is bounded, whatever it writes; the answers stay the same", async (t) => {
  const long = 'w'.repeat(32 * 1024);
  const w = work('wec1', { work: failed, second: [c('Applied', 'False', 'AppliedManifestFailed', `Failed to apply manifest: ${long}`)] });
  const manifests = w.status!.resourceStatus!.manifests!;
  // 10,000 more manifest entries than the work has, and 1,000 feedback values and conditions on the first.
  for (let i = 0; i < 10_000; i++) manifests.push({ resourceMeta: meta(2 + i, 'ConfigMap', `x${i}`), conditions: [c('Applied', 'False', 'X', long)] });
  manifests[0]!.conditions.push(...Array.from({ length: 1000 }, () => c('Applied', 'False', 'Late', long)));
  manifests[0]!.statusFeedback!.values!.push(...Array.from({ length: 1000 }, (_, i) => ({ name: `V${i}`, fieldValue: { type: 'String' as const, string: long } })));
  const slim = slimWork(structuredClone(w));
  const kept = slim.status!.resourceStatus!.manifests!;
  t.equal(kept.length, 2, 'as many entries as the work has manifests');
  t.same(kept[0]!.conditions.map((x) => x.reason), ['AppliedManifestComplete', 'ResourceAvailable'], 'the first Applied and Available conditions only');
  t.same(kept[0]!.statusFeedback!.values!.map((v) => v.name), ['AvailableReplicas'], 'the values read');
  t.equal(kept[1]!.conditions[0]!.message!.length, MAX_AGENT_MESSAGE + 1, 'a message cut (with …)');
  t.ok(JSON.stringify(slim).length < 8 * 1024, `${JSON.stringify(slim).length} bytes kept of ${JSON.stringify(w).length}`);
  t.same(applyFailures(slim).map((f) => f.manifest), applyFailures(w).slice(0, 1).map((f) => f.manifest), 'the same failure read');
  t.same(objectOutcome(slim, { ready: true }).state, objectOutcome(w, { ready: true }).state);
});

t.test("a policy's status.errors: at most 100, each cut, then how many more", async (t) => {
  const errors = Array.from({ length: 250 }, (_, i) => `e${String(i).padStart(3, '0')} ${'x'.repeat(i === 0 ? 5000 : 10)}`);
  const out = boundedErrors(errors);
  t.equal(out.length, MAX_POLICY_ERRORS + 1);
  t.equal(out[0]!.length, MAX_ERROR_LENGTH + 1, 'cut, with …');
  t.equal(out.at(-1), '… and 150 more errors');
  t.same(boundedErrors(['a', 'b']), ['a', 'b'], 'a short list is as it was');
});

t.test('a bundle\'s copy keeps the values that carry its objects\' statuses, bounded, and when its status was written', async (t) => {
  const carried = statusValues({ replicas: 2, readyReplicas: 2 }, { lastGeneration: 4, lastGenerationIsApplied: true })!.values;
  const flood = Array.from({ length: 500 }, (_, i) => ({ name: `view.kubestellar.io/status.f${i}`, fieldValue: { type: 'JsonRaw' as const, jsonRaw: '1' } }));
  const w = work('wec1');
  w.metadata.annotations = { ...w.metadata.annotations, 'view.kubestellar.io/bundle': 'g' };
  w.metadata.managedFields = [...w.metadata.managedFields!, { manager: 'agent', operation: 'Update', subresource: 'status', time: '2026-11-26T10:00:00Z' }] as never;
  const manifest = (i: number, values: FeedbackValue[]) => ({ resourceMeta: meta(i, i === 0 ? 'Deployment' : 'ConfigMap', i === 0 ? 'web' : 'settings'), conditions: [], statusFeedback: { values } });
  w.status = { conditions: [], resourceStatus: { manifests: [manifest(0, carried), manifest(1, [...flood, { name: 'view.kubestellar.io/status.big', fieldValue: { type: 'JsonRaw', jsonRaw: 'x'.repeat(2000) } }])] } };
  const copy = slimWork(w);
  const kept = copy.status!.resourceStatus!.manifests!;
  t.same(statusFromValues(kept[0]!.statusFeedback!.values), { status: { replicas: 2, readyReplicas: 2 }, details: { lastGeneration: 4, lastGenerationIsApplied: true } }, 'the status comes back from the copy');
  t.equal(kept[1]!.statusFeedback!.values!.length, MAX_FIELDS + 3, 'a flood of values is cut');
  t.same(copy.metadata.managedFields, [{ operation: 'Update', subresource: 'status', time: '2026-11-26T10:00:00Z' }], 'the time of its last status write');
  const plain = work('wec1');
  plain.status = { conditions: [], resourceStatus: { manifests: [manifest(0, carried)] } };
  t.same(slimWork(plain).status!.resourceStatus!.manifests![0]!.statusFeedback!.values, [], 'a work of one object keeps none of them (its WorkStatus carries the status)');
});

t.test('a work being written: its echo is told from someone else\'s change once the write is answered', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  its.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, { metadata: { name: 'w', namespace: 'wec1', resourceVersion: '77' } }).delay(50);
  const works = new Works(its.up, Works.newStore(), 'kubestellar-view-wds1', 'wds1');
  const written = works.apply('wec1', { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name: 'w', namespace: 'wec1' } } as ManifestWork);
  const echo = { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name: 'w', namespace: 'wec1', resourceVersion: '77' } } as ManifestWork;
  const pending = works.writing('wec1', 'w');
  t.ok(pending, 'a write is on its way');
  t.notOk(works.isEcho(echo), 'before its answer the echo cannot be told');
  await pending;
  t.ok(works.isEcho(echo), 'once answered, it is');
  await written;
  t.equal(works.writing('wec1', 'w'), undefined, 'nothing on its way any more');
  t.equal(works.writing('wec1', 'other'), undefined);
});
