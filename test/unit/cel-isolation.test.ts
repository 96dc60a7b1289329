// CEL off the server's thread (src/controllers/status/cel-pool.ts, docs/security.md D4): a runaway
// evaluation is stopped at its deadline in its worker, while the server's thread keeps turning
// and another collector's work is answered meanwhile; one collector's tasks run one at a time
// (it never holds more than one worker); a stopped worker is replaced. Through the
// CombinedStatuses: a runaway collector's rows say they were stopped, and another collector's
// result comes as usual.
import t, { type Test } from 'tap';
import { CelPool } from '../../src/controllers/status/cel-pool.js';
import { Reports } from '../../src/controllers/status/reports.js';
import { CombinedStatuses, type StatusCollector } from '../../src/controllers/status/combined-statuses.js';
import type { StatusSources } from '../../src/controllers/model/sent.js';
import { identityKey, objectKey } from '../../src/controllers/model/keys.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { Store } from '../../src/kube/informer.js';
import type { WorkStatus } from '../../src/kube/ocm-api.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { waitFor } from '../../src/kube/wait.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

/**
 * A filter that passes the estimate; over 400,000 items its run reaches the runtime cost limit only
 * after ≈ 200 ms here (more on a loaded machine), so a deadline of 50 ms stops it first.
 */
const RUNAWAY = { filter: 'obj.items.all(x, x >= 0)', select: [{ name: 'wec', def: 'inventory.name' }], limit: 20 };
const HUGE = { items: Array.from({ length: 400_000 }, (_, i) => i) };
const QUICK = { select: [{ name: 'wec', def: 'inventory.name' }], limit: 20 };
const reports = [{ cluster: 'wec1', status: {} }];
const evalReq = (name: string, spec: unknown, obj?: unknown) => ({ collector: { key: `${name}/1`, name, spec }, ...(obj ? { obj } : {}), reports });

/**
 * Counts the turns of this thread's event loop while `p` runs: a chain of setImmediate, which turns
 * thousands of times in 50 ms even on a loaded machine (it needs a time slice, not a 10 ms timer's
 * punctuality), and at most once or twice while an evaluation blocks the thread.
 */
async function turnsDuring<T>(p: Promise<T>): Promise<{ turns: number; ms: number; result: PromiseSettledResult<T> }> {
  let turns = 0;
  let running = true;
  const turn = () => { if (running) { turns++; setImmediate(turn); } };
  setImmediate(turn);
  const start = Date.now();
  const [result] = await Promise.allSettled([p]);
  running = false;
  return { turns, ms: Date.now() - start, result };
}

/** Far more than a blocked thread makes (one or two), far fewer than a free one does (thousands). */
const FREE_THREAD_TURNS = 20;

t.test('a runaway evaluation is stopped at its deadline in its worker; this thread turns meanwhile; the worker is replaced', async (t) => {
  const pool = new CelPool({ workers: 2 });
  t.teardown(() => pool.close());
  // Both workers loaded, so the timing below is the task's own.
  await Promise.all([pool.compile('w1', 'w', QUICK, 30_000), pool.compile('w2', 'w', QUICK, 30_000)]);
  const runaway = pool.evaluate('runaway', evalReq('runaway', RUNAWAY, HUGE), 50);
  const { turns, ms, result } = await turnsDuring(runaway);
  t.equal(result.status, 'rejected');
  t.match((result as PromiseRejectedResult).reason.message, /^stopped after 50 ms, this server's limit$/);
  t.ok(turns >= FREE_THREAD_TURNS, `this thread turned ${turns} times in ${ms} ms while the worker ran`);
  const after = await pool.evaluate('runaway', evalReq('quick', QUICK), 30_000);
  t.strictSame(after, [{ kept: true, select: [{ type: 'String', string: 'wec1' }] }], 'the stopped worker was replaced');
});

/**
 * The pool's scheduling, with a worker whose `block` task holds its thread until its deadline
 * (test/fixtures/blocking-cel-worker.ts): the order of answers is then the pool's, not the
 * machine's. The deadline is long, so any wait for the blocked lane would show.
 */
const BLOCKING_WORKER = new URL('../fixtures/blocking-cel-worker.ts', import.meta.url);
const BLOCK_DEADLINE_MS = 3000;

/** A pool of two blocking-worker threads, both started (a new thread's start is not a task's time). */
async function blockingPool(t: Test): Promise<CelPool> {
  const pool = new CelPool({ workers: 2, workerUrl: BLOCKING_WORKER });
  t.teardown(() => pool.close());
  await Promise.all([pool.compile('w1', 'w', QUICK, 60_000), pool.compile('w2', 'w', QUICK, 60_000)]);
  return pool;
}

t.test('another collector is answered while one is blocked: it did not wait for the blocked one', async (t) => {
  const pool = await blockingPool(t);
  const order: string[] = [];
  const blocked = pool.evaluate('blocked', evalReq('block', QUICK), BLOCK_DEADLINE_MS).catch((err: Error) => { order.push(`blocked: ${err.message}`); });
  await pool.evaluate('quick', evalReq('quick', QUICK), 30_000);
  order.push('quick answered');
  await blocked;
  t.same(order, ['quick answered', `blocked: stopped after ${BLOCK_DEADLINE_MS} ms, this server's limit`]);
});

t.test('one collector\'s tasks run one at a time: it never holds more than one worker', async (t) => {
  const pool = await blockingPool(t);
  const order: string[] = [];
  const started = Date.now();
  let secondAfter = 0;
  const first = pool.evaluate('slow', evalReq('block', QUICK), BLOCK_DEADLINE_MS).catch(() => { order.push('first stopped'); });
  const second = pool.evaluate('slow', evalReq('block', QUICK), BLOCK_DEADLINE_MS).catch(() => { order.push('second stopped'); secondAfter = Date.now() - started; });
  const other = pool.evaluate('other', evalReq('other', QUICK), 30_000).then(() => { order.push('other answered'); });
  await Promise.all([first, second, other]);
  t.same(order, ['other answered', 'first stopped', 'second stopped'], 'the other lane did not wait');
  // Run side by side, both would stop after one deadline.
  t.ok(secondAfter >= 2 * BLOCK_DEADLINE_MS, `the second began only when the first ended: stopped ${secondAfter} ms after both were sent`);
});

t.test('a lane with too many waiting tasks refuses more at once', async (t) => {
  const pool = new CelPool({ workers: 1 });
  t.teardown(() => pool.close());
  const running = pool.evaluate('admission', evalReq('a', RUNAWAY, HUGE), 50).catch(() => undefined);
  const waiting = pool.compile('admission', 'x', QUICK, 30_000, 1);
  await t.rejects(pool.compile('admission', 'y', QUICK, 30_000, 1), { message: /^busy: 1 tasks are waiting before this one$/ });
  await running;
  t.same(await waiting, { errors: [], shape: { name: 'x', select: ['wec'], groupBy: [], combinedFields: [], limit: 20, columnNames: ['wec'], uses: ['inventory'] } });
});

const CONFIGMAPS: WorkloadResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, native: { group: '', resource: 'configmaps' }, bypassesView: false, hasStatus: false };

