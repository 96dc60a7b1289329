// The status controller with fakes: what it decides from the caches (placement recorded, WorkStatuses
// filled in the informer's store) and the requests it sends the WDS (recorded by a MockUpstream).
// One cluster's bad report (docs/security.md D13 and D14) — an overflowing count, a status nested
// 6,000 levels deep, 3,000 conditions — never keeps the others' status from being returned, and is
// said on the policies that send the object there; a status the WDS refuses (422) is reported, not
// written again until it changes.
import t from 'tap';
import { StatusController } from '../../src/controllers/status/status-controller.js';
import type { Placement, StatusSources, StoredObject } from '../../src/controllers/model/sent.js';
import { writeReturnedState } from '../../src/controllers/status/status-writer.js';
import { encodeKey, objectKey } from '../../src/controllers/model/keys.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { WORKSTATUSES_PATH, type FeedbackValue, type ManifestWork, type WorkStatus } from '../../src/kube/ocm-api.js';
import { statusValues } from '../../src/kube/status-in-work.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const DEPLOYMENTS: WorkloadResource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true,
  native: { group: 'apps', resource: 'deployments' }, bypassesView: false, hasStatus: true };
const KEY = objectKey(DEPLOYMENTS, 'demo', 'web');
const SOURCE = encodeKey(KEY);
const ID = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web' };

const deployment = (extra: Partial<KubeObject['metadata']> = {}, status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'demo', resourceVersion: '7', ...extra }, status,
});
const workStatus = (cluster: string, status: Record<string, unknown>): WorkStatus => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus', metadata: { name: `deployment-demo-web`, namespace: cluster },
  spec: { sourceRef: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'demo', name: 'web' } }, status,
});
const placement = (byPolicy: Record<string, { clusters: string[]; singleton?: boolean; multi?: boolean }>): Placement => ({
  id: ID, resourceVersion: '7', policies: Object.keys(byPolicy).sort(),
  modulations: Object.fromEntries(Object.entries(byPolicy).map(([p, m]) => [p, {
    createOnly: false, statusCollectors: [], wantSingletonReportedState: m.singleton ?? false, wantMultiWECReportedState: m.multi ?? false, clusters: m.clusters,
  }])),
});

function harness(obj: KubeObject, placed: Placement | undefined, statuses: WorkStatus[], recorded?: Map<string, ReadonlyMap<string, string[]>>,
  inWorks: Record<string, ManifestWork> = {}) {
  const wds = mockUpstream();
  const its = mockUpstream('https://its.test:6443');
  const sources: StatusSources = {
    find: (k) => (encodeKey(k) === SOURCE ? { key: KEY, id: ID, native: obj as never, ref: { ...ID, labels: {} }, bypassesView: false, shadowsNative: false, denatured: false, stored: obj as never } : undefined),
    stored: (k) => (encodeKey(k) === SOURCE ? { res: DEPLOYMENTS, obj } : undefined),
    placement: (s) => (s === SOURCE ? placed : undefined),
    keysFor: () => [KEY], allKeys: () => [KEY],
    onPlacementChange: () => () => {}, onObjectChange: () => () => {}, policy: () => undefined,
    recordStatusErrors: (source, byPolicy) => recorded?.set(source, new Map(byPolicy)),
    bundleCarrying: (cluster, id) => (id.name === ID.name && inWorks[cluster] ? { work: inWorks[cluster]!, index: 0 } : undefined),
  };
  const c = new StatusController({ wds: wds.up, its: its.up, sources, log: () => {} });
  // As the informer caches them: through the WorkStatus cache's transform.
  for (const ws of statuses) c.workStatuses.store.set(c.intake.take(ws));
  return { c, wds };
}

t.test('singleton, one cluster: the label says 1, the status is wec1\'s, the annotation says from where', async (t) => {
  const { c } = harness(deployment(), placement({ p: { clusters: ['wec1'], singleton: true } }), [workStatus('wec1', { replicas: 2, readyReplicas: 2 }), workStatus('wec2', { replicas: 9, readyReplicas: 9 })]);
  t.same(c.desired(SOURCE)?.want, { executingCount: '1', returnedFrom: 'wec1', status: { replicas: 2, readyReplicas: 2 } });
});

