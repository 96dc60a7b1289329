import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { Coalescer } from '../../src/agent/shared/coalescer.js';
import { StatusWriter } from '../../src/agent/status/work-status-writer.js';
import { buildWorkStatusObject, workStatusName } from '../../src/agent/status/workstatus.js';
import { manifestWorksPath, workStatusesPath, type ManifestWork } from '../../src/kube/ocm-api.js';
import { FakeApplier } from '../fixtures/agent/fake-applier.js';
import { cm, mailboxWork as work } from '../fixtures/agent/builders.js';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { statusFromValues } from '../../src/kube/status-in-work.js';

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

t.test('Coalescer: a burst of marks makes at most two writes, of the latest state', async (t) => {
  let state = 0;
  const seen: number[] = [];
  // The first write lasts until the burst is over (whatever the machine's load makes of the sleeps).
  let release!: () => void;
  const burstOver = new Promise<void>((r) => { release = r; });
  const c = new Coalescer(async () => { seen.push(state); await burstOver; }, 10);
  for (let i = 1; i <= 50; i++) {
    state = i;
    c.mark('k');
    if (i % 10 === 0) await sleep(1);
  }
  release();
  await until(() => c.idle());
  t.ok(seen.length >= 1 && seen.length <= 2, `${seen.length} writes for 50 marks`);
  t.equal(seen.at(-1), 50, 'the last write has the latest state');
});

t.test('Coalescer: a failed write is retried', async (t) => {
  let n = 0;
  const c = new Coalescer(async () => { if (++n === 1) throw new Error('boom'); }, 1, () => {}, 5);
  c.mark('k');
  await until(() => n === 2 && c.idle());
  t.equal(n, 2);
});

async function writerHarness(w: ManifestWork) {
  const its = fakeCluster('https://its.test:6443');
  const wec = fakeCluster('https://wec.test:6443');
  its.put(`${manifestWorksPath('wec1')}/${w.metadata.name}`, w);
  const applier = new FakeApplier(wec);
  const getWork = (n: string) => its.objects.get(`${manifestWorksPath('wec1')}/${n}`) as ManifestWork | undefined;
  const status = new StatusWriter({ cluster: 'wec1', its: its.up, applier, work: getWork, onError: () => {}, debounceMs: 20 });
  t.teardown(async () => { status.stop(); await its.close(); await wec.close(); });
  return { its, wec, applier, status, getWork };
}

t.test('StatusWriter: N quick status changes → few ManifestWork status writes, via the status subresource', async (t) => {
  const w = work('w1', [cm('app', 'a')]);
  const h = await writerHarness(w);
  const results = await h.applier.applyWork(w);
  h.status.setResults('w1', results);
  for (let i = 0; i < 30; i++) {
    h.status.observe('w1', 0, { ...results[0]!.live!, status: { ready: i % 2 === 0, n: i } });
  }
  await until(() => h.status.idle());
  const patches = h.its.writes.filter((x) => x.path.endsWith('/manifestworks/w1/status'));
  t.ok(patches.length >= 1 && patches.length <= 2, `${patches.length} status writes for 31 changes`);
  t.equal(patches[0]!.method, 'PATCH');
  const st = h.getWork('w1')!.status!;
  t.same(st.conditions!.map((c) => [c.type, c.status, c.reason]), [['Applied', 'True', 'AppliedManifestWorkComplete'], ['Available', 'False', 'ResourcesNotAvailable']],
    'the last state (i=29: not ready) is what was written');
  t.same(st.resourceStatus!.manifests![0]!.resourceMeta, { ordinal: 0, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespace: 'app', name: 'a' });
  t.equal(h.applier.observed.length, 30, 'each change observed through the applier');

  // Nothing changed: no write.
  const before = h.its.writes.length;
  h.status.setResults('w1', h.status.resultsOf('w1')!.slice());
  await until(() => h.status.idle());
  t.equal(h.its.writes.filter((x) => x.path.endsWith('/status')).length, h.its.writes.slice(0, before).filter((x) => x.path.endsWith('/status')).length, 'an unchanged status is not written');
});

