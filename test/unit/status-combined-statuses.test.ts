// The CombinedStatuses source with fakes (src/controllers/status/combined-statuses.ts): KubeStellar's
// name, namespace and labels; one per (object, policy naming collectors); results only from valid
// collectors that exist, computed in the CEL workers (a read never waits: the rows computed so far,
// a changed one's former row until the new one comes back, announced); the keys announced when an object's reports change
// and when it loses its CombinedStatus; and a collector's status (observedGeneration, errors)
// written by the leader only.
import t from 'tap';
import { CelPool } from '../../src/controllers/status/cel-pool.js';
import { Reports } from '../../src/controllers/status/reports.js';
import { CombinedStatuses, type StatusCollector } from '../../src/controllers/status/combined-statuses.js';
import type { StatusSources } from '../../src/controllers/model/sent.js';
import { waitFor } from '../../src/kube/wait.js';
import type { Placement } from '../../src/controllers/model/sent.js';
import { encodeKey, objectKey } from '../../src/controllers/model/keys.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { Store } from '../../src/kube/informer.js';
import type { WorkStatus } from '../../src/kube/ocm-api.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';
import { identityKey } from '../../src/controllers/model/keys.js';

const NAMESPACES: WorkloadResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, native: { group: '', resource: 'namespaces' }, bypassesView: false, hasStatus: true };
const DEPLOYMENTS: WorkloadResource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, native: { group: 'apps', resource: 'deployments' }, bypassesView: false, hasStatus: true };
const DEP = objectKey(DEPLOYMENTS, 'demo', 'web');
const NS = objectKey(NAMESPACES, '', 'demo');
const IDS = {
  [encodeKey(DEP)]: { key: DEP, res: DEPLOYMENTS, id: { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web' } },
  [encodeKey(NS)]: { key: NS, res: NAMESPACES, id: { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'demo' } },
};
const objects: Record<string, KubeObject> = {
  [encodeKey(DEP)]: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'demo', uid: 'dep-uid', creationTimestamp: '2026-11-24T10:00:00Z' }, spec: { replicas: 2 } },
  [encodeKey(NS)]: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo', uid: 'ns-uid', creationTimestamp: '2026-11-24T09:00:00Z' } },
};
const policies: Record<string, KubeObject & { metadata: { name: string; uid: string; creationTimestamp: string } }> = {
  p: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: 'p', uid: 'p-uid', creationTimestamp: '2026-11-24T11:00:00Z' } },
  q: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: 'q', uid: 'q-uid', creationTimestamp: '2026-11-24T08:00:00Z' } },
};
const mod = (statusCollectors: string[], clusters: string[]) => ({ createOnly: false, wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors, clusters });
/** One pool of CEL workers for the file (starting one loads the engine). */
const pool = new CelPool();
t.teardown(() => pool.close());

/** Polls `read` until `ok` says its value is there (the CEL workers answer asynchronously). */
async function until<T>(read: () => T, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  await waitFor(async () => ({ ok: ok(read()), detail: '' }), timeoutMs, 20);
  return read();
}

const collector = (name: string, spec: StatusCollector['spec'], generation = 1, status?: StatusCollector['status']): StatusCollector =>
  ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name, generation, resourceVersion: '3' }, spec, ...(status ? { status } : {}) });
const workStatus = (cluster: string, id: { group: string; resource: string; namespace: string; name: string }, status: Record<string, unknown>): WorkStatus => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus', metadata: { name: `${id.resource}-${id.name}`, namespace: cluster,
    managedFields: [{ manager: 'agent', operation: 'Update', subresource: 'status', time: '2026-11-24T12:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } }] },
  spec: { sourceRef: { version: 'v1', kind: 'X', ...id } }, status,
});

