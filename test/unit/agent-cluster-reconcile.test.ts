import t from 'tap';
import { AppliedWorks, sameAppliedResources } from '../../src/agent/apply/applied-works.js';
import { createAgentMetrics } from '../../src/agent/shared/agent-metrics.js';
import { StatusWriter } from '../../src/agent/status/work-status-writer.js';
import { needsReconcile } from '../../src/agent/cluster-agent.js';
import { FAILURE_RETRY_BASE_MS, FAILURE_RETRY_MAX_MS, WorkReconciler, failureRetryMs } from '../../src/agent/apply/work-reconciler.js';
import type { AppliedRef } from '../../src/agent/status/applied-watcher.js';
import { APPLIED_MANIFESTWORKS_PATH, MANIFEST_WORK_FINALIZER, manifestWorksPath, type AppliedManifestWork, type ManifestWork } from '../../src/kube/ocm-api.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { carriedByLiveWork, workCarries } from '../../src/agent/apply/handover.js';
import { FakeApplier } from '../fixtures/agent/fake-applier.js';
import { cm, ns, mailboxWork as work } from '../fixtures/agent/builders.js';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';

const HASH = 'h'.repeat(64);
const worksPath = manifestWorksPath('wec1');

async function harness(works: ManifestWork[], otherAmws: AppliedManifestWork[] = []) {
  const its = fakeCluster('https://its.test:6443');
  const wec = fakeCluster('https://wec.test:6443');
  for (const w of works) its.put(`${worksPath}/${w.metadata.name}`, w);
  for (const a of otherAmws) wec.put(`${APPLIED_MANIFESTWORKS_PATH}/${a.metadata.name}`, a);
  const applier = new FakeApplier(wec);
  const applied = new AppliedWorks(wec.up, HASH, 'agent1');
  await applied.load();
  const getWork = (n: string) => its.objects.get(`${worksPath}/${n}`) as ManifestWork | undefined;
  const status = new StatusWriter({ cluster: 'wec1', its: its.up, applier, work: getWork, onError: () => {}, debounceMs: 5 });
  const watched = new Map<string, readonly AppliedRef[]>();
  /** What the applied objects' watch holds (namespace/name → object). */
  const cached = new Map<string, KubeObject>();
  const requeued: { name: string; ms: number }[] = [];
  const rec = new WorkReconciler({
    cluster: 'wec1', its: its.up, wec: wec.up, applier, applied, status,
    watcher: { setWork: (w, r) => watched.set(w, r), removeWork: (w) => watched.delete(w), cached: (r) => cached.get(`${r.namespace}/${r.name}`) },
    work: getWork, enqueueAfter: (name, ms) => requeued.push({ name, ms }), metrics: createAgentMetrics(), log: () => {},
    carriedByWork: (r, releasing) => carriedByLiveWork(
      [...its.objects].filter(([p]) => p.startsWith(`${worksPath}/`)).map(([, w]) => w as ManifestWork), releasing, r, (n) => status.resultsOf(n)),
  });
  const setWork = (w: ManifestWork) => {
    const cur = getWork(w.metadata.name)!;
    its.put(`${worksPath}/${w.metadata.name}`, { ...w, metadata: { ...cur.metadata, ...w.metadata, finalizers: cur.metadata.finalizers } });
  };
  const wecObj = (p: string) => wec.objects.get(p);
  t.teardown(async () => { status.stop(); await its.close(); await wec.close(); });
  return { its, wec, applier, applied, status, rec, watched, cached, requeued, getWork, setWork, wecObj };
}

const CM_A = '/api/v1/namespaces/app/configmaps/a';
const CM_B = '/api/v1/namespaces/app/configmaps/b';
const NS_APP = '/api/v1/namespaces/app';
const amwPath = (w: string) => `${APPLIED_MANIFESTWORKS_PATH}/${HASH}-${w}`;
const ownerUids = (o: KubeObject | undefined) => ((o?.metadata?.ownerReferences ?? []) as { uid: string }[]).map((r) => r.uid);