t.test('StatusWriter: one WorkStatus per applied object, KubeStellar shape; deleted when no longer applied', async (t) => {
  const w = work('w1', [cm('app', 'a'), cm('app', 'b')]);
  const h = await writerHarness(w);
  const results = await h.applier.applyWork(w);
  h.status.setResults('w1', results.map((r) => ({ ...r, live: { ...r.live!, status: { phase: 'Ready', replicas: 2 } } })));
  await until(() => h.status.idle());
  const name = workStatusName({ kind: 'ConfigMap', namespace: 'app', name: 'a' });
  t.equal(name, 'configmap-app-a');
  const ws = h.its.objects.get(`${workStatusesPath('wec1')}/${name}`) as any;
  t.ok(ws, 'WorkStatus written in the mailbox namespace');
  t.same(ws.spec.sourceRef, { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'app', name: 'a' });
  t.same(ws.status, { phase: 'Ready', replicas: 2 }, 'status = the object\'s full .status');
  t.equal(ws.metadata.namespace, 'wec1');
  t.ok(h.its.writes.some((x) => x.path === `${workStatusesPath('wec1')}/${name}/status`), 'status through the status subresource');

  h.status.setResults('w1', [results[0]!].map((r) => ({ ...r, live: { ...r.live!, status: { phase: 'Ready', replicas: 2 } } })));
  await until(() => h.status.idle());
  t.ok(h.its.writes.some((x) => x.method === 'DELETE' && x.path === `${workStatusesPath('wec1')}/configmap-app-b`), 'WorkStatus of b deleted');
  t.ok(h.its.objects.get(`${workStatusesPath('wec1')}/${name}`), 'a\'s stays');

  await h.status.forget('w1');
  t.notOk(h.its.objects.get(`${workStatusesPath('wec1')}/${name}`), 'forgetting the work deletes its WorkStatuses');
});

t.test('StatusWriter: WEC unreachable → Available Unknown with the reason; placed() says why', async (t) => {
  const w = work('w1', [cm('app', 'a')]);
  const h = await writerHarness(w);
  h.status.setResults('w1', await h.applier.applyWork(w));
  await until(() => h.status.idle());
  h.status.setUnreachable('wec1 does not answer: connect ECONNREFUSED');
  await until(() => h.status.idle());
  const av = h.getWork('w1')!.status!.conditions!.find((c) => c.type === 'Available')!;
  t.same([av.status, av.message], ['Unknown', 'wec1 does not answer: connect ECONNREFUSED']);
  const p = h.status.placed();
  t.same(p.map((x) => [x.cluster, x.work, x.kind, x.namespace, x.name, x.ready, x.reason]), [['wec1', 'w1', 'ConfigMap', 'app', 'a', false, 'wec1 does not answer: connect ECONNREFUSED']]);
  h.status.setUnreachable(undefined);
  t.same(h.status.placed()[0]!.ready, true);
});

t.test('StatusWriter: a new WorkStatus of an object without status is created with no status write; a status that comes later is written', async (t) => {
  const w = work('w1', [cm('app', 'a')]);
  const h = await writerHarness(w);
  const results = await h.applier.applyWork(w);
  h.status.setResults('w1', results);
  await until(() => h.status.idle());
  const path = `${workStatusesPath('wec1')}/configmap-app-a`;
  t.ok(h.its.objects.get(path), 'WorkStatus created');
  t.same(h.its.writes.filter((x) => x.path.startsWith(path)).map((x) => x.path.slice(path.length)), [''], 'one write: no status subresource write for an empty status');
  h.status.setResults('w1', results.map((r) => ({ ...r, live: { ...r.live!, metadata: { ...r.live!.metadata, resourceVersion: '99' }, status: { phase: 'Ready' } } })));
  await until(() => h.status.idle());
  t.same((h.its.objects.get(path) as any).status, { phase: 'Ready' }, 'the status that came is written');
  t.same(h.its.writes.filter((x) => x.path.startsWith(path)).map((x) => x.path.slice(path.length)), ['', '/status']);
});