t.test('multi-WEC over two clusters: the combination; a policy without the flag adds no cluster', async (t) => {
  const { c } = harness(deployment(), placement({ p: { clusters: ['wec1', 'wec2'], multi: true }, q: { clusters: ['wec3'] } }),
    [workStatus('wec1', { replicas: 2, readyReplicas: 2, availableReplicas: 2 }), workStatus('wec2', { replicas: 2, readyReplicas: 2, availableReplicas: 2 }),
      workStatus('wec3', { replicas: 5, readyReplicas: 5, availableReplicas: 5 })]);
  t.same(c.desired(SOURCE)?.want, { executingCount: undefined, returnedFrom: 'wec1,wec2', status: { replicas: 4, readyReplicas: 4, availableReplicas: 4 } });
});

t.test('an object no policy asks status for is left alone; one whose status was returned before is cleared', async (t) => {
  t.same(harness(deployment({}, { replicas: 1 }), undefined, []).c.desired(SOURCE)?.want, { executingCount: undefined, returnedFrom: undefined, status: undefined });
  const returned = deployment({ labels: { 'kubestellar.io/executing-count': '1' }, annotations: { 'view.kubestellar.io/status-returned-from': 'wec1' } }, { readyReplicas: 2 });
  t.same(harness(returned, placement({ p: { clusters: ['wec1'] } }), [workStatus('wec1', { readyReplicas: 2 })]).c.desired(SOURCE)?.want,
    { executingCount: undefined, returnedFrom: undefined, status: {} });
});

t.test('the follower decides but never writes', async (t) => {
  const { c, wds } = harness(deployment(), placement({ p: { clusters: ['wec1'], singleton: true } }), [workStatus('wec1', { readyReplicas: 2 })]);
  await (c as unknown as { reconcile(s: string): Promise<void> }).reconcile(SOURCE);
  t.same(wds.calls(), [], 'no request');
});

/** A bundle's manifest as placement's works cache shows it (a view of one manifest), carrying the status in its feedback. */
const inWork = (values: FeedbackValue[], time = '2026-11-26T10:00:00Z'): ManifestWork => ({
  apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
  metadata: { name: 'wds1-b0123456789abcdef-0', namespace: 'wec1', annotations: { 'view.kubestellar.io/bundle': 'g' }, managedFields: [{ operation: 'Update', subresource: 'status', time }] },
  spec: { workload: { manifests: [] } },
  status: { conditions: [], resourceStatus: { manifests: [{ resourceMeta: { ordinal: 0, ...ID, kind: 'Deployment' }, conditions: [], statusFeedback: { values } }] } },
});

t.test('bundled: the status a work carries is returned, in the WDS generation\'s terms; a WorkStatus left from before is not read', async (t) => {
  const carried = statusValues({ replicas: 3, readyReplicas: 3, observedGeneration: 9 }, { lastGeneration: 4, lastGenerationIsApplied: true })!.values;
  const { c } = harness(deployment(), placement({ p: { clusters: ['wec1'], singleton: true } }), [workStatus('wec1', { replicas: 1, readyReplicas: 0 })], undefined, { wec1: inWork(carried) });
  t.same(c.desired(SOURCE)?.want, { executingCount: '1', returnedFrom: 'wec1', status: { replicas: 3, readyReplicas: 3, observedGeneration: 4 } });
  t.equal(c.reports.of('wec1', ID)?.metadata.managedFields?.[0]?.time, '2026-11-26T10:00:00Z', 'when it was reported: the work\'s last status write');
  // A work that does not carry the status (OCM's agent, or a status too big for it): the WorkStatus is read.
  const other = harness(deployment(), placement({ p: { clusters: ['wec1'], singleton: true } }), [workStatus('wec1', { replicas: 1, readyReplicas: 0 })], undefined,
    { wec1: inWork([{ name: 'ReadyReplicas', fieldValue: { type: 'Integer', integer: 5 } }]) });
  t.same(other.c.desired(SOURCE)?.want.status, { replicas: 1, readyReplicas: 0 });
});

