import t from 'tap';
import { eachSettled } from '../../src/util/each-settled.js';

t.test('at most `limit` at once, every item done', async (t) => {
  let inFlight = 0;
  let most = 0;
  const done: number[] = [];
  await eachSettled(Array.from({ length: 25 }, (_, i) => i), 4, async (i) => {
    most = Math.max(most, ++inFlight);
    await new Promise((r) => setTimeout(r, 1));
    inFlight--;
    done.push(i);
  });
  t.equal(most, 4);
  t.same(done.sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i));
});

t.test('a failure: the other items are still tried, then the first failure is thrown', async (t) => {
  const tried: number[] = [];
  await t.rejects(eachSettled([1, 2, 3, 4], 2, async (i) => {
    tried.push(i);
    if (i % 2 === 0) throw new Error(`item ${i}`);
  }), /item 2/);
  t.same(tried.sort(), [1, 2, 3, 4]);
});

t.test('no items: nothing to do', async (t) => {
  await eachSettled([], 8, async () => { t.fail('called'); });
  t.pass();
});