t.test('StatusWriter: with the informer behind its own writes, nothing is written twice and no WorkStatus is dropped', async (t) => {
  const w = work('w1', [cm('app', 'a')], {}, { resourceVersion: '1' });
  const its = fakeCluster('https://its.test:6443');
  const wec = fakeCluster('https://wec.test:6443');
  its.put(`${manifestWorksPath('wec1')}/w1`, w);
  const applier = new FakeApplier(wec);
  // The informer's copy never catches up: always the work as first seen, without status.
  const status = new StatusWriter({ cluster: 'wec1', its: its.up, applier, work: () => w, onError: () => {}, debounceMs: 5 });
  t.teardown(async () => { status.stop(); await its.close(); await wec.close(); });
  const results = (await applier.applyWork(w)).map((r) => ({ ...r, live: { ...r.live!, status: { phase: 'Ready' } } }));
  status.setResults('w1', results);
  await until(() => status.idle());
  const statusWrites = () => its.writes.filter((x) => x.path.endsWith('/manifestworks/w1/status')).length;
  t.equal(statusWrites(), 1, 'the status written once');
  status.setResults('w1', results.slice());
  status.observe('w1', 0, { ...results[0]!.live!, metadata: { ...results[0]!.live!.metadata, resourceVersion: '77' } });
  await until(() => status.idle());
  t.equal(statusWrites(), 1, 'the same status is not written again though the informer does not show it yet');
  t.ok(its.objects.get(`${workStatusesPath('wec1')}/configmap-app-a`), 'the WorkStatus stays: an event does not make the object read as not applied');
  t.notOk(its.writes.some((x) => x.method === 'DELETE'), 'nothing deleted');
});

t.test('StatusWriter: statusDetails say which WDS generation is in effect, and are ordered around the status write', async (t) => {
  const annotated = (source: string, generation: number) => work('w1', [cm('app', 'a')], {}, { generation, annotations: { 'view.kubestellar.io/source-generation': source } });
  const w = annotated('7', 1);
  const h = await writerHarness(w);
  const path = `${workStatusesPath('wec1')}/configmap-app-a`;
  const results = await h.applier.applyWork(w);
  const withLive = (generation: number, observedGeneration: number, n: number) => results.map((r) => ({ ...r,
    live: { ...r.live!, metadata: { ...r.live!.metadata, generation, resourceVersion: String(100 + n) }, status: { observedGeneration, n } } }));
  const writesOf = () => h.its.writes.filter((x) => x.path.startsWith(path)).map((x) => x.path.slice(path.length));
  const details = () => (h.its.objects.get(path) as any).statusDetails;

  // The WEC's controller has not observed the applied spec yet: generation 7 is not in effect.
  h.status.setResults('w1', withLive(2, 1, 1), w);
  await until(() => h.status.idle());
  t.same(details(), { lastGeneration: 7, lastGenerationIsApplied: false });
  t.same(writesOf(), ['', '/status'], 'created, then its status');

  // Observed: the status is written first, then the claim that generation 7 is in effect.
  h.status.setResults('w1', withLive(2, 2, 2), w);
  await until(() => h.status.idle());
  t.same(details(), { lastGeneration: 7, lastGenerationIsApplied: true });
  t.same(writesOf(), ['', '/status', '/status', ''], 'status before the statusDetails that vouch for it');

  // A new work generation (a new spec, WDS generation 8) is in the cache but not applied yet: a
  // status change meanwhile still speaks of generation 7, and a refresh does not adopt 8.
  h.its.put(`${manifestWorksPath('wec1')}/w1`, annotated('8', 2));
  h.status.refresh('w1');
  h.status.observe('w1', 0, { ...withLive(2, 2, 3)[0]!.live!, status: { observedGeneration: 2, n: 3 } });
  await until(() => h.status.idle());
  t.same(details(), { lastGeneration: 7, lastGenerationIsApplied: true }, 'not claimed before it is applied');

  // Applied: said not in effect before the status changes.
  h.status.setResults('w1', withLive(3, 2, 4), annotated('8', 2));
  await until(() => h.status.idle());
  t.same(details(), { lastGeneration: 8, lastGenerationIsApplied: false });
  t.same(writesOf().slice(-2), ['', '/status'], 'statusDetails first when the claim is withdrawn');

  // Only the WDS object's metadata moved its generation (9), the work's spec is the same: a refresh rewrites the claim.
  h.its.put(`${manifestWorksPath('wec1')}/w1`, annotated('9', 2));
  const before = writesOf().length;
  h.status.refresh('w1');
  await until(() => h.status.idle());
  t.same(details(), { lastGeneration: 9, lastGenerationIsApplied: false }, 'adopted without applying');
  t.same(writesOf().slice(before), [''], 'one write: the object');
});