t.test('bundled: a status in a work that is not whole, or too deep, is not returned, and the policy is told', async (t) => {
  const recorded = new Map<string, ReadonlyMap<string, string[]>>();
  const carried = statusValues({ replicas: 3, readyReplicas: 3 }, undefined)!.values.filter((v) => !v.name.endsWith('.readyReplicas'));
  const { c } = harness(deployment(), placement({ p: { clusters: ['wec1'], singleton: true } }), [], recorded, { wec1: inWork(carried) });
  await reconcile(c, SOURCE);
  t.same(c.desired(SOURCE)?.want.status, undefined, 'nothing returned');
  t.match(recorded.get(SOURCE)?.get('p'), [/cluster wec1 reported a status of deployments.apps demo\/web that was refused: its status in work wds1-b0123456789abcdef-0 is not whole: its status has 1 of 2 fields/]);
  let deep: unknown = 1;
  for (let i = 0; i < 100; i++) deep = [deep];
  const tooDeep = [{ name: 'view.kubestellar.io/statusFields', fieldValue: { type: 'Integer' as const, integer: 1 } }, { name: 'view.kubestellar.io/status.x', fieldValue: { type: 'JsonRaw' as const, jsonRaw: JSON.stringify(deep) } }];
  const second = harness(deployment(), placement({ p: { clusters: ['wec1'], singleton: true } }), [], recorded, { wec1: inWork(tooDeep) });
  await reconcile(second.c, SOURCE);
  t.match(recorded.get(SOURCE)?.get('p'), [/was refused: its status is nested more than 64 levels deep/]);
});

const target = (obj: KubeObject): StoredObject => ({ res: DEPLOYMENTS, obj });

t.test('writes: the annotation before a returned status, the status cleared before the annotation goes; nothing when nothing differs', async (t) => {
  const wds = mockUpstream();
  t.teardown(() => wds.close());
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, {}).persist();
  const done = await writeReturnedState(wds.up, target(deployment()), { executingCount: '1', returnedFrom: 'wec1', status: { readyReplicas: 2 } });
  t.same(done, ['metadata {"labels":{"kubestellar.io/executing-count":"1"},"annotations":{"view.kubestellar.io/status-returned-from":"wec1"}}', 'status from wec1']);
  const [meta, status] = wds.calls();
  t.same([meta!.method, meta!.path, meta!.headers['content-type']], ['PATCH', '/apis/apps/v1/namespaces/demo/deployments/web?fieldManager=kubestellar-view-status', 'application/merge-patch+json']);
  t.same(meta!.body, { metadata: { labels: { 'kubestellar.io/executing-count': '1' }, annotations: { 'view.kubestellar.io/status-returned-from': 'wec1' }, resourceVersion: '7' } }, 'with the resourceVersion read: a change meanwhile is a 409');
  t.same([status!.path, status!.headers['content-type'], status!.body], ['/apis/apps/v1/namespaces/demo/deployments/web/status?fieldManager=kubestellar-view-status', 'application/json-patch+json',
    [{ op: 'add', path: '/status', value: { readyReplicas: 2 } }]], 'the whole status replaced, on the subresource');

  const before = wds.calls().length;
  const returned = deployment({ labels: { 'kubestellar.io/executing-count': '2' }, annotations: { 'view.kubestellar.io/status-returned-from': 'wec1' } }, { readyReplicas: 2 });
  const clearing = mockUpstream();
  t.teardown(() => clearing.close());
  clearing.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, { metadata: { resourceVersion: '8' } }).persist();
  t.same(await writeReturnedState(clearing.up, target(returned), { executingCount: '2', returnedFrom: undefined, status: {} }),
    ['status cleared', 'metadata {"annotations":{"view.kubestellar.io/status-returned-from":null}}'], 'clearing: status first, then the mark');
  t.same(clearing.calls().map((c) => c.path.split('?')[0]), ['/apis/apps/v1/namespaces/demo/deployments/web/status', '/apis/apps/v1/namespaces/demo/deployments/web']);
  t.equal((clearing.calls()[1]!.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion, '8', 'the mark\'s patch is conditional on the status write\'s resourceVersion, not the stale one read');
  t.equal(wds.calls().length, before);
  t.same(await writeReturnedState(wds.up, target(returned), { executingCount: '2', returnedFrom: 'wec1', status: { readyReplicas: 2 } }), [], 'the same: nothing sent');
});