function harness(placements: Record<string, Placement>, celPool: CelPool = pool) {
  const wds = mockUpstream();
  let reportChange: (source: string) => void = () => {};
  const sources: StatusSources = {
    find: (k) => { const e = IDS[encodeKey(k)]; return e && { key: e.key, id: e.id, native: objects[encodeKey(k)] as never, ref: { ...e.id, labels: {} }, bypassesView: false, shadowsNative: false, denatured: false, stored: objects[encodeKey(k)] as never }; },
    stored: (k) => { const e = IDS[encodeKey(k)]; return e && { res: e.res, obj: objects[encodeKey(k)]! }; },
    placement: (s) => placements[s],
    keysFor: () => [], allKeys: () => [DEP, NS],
    onPlacementChange: () => () => {}, onObjectChange: () => () => {},
    policy: (name) => policies[name],
  };
  const workStatuses = new Store<WorkStatus>({ identity: (ws) => [identityKey(ws.metadata.namespace, ws.spec.sourceRef)] });
  const cs = new CombinedStatuses({ wds: wds.up, sources, reports: new Reports(workStatuses), onObjectReportChange: (cb) => { reportChange = cb; return () => {}; }, log: () => {}, pool: celPool });
  return { cs, wds, workStatuses, report: (source: string) => reportChange(source) };
}

const placed = (key: typeof DEP, modulations: Placement['modulations']): Placement =>
  ({ id: IDS[encodeKey(key)]!.id, resourceVersion: '1', policies: Object.keys(modulations).sort(), modulations });

