import t from 'tap';
import { runWorkers, WorkQueue } from '../../src/kube/work-queue.js';

t.test('dedup: a queued key is queued once', async (t) => {
  const q = new WorkQueue();
  q.add('a');
  q.add('b');
  q.add('a');
  t.equal(q.length, 2);
  t.equal(await q.get(), 'a');
  t.equal(await q.get(), 'b');
  t.equal(q.length, 0);
});

t.test('a key being processed is not handed out again; added meanwhile, it comes back at done', async (t) => {
  const q = new WorkQueue();
  q.add('a');
  t.equal(await q.get(), 'a');
  q.add('a');
  t.equal(q.length, 0, 'not queued while processing');
  let second: string | undefined;
  void q.get().then((k) => { second = k; });
  await new Promise((r) => setImmediate(r));
  t.equal(second, undefined, 'a waiting get does not receive the key in process');
  q.done('a');
  await new Promise((r) => setImmediate(r));
  t.equal(second, 'a', 'requeued at done and handed to the waiter');
  q.done('a');
  t.equal(q.length, 0, 'done without a new add requeues nothing');
});

t.test('get waits for a key; shutDown wakes waiters with undefined', async (t) => {
  const q = new WorkQueue();
  const waiting = q.get();
  q.add('x');
  t.equal(await waiting, 'x');
  const idle = q.get();
  q.shutDown();
  t.equal(await idle, undefined);
  q.add('y');
  t.equal(await q.get(), undefined, 'nothing after shutdown');
});

t.test('rate-limited retries back off exponentially per key until forget', async (t) => {
  const q = new WorkQueue({ baseMs: 10, maxMs: 40 });
  t.same([0, 1, 2, 3, 10].map((n) => q.backoff(n)), [10, 20, 40, 40, 40]);
  // Taken before the first add: the wait starts there, and a loaded machine may run late after it.
  const started = Date.now();
  q.addRateLimited('k');
  q.addRateLimited('k');
  t.equal(q.numRequeues('k'), 2);
  t.equal(q.length, 0, 'not at once');
  t.equal(await q.get(), 'k');
  t.ok(Date.now() - started >= 8, 'after the backoff');
  q.forget('k');
  t.equal(q.numRequeues('k'), 0);
  q.shutDown();
});

t.test('addAfter adds later; 0 adds now', async (t) => {
  const q = new WorkQueue();
  q.addAfter('now', 0);
  t.equal(q.length, 1);
  q.addAfter('later', 20);
  t.equal(q.length, 1);
  t.equal(await q.get(), 'now');
  t.equal(await q.get(), 'later');
  q.shutDown();
});

t.test('runWorkers: keys processed with at most one worker per key, failures retried', async (t) => {
  const q = new WorkQueue({ baseMs: 1, maxMs: 5 });
  const active = new Set<string>();
  let overlap = false;
  const seen: string[] = [];
  const failedOnce = new Set<string>();
  const errors: string[] = [];
  const workers = runWorkers(q, 3, async (key) => {
    if (active.has(key)) overlap = true;
    active.add(key);
    await new Promise((r) => setTimeout(r, 2));
    active.delete(key);
    if (key === 'flaky' && !failedOnce.has(key)) {
      failedOnce.add(key);
      throw new Error('first try fails');
    }
    seen.push(key);
  }, (key) => { errors.push(key); });
  for (const k of ['a', 'b', 'flaky', 'a', 'c']) q.add(k);
  setTimeout(() => q.add('a'), 1);
  const deadline = Date.now() + 5000;
  while (!(seen.includes('flaky') && seen.includes('c')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  q.shutDown();
  await workers;
  t.notOk(overlap, 'never two workers on one key');
  t.same(errors, ['flaky'], 'the failure was reported');
  t.ok(seen.includes('flaky'), 'and retried to success');
  t.same([...new Set(seen)].sort(), ['a', 'b', 'c', 'flaky']);
});