t.test('a write that meets a change (409) or a deleted object (404) stops quietly; other errors are thrown for a retry', async (t) => {
  const wds = mockUpstream();
  t.teardown(() => wds.close());
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(409, { kind: 'Status', code: 409 });
  t.same(await writeReturnedState(wds.up, target(deployment()), { executingCount: '1', returnedFrom: 'wec1', status: { a: 1 } }), [], 'no status after a refused mark');
  t.equal(wds.calls().length, 1);
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(403, { kind: 'Status', code: 403 });
  await t.rejects(writeReturnedState(wds.up, target(deployment()), { executingCount: '1', returnedFrom: undefined, status: undefined }), /403/);
});

const reconcile = (c: StatusController, source: string) => (c as unknown as { reconcile(s: string): Promise<void> }).reconcile(source);
const healthy = (n: number) => ({ replicas: n, readyReplicas: n, availableReplicas: n, updatedReplicas: n });

t.test("the issue's overflow: wec1 reports availableReplicas 2147483647; wec2's status is returned, the policy is told", async (t) => {
  const recorded = new Map<string, ReadonlyMap<string, string[]>>();
  const { c } = harness(deployment(), placement({ p: { clusters: ['wec1', 'wec2'], multi: true } }),
    [workStatus('wec1', { replicas: 1, readyReplicas: 1, availableReplicas: 2147483647 }), workStatus('wec2', healthy(2))], recorded);
  t.same(c.desired(SOURCE)?.want, { executingCount: undefined, returnedFrom: 'wec2', status: healthy(2) }, 'wec1 counts as not reported');
  await reconcile(c, SOURCE);
  t.same(recorded.get(SOURCE), new Map([['p', [
    'cluster wec1 reported a status of deployments.apps demo/web that is not returned: it is not a valid Deployment status: status.availableReplicas: Invalid value: 2147483647: cannot be greater than status.replicas; status.availableReplicas: Invalid value: 2147483647: cannot be greater than status.readyReplicas',
  ]]]));
});

t.test("a report nested 6,000 levels deep, or with 3,000 conditions: refused or capped, said on the policies sending the object there; the others' status returned", async (t) => {
  const recorded = new Map<string, ReadonlyMap<string, string[]>>();
  const deepStatus = JSON.parse(`${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}`) as Record<string, unknown>;
  const conditions = Array.from({ length: 3000 }, (_, i) => ({ type: `T${i}`, status: 'True' }));
  const { c } = harness(deployment(), placement({ p: { clusters: ['wec1', 'wec2', 'wec3'], multi: true }, q: { clusters: ['wec1'] } }),
    [workStatus('wec1', deepStatus), workStatus('wec2', healthy(2)), workStatus('wec3', { ...healthy(1), conditions })], recorded);
  const want = c.desired(SOURCE)!.want;
  t.equal(want.returnedFrom, 'wec2,wec3');
  t.same([want.status?.replicas, (want.status?.conditions as unknown[]).length], [3, 32], 'wec2 and wec3 combined, wec3 with its first 32 conditions');
  await reconcile(c, SOURCE);
  const deepError = 'cluster wec1 reported a status of deployments.apps demo/web that was refused: its status is nested more than 64 levels deep';
  t.same(recorded.get(SOURCE), new Map([
    ['p', [deepError, 'cluster wec3 reported a status of deployments.apps demo/web that was capped: it has 3000 conditions; the first 32 are kept']],
    ['q', [deepError]],
  ]), 'each policy sending the object to the cluster');
});