t.test('named, placed and labelled as KubeStellar does; results of the valid collectors that exist, by name', async (t) => {
  const { cs, workStatuses } = harness({
    [encodeKey(DEP)]: placed(DEP, { p: mod(['sum', 'count', 'missing', 'broken'], ['wec1', 'wec2']), q: mod([], ['wec1']) }),
    [encodeKey(NS)]: placed(NS, { q: mod(['count'], ['wec1']) }),
  });
  cs.collectors.store.set(collector('count', { combinedFields: [{ name: 'count', type: 'COUNT' }], limit: 20 }));
  cs.collectors.store.set(collector('sum', { combinedFields: [{ name: 'available', type: 'SUM', subject: 'returned.status.availableReplicas' }], limit: 20 }));
  cs.collectors.store.set(collector('broken', { select: [{ name: 'x', def: 'nope' }], limit: 20 }));
  workStatuses.set(workStatus('wec1', IDS[encodeKey(DEP)]!.id, { availableReplicas: 2 }));
  workStatuses.set(workStatus('wec2', IDS[encodeKey(DEP)]!.id, { availableReplicas: 3 }));
  workStatuses.set(workStatus('wec3', IDS[encodeKey(DEP)]!.id, { availableReplicas: 50 }));
  const heard: string[] = [];
  cs.onCombinedStatusChange((k) => heard.push(k));
  cs.combinedStatuses(); // as the served feed does first: the index
  const before = cs.combinedStatus('demo', 'dep-uid.p-uid');
  t.ok(before && !before.results, 'before the collectors are compiled and evaluated: the object, no results yet (a read never waits for CEL)');
  await until(() => cs.combinedStatus('demo', 'dep-uid.p-uid')?.results, (r) => r?.length === 2);
  t.ok(heard.includes('demo/dep-uid.p-uid'), 'the results coming back are announced');
  await until(() => cs.combinedStatus('kubestellar-report', 'ns-uid.q-uid')?.results, (r) => r?.length === 1);
  const all = cs.combinedStatuses();
  t.same(all.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort(), ['demo/dep-uid.p-uid', 'kubestellar-report/ns-uid.q-uid'], 'one per (object, policy naming collectors); a cluster-scoped object\'s in kubestellar-report');
  const dep = cs.combinedStatus('demo', 'dep-uid.p-uid')!;
  t.strictSame(dep.metadata.labels, {
    'status.kubestellar.io/api-group': 'apps', 'status.kubestellar.io/resource': 'deployments', 'status.kubestellar.io/namespace': 'demo',
    'status.kubestellar.io/name': 'web', 'status.kubestellar.io/binding-policy': 'p',
  });
  t.equal(dep.metadata.creationTimestamp, '2026-11-24T11:00:00Z', 'the later of the object\'s and the policy\'s');
  t.match(dep.metadata.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.strictSame(dep.results, [
    { name: 'count', columnNames: ['count'], rows: [{ columns: [{ type: 'Number', float: '2' }] }] },
    { name: 'sum', columnNames: ['available'], rows: [{ columns: [{ type: 'Number', float: '5' }] }] },
  ], 'only the policy\'s clusters (not wec3); the missing and the invalid collector give no result');
  t.strictSame(cs.combinedStatus('kubestellar-report', 'ns-uid.q-uid')!.results, [{ name: 'count', columnNames: ['count'], rows: [{ columns: [{ type: 'Number', float: '0' }] }] }], 'no reports yet: COUNT 0');
  const { status: _none, ...statusless } = workStatus('wec1', IDS[encodeKey(NS)]!.id, {});
  workStatuses.set(statusless);
  t.strictSame(cs.combinedStatus('kubestellar-report', 'ns-uid.q-uid')!.results![0]!.rows, [{ columns: [{ type: 'Number', float: '0' }] }], 'until the new row is computed: the last complete result');
  const counted = await until(() => cs.combinedStatus('kubestellar-report', 'ns-uid.q-uid')!.results![0]!.rows, (r) => r?.[0]?.columns[0]?.float === '1');
  t.strictSame(counted, [{ columns: [{ type: 'Number', float: '1' }] }], 'a WorkStatus without status (the object is there): counted');
  t.equal(cs.combinedStatus('demo', 'nope'), undefined);
});

/** The pool, except that after `hold(c)` evaluations with a report of c wait until `release()`. */
class HoldingPool extends CelPool {
  private held: string | undefined;
  private gate = Promise.resolve();
  release: () => void = () => {};
  hold(cluster: string): void {
    this.held = cluster;
    this.gate = new Promise((r) => { this.release = r; });
  }
  /** Evaluations answered so far. */
  answered = 0;
  override async evaluate(...args: Parameters<CelPool['evaluate']>): ReturnType<CelPool['evaluate']> {
    if (args[1].reports.some((r) => r.cluster === this.held)) await this.gate;
    const rows = await super.evaluate(...args);
    this.answered++;
    return rows;
  }
}

/**
 * 60 WECs c00…c59 (their rows go to the workers in tasks of 50) each reporting 1 available replica,
 * one collector `name` of COUNT and SUM(`subject`), evaluated through `holding`; `row()` reads its row.
 */
function sixtyWecs(holding: HoldingPool, name: string, subject: string) {
  const clusters = Array.from({ length: 60 }, (_, i) => `c${String(i).padStart(2, '0')}`);
  const { cs, workStatuses } = harness({ [encodeKey(DEP)]: placed(DEP, { p: mod([name], clusters) }) }, holding);
  cs.collectors.store.set(collector(name, { combinedFields: [{ name: 'n', type: 'COUNT' }, { name, type: 'SUM', subject }], limit: 20 }));
  for (const c of clusters) workStatuses.set(workStatus(c, IDS[encodeKey(DEP)]!.id, { availableReplicas: 1 }));
  cs.combinedStatuses();
  const row = () => cs.combinedStatus('demo', 'dep-uid.p-uid')?.results?.[0]?.rows?.[0]?.columns.map((c) => c.float);
  return { workStatuses, row };
}

t.test('1,000 WECs keep reporting: the result is over the rows computed so far, not frozen until none is missing', async (t) => {
  // 60 WECs: their rows go to the workers in tasks of 50; the task with c59 is held back. Before,
  // the result waited for a moment with no row missing (measured at 1,000 WECs: frozen for 13 s
  // while reports came in, and churn shown 2.7 s late at the median).
  const holding = new HoldingPool();
  holding.hold('c59');
  t.teardown(() => holding.close());
  const { workStatuses, row } = sixtyWecs(holding, 'available', 'returned.status.availableReplicas');
  t.strictSame(await until(row, (r) => r?.[0] === '50'), ['50', '50'], 'the 50 rows computed are shown while the task with c59 is held');
  workStatuses.set(workStatus('c00', IDS[encodeKey(DEP)]!.id, { availableReplicas: 7 }));
  t.strictSame(row(), ['50', '50'], 'c00 changed: its former row until the new one is back');
  holding.release();
  t.strictSame(await until(row, (r) => r?.[1] === '66'), ['60', '66'], 'then all 60 rows, c00 at its new value');
});

t.test('the object\'s new version, for a collector that reads obj: the former result until every WEC has a row of the new one', async (t) => {
  const holding = new HoldingPool();
  const original = objects[encodeKey(DEP)]!;
  t.teardown(() => { objects[encodeKey(DEP)] = original; return holding.close(); });
  objects[encodeKey(DEP)] = { ...original, metadata: { ...original.metadata, resourceVersion: '1' }, spec: { replicas: 2 } };
  const { row } = sixtyWecs(holding, 'wanted', 'obj.spec.replicas');
  t.strictSame(await until(row, (r) => r?.[0] === '60'), ['60', '120'], 'every WEC counted, 2 replicas wanted each');
  holding.hold('c59');
  objects[encodeKey(DEP)] = { ...original, metadata: { ...original.metadata, resourceVersion: '2' }, spec: { replicas: 3 } };
  const answered = holding.answered;
  row();
  await until(() => holding.answered, (n) => n > answered); // the task of the 50 rows not held is back
  await new Promise((r) => setImmediate(r)); // and its rows kept
  t.strictSame(row(), ['60', '120'], 'the new version\'s rows are not mixed in (50 × 3) while c59\'s is held');
  holding.release();
  t.strictSame(await until(row, (r) => r?.[1] === '180'), ['60', '180'], 'then the new version\'s, whole');
});

t.test('a report change announces the object\'s keys, and a key the object lost', async (t) => {
  const placements: Record<string, Placement> = { [encodeKey(DEP)]: placed(DEP, { p: mod(['count'], ['wec1']) }) };
  const { cs, report } = harness(placements);
  void cs.start(); // subscribes at once; its informer never syncs against the mock (stopped below)
  const heard: string[] = [];
  cs.onCombinedStatusChange((k) => heard.push(k));
  report(encodeKey(DEP));
  t.same(heard, ['demo/dep-uid.p-uid']);
  placements[encodeKey(DEP)] = placed(DEP, { p: mod([], ['wec1']) });
  report(encodeKey(DEP));
  t.same(heard, ['demo/dep-uid.p-uid', 'demo/dep-uid.p-uid'], 'gone: announced once more');
  t.equal(cs.combinedStatus('demo', 'dep-uid.p-uid'), undefined);
  cs.stop();
});

t.test('a collector\'s status: written by the leader only, with its errors, and not again when it says the same', async (t) => {
  const { cs, wds } = harness({});
  t.teardown(() => wds.close());
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, {}).persist();
  cs.collectors.store.set(collector('bad', { filter: 'obj.(', limit: 20 }, 2));
  cs.collectors.store.set(collector('good', { combinedFields: [{ name: 'count', type: 'COUNT' }], limit: 20 }, 1, { observedGeneration: 1 }));
  await until(() => [cs.compile('bad'), cs.compile('good')], (c) => c.every((x) => x !== undefined));
  t.equal(wds.calls().length, 0);
  cs.setLeading(true);
  await until(() => wds.calls().length, (n) => n > 0);
  await new Promise((r) => setTimeout(r, 50));
  const calls = wds.calls();
  t.same(calls.map((c) => `${c.method} ${c.path}`), ['PATCH /apis/control.kubestellar.io/v1alpha1/statuscollectors/bad/status'], 'only the one whose status differs');
  t.match(calls[0]!.body, { metadata: { resourceVersion: '3' }, status: { observedGeneration: 2, errors: ['filter expression invalid: <input>:1:4: found . but expecting end of input'] } });
  t.equal(calls[0]!.headers['content-type'], 'application/merge-patch+json');
});

t.test('a collector that arrives while leading: compiled in the workers, then its status written once', async (t) => {
  const { cs, wds } = harness({});
  t.teardown(() => { cs.stop(); return wds.close(); });
  wds.pool.intercept({ path: (p) => p.startsWith('/apis/control.kubestellar.io/v1alpha1/statuscollectors?') && !p.includes('watch'), method: 'GET' })
    .reply(200, { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollectorList', metadata: { resourceVersion: '10' }, items: [collector('late', { select: [{ name: 'x', def: 'nope' }], limit: 20 }, 4)] });
  wds.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' }).reply(200, '').persist();
  wds.pool.intercept({ path: () => true, method: 'PATCH' }).reply(200, {}).persist();
  cs.setLeading(true);
  void cs.start();
  const patches = await until(() => wds.calls().filter((c) => c.method === 'PATCH'), (p) => p.length > 0);
  t.same(patches.map((c) => c.path), ['/apis/control.kubestellar.io/v1alpha1/statuscollectors/late/status']);
  t.match(patches[0]!.body, { status: { observedGeneration: 4, errors: ['select expression (x) invalid: undeclared reference to \'nope\''] } });
});
