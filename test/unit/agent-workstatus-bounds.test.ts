// What the agent stores in a WorkStatus stays inside the ITS's bound: a status past MAX_STATUS_BYTES
// keeps its smallest top-level fields and names the others in an annotation; and a WorkStatus the
// ITS refuses anyway (a full mailbox quota, the size bound) is said once and does not stop the
// work's own status. (The ITS's bound itself is checked against a real kube-apiserver:
// test/integration/agent-its-identity.test.ts.)
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { StatusWriter } from '../../src/agent/status/work-status-writer.js';
import { buildWorkStatusObject, MAX_STATUS_BYTES, STATUS_TRUNCATED_ANNOTATION } from '../../src/agent/status/workstatus.js';
import { manifestWorksPath, workStatusesPath, type ManifestWork } from '../../src/kube/ocm-api.js';
import { FakeApplier } from '../fixtures/agent/fake-applier.js';
import { cm, mailboxWork as work } from '../fixtures/agent/builders.js';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

const applied = (status: Record<string, unknown>) => ({
  ordinal: 0, owned: true, feedback: [], conditions: [{ type: 'Applied', status: 'True', reason: 'Applied', message: '' }],
  resourceMeta: { ordinal: 0, group: 'example.com', version: 'v1', kind: 'Widget', resource: 'widgets', namespace: 'app', name: 'w' },
  live: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'app', generation: 1 }, status },
}) as never;

t.test('a status past the bound keeps its small fields, leaves out the largest and names them', async (t) => {
  const status = { phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }], resources: 'x'.repeat(MAX_STATUS_BYTES), history: 'y'.repeat(MAX_STATUS_BYTES / 2) };
  const ws = buildWorkStatusObject('wec1', 'work-1', applied(status))!;
  t.same(Object.keys(ws.status!).sort(), ['conditions', 'history', 'phase'], 'what fits is kept, smallest first');
  t.ok(Buffer.byteLength(JSON.stringify(ws.status)) <= MAX_STATUS_BYTES, 'within the bound');
  t.equal(ws.metadata.annotations?.[STATUS_TRUNCATED_ANNOTATION], 'resources', 'the field left out is named');

  const small = buildWorkStatusObject('wec1', 'work-1', applied({ phase: 'Ready' }))!;
  t.same(small.status, { phase: 'Ready' }, 'a status within the bound is carried whole');
  t.notOk(small.metadata.annotations, 'and not marked');

  const many = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`field-${'z'.repeat(40)}-${i}`, 'v'.repeat(200)]));
  const cut = buildWorkStatusObject('wec1', 'work-1', applied(many))!;
  t.ok(cut.metadata.annotations![STATUS_TRUNCATED_ANNOTATION]!.length <= 257, 'the names left out (the WEC\'s) are cut too');
});

t.test('a WorkStatus the ITS refuses is said once; the work\'s status is written all the same, and nothing loops', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  const wec = fakeCluster('https://wec.test:6443');
  const w: ManifestWork = work('w1', [cm('app', 'a')]);
  const errors: string[] = [];
  let refusals = 0;
  let workWrites = 0;
  its.pool.intercept({ path: (p) => p.startsWith(`${workStatusesPath('wec1')}/`), method: 'PATCH' }).reply(() => {
    refusals++;
    return { statusCode: 403, data: JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message: 'workstatuses.control.kubestellar.io "configmap-app-a" is forbidden: exceeded quota: kubestellar-view-mailbox, requested: count/workstatuses.control.kubestellar.io=1, used: count/workstatuses.control.kubestellar.io=0, limited: count/workstatuses.control.kubestellar.io=0' }), responseOptions: { headers: { 'content-type': 'application/json' } } };
  }).persist();
  its.pool.intercept({ path: `${manifestWorksPath('wec1')}/w1/status`, method: 'PATCH' }).reply(() => {
    workWrites++;
    return { statusCode: 200, data: JSON.stringify({ ...w, metadata: { ...w.metadata, resourceVersion: String(1 + workWrites) } }), responseOptions: { headers: { 'content-type': 'application/json' } } };
  }).persist();
  const applier = new FakeApplier(wec);
  const status = new StatusWriter({ cluster: 'wec1', its: its.up, applier, work: () => w, onError: (where, err) => errors.push(`${where}: ${(err as Error).message}`), debounceMs: 5 });
  t.teardown(async () => { status.stop(); await its.close(); await wec.close(); });

  const results = await applier.applyWork(w);
  status.setResults('w1', results.map((r) => ({ ...r, live: { ...r.live!, status: { phase: 'Ready' } } })));
  await until(() => workWrites >= 1 && status.idle());
  t.equal(refusals, 1, 'the WorkStatus was tried once');
  t.same(errors.length, 1, 'the refusal is said once');
  t.match(errors[0], /^workstatus: WorkStatus configmap-app-a refused by the ITS, left unwritten: .*exceeded quota/);
  await sleep(100);
  t.equal(refusals, 1, 'and not tried again on its own (no retry loop)');

  status.setResults('w1', results.map((r) => ({ ...r, live: { ...r.live!, status: { phase: 'Failed' } } })));
  await until(() => workWrites >= 2 && status.idle());
  t.equal(refusals, 2, 'tried again at the next status write of its work');
  t.equal(errors.length, 1, 'not said again');
});