t.test('a status the WDS refuses (422) is reported and not written again while it is the same; a new one is written', async (t) => {
  const recorded = new Map<string, ReadonlyMap<string, string[]>>();
  const statuses = [workStatus('wec1', healthy(2))];
  const { c, wds } = harness(deployment({ annotations: { 'view.kubestellar.io/status-returned-from': 'wec1' }, labels: { 'kubestellar.io/executing-count': '1' } }),
    placement({ p: { clusters: ['wec1'], singleton: true } }), statuses, recorded);
  c.setLeading(true);
  const invalid = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 422, reason: 'Invalid', message: 'Deployment.apps "web" is invalid: status.x: Invalid value' };
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(422, invalid);
  await t.resolves(reconcile(c, SOURCE), 'no error thrown: no retry with the same content');
  t.equal(wds.calls().length, 1);
  await reconcile(c, SOURCE);
  t.equal(wds.calls().length, 1, 'the same state is not sent again');
  t.same(recorded.get(SOURCE), new Map([['p', [
    'the WDS refused the status of deployments.apps demo/web returned from wec1: PATCH /apis/apps/v1/namespaces/demo/deployments/web/status: 422 Deployment.apps "web" is invalid: status.x: Invalid value',
  ]]]));
  // wec1 reports anew: written again.
  c.workStatuses.store.set(c.intake.take(workStatus('wec1', healthy(3))));
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, { metadata: { resourceVersion: '9' } });
  await reconcile(c, SOURCE);
  t.equal(wds.calls().length, 2, 'a different status is written');
  t.same(recorded.get(SOURCE), new Map(), 'and the error is gone');
});

t.test('WorkStatuses naming objects by 100 KB names (as many as a mailbox holds, 1 MB each in the issue) are not cached, each logged in one short line; wec2\'s status is still returned', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  const huge = Array.from({ length: 20 }, (_, i) => ({ ...workStatus('wec1', healthy(1)),
    metadata: { name: `huge-${i}`, namespace: 'wec1', resourceVersion: String(10 + i) },
    spec: { sourceRef: { ...ID, kind: 'Deployment', name: `${i}`.padEnd(100_000, 'x') } } }));
  const good = { ...workStatus('wec2', healthy(2)), metadata: { name: 'deployment-demo-web', namespace: 'wec2', resourceVersion: '5' } };
  its.pool.intercept({ path: (p) => p.startsWith(`${WORKSTATUSES_PATH}?`) && !p.includes('watch=1'), method: 'GET' })
    .reply(200, { kind: 'WorkStatusList', metadata: { resourceVersion: '40' }, items: [...huge, good] });
  its.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' }).reply(200, '').persist();
  const logs: string[] = [];
  const sources: StatusSources = {
    find: (k) => (encodeKey(k) === SOURCE ? { key: KEY, id: ID, native: deployment() as never, ref: { ...ID, labels: {} }, bypassesView: false, shadowsNative: false, denatured: false, stored: deployment() as never } : undefined),
    stored: (k) => (encodeKey(k) === SOURCE ? { res: DEPLOYMENTS, obj: deployment() } : undefined),
    placement: (s) => (s === SOURCE ? placement({ p: { clusters: ['wec2'], singleton: true } }) : undefined),
    keysFor: () => [KEY], allKeys: () => [KEY],
    onPlacementChange: () => () => {}, onObjectChange: () => () => {}, policy: () => undefined,
  };
  const c = new StatusController({ wds: mockUpstream().up, its: its.up, sources, log: (m) => logs.push(m) });
  c.workStatuses.start();
  t.teardown(() => c.workStatuses.stop());
  await c.workStatuses.synced;
  t.same(c.workStatuses.store.list().map((ws) => ws.metadata.name), ['deployment-demo-web'], 'none of the 20 is cached');
  t.same(c.intake.usage('wec1'), { reports: 0, bytes: 0 }, 'nor counted');
  const skipped = logs.filter((m) => m.includes('wec1/huge-'));
  t.equal(skipped.length, 20, 'each is said in the log');
  t.ok(skipped.every((m) => m.length < 300), `in a short line: ${skipped[0]}`);
  t.match(skipped[0], /spec\.sourceRef\.name is 100000 characters long, more than Kubernetes allows \(253\)/);
  t.same(c.desired(SOURCE)?.want, { executingCount: '1', returnedFrom: 'wec2', status: healthy(2) }, 'the other cluster\'s status is returned');
});