t.test('StatusWriter: the first write after a start does not claim before the status it vouches for is there', async (t) => {
  const w = work('w1', [cm('app', 'a')], {}, { annotations: { 'view.kubestellar.io/source-generation': '4' } });
  const h = await writerHarness(w);
  const path = `${workStatusesPath('wec1')}/configmap-app-a`;
  const results = (await h.applier.applyWork(w)).map((r) => ({ ...r, live: { ...r.live!, status: { observedGeneration: 1, ready: true } } }));
  h.status.setResults('w1', results, w);
  await until(() => h.status.idle());
  const writes = h.its.writes.filter((x) => x.path.startsWith(path));
  t.same(writes.map((x) => [x.path.slice(path.length), (x.body as any).statusDetails?.lastGenerationIsApplied]), [['', false], ['/status', undefined], ['', true]],
    'not in effect, the status, then in effect');
});

t.test('StatusWriter: a work without the source-generation annotation (KubeStellar\'s, OCM\'s) gets no statusDetails; a failed apply is not in effect', async (t) => {
  const w = work('w1', [cm('app', 'a')]);
  const h = await writerHarness(w);
  const results = await h.applier.applyWork(w);
  h.status.setResults('w1', results.map((r) => ({ ...r, live: { ...r.live!, status: { observedGeneration: 1 } } })));
  await until(() => h.status.idle());
  t.notOk((h.its.objects.get(`${workStatusesPath('wec1')}/configmap-app-a`) as any).statusDetails);

  const failed = { ...results[0]!, live: { ...results[0]!.live!, status: {} }, conditions: [{ type: 'Applied', status: 'False' as const, reason: 'AppliedManifestFailed', message: 'x', lastTransitionTime: '' }] };
  t.same(buildWorkStatusObject('wec1', 'w1', failed, 3)?.statusDetails, { lastGeneration: 3, lastGenerationIsApplied: false });
  const noObserved = { ...results[0]!, live: { ...results[0]!.live!, status: { phase: 'Ready' } } };
  t.same(buildWorkStatusObject('wec1', 'w1', noObserved, 3)?.statusDetails, { lastGeneration: 3, lastGenerationIsApplied: true }, 'a status without observedGeneration: nothing says otherwise');
});

t.test('StatusWriter: an object moved between works keeps its WorkStatus (the new work holds it); a bundle says each manifest\'s generation', async (t) => {
  const w1 = work('w1', [cm('app', 'a'), cm('app', 'b')], {}, { annotations: { 'view.kubestellar.io/source-generations': '[3,9]' } });
  const h = await writerHarness(w1);
  const w2 = work('w2', [cm('app', 'b')], {}, { annotations: { 'view.kubestellar.io/source-generation': '9' } });
  h.its.put(`${manifestWorksPath('wec1')}/w2`, w2);
  const path = (n: string) => `${workStatusesPath('wec1')}/configmap-app-${n}`;
  const r1 = await h.applier.applyWork(w1);
  h.status.setResults('w1', r1, w1);
  await until(() => h.status.idle());
  t.same((h.its.objects.get(path('a')) as any).statusDetails?.lastGeneration, 3, 'a: its own generation');
  t.same((h.its.objects.get(path('b')) as any).statusDetails?.lastGeneration, 9, 'b: its own generation');
  // b moves to w2: w2 applied first, then w1 without it.
  h.status.setResults('w2', await h.applier.applyWork(w2), w2);
  await until(() => h.status.idle());
  const w1After = work('w1', [cm('app', 'a')], {}, { annotations: { 'view.kubestellar.io/source-generations': '[3]' } });
  h.its.put(`${manifestWorksPath('wec1')}/w1`, w1After);
  h.status.setResults('w1', await h.applier.applyWork(w1After), w1After);
  await until(() => h.status.idle());
  t.notOk(h.its.writes.some((x) => x.method === 'DELETE' && x.path === path('b')), 'b\'s WorkStatus not deleted by w1: w2 holds it');
  t.ok(h.its.objects.get(path('b')), 'b\'s WorkStatus is there');
  t.equal((h.its.objects.get(path('b')) as any).metadata.labels?.['transport.kubestellar.io/manifestwork'], 'w2', 'labelled with its new work');
  await h.status.forget('w1');
  t.ok(h.its.objects.get(path('b')), 'forgetting w1 leaves b\'s');
  t.notOk(h.its.objects.get(path('a')), 'and deletes a\'s');
});

