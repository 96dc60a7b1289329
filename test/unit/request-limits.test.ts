// What one user may hold open in ksview serve (docs/security.md D9): long-running requests
// (watches, logs, ...) go to the WDS on a pool of their own and are capped per user and in total;
// ordinary requests in flight are capped per user and in total; past a cap a 429 TooManyRequests
// Status with Retry-After; system:masters is never refused; slots come back when responses end.
import t from 'tap';
import { RequestLimits } from '../../src/apiserver/http/request-limits.js';
import { isLongRunning, parseRequestInfo } from '../../src/kube/request-info.js';
import { StatusError, type FailureStatus } from '../../src/kube/status.js';
import { waitFor } from '../../src/kube/wait.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

/** The Status a refused acquire throws (undefined: not refused). */
function refusal(fn: () => unknown): FailureStatus | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof StatusError) return err.status;
    throw err;
  }
}

/** Waits until `cond` holds (the requests sent have reached the server), or fails. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const r = await waitFor(async () => ({ ok: cond(), detail: what }), 10_000, 10);
  if (!r.ok) throw new Error(`timed out: ${what}`);
}

const user = (username: string, groups = ['system:authenticated']) => ({ username, groups, extra: {} });

t.test('per user and in total; past a cap, a 429 that says when to retry', async (t) => {
  const limits = new RequestLimits({ longRunningPerUser: 2, longRunningTotal: 3, inflightPerUser: 1, inflightTotal: 0 });
  const a1 = limits.acquire(user('alice'), true);
  limits.acquire(user('alice'), true);
  t.match(refusal(() => limits.acquire(user('alice'), true)),
    { code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, message: /user "alice": at most 2/ });
  t.equal(refusal(() => limits.acquire(user('alice'), false)), undefined, 'ordinary requests are counted apart');
  const b1 = limits.acquire(user('bob'), true);
  t.match(refusal(() => limits.acquire(user('carol'), true)), { code: 429, message: /on this server: at most 3/ }, 'the total cap holds for everyone');
  let root: (() => void) | undefined;
  t.equal(refusal(() => { root = limits.acquire(user('root', ['system:masters']), true); }), undefined, 'system:masters is never refused');
  t.strictSame(limits.usage(), { longRunning: 4, inflight: 1 }, 'but counted');
  a1();
  b1();
  root!();
  t.equal(refusal(() => limits.acquire(user('alice'), true)), undefined, 'a released slot can be taken again');
});

t.test('a user with nothing open leaves no trace', async (t) => {
  const limits = new RequestLimits();
  const r = limits.acquire(user('dave'), false);
  t.strictSame(limits.usage('dave'), { longRunning: 0, inflight: 1 });
  r();
  t.strictSame(limits.usage('dave'), { longRunning: 0, inflight: 0 });
  t.strictSame(limits.usage(), { longRunning: 0, inflight: 0 });
});

t.test('long-running as kube-apiserver counts it: watch, logs, exec, attach, port-forward, proxy', async (t) => {
  const lr = (path: string, query = '', method = 'GET') => isLongRunning(parseRequestInfo(path), method, query);
  t.ok(lr('/api/v1/namespaces/a/configmaps', 'watch=1'));
  t.ok(lr('/api/v1/namespaces/a/configmaps', 'watch=true&resourceVersion=5'));
  t.ok(lr('/api/v1/namespaces/a/configmaps', 'watch='), 'any value but 0 and false');
  t.notOk(lr('/api/v1/namespaces/a/configmaps', 'watch=false'));
  t.notOk(lr('/api/v1/namespaces/a/configmaps', 'watch=0'));
  t.notOk(lr('/api/v1/namespaces/a/configmaps', 'labelSelector=watch'));
  // The key and value as kube-apiserver decodes them: a spelling that hides `watch` is still one.
  t.ok(lr('/api/v1/namespaces/a/configmaps', '%77atch=1'), 'a percent-encoded key is a watch');
  t.ok(lr('/api/v1/namespaces/a/configmaps', 'watch=%31'), 'a percent-encoded value');
  t.ok(lr('/api/v1/namespaces/a/configmaps', 'watch=f'), 'kube-apiserver\'s handler watches on `f`');
  t.ok(lr('/api/v1/namespaces/a/configmaps', 'watch=fAlse'), 'and RequestInfo calls `fAlse` a watch');
  t.notOk(lr('/api/v1/namespaces/a/configmaps', 'watch=FALSE'));
  t.notOk(lr('/api/v1/namespaces/a/configmaps', 'w%61tch=0'));
  t.ok(lr('/api/v1/watch/namespaces/a/configmaps'));
  t.ok(lr('/api/v1/namespaces/a/pods/p/log', 'follow=true'));
  t.ok(lr('/api/v1/namespaces/a/pods/p/exec'));
  t.ok(lr('/api/v1/namespaces/a/pods/p/attach'));
  t.ok(lr('/api/v1/namespaces/a/pods/p/portforward'));
  t.ok(lr('/api/v1/namespaces/a/services/s/proxy/some/path'));
  t.ok(lr('/api/v1/proxy/namespaces/a/services/s'));
  t.notOk(lr('/api/v1/namespaces/a/configmaps'));
  t.notOk(lr('/api/v1/namespaces/a/pods/p/status'));
  t.notOk(lr('/apis/apps/v1'), 'discovery');
});

t.test('through the view: watches on the long-running pool, capped per user; others unaffected', async (t) => {
  const limits = new RequestLimits({ longRunningPerUser: 2, longRunningTotal: 0, inflightPerUser: 2, inflightTotal: 0 });
  const { app, upstream, close } = await testApp({ limits });
  t.teardown(close);
  // A watch that lasts a while, and quick answers for everything else.
  upstream.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' }).reply(200, '').delay(1500).persist();
  upstream.pool.intercept({ path: (p) => !p.includes('watch=1'), method: 'GET' }).reply(200, { kind: 'ConfigMapList', items: [] }).persist();
  const as = (u: string, path: string) => app.inject({ method: 'GET', url: `${ROOT}${path}`, headers: { 'x-test-user': u } });
  // inject sends when awaited: Promise.resolve starts both, and they are counted once they arrive.
  const watches = [Promise.resolve(as('alice', '/api/v1/namespaces/a/configmaps?watch=1')), Promise.resolve(as('alice', '/api/v1/namespaces/a/configmaps?watch=1'))];
  await until(() => limits.usage('alice').longRunning === 2, 'alice\'s two watches are open');
  const third = await as('alice', '/api/v1/namespaces/a/configmaps?watch=1');
  t.equal(third.statusCode, 429, 'alice\'s third watch');
  t.equal(third.headers['retry-after'], '1');
  t.match(third.json(), { kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
  const list = await as('alice', '/api/v1/namespaces/a/configmaps');
  t.equal(list.statusCode, 200, 'alice still lists');
  const bobs = await as('bob', '/api/v1/namespaces/b/configmaps');
  t.equal(bobs.statusCode, 200, 'bob lists');
  const bobWatch = Promise.resolve(as('bob', '/api/v1/namespaces/b/configmaps?watch=1'));
  for (const w of await Promise.all([...watches, bobWatch])) t.equal(w.statusCode, 200);
  const via = upstream.calls().map((c) => `${c.via} ${c.path}`);
  t.strictSame(via.filter((c) => c.includes('watch=1')).map((c) => c.split(' ')[0]), ['longPool', 'longPool', 'longPool'], 'every watch went on the long-running pool');
  t.ok(via.filter((c) => !c.includes('watch=1')).every((c) => c.startsWith('pool ')), 'everything else on the ordinary pool');
  t.strictSame(limits.usage(), { longRunning: 0, inflight: 0 }, 'every slot came back');
  const again = await as('alice', '/api/v1/namespaces/a/configmaps?watch=1');
  t.equal(again.statusCode, 200, 'alice watches again once hers ended');
});

t.test('ordinary requests in flight are capped per user too: slow ones cannot take the pool', async (t) => {
  const limits = new RequestLimits({ longRunningPerUser: 0, longRunningTotal: 0, inflightPerUser: 2, inflightTotal: 0 });
  const { app, upstream, close } = await testApp({ limits });
  t.teardown(close);
  upstream.pool.intercept({ path: (p) => p.startsWith('/api/v1/namespaces/slow/'), method: 'GET' }).reply(200, { kind: 'ConfigMapList', items: [] }).delay(1500).persist();
  upstream.pool.intercept({ path: (p) => p.startsWith('/api/v1/namespaces/fast/'), method: 'GET' }).reply(200, { kind: 'ConfigMapList', items: [] }).persist();
  const as = (u: string, path: string) => app.inject({ method: 'GET', url: `${ROOT}${path}`, headers: { 'x-test-user': u } });
  const slow = [Promise.resolve(as('mallory', '/api/v1/namespaces/slow/configmaps')), Promise.resolve(as('mallory', '/api/v1/namespaces/slow/configmaps'))];
  await until(() => limits.usage('mallory').inflight === 2, 'mallory\'s two slow requests are in flight');
  const refused = await as('mallory', '/api/v1/namespaces/fast/configmaps');
  t.equal(refused.statusCode, 429);
  t.match(refused.json(), { reason: 'TooManyRequests', message: /requests in flight for user "mallory": at most 2/ });
  t.equal((await as('erin', '/api/v1/namespaces/fast/configmaps')).statusCode, 200, 'another user is served meanwhile');
  for (const r of await Promise.all(slow)) t.equal(r.statusCode, 200);
  t.equal((await as('mallory', '/api/v1/namespaces/fast/configmaps')).statusCode, 200, 'and mallory again once hers are answered');
});