t.test('a new work: finalizer, AppliedManifestWork, apply, owner references, appliedResources with uids', async (t) => {
  const h = await harness([work('w1', [ns('app'), cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  t.same(h.getWork('w1')!.metadata.finalizers, [MANIFEST_WORK_FINALIZER], 'finalizer added');
  t.same(h.its.writes[0]!.method, 'PATCH', 'the finalizer is the first write to the ITS');
  const amw = h.wecObj(amwPath('w1')) as AppliedManifestWork;
  t.ok(amw, 'AppliedManifestWork <hubHash>-<work> created');
  t.same(amw.spec, { hubHash: HASH, agentID: 'agent1', manifestWorkName: 'w1' });
  t.same(h.applier.calls, ['w1']);
  for (const p of [NS_APP, CM_A]) {
    const refs = h.wecObj(p)!.metadata!.ownerReferences as { kind: string; name: string; uid: string; apiVersion: string }[];
    t.same(refs.map((r) => [r.apiVersion, r.kind, r.name, r.uid]), [['work.open-cluster-management.io/v1', 'AppliedManifestWork', `${HASH}-w1`, amw.metadata.uid]], `${p} owned by the AMW`);
  }
  t.same(amw.status!.appliedResources, [
    { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'app', uid: h.wecObj(NS_APP)!.metadata!.uid },
    { group: '', version: 'v1', resource: 'configmaps', namespace: 'app', name: 'a', uid: h.wecObj(CM_A)!.metadata!.uid },
  ]);
  t.same(h.watched.get('w1')!.map((r) => r.name), ['app', 'a'], 'applied objects watched');
});

t.test('an object that changed while it was applied (watch ahead of the apply) is observed once more', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')])]);
  h.cached.set('app/a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'app', name: 'a', resourceVersion: '999999' }, status: { ready: true } });
  await h.rec.reconcile('w1');
  t.same(h.applier.observed.map((o) => [o.ordinal, o.live?.metadata?.resourceVersion]), [[0, '999999']], 'a observed at the watch\'s version; b (not in the watch yet) not');
  h.applier.observed.length = 0;
  h.cached.set('app/a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'app', name: 'a', resourceVersion: '1' } });
  await h.rec.reconcile('w1');
  t.same(h.applier.observed, [], 'a watch behind the apply is not observed');
});

t.test('a manifest dropped from a work: its object deleted with a uid precondition', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')])]);
  await h.rec.reconcile('w1');
  const uidB = h.wecObj(CM_B)!.metadata!.uid;
  h.setWork(work('w1', [cm('app', 'a')]));
  h.wec.writes.length = 0;
  await h.rec.reconcile('w1');
  const del = h.wec.writes.find((w) => w.method === 'DELETE');
  t.equal(del?.path, CM_B);
  t.equal(del?.body.preconditions.uid, uidB);
  t.equal(del?.body.propagationPolicy, 'Background');
  t.notOk(h.wecObj(CM_B), 'b deleted');
  t.ok(h.wecObj(CM_A), 'a kept');
  t.same((h.wecObj(amwPath('w1')) as AppliedManifestWork).status!.appliedResources!.map((r) => r.name), ['a', 'b'], 'b recorded until seen gone (as OCM)');
  t.same(h.requeued.at(-1), { name: 'w1', ms: 1000 });
  await h.rec.reconcile('w1');
  t.same((h.wecObj(amwPath('w1')) as AppliedManifestWork).status!.appliedResources!.map((r) => r.name), ['a']);
});

t.test('a manifest that fails to apply is still in the work: its object is neither collected nor forgotten', async (t) => {
  for (const failure of ['conflict', 'unmapped'] as const) {
    const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')])]);
    await h.rec.reconcile('w1');
    h.applier.failing.set('b', failure);
    h.wec.writes.length = 0;
    await h.rec.reconcile('w1');
    t.notOk(h.wec.writes.some((w) => w.method === 'DELETE'), `${failure}: nothing deleted`);
    t.ok(h.wecObj(CM_B), `${failure}: b is still in the WEC`);
    t.same((h.wecObj(amwPath('w1')) as AppliedManifestWork).status!.appliedResources!.map((r) => r.name), ['a', 'b'], `${failure}: b still recorded`);
    h.applier.failing.delete('b');
    h.setWork(work('w1', [cm('app', 'a')]));
    await h.rec.reconcile('w1');
    t.notOk(h.wecObj(CM_B), `${failure}: once dropped from the work, b is collected`);
  }
});

t.test('an object another work owns, refused to this one by a conflict, is not recorded by it: it goes with its owner', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a')]), work('w2', [cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  h.applier.failing.set('a', 'conflict');
  await h.rec.reconcile('w2');
  t.same((h.wecObj(amwPath('w2')) as AppliedManifestWork).status?.appliedResources ?? [], [], 'w2 records nothing');
  h.applier.failing.delete('a');
  h.its.put(`${worksPath}/w1`, { ...h.getWork('w1')!, metadata: { ...h.getWork('w1')!.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  await h.rec.reconcile('w1');
  t.ok(h.wec.writes.some((w) => w.method === 'DELETE' && w.path === CM_A), 'deleted with w1, not kept as carried by w2');
});

t.test('a dropped object re-created by someone else (other uid) is left alone', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')])]);
  await h.rec.reconcile('w1');
  const b = h.wecObj(CM_B)!;
  h.wec.put(CM_B, { ...b, metadata: { ...b.metadata, uid: 'someone-else' } });
  h.setWork(work('w1', [cm('app', 'a')]));
  h.wec.writes.length = 0;
  await h.rec.reconcile('w1');
  t.notOk(h.wec.writes.some((w) => w.method === 'DELETE'), 'no delete');
  t.ok(h.wecObj(CM_B));
});

t.test('a dropped object another work of ours still carries: only our owner reference goes', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')]), work('w2', [cm('app', 'b')])]);
  await h.rec.reconcile('w1');
  await h.rec.reconcile('w2');
  const amw1 = h.wecObj(amwPath('w1'))!.metadata!.uid!;
  const amw2 = h.wecObj(amwPath('w2'))!.metadata!.uid!;
  t.same(ownerUids(h.wecObj(CM_B)).sort(), [amw1, amw2].sort(), 'b owned by both');
  h.setWork(work('w1', [cm('app', 'a')]));
  h.wec.writes.length = 0;
  await h.rec.reconcile('w1');
  t.notOk(h.wec.writes.some((w) => w.method === 'DELETE'), 'no delete');
  t.same(ownerUids(h.wecObj(CM_B)), [amw2], 'only w2 owns b now');
});

t.test('an object moved to a work not applied yet (a bundle repacked) is handed over: not deleted, the same uid, owned by its new work', async (t) => {
  const config = (name: string, resource = 'configmaps') => ({ resourceIdentifier: { group: '', resource, namespace: 'app', name } });
  const ours = { labels: { 'view.kubestellar.io/wds': 'wds1' } };
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')], { manifestConfigs: [config('a'), config('b')] }, ours)]);
  await h.rec.reconcile('w1');
  const uid = h.wecObj(CM_B)!.metadata!.uid;
  // The placement controller writes the receiving work first; the agent happens to reconcile the releasing one first.
  h.its.put(`${worksPath}/w2`, work('w2', [cm('app', 'b')], { manifestConfigs: [config('b')] }, ours));
  h.setWork(work('w1', [cm('app', 'a')], { manifestConfigs: [config('a')] }, ours));
  h.wec.writes.length = 0;
  await h.rec.reconcile('w1');
  const amw1 = h.wecObj(amwPath('w1'))!.metadata!.uid!;
  t.notOk(h.wec.writes.some((w) => w.method === 'DELETE' && w.path === CM_B), 'b not deleted: w2 carries it');
  t.same(ownerUids(h.wecObj(CM_B)), [amw1], 'w1 keeps owning b until w2 has applied it');
  t.same((h.wecObj(amwPath('w1')) as AppliedManifestWork).status!.appliedResources!.map((r) => r.name), ['a', 'b'], 'and keeps it recorded');
  t.same(h.rec.awaitingHandover(), ['w1'], 'w1 awaits the handover');
  h.requeued.length = 0;
  await h.rec.reconcile('w2');
  const amw2 = h.wecObj(amwPath('w2'))!.metadata!.uid!;
  t.same(h.requeued, [{ name: 'w1', ms: 0 }], 'w2 recorded b: w1 is looked at again at once');
  await h.rec.reconcile('w1');
  t.equal(h.wecObj(CM_B)!.metadata!.uid, uid, 'the same object (uid unchanged)');
  t.same(ownerUids(h.wecObj(CM_B)), [amw2], 'owned by w2 only, once w2 applied it');
  t.same(h.rec.awaitingHandover(), [], 'nothing awaited any more');
  // A live work carrying another kind of that name does not count.
  h.its.put(`${worksPath}/w3`, work('w3', [{ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'app', name: 'a' } }], { manifestConfigs: [config('a', 'secrets')] }, ours));
  // Nor does another WDS's work (a conflict, not a handover), nor a ReadOnly manifest.
  h.its.put(`${worksPath}/w4`, work('w4', [cm('app', 'a')], { manifestConfigs: [config('a')] }, { labels: { 'view.kubestellar.io/wds': 'wds2' } }));
  h.its.put(`${worksPath}/w5`, work('w5', [cm('app', 'a')], { manifestConfigs: [{ ...config('a'), updateStrategy: { type: 'ReadOnly' } }] }, ours));
  h.setWork(work('w1', [], { manifestConfigs: [] }, ours));
  await h.rec.reconcile('w1');
  t.ok(h.wec.writes.some((w) => w.method === 'DELETE' && w.path === CM_A), 'a (a ConfigMap) deleted: w3 carries a Secret a, w4 is wds2\'s, w5 only reads it');
});

t.test('workCarries: by the manifestConfig naming the resource, else by what the agent made of that work; never a work being deleted', async (t) => {
  const b = { group: '', resource: 'configmaps', namespace: 'app', name: 'b' };
  const plain = work('w', [cm('app', 'b')]);
  t.notOk(workCarries(plain, b, undefined), 'no config, nothing applied: unknown, does not count');
  const result = (status: 'True' | 'False') => [{ ordinal: 0, resourceMeta: { ordinal: 0, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespace: 'app', name: 'b' }, owned: true,
    conditions: [{ type: 'Applied', status, reason: 'r', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }], feedback: [] }];
  t.ok(workCarries(plain, b, result('True')), 'what was applied of it names it');
  t.ok(workCarries(plain, b, result('False')), 'tried and refused: it still carries it (the releasing work keeps the object meanwhile)');
  const configured = work('w', [cm('app', 'b')], { manifestConfigs: [{ resourceIdentifier: b }] });
  t.ok(workCarries(configured, b, undefined));
  t.notOk(workCarries(configured, { ...b, namespace: 'other' }, undefined), 'another namespace');
  t.notOk(workCarries({ ...configured, metadata: { ...configured.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, b, undefined), 'being deleted');
  t.notOk(carriedByLiveWork([configured], configured, b, () => undefined), 'the releasing work itself does not count');
  const labelled = (w: typeof configured, wds: string) => ({ ...w, metadata: { ...w.metadata, labels: { 'view.kubestellar.io/wds': wds } } });
  const other = { ...labelled(configured, 'wds1'), metadata: { ...labelled(configured, 'wds1').metadata, name: 'w2' } };
  t.ok(carriedByLiveWork([other], labelled(work('w', []), 'wds1'), b, () => undefined), 'a work of the same WDS carries it');
  t.notOk(carriedByLiveWork([other], labelled(work('w', []), 'wds2'), b, () => undefined), 'not for another WDS\'s releasing work');
  t.notOk(carriedByLiveWork([other], undefined, b, () => undefined), 'the releasing work gone: nothing handed over');
});

t.test('a receiver refused (e.g. by its executor): the releasing work keeps the object, owned and recorded, deleting or not, until no work carries it', async (t) => {
  const config = (name: string) => ({ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'app', name } });
  const ours = { labels: { 'view.kubestellar.io/wds': 'wds1' } };
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')], { manifestConfigs: [config('a'), config('b')] }, ours)]);
  await h.rec.reconcile('w1');
  const amw1 = h.wecObj(amwPath('w1'))!.metadata!.uid!;
  // b moves to w2, whose apply of it is refused.
  h.its.put(`${worksPath}/w2`, work('w2', [cm('app', 'b')], { manifestConfigs: [config('b')] }, ours));
  h.applier.conflictOn.add(`w2|${CM_B}`);
  await h.rec.reconcile('w2');
  const refused = h.status.resultsOf('w2')![0]!.conditions.find((c) => c.type === 'Applied')!;
  t.equal(refused.status, 'False');
  t.match(refused.message, /the object stays in the cluster as ManifestWork w1 applied it, until this work applies it or no work selects it$/, 'the refusal says who still holds the object');
  // The releasing work drops b, then is deleted: b stays, owned by w1, and w1 keeps its finalizer.
  h.setWork(work('w1', [cm('app', 'a')], { manifestConfigs: [config('a')] }, ours));
  await h.rec.reconcile('w1');
  t.same(ownerUids(h.wecObj(CM_B)), [amw1], 'dropped: b still owned by w1');
  t.same(h.rec.awaitingHandover(), ['w1']);
  const w1 = h.getWork('w1')!;
  h.its.put(`${worksPath}/w1`, { ...w1, metadata: { ...w1.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  h.requeued.length = 0;
  await h.rec.reconcile('w1');
  t.notOk(h.wecObj(CM_A), 'a (carried by nobody else) deleted with w1');
  t.same(ownerUids(h.wecObj(CM_B)), [amw1], 'deleting: b still owned by w1');
  t.ok(h.wecObj(amwPath('w1')), 'w1\'s AppliedManifestWork kept');
  t.same(h.getWork('w1')!.metadata.finalizers, [MANIFEST_WORK_FINALIZER], 'w1 keeps its finalizer');
  t.ok(h.requeued.some((r) => r.name === 'w1' && r.ms >= FAILURE_RETRY_BASE_MS), 'looked at again with the failure backoff');
  // Still refused on later tries: still kept, the backoff grows.
  h.requeued.length = 0;
  await h.rec.reconcile('w1');
  t.ok(h.wecObj(CM_B), 'still there');
  t.ok(h.requeued.some((r) => r.name === 'w1' && r.ms > FAILURE_RETRY_BASE_MS), 'a longer wait the next time');
  // The object is no longer selected: w2 drops it, and w1 removes it as any unselected object.
  h.setWork(work('w2', [], { manifestConfigs: [] }, ours));
  await h.rec.reconcile('w2');
  await h.rec.reconcile('w1');
  t.notOk(h.wecObj(CM_B), 'b deleted once no live work carries it');
  await h.rec.reconcile('w1');
  t.notOk(h.wecObj(amwPath('w1')), 'w1\'s AppliedManifestWork gone');
  t.same(h.getWork('w1')!.metadata.finalizers ?? [], [], 'w1\'s finalizer removed');
  t.same(h.rec.awaitingHandover(), []);
});

t.test('the agent restarted between the two writes of a handover: the object is released only once the receiver recorded it', async (t) => {
  const config = (name: string) => ({ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'app', name } });
  const ours = { labels: { 'view.kubestellar.io/wds': 'wds1' } };
  const h = await harness([work('w1', [cm('app', 'b')], { manifestConfigs: [config('b')] }, ours)]);
  await h.rec.reconcile('w1');
  const amw1 = h.wecObj(amwPath('w1'))!.metadata!.uid!;
  h.its.put(`${worksPath}/w2`, work('w2', [cm('app', 'b')], { manifestConfigs: [config('b')] }, ours));
  h.setWork(work('w1', [], { manifestConfigs: [] }, ours));
  // A new agent process: its own copy of the AppliedManifestWorks, nothing applied of w2 yet.
  const applied = new AppliedWorks(h.wec.up, HASH, 'agent1');
  await applied.load();
  const status = new StatusWriter({ cluster: 'wec1', its: h.its.up, applier: h.applier, work: h.getWork, onError: () => {}, debounceMs: 5 });
  t.teardown(() => status.stop());
  const requeued: string[] = [];
  const rec = new WorkReconciler({
    cluster: 'wec1', its: h.its.up, wec: h.wec.up, applier: h.applier, applied, status,
    watcher: { setWork: () => {}, removeWork: () => {} }, work: h.getWork, enqueueAfter: (n) => requeued.push(n),
    metrics: createAgentMetrics(), log: () => {},
    carriedByWork: (r, releasing) => carriedByLiveWork([h.getWork('w1')!, h.getWork('w2')!], releasing, r, (n) => status.resultsOf(n)),
  });
  await rec.reconcile('w1');
  t.same(ownerUids(h.wecObj(CM_B)), [amw1], 'w1 first: b kept, owned by w1');
  await rec.reconcile('w2');
  const amw2 = h.wecObj(amwPath('w2'))!.metadata!.uid!;
  t.ok(requeued.includes('w1'), 'w1 looked at again once w2 recorded b');
  await rec.reconcile('w1');
  t.same(ownerUids(h.wecObj(CM_B)), [amw2], 'then released to w2');
});

t.test('a changed work applies again only what changed in it; a drifted or deleted object, or a changed config, is applied again', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b'), cm('app', 'c')])]);
  await h.rec.reconcile('w1');
  t.same(h.applier.applied, [CM_A, CM_B, '/api/v1/namespaces/app/configmaps/c'], 'the first apply: all three');
  // What the applied objects' watch holds: each object as the WEC has it now.
  const watch = () => { for (const n of ['a', 'b', 'c']) h.cached.set(`app/${n}`, structuredClone(h.wecObj(`/api/v1/namespaces/app/configmaps/${n}`)!)); };
  watch();
  const changedB = { ...cm('app', 'b'), data: { a: '2' } };
  h.setWork({ ...work('w1', [cm('app', 'a'), changedB, cm('app', 'c')]), metadata: { ...h.getWork('w1')!.metadata, generation: 2 } });
  h.applier.applied.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.applier.applied, [CM_B], 'the spec changed in b alone: b applied, a and c kept');
  t.equal((h.wecObj(CM_B) as { data: { a: string } }).data.a, '2');
  // Someone edits a in the WEC (a drift: the watch shows another resourceVersion): a is applied again.
  watch();
  h.wec.put(CM_A, { ...h.wecObj(CM_A)!, data: { a: 'edited' } });
  h.rec.observed('w1', 0, h.wecObj(CM_A)!, true);
  h.cached.set('app/a', structuredClone(h.wecObj(CM_A)!));
  h.applier.applied.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.applier.applied, [CM_A], 'the drifted one applied again, the others kept');
  // A config naming c changes (its update strategy): c is applied again.
  watch();
  h.setWork({ ...work('w1', [cm('app', 'a'), changedB, cm('app', 'c')], { manifestConfigs: [{ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'app', name: 'c' }, updateStrategy: { type: 'ServerSideApply' } }] }),
    metadata: { ...h.getWork('w1')!.metadata, generation: 3 } });
  h.applier.applied.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.applier.applied, ['/api/v1/namespaces/app/configmaps/c'], 'c\'s config changed: c applied again');
  // Without a watch that has the object (deleted, or not seen yet), nothing is kept.
  h.cached.clear();
  h.setWork({ ...work('w1', [cm('app', 'a'), changedB, cm('app', 'c')]), metadata: { ...h.getWork('w1')!.metadata, generation: 4 } });
  h.applier.applied.length = 0;
  await h.rec.reconcile('w1');
  t.equal(h.applier.applied.length, 3, 'the watch holds none of them: all applied');
});

t.test('Foreground deletion: objects deleted and gone, then the AppliedManifestWork, then the finalizer', async (t) => {
  const h = await harness([work('w1', [ns('app'), cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  const cur = h.getWork('w1')!;
  h.its.put(`${worksPath}/w1`, { ...cur, metadata: { ...cur.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  h.wec.slowDelete = true; // finalizers on the objects: they linger with a deletionTimestamp
  h.wec.writes.length = 0;
  h.its.writes.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.wec.writes.map((w) => `${w.method} ${w.path}`).sort(), [`DELETE ${CM_A}`, `DELETE ${NS_APP}`].sort(), 'objects deleted, nothing else yet');
  t.same(h.its.writes, [], 'finalizer still held');
  t.same(h.requeued.at(-1), { name: 'w1', ms: 1000 }, 'looked at again while deletions are pending');
  await h.rec.reconcile('w1');
  t.notOk(h.wec.writes.some((w) => w.path.startsWith(APPLIED_MANIFESTWORKS_PATH)), 'objects with deletionTimestamp still count');
  h.wec.objects.delete(CM_A);
  h.wec.objects.delete(NS_APP);
  await h.rec.reconcile('w1');
  const amwDelete = h.wec.writes.findIndex((w) => w.method === 'DELETE' && w.path === amwPath('w1'));
  t.ok(amwDelete >= 0, 'AppliedManifestWork deleted once the objects are gone');
  t.same(h.its.writes.map((w) => [w.method, w.path, w.body.metadata.finalizers]), [['PATCH', `${worksPath}/w1`, []]], 'then the finalizer removed');
});

t.test('a conflicted work is retried with backoff, and at once when another work releases its objects', async (t) => {
  // w1 (from one WDS) holds app/a; w2 (from another) sends the same object with other data.
  const h = await harness([work('w1', [cm('app', 'a')]), work('w2', [cm('app', 'a')])]);
  h.applier.conflictOn.add(`w2|${CM_A}`);
  await h.rec.reconcile('w1');
  await h.rec.reconcile('w2');
  t.same(h.requeued, [{ name: 'w2', ms: FAILURE_RETRY_BASE_MS }], 'tried again after a second');
  await h.rec.reconcile('w2');
  await h.rec.reconcile('w2');
  t.same(h.requeued.map((r) => r.ms), [1000, 2000, 4000], 'the wait doubles while the conflict lasts');
  t.equal(failureRetryMs(30), FAILURE_RETRY_MAX_MS, 'up to a minute');
  t.same(h.rec.failingWorks(), ['w2']);
  t.notOk((h.applied.get('w2')?.status?.appliedResources ?? []).length, 'nothing recorded as applied for w2');

  // w1's WDS lets go: its work is deleted, its ConfigMap collected, and w2 is tried at once.
  const cur = h.getWork('w1')!;
  h.its.put(`${worksPath}/w1`, { ...cur, metadata: { ...cur.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  h.requeued.length = 0;
  await h.rec.reconcile('w1');
  t.notOk(h.wecObj(CM_A), 'w1\'s ConfigMap deleted');
  t.same(h.requeued, [{ name: 'w1', ms: 1000 }], 'w1 waits until its ConfigMap is gone (checked at its next round)');
  h.requeued.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.requeued, [{ name: 'w2', ms: 0 }], 'then the conflicted work is queued now, not after its backoff');
  h.applier.conflictOn.clear(); // the WEC accepts w2 now: nobody else owns the fields
  h.requeued.length = 0;
  await h.rec.reconcile('w2');
  t.same(h.requeued, [], 'applied: no more retries');
  t.same(h.rec.failingWorks(), []);
  t.same(h.applied.get('w2')!.status!.appliedResources!.map((r) => r.name), ['a'], 'and w2 owns the ConfigMap');
});

t.test('a work whose manifest failed for another reason (its Namespace not there yet) is retried with backoff too, until it applies', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a')])]);
  h.applier.failing.set('a', 'unmapped');
  await h.rec.reconcile('w1');
  await h.rec.reconcile('w1');
  t.same(h.requeued.map((r) => r.ms), [FAILURE_RETRY_BASE_MS, 2 * FAILURE_RETRY_BASE_MS], 'tried again after 1 s, then 2 s');
  t.same(h.rec.failingWorks(), ['w1']);
  h.applier.failing.clear(); // e.g. the Namespace arrived with another work
  h.requeued.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.requeued, [], 'applied: no more retries');
  t.same(h.rec.failingWorks(), []);
  t.ok(h.wecObj(CM_A), 'the ConfigMap is in the WEC');
});

t.test('a manifest applied before and conflicted now stays recorded: not collected, the other manager\'s content stays', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a'), cm('app', 'b')])]);
  await h.rec.reconcile('w1');
  h.applier.conflictOn.add(`w1|${CM_A}`);
  h.wec.writes.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.wec.writes.filter((w) => w.method === 'DELETE'), [], 'nothing deleted');
  t.ok(h.wecObj(CM_A), 'the conflicted ConfigMap is still there');
  t.same(h.applied.get('w1')!.status!.appliedResources!.map((r) => r.name).sort(), ['a', 'b'], 'and still recorded as the work\'s');
});

t.test('Orphan: no owner references, nothing deleted with the work', async (t) => {
  const h = await harness([work('w1', [ns('app'), cm('app', 'a')], { deleteOption: { propagationPolicy: 'Orphan' } })]);
  await h.rec.reconcile('w1');
  t.same(ownerUids(h.wecObj(CM_A)), [], 'no owner reference');
  const cur = h.getWork('w1')!;
  h.its.put(`${worksPath}/w1`, { ...cur, metadata: { ...cur.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  h.wec.writes.length = 0;
  await h.rec.reconcile('w1');
  t.same(h.wec.writes.map((w) => `${w.method} ${w.path}`), [`DELETE ${amwPath('w1')}`], 'only the AppliedManifestWork goes');
  t.ok(h.wecObj(CM_A) && h.wecObj(NS_APP), 'objects kept');
  t.same(h.getWork('w1')!.metadata.finalizers, [], 'finalizer removed');
});

t.test('Orphan set on a work that owned its objects: our owner references are removed', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  t.equal(ownerUids(h.wecObj(CM_A)).length, 1);
  h.setWork(work('w1', [cm('app', 'a')], { deleteOption: { propagationPolicy: 'Orphan' } }));
  await h.rec.reconcile('w1');
  t.same(ownerUids(h.wecObj(CM_A)), []);
});

t.test('SelectivelyOrphan: the Namespace survives its work, the ConfigMap goes', async (t) => {
  const opt = { deleteOption: { propagationPolicy: 'SelectivelyOrphan' as const, selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', namespace: '', name: 'app' }] } } };
  const h = await harness([work('w1', [ns('app'), cm('app', 'a')], opt)]);
  await h.rec.reconcile('w1');
  const cur = h.getWork('w1')!;
  h.its.put(`${worksPath}/w1`, { ...cur, metadata: { ...cur.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  await h.rec.reconcile('w1');
  await h.rec.reconcile('w1');
  t.ok(h.wecObj(NS_APP), 'Namespace kept');
  t.notOk(h.wecObj(CM_A), 'ConfigMap deleted');
  t.notOk(h.wecObj(amwPath('w1')), 'AppliedManifestWork deleted');
  t.same(h.getWork('w1')!.metadata.finalizers, []);
});

t.test('an AppliedManifestWork whose ManifestWork went while the agent was down is cleaned', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  h.its.objects.delete(`${worksPath}/w1`); // force-deleted meanwhile
  await h.applied.load(); // a new agent start
  await h.rec.reconcile('w1');
  t.notOk(h.wecObj(CM_A), 'object deleted');
  t.ok(h.wecObj(amwPath('w1')), 'AppliedManifestWork kept until its objects are seen gone');
  await h.rec.reconcile('w1');
  t.notOk(h.wecObj(amwPath('w1')), 'AppliedManifestWork deleted');
});

t.test('protected Namespaces are never deleted', async (t) => {
  const h = await harness([work('w1', [ns('default'), cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  h.setWork(work('w1', [cm('app', 'a')]));
  await h.rec.reconcile('w1');
  t.ok(h.wecObj('/api/v1/namespaces/default'));
});

t.test('AppliedManifestWorks of another hub are not ours', async (t) => {
  const other = { apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', metadata: { name: 'x-w9' }, spec: { hubHash: 'x', agentID: 'a', manifestWorkName: 'w9' } };
  const h = await harness([], [other]);
  t.same(h.applied.list(), []);
});

t.test('a work reconciled again unchanged writes nothing more to the WEC\'s AppliedManifestWork', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a')])]);
  await h.rec.reconcile('w1');
  const amwWrites = () => h.wec.writes.filter((w) => w.path.startsWith(APPLIED_MANIFESTWORKS_PATH)).map((w) => `${w.method} ${w.path.endsWith('/status') ? 'status' : ''}`);
  t.same(amwWrites(), ['POST ', 'PUT status'], 'created once, its appliedResources written once');
  await h.rec.reconcile('w1');
  t.same(amwWrites(), ['POST ', 'PUT status'], 'the same resources (keys in the server\'s order) are not written again');
});

t.test('an AppliedManifestWork made after the agent loaded them (another agent of the hub) is read, not duplicated', async (t) => {
  const h = await harness([work('w1', [cm('app', 'a')])]);
  h.wec.put(amwPath('w1'), { apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', metadata: { name: `${HASH}-w1`, uid: 'amw-uid-1' },
    spec: { hubHash: HASH, agentID: 'agent1', manifestWorkName: 'w1' } } as AppliedManifestWork);
  await h.rec.reconcile('w1');
  t.equal((h.wecObj(amwPath('w1')) as AppliedManifestWork).metadata.uid, 'amw-uid-1', 'the existing one is kept');
  t.same(ownerUids(h.wecObj(CM_A)), ['amw-uid-1'], 'and owns what the work applied');
});

t.test('sameAppliedResources compares entries field by field, as sets', async (t) => {
  const a = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'n', name: 'd', uid: 'u1' };
  const reordered = { uid: 'u1', name: 'd', namespace: 'n', resource: 'deployments', version: 'v1', group: 'apps' };
  t.ok(sameAppliedResources([a], [reordered]));
  t.notOk(sameAppliedResources([a], [{ ...a, uid: 'u2' }]), 'another uid');
  t.notOk(sameAppliedResources([a], [a, a]), 'another length');
  const b = { ...a, name: 'e', uid: 'u3' };
  t.ok(sameAppliedResources([a, b], [b, a]), 'the same objects in another order: no change (no write, no handover retried)');
  t.ok(sameAppliedResources([], []));
});

t.test('which changes of a work are reconciled: spec, deletion, our finalizer removed; not our own writes', async (t) => {
  const base = work('w1', [cm('app', 'a')], {}, { generation: 1, uid: 'u1', resourceVersion: '1' });
  const next = (meta: Record<string, unknown>, status?: ManifestWork['status']): ManifestWork =>
    ({ ...base, metadata: { ...base.metadata, resourceVersion: '2', ...meta }, ...(status ? { status } : {}) });
  const withFinalizer = next({ finalizers: [MANIFEST_WORK_FINALIZER] });
  t.ok(needsReconcile(base, undefined), 'a new work');
  t.notOk(needsReconcile(withFinalizer, base), 'our finalizer added');
  t.notOk(needsReconcile({ ...withFinalizer, status: { conditions: [] } }, withFinalizer), 'status written');
  t.ok(needsReconcile(next({ generation: 2, finalizers: [MANIFEST_WORK_FINALIZER] }), withFinalizer), 'the spec changed');
  t.ok(needsReconcile(next({ finalizers: [MANIFEST_WORK_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' }), withFinalizer), 'deleted');
  t.ok(needsReconcile(next({ finalizers: [] }), withFinalizer), 'our finalizer taken off by someone');
  t.ok(needsReconcile(next({ uid: 'u2' }), base), 'deleted and re-created under the same name');
  t.ok(needsReconcile(next({ generation: undefined }), { ...base, metadata: { ...base.metadata, generation: undefined } }), 'no generation to tell by');
});