t.test('StatusWriter: a bundled work carries its objects\' statuses in its feedback, one write per work; a status too big has a WorkStatus', async (t) => {
  const bundle = { annotations: { 'view.kubestellar.io/bundle': 'g1', 'view.kubestellar.io/source-generations': '[4,5,6]' } };
  const w = work('b1', [cm('app', 'a'), cm('app', 'b'), cm('app', 'c')], {}, bundle);
  const h = await writerHarness(w);
  const results = await h.applier.applyWork(w);
  const withStatus = (statuses: Record<string, unknown>[]) => results.map((r, i) => ({ ...r, live: { ...r.live!, status: statuses[i] } }));
  h.status.setResults('b1', withStatus([{ phase: 'Ready' }, { phase: 'Ready', n: 1 }, {}]), w);
  await until(() => h.status.idle());
  const manifests = h.getWork('b1')!.status!.resourceStatus!.manifests!;
  const statusOf = (i: number) => statusFromValues(manifests[i]!.statusFeedback!.values);
  t.same(statusOf(0), { status: { phase: 'Ready' }, details: { lastGeneration: 4, lastGenerationIsApplied: true } }, 'each manifest\'s status and the WDS generation it is of');
  t.same(statusOf(1), { status: { phase: 'Ready', n: 1 }, details: { lastGeneration: 5, lastGenerationIsApplied: true } });
  t.same(statusOf(2), { status: {}, details: { lastGeneration: 6, lastGenerationIsApplied: true } }, 'an object without status is reported too');
  t.notOk(h.its.writes.some((x) => x.path.includes('/workstatuses/')), 'no WorkStatus written');
  t.equal(h.its.writes.filter((x) => x.path.endsWith('/manifestworks/b1/status')).length, 1, 'one status write for three objects');

  // b's status grows past what a work may carry: its WorkStatus is written before the work stops carrying it.
  const big = { phase: 'Ready', log: 'x'.repeat(2000) };
  const mark = h.its.writes.length;
  h.status.setResults('b1', withStatus([{ phase: 'Ready' }, big, {}]), w);
  await until(() => h.status.idle());
  const path = `${workStatusesPath('wec1')}/configmap-app-b`;
  t.same((h.its.objects.get(path) as any).status, big, 'the WorkStatus carries it');
  t.equal(statusFromValues(h.getWork('b1')!.status!.resourceStatus!.manifests![1]!.statusFeedback!.values), undefined, 'the work no longer does');
  const order = h.its.writes.slice(mark).map((x) => (x.path.includes('/workstatuses/') ? 'workstatus' : 'work'));
  t.same([order[0], order.at(-1)], ['workstatus', 'work'], 'the WorkStatus first: a reader finds the status in one place or the other');

  // Back to small: the work carries it again, and only then is the WorkStatus deleted.
  const mark2 = h.its.writes.length;
  h.status.setResults('b1', withStatus([{ phase: 'Ready' }, { phase: 'Done' }, {}]), w);
  await until(() => h.status.idle());
  t.notOk(h.its.objects.get(path), 'the WorkStatus is deleted');
  t.same((statusOf2(h.getWork('b1')!, 1) as { status: unknown }).status, { phase: 'Done' });
  t.same(h.its.writes.slice(mark2).map((x) => `${x.method} ${x.path.includes('/workstatuses/') ? 'workstatus' : 'work'}`), ['PATCH work', 'DELETE workstatus'], 'the work first, then the delete');
});

const statusOf2 = (w: ManifestWork, i: number) => statusFromValues(w.status!.resourceStatus!.manifests![i]!.statusFeedback!.values);

t.test('StatusWriter: results of an apply that started before an annotation-only change say the later WDS generation', async (t) => {
  const annotated = (source: string) => work('w1', [cm('app', 'a')], {}, { generation: 1, annotations: { 'view.kubestellar.io/source-generation': source } });
  const started = annotated('4');
  const h = await writerHarness(started);
  const results = await h.applier.applyWork(started);
  // Meanwhile the WDS object's generation moved (5) and the work was rewritten with the same spec.
  h.its.put(`${manifestWorksPath('wec1')}/w1`, annotated('5'));
  h.status.refresh('w1'); // nothing held yet: skipped
  h.status.setResults('w1', results.map((r) => ({ ...r, live: { ...r.live!, status: { phase: 'Ready' } } })), started);
  await until(() => h.status.idle());
  t.same((h.its.objects.get(`${workStatusesPath('wec1')}/configmap-app-a`) as any).statusDetails, { lastGeneration: 5, lastGenerationIsApplied: true }, 'generation 5, not the 4 the apply started from');
});
