// The ITS limiter (src/kube/request-limiter.ts): the bound on requests in flight, the pause and
// the halving when the server answers 429 (or a 5xx with Retry-After), the retries and giving up.
import t from 'tap';
import { RequestLimiter, retryAfterMs, type LimitedResponse } from '../../src/kube/request-limiter.js';

const ok: LimitedResponse = { status: 200, headers: {} };
const tooMany = (retryAfter?: string): LimitedResponse => ({ status: 429, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });
const tick = () => new Promise((r) => setImmediate(r));

/** A send whose answers the test releases: counts what is in flight and the most ever. */
function gate() {
  let inFlight = 0;
  let most = 0;
  let started = 0;
  const waiting: Array<(r: LimitedResponse) => void> = [];
  return {
    send: () => new Promise<LimitedResponse>((resolve) => {
      started++;
      most = Math.max(most, ++inFlight);
      waiting.push((r) => { inFlight--; resolve(r); });
    }),
    release(n: number, r: LimitedResponse = ok) { for (const f of waiting.splice(0, n)) f(r); },
    get inFlight() { return inFlight; },
    get most() { return most; },
    get started() { return started; },
  };
}

t.test('Retry-After: seconds or an HTTP date; nothing else', async (t) => {
  t.equal(retryAfterMs({ 'retry-after': '3' }, 0), 3000);
  t.equal(retryAfterMs({ 'retry-after': ['2', '9'] }, 0), 2000);
  const now = Date.parse('2026-11-26T07:00:00Z');
  t.equal(retryAfterMs({ 'retry-after': 'Thu, 26 Nov 2026 07:00:05 GMT' }, now), 5000);
  t.equal(retryAfterMs({ 'retry-after': 'Thu, 26 Nov 2026 06:00:00 GMT' }, now), 0, 'a date passed: no wait');
  t.equal(retryAfterMs({ 'retry-after': 'soon' }, now), undefined);
  t.equal(retryAfterMs({}, now), undefined);
});

t.test('never more than maxInFlight at once; every request answered', async (t) => {
  const g = gate();
  const limiter = new RequestLimiter({ maxInFlight: 4 });
  const all = Array.from({ length: 20 }, () => limiter.run(g.send));
  await tick();
  t.equal(g.inFlight, 4, 'four started');
  t.equal(limiter.stats.queued, 16, 'the rest wait');
  while (g.started < 20 || g.inFlight > 0) { g.release(4); await tick(); }
  t.same((await Promise.all(all)).map((r) => r.status), Array(20).fill(200));
  t.equal(g.most, 4);
});

t.test('a 429: nothing starts until Retry-After has passed, the limit halves once, the request is retried first', async (t) => {
  const g = gate();
  const limiter = new RequestLimiter({ maxInFlight: 8, maxWaitMs: 60 });
  t.teardown(() => limiter.close());
  const first = Array.from({ length: 8 }, () => limiter.run(g.send));
  const later = Array.from({ length: 4 }, () => limiter.run(g.send));
  await tick();
  t.equal(g.started, 8);
  g.release(8, tooMany('1')); // all eight refused together: 1 s asked, cut to maxWaitMs
  await tick();
  t.equal(limiter.stats.limit, 4, 'halved once, not once per refusal');
  t.equal(limiter.stats.throttled, 8);
  t.equal(g.started, 8, 'paused: nothing new started');
  await new Promise((r) => setTimeout(r, 80));
  t.equal(g.started, 12, 'resumed with the halved limit: four at once');
  g.release(4);
  await tick();
  // The four retried went first: the next four are the other retries, then the later ones.
  while (g.started < 20 || g.inFlight > 0) { g.release(4); await tick(); }
  t.same((await Promise.all([...first, ...later])).map((r) => r.status), Array(12).fill(200), 'every request answered 200 in the end');
  t.ok(limiter.stats.limit > 4, `grows back after successes (limit ${limiter.stats.limit})`);
});

t.test('the limit grows back by one per `limit` successes, up to maxInFlight', async (t) => {
  const limiter = new RequestLimiter({ maxInFlight: 4, maxWaitMs: 0 });
  let refuse = 1;
  const send = async () => (refuse-- > 0 ? tooMany('0') : ok);
  await limiter.run(send);
  t.equal(limiter.stats.limit, 2, '4 → 2 on the 429 (its retry succeeded: one success of two)');
  await limiter.run(send);
  t.equal(limiter.stats.limit, 3, 'two successes at 2');
  await limiter.run(send);
  await limiter.run(send);
  t.equal(limiter.stats.limit, 3, 'two of three');
  await limiter.run(send);
  t.equal(limiter.stats.limit, 4);
  for (let i = 0; i < 10; i++) await limiter.run(send);
  t.equal(limiter.stats.limit, 4, 'never above maxInFlight');
});

t.test('a 429 without Retry-After backs off exponentially; after maxRetries the 429 is returned', async (t) => {
  const limiter = new RequestLimiter({ maxInFlight: 2, maxRetries: 3, baseBackoffMs: 1 });
  let calls = 0;
  const res = await limiter.run(async () => { calls++; return tooMany(); });
  t.equal(res.status, 429, 'the last answer, for the caller to retry later');
  t.equal(calls, 4, 'the first try and three retries');
  t.equal(limiter.stats.gaveUp, 1);
});

t.test('5xx: retried only when the server gives a Retry-After; other answers pass through', async (t) => {
  const limiter = new RequestLimiter({ maxInFlight: 2, maxWaitMs: 1 });
  const answers: LimitedResponse[] = [{ status: 503, headers: { 'retry-after': '1' } }, ok];
  t.equal((await limiter.run(async () => answers.shift()!)).status, 200, '503 with Retry-After: retried');
  let calls = 0;
  t.equal((await limiter.run(async () => { calls++; return { status: 500, headers: {} }; })).status, 500);
  t.equal(calls, 1, '500 without Retry-After: not retried');
  t.equal((await limiter.run(async () => ({ status: 409, headers: {} }))).status, 409, 'a conflict is the caller\'s');
});

t.test('a send that throws: the error reaches the caller and frees its place', async (t) => {
  const limiter = new RequestLimiter({ maxInFlight: 1 });
  await t.rejects(limiter.run(async () => { throw new Error('connection reset'); }), /connection reset/);
  t.equal((await limiter.run(async () => ok)).status, 200, 'the next one runs');
});

t.test('maxInFlight must be a positive integer', async (t) => {
  t.throws(() => new RequestLimiter({ maxInFlight: 0 }), /positive integer/);
});
