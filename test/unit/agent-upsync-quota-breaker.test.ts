// The quota breaker of one mailbox (src/agent/upsync/quota-breaker.ts), alone: what it releases
// for a create, and when — first refused first, one probe per backoff, the next ones after a copy
// written, one soon after room is made (and a stream of deletions does not keep postponing it).
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { QuotaBreaker } from '../../src/agent/upsync/quota-breaker.js';

function breaker(o: { baseMs?: number; roomDelayMs?: number; batch?: number } = {}) {
  const released: string[] = [];
  let changes = 0;
  const b = new QuotaBreaker({
    limit: { baseMs: o.baseMs ?? 10_000, maxMs: o.baseMs ?? 10_000 }, batch: o.batch ?? 2, roomDelayMs: o.roomDelayMs ?? 100,
    release: (n) => released.push(n), onChange: () => { changes++; },
  });
  t.teardown(() => b.stop());
  return { b, released, changes: () => changes };
}

t.test('refused copies wait in order; a new create waits with them; written releases the next batch', async (t) => {
  const { b, released, changes } = breaker({ baseMs: 50 });
  t.ok(b.mayCreate('a'), 'nothing refused: every create goes');
  b.refusedBy('a', 'exceeded quota: q');
  b.refusedBy('b', 'exceeded quota: q');
  t.notOk(b.mayCreate('c'), 'while copies wait, a new one is not sent');
  t.equal(b.wait('c'), 'exceeded quota: q', 'it waits, with kube\'s last message');
  t.same([...b.refused.keys()], ['a', 'b', 'c']);
  await sleep(150);
  t.same(released, ['a'], 'one probe after the backoff: the first refused');
  t.ok(b.mayCreate('a'), 'the released copy may be sent');
  b.written('a');
  t.same(released, ['a', 'b', 'c'], 'written: the next batch of 2');
  b.dropped('b');
  b.dropped('c');
  t.equal(b.refused.size, 0);
  t.ok(b.mayCreate('z'));
  t.ok(changes() >= 4, 'each change said');
});

t.test('room made: a probe about roomDelayMs later, not postponed by more deletions; a probe due sooner stays', async (t) => {
  const { b, released } = breaker({ baseMs: 10_000, roomDelayMs: 200 });
  b.refusedBy('a', 'exceeded quota: q');
  const start = Date.now();
  while (released.length === 0 && Date.now() - start < 1500) {
    b.roomMade();
    await sleep(50);
  }
  t.same(released, ['a'], 'released despite a deletion every 50 ms');
  t.ok(Date.now() - start < 600, `within ${Date.now() - start} ms`);

  const fast = breaker({ baseMs: 100, roomDelayMs: 5_000 });
  fast.b.refusedBy('x', 'exceeded quota: q');
  fast.b.roomMade();
  await sleep(300);
  t.same(fast.released, ['x'], 'the backoff\'s probe, sooner than the room delay, was kept');
});

t.test('a released copy that ends without a create goes back to waiting and re-arms the probe', async (t) => {
  const { b, released } = breaker({ baseMs: 50 });
  b.refusedBy('a', 'exceeded quota: q');
  await sleep(120);
  t.same(released, ['a']);
  b.settled('a');
  await sleep(150);
  t.same(released, ['a', 'a'], 'tried again at the next probe');
  b.dropped('a');
  await sleep(150);
  t.same(released, ['a', 'a'], 'nothing waits: nothing more');
});
