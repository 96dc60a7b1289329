// One object never stops an informer (src/kube/informer.ts), over a mock upstream: an object
// whose transform throws — the WorkStatus nested 6,000 levels deep, taken by the real
// WorkStatus cache transform of before (JSON.stringify in the interner) — is skipped and reported,
// in a list and on the watch, an older copy of it dropped; a handler that throws is contained; the
// informer syncs and goes on with every other object. Also: the cache freezes objects at any
// depth, and a Store whose indexer throws is left as it was.
import t from 'tap';
import { Informer, Store } from '../../src/kube/informer.js';
import { deepFreeze } from '../../src/kube/json.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

/** {"a":{"a":…}} n levels deep, as JSON text (JSON.parse takes it; JSON.stringify of it overflows the stack). */
const deepText = (n: number): string => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const deep = (n: number): unknown => JSON.parse(deepText(n));

const cm = (name: string, rv: string, data: unknown = { x: name }): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv }, data } as KubeObject);
/** A ConfigMap's JSON text with data given as text. */
const cmText = (name: string, rv: string, dataText: string): string => `{"metadata":{"name":"${name}","namespace":"ns","resourceVersion":"${rv}"},"data":${dataText}}`;

/** What a cache transform of before did to each object: stringify it (to key a shared copy). */
const stringifying = (o: KubeObject): KubeObject => {
  JSON.stringify(o);
  return o;
};

/** Waits (5 s at most) for what the watch brings. */
async function until(t: { pass(message: string): void }, what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  t.pass(what);
}

t.test('an object whose transform throws is skipped and reported, in the list and on the watch; the informer syncs and goes on', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: (p) => p.startsWith('/api/v1/configmaps?') && !p.includes('watch'), method: 'GET' })
    .reply(200, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"10"},"items":[${JSON.stringify(cm('a', '5'))},${cmText('deep', '6', deepText(6000))}]}`);
  const events = [
    JSON.stringify({ type: 'ADDED', object: cm('b', '11') }),
    `{"type":"MODIFIED","object":${cmText('a', '12', deepText(6000))}}`,
    JSON.stringify({ type: 'ADDED', object: cm('c', '13') }),
    JSON.stringify({ type: 'MODIFIED', object: cm('deep', '14') }),
  ];
  m.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' }).reply(200, events.join('\n') + '\n');
  const seen: string[] = [];
  const errors: string[] = [];
  const inf = new Informer(m.up, { path: '/api/v1/configmaps', transform: stringifying,
    onChange: (type, o) => seen.push(`${type} ${o.metadata?.name}@${o.metadata?.resourceVersion}`), onError: (e) => errors.push(e.message) });
  inf.start();
  t.teardown(() => inf.stop());
  await inf.synced;
  t.same(inf.list().map((o) => o.metadata?.name), ['a'], 'the list synced without the deep object');
  await until(t, 'the watch went on past the deep objects', () => inf.get('ns', 'deep')?.metadata?.resourceVersion === '14');
  t.same(seen, ['ADDED a@5', 'ADDED b@11', 'DELETED a@5', 'ADDED c@13', 'ADDED deep@14'],
    'a, whose new version cannot be cached, is dropped (not left stale); deep is cached once it can be');
  t.same(inf.list().map((o) => o.metadata?.name).sort(), ['b', 'c', 'deep']);
  t.match(errors.filter((e) => e.includes(' ns/')), [/^\/api\/v1\/configmaps ns\/deep: skipped: Maximum call stack size exceeded$/, /^\/api\/v1\/configmaps ns\/a: skipped: Maximum call stack size exceeded$/],
    'each skipped object reported, by name');
  t.equal(m.calls().filter((c) => !c.path.includes('watch=1')).length, 1, 'listed once: no relist');
});

t.test('a handler that throws for one object is contained: the others are heard, the cache holds all', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: (p) => !p.includes('watch'), method: 'GET' })
    .reply(200, JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [cm('bad', '1'), cm('good', '1')] }));
  m.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' })
    .reply(200, `${JSON.stringify({ type: 'MODIFIED', object: cm('bad', '2') })}\n${JSON.stringify({ type: 'ADDED', object: cm('late', '3') })}\n`);
  const heard: string[] = [];
  const errors: string[] = [];
  const inf = new Informer(m.up, { path: '/api/v1/configmaps',
    onChange: (type, o) => {
      if (o.metadata?.name === 'bad') throw new Error('handler broke');
      heard.push(`${type} ${o.metadata?.name}`);
    }, onError: (e) => errors.push(e.message) });
  inf.start();
  t.teardown(() => inf.stop());
  await inf.synced;
  await until(t, 'the event after the failing handler', () => heard.includes('ADDED late'));
  t.same(heard, ['ADDED good', 'ADDED late']);
  t.same(inf.list().map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort(), ['bad@2', 'good@1', 'late@3'], 'the cache holds them all');
  t.same(errors.filter((e) => e.includes(' ns/')), ['/api/v1/configmaps ns/bad: ADDED handler failed: handler broke', '/api/v1/configmaps ns/bad: MODIFIED handler failed: handler broke']);
  t.equal(m.calls().filter((c) => !c.path.includes('watch=1')).length, 1, 'listed once: no relist');
});

t.test('the cache freezes objects at any depth; an indexer that throws leaves the store as it was', async (t) => {
  const o = deep(100_000) as { a: unknown };
  t.doesNotThrow(() => deepFreeze(o), '100,000 levels');
  let inner: unknown = o;
  for (let i = 0; i < 99_999; i++) inner = (inner as { a: unknown }).a;
  t.ok(Object.isFrozen(inner), 'the innermost object is frozen too');
  const store = new Store<KubeObject>({ byData: (x) => [String((x as { data: { k: { length: number } } }).data.k.length)] });
  store.set(cm('a', '1', { k: 'abc' }));
  t.throws(() => store.set(cm('a', '2', {})), /length/);
  t.equal(store.get('ns', 'a')?.metadata?.resourceVersion, '1', 'the old copy is still there');
  t.same(store.byIndex('byData', '3').map((x) => x.metadata?.resourceVersion), ['1'], 'and still indexed');
});

t.test('a watch that closes at once, or carries something other than events, is retried with backoff, not in a tight loop', async (t) => {
  for (const [what, body] of [['closed at once, empty', ''], ['a list where events belong', JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [] })]]) {
    const m = mockUpstream();
    m.pool.intercept({ path: (p) => !p.includes('watch'), method: 'GET' })
      .reply(200, JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [] })).persist();
    m.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' }).reply(200, body).persist();
    const errors: string[] = [];
    const inf = new Informer(m.up, { path: '/api/v1/configmaps', onChange: () => undefined, onError: (e) => errors.push(e.message) });
    inf.start();
    await inf.synced;
    await until(t, `${what}: the fault reported`, () => errors.length > 0);
    // The first retry comes after the 1 s backoff: within 500 ms, one watch only (a tight loop makes thousands).
    await new Promise((r) => setTimeout(r, 500));
    t.equal(m.calls().filter((c) => c.path.includes('watch=1')).length, 1, `${what}: one watch in 500 ms`);
    t.match(errors[0], /^watch \/api\/v1\/configmaps: (very short watch|not a watch event)/);
    inf.stop();
    await m.close();
  }
});
