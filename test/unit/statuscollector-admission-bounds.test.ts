// What one StatusCollector admission review may cost (src/apiserver/admission/statuscollectors-webhook.ts over
// validateCollector, docs/security.md D6), through the app with the real compiler: the issue's
// review (246 KB, 60 expressions of 4,083 characters) is refused by counting, at once, without
// compiling anything; the largest review within the bounds is compiled in a CEL worker, within its
// deadline, while the server's thread keeps answering other requests. The same bounds make a
// collector invalid in its status.
import t from 'tap';
import { ADMISSION_PATH } from '../../src/apiserver/admission/statuscollectors-webhook.js';
import { CelPool } from '../../src/controllers/status/cel-pool.js';
import { MAX_EXPRESSION_LENGTH, MAX_EXPRESSIONS, MAX_TOTAL_EXPRESSION_LENGTH } from '../../src/controllers/status/collector-rows.js';
import { compileCollector } from '../../src/controllers/status/collectors.js';
import { validateCollector as validateWith } from '../../src/controllers/status/combined-statuses.js';
import { testApp } from '../fixtures/view-app.js';

const pool = new CelPool();
t.teardown(() => pool.close());
const validateCollector = (sc: { metadata: { name: string }; spec?: unknown }) => validateWith(pool, sc);

const review = (spec: unknown) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: {
    uid: 'u-1', operation: 'CREATE', name: 'sc', resource: { group: 'control.kubestellar.io', version: 'v1alpha1', resource: 'statuscollectors' },
    object: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'sc' }, spec },
  },
});

t.test('the issue\'s review of 60 expressions of 4,083 characters: refused by counting, at once', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  const def = `${'obj.a + '.repeat(510)}1`.slice(0, 4083);
  const payload = JSON.stringify(review({ select: Array.from({ length: 60 }, (_, i) => ({ name: `c${i}`, def })), limit: 20 }));
  t.ok(payload.length > 240_000, `${payload.length} bytes`);
  const start = Date.now();
  const res = await app.inject({ method: 'POST', url: ADMISSION_PATH, headers: { 'content-type': 'application/json' }, payload });
  const ms = Date.now() - start;
  const answer = res.json().response;
  t.equal(answer.allowed, false);
  t.equal(answer.status.code, 422);
  t.same(answer.status.details.causes.map((c: { message: string }) => c.message), [
    '60 expressions, more than the 32 allowed',
    `expressions of ${60 * def.length} characters in all, more than the ${MAX_TOTAL_EXPRESSION_LENGTH} allowed`,
  ]);
  t.ok(ms < 2000, `answered in ${ms} ms (it took 7 s when every expression was compiled on the server's thread)`);
});

t.test('the largest review within the bounds is compiled in a worker: the server answers other requests meanwhile', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  // Long chains of selects: among the slowest expressions of their length to plan (measured).
  const def = `obj${'.a'.repeat((MAX_EXPRESSION_LENGTH - 3) / 2)}`;
  const count = Math.floor(MAX_TOTAL_EXPRESSION_LENGTH / def.length);
  const pending = app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review({ select: Array.from({ length: count }, (_, i) => ({ name: `c${i}`, def })), limit: 20 }) });
  let done = false;
  void pending.then(() => { done = true; });
  const health: number[] = [];
  const codes = new Set<number>();
  const began = Date.now();
  while (!done) {
    const start = Date.now();
    codes.add((await app.inject({ url: '/healthz' })).statusCode);
    health.push(Date.now() - start);
    await new Promise((r) => setTimeout(r, 20));
  }
  const answer = (await pending).json().response;
  t.same([...codes], [200]);
  t.ok(health.length >= 3, `${health.length} health checks answered in the ${Date.now() - began} ms the review was compiled`);
  // On the server's thread the compile would hold every request for its whole length (seconds).
  t.ok(Math.max(...health) < 1500, `the slowest took ${Math.max(...health)} ms`);
  // Either it compiled in time (valid), or its compile was stopped at its deadline (said).
  if (answer.allowed === false) t.match(answer.status.message, /could not be compiled: stopped after 4000 ms/);
  else t.equal(answer.allowed, true);
});

const sc = (spec: Record<string, unknown>) => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'c', generation: 1 }, spec: { limit: 20, ...spec } }) as Parameters<typeof compileCollector>[0];

t.test('the bounds on a spec: count and total size of its expressions, before any is parsed', async (t) => {
  const many = compileCollector(sc({ select: Array.from({ length: MAX_EXPRESSIONS + 1 }, (_, i) => ({ name: `c${i}`, def: '1' })) }));
  t.same(many.errors, [`${MAX_EXPRESSIONS + 1} expressions, more than the ${MAX_EXPRESSIONS} allowed`]);
  const large = compileCollector(sc({ select: Array.from({ length: 5 }, (_, i) => ({ name: `c${i}`, def: `${'1 + '.repeat(1000)}1` })) }));
  t.same(large.errors, [`expressions of ${5 * 4001} characters in all, more than the ${MAX_TOTAL_EXPRESSION_LENGTH} allowed`]);
});