/** An object of `res` (cluster-scoped, named `name`) sent by a singleton policy to wec1, which reports `status`; this replica leads. */
function wdsKept(t: { teardown(fn: () => void): void }, res: WorkloadResource, name: string, obj: KubeObject, status: Record<string, unknown>) {
  const wds = mockUpstream();
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => { wds.close(); its.close(); });
  const key = objectKey(res, '', name);
  const source = encodeKey(key);
  const id = { group: res.group, version: res.version, resource: res.resource, namespace: '', name };
  const sources: StatusSources = {
    find: (k) => (encodeKey(k) === source ? { key, id, native: obj as never, ref: { ...id, labels: {} }, bypassesView: false, shadowsNative: false, denatured: false, stored: obj as never } : undefined),
    stored: (k) => (encodeKey(k) === source ? { res, obj } : undefined),
    placement: (s) => (s === source ? { ...placement({ p: { clusters: ['wec1'], singleton: true } }), id } : undefined),
    keysFor: () => [key], allKeys: () => [key],
    onPlacementChange: () => () => {}, onObjectChange: () => () => {}, policy: () => undefined,
  };
  const c = new StatusController({ wds: wds.up, its: its.up, sources, log: () => {} });
  c.workStatuses.store.set(c.intake.take({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus', metadata: { name: `x-${name}`, namespace: 'wec1' },
    spec: { sourceRef: { group: res.group, version: res.version, resource: res.resource, kind: res.kind, namespace: '', name } }, status }));
  c.setLeading(true);
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, { metadata: { resourceVersion: '9' } }).persist();
  return { c, wds, source };
}

t.test('a CRD or an APIService sent to a cluster: its status (what the WDS serves by) is never written from the cluster\'s report, not even cleared', async (t) => {
  const CRDS: WorkloadResource = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false,
    native: { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' }, bypassesView: false, hasStatus: true };
  const APISERVICES: WorkloadResource = { group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices', kind: 'APIService', namespaced: false,
    native: { group: 'apiregistration.k8s.io', resource: 'apiservices' }, bypassesView: true, hasStatus: true };
  const crdStatus = { acceptedNames: { kind: 'Widget', plural: 'widgets' }, conditions: [{ type: 'Established', status: 'True' }] };
  const cases = [
    { res: CRDS, name: 'widgets.example.com', kind: 'CustomResourceDefinition', own: crdStatus,
      hostile: { acceptedNames: { kind: 'Gadget', plural: 'gadgets' }, conditions: [{ type: 'Established', status: 'False' }, { type: 'NamesAccepted', status: 'False' }] } },
    { res: APISERVICES, name: 'v1.metrics.example.com', kind: 'APIService', own: { conditions: [{ type: 'Available', status: 'True' }] },
      hostile: { conditions: [{ type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck' }] } },
  ];
  for (const { res, name, kind, own, hostile } of cases) {
    const obj: KubeObject = { apiVersion: `${res.group}/${res.version}`, kind, metadata: { name, resourceVersion: '7' }, status: own };
    const { c, wds, source } = wdsKept(t, res, name, obj, hostile);
    t.same(c.desired(source)?.want, { executingCount: '1', returnedFrom: undefined, status: undefined }, `${kind}: the label says where it runs; no status is returned`);
    await reconcile(c, source);
    t.notOk(wds.calls().some((call) => call.path.includes('/status') || JSON.stringify(call.body).includes('conditions')), `${kind}: no write of its status`);

    // Returned before (by a version that returned it): the mark goes, the status is left to the WDS.
    const marked: KubeObject = { ...obj, metadata: { ...obj.metadata, labels: { 'kubestellar.io/executing-count': '1' }, annotations: { 'view.kubestellar.io/status-returned-from': 'wec1' } }, status: hostile };
    const again = wdsKept(t, res, name, marked, hostile);
    t.same(again.c.desired(again.source)?.want, { executingCount: '1', returnedFrom: undefined, status: undefined }, `${kind} returned before: not cleared to {} either`);
    await reconcile(again.c, again.source);
    t.same(again.wds.calls().map((call) => [call.path.split('?')[0], call.body]), [[`/apis/${res.group}/v1/${res.resource}/${name}`,
      { metadata: { annotations: { 'view.kubestellar.io/status-returned-from': null }, resourceVersion: '7' } }]], `${kind}: only the mark is removed`);
  }
});
