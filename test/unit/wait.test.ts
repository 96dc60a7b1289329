import t from 'tap';
import { retryUntilDone, TimeoutError, withTimeout } from '../../src/kube/wait.js';

t.test('retryUntilDone: failures are reported and retried with growing waits until one attempt succeeds', async (t) => {
  const errors: string[] = [];
  let n = 0;
  const started = Date.now();
  const v = await retryUntilDone(async () => {
    if (++n < 3) throw new Error(`connect ECONNREFUSED (${n})`);
    return 'done';
  }, (err) => errors.push((err as Error).message), 10, 15);
  t.equal(v, 'done');
  t.same(errors, ['connect ECONNREFUSED (1)', 'connect ECONNREFUSED (2)']);
  t.ok(Date.now() - started >= 25, 'waited 10 ms, then 15 ms (capped)');
});

t.test('withTimeout: a slow promise loses to the deadline', async (t) => {
  await t.rejects(withTimeout(new Promise(() => undefined), 5), TimeoutError);
  t.equal(await withTimeout(Promise.resolve(1), 50), 1);
});