t.test('through the CombinedStatuses: the runaway collector\'s rows say they were stopped; the other\'s result comes as usual', async (t) => {
  const key = objectKey(CONFIGMAPS, 'demo', 'big');
  const id = { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'big' };
  const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'demo', uid: 'cm-uid', resourceVersion: '7' }, ...HUGE };
  const sources: StatusSources = {
    find: () => ({ key, id, native: obj as never, ref: { ...id, labels: {} }, bypassesView: false, shadowsNative: false, denatured: false, stored: obj as never }),
    stored: () => ({ res: CONFIGMAPS, obj }),
    placement: () => ({ id, resourceVersion: '7', policies: ['p'], modulations: { p: { createOnly: false, wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors: ['runaway', 'count'], clusters: ['wec1', 'wec2'] } } }),
    keysFor: () => [], allKeys: () => [key], onPlacementChange: () => () => {}, onObjectChange: () => () => {},
    policy: () => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: 'p', uid: 'p-uid' } }),
  };
  const workStatuses = new Store<WorkStatus>({ identity: (ws) => [identityKey(ws.metadata.namespace, ws.spec.sourceRef)] });
  for (const cluster of ['wec1', 'wec2']) {
    workStatuses.set({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus', metadata: { name: 'cm', namespace: cluster, resourceVersion: '1' }, spec: { sourceRef: { ...id, kind: 'ConfigMap' } }, status: {} } as WorkStatus);
  }
  const wds = mockUpstream();
  t.teardown(() => wds.close());
  const cs = new CombinedStatuses({ wds: wds.up, sources, reports: new Reports(workStatuses), onObjectReportChange: () => () => {}, log: () => {}, evaluateDeadlineMs: 50 });
  t.teardown(() => cs.stop());
  const sc = (name: string, spec: unknown): StatusCollector => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name, generation: 1 }, spec });
  cs.collectors.store.set(sc('runaway', RUNAWAY));
  cs.collectors.store.set(sc('count', { combinedFields: [{ name: 'n', type: 'COUNT' }], limit: 20 }));
  cs.combinedStatuses(); // as the served feed does first: the index
  const read = () => cs.combinedStatus('demo', 'cm-uid.p-uid')?.results;
  const { turns, ms } = await turnsDuring(waitFor(async () => ({ ok: read()?.length === 2, detail: '' }), 60_000, 20));
  t.ok(turns >= FREE_THREAD_TURNS, `this thread turned ${turns} times in ${ms} ms while the workers ran`);
  t.strictSame(read(), [
    { name: 'count', columnNames: ['n'], rows: [{ columns: [{ type: 'Number', float: '2' }] }] },
    { name: 'runaway', columnNames: ['wec'], errors: ['wec1: evaluation stopped after 50 ms, this server\'s limit', 'wec2: evaluation stopped after 50 ms, this server\'s limit'] },
  ]);
});
