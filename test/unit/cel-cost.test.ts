// What a StatusCollector's CEL may cost (src/controllers/status/cel-cost.ts through the compiler
// and evaluateRow, docs/security.md D4): an expression whose estimated worst case exceeds kube's
// limit is invalid in kube's words (the chain of replaces among them), KubeStellar's
// documented collectors and one loop over an input are not; at run time an expression is
// stopped by its cost limit with cel-go's error, reported in the result's errors like any other,
// and `replace` keeps Go's semantics.
import t from 'tap';
import { collect, compileCollector, objForCel, type StatusCollectorSpec, type WecReport } from '../../src/controllers/status/collectors.js';

const sc = (spec: StatusCollectorSpec) => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'c', generation: 1 }, spec: { limit: 20, ...spec } });
const compiled = (spec: StatusCollectorSpec) => compileCollector(sc(spec));
const report: WecReport = { cluster: 'wec1', status: { availableReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] } };

/** The collector: 1,335 characters of chained `.replace('a','aa')` (each may double the string). */
const REPLACE_CHAIN = `'${'a'.repeat(1000)}'${".replace('a','aa')".repeat(18)}`;

t.test('an expression that could cost more than kube\'s limit is invalid, in kube\'s words', async (t) => {
  t.ok(REPLACE_CHAIN.length >= 1300 && REPLACE_CHAIN.length < 1400, `${REPLACE_CHAIN.length} characters`);
  const chain = compiled({ select: [{ name: 'x', def: REPLACE_CHAIN }] });
  t.equal(chain.collector, undefined);
  t.match(chain.errors, [/^select expression \(x\) invalid: estimated rule cost exceeds budget by factor of [\d.]+x \(the limit is 10000000/]);
  const nested = compiled({ filter: 'obj.spec.a.all(x, returned.status.b.all(y, x == y))', select: [{ name: 'x', def: 'inventory.name' }] });
  t.match(nested.errors, [/^filter expression invalid: estimated rule cost exceeds budget/], 'two loops over inputs of unknown size');
  const threeOnInput = compiled({ select: [{ name: 'x', def: `obj.data.big${".replace('a','aaaa')".repeat(3)}` }] });
  t.match(threeOnInput.errors, [/estimated rule cost exceeds budget/], 'growth is tracked through the chain');
  const subject = compiled({ combinedFields: [{ name: 'n', type: 'SUM', subject: `size(${REPLACE_CHAIN})` }] });
  t.match(subject.errors, [/^combinedField expression \(n\) subject invalid: estimated rule cost exceeds budget/]);
});

t.test('KubeStellar\'s documented collectors, and one loop or map over an input, are within the estimate', async (t) => {
  const ok: StatusCollectorSpec[] = [
    { combinedFields: [{ name: 'count', type: 'COUNT' }] },
    { groupBy: [{ name: 'phase', def: 'returned.status.phase' }], combinedFields: [{ name: 'count', type: 'COUNT' }] },
    { filter: 'obj.spec.replicas != returned.status.availableReplicas', select: [{ name: 'wec', def: 'inventory.name' }] },
    { select: [{ name: 'wec', def: 'inventory.name' }, { name: 'status', def: 'returned.status' }, { name: 'retrievalTime', def: 'propagation.lastReturnedUpdateTimestamp' }] },
    { select: [{ name: 'available', def: "returned.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')" }] },
    { select: [{ name: 'types', def: 'returned.status.conditions.map(c, c.type)' }] },
    { select: [{ name: 'short', def: `obj.metadata.name${".replace('-','_')".repeat(3)}` }] },
  ];
  for (const spec of ok) t.same(compiled(spec).errors, [], JSON.stringify(spec).slice(0, 100));
});

t.test('at run time an expression is stopped by its cost limit: cel-go\'s error, in the result\'s errors', async (t) => {
  const c = compiled({ select: [{ name: 'n', def: `obj.data.big${".replace('a','aa')".repeat(3)}.size()` }] }).collector!;
  t.ok(c, 'admitted: the estimate is within the limit for an input of up to 1.5 MiB');
  const small = collect(c, objForCel({ data: { big: 'a'.repeat(1000) } }), [report]);
  t.strictSame(small.rows, [{ columns: [{ type: 'Number', float: '8000' }] }], 'a small input: the value');
  const large = collect(c, objForCel({ data: { big: 'a'.repeat(1 << 20) } }), [report]);
  t.strictSame(large.rows, [{ columns: [{ type: 'Null' }] }]);
  t.strictSame(large.errors, ['wec1: select expression (n): operation cancelled: actual cost limit exceeded'], 'a 1 MiB input: stopped at its limit');

  const loop = compiled({ filter: 'obj.items.all(x, x >= 0)', select: [{ name: 'wec', def: 'inventory.name' }] }).collector!;
  const many = collect(loop, objForCel({ items: Array.from({ length: 400_000 }, (_, i) => i) }), [report]);
  t.strictSame(many.errors, ['wec1: filter: operation cancelled: actual cost limit exceeded'], 'each iteration is charged: a loop over 400,000 items is stopped');
  t.equal(many.rows, undefined, 'and, as any filter error, drops the row');
  const few = collect(loop, objForCel({ items: [1, 2, 3] }), [report]);
  t.strictSame(few.rows, [{ columns: [{ type: 'String', string: 'wec1' }] }]);
});

t.test('a row\'s expressions share one budget; a value larger than a column holds is Null, said', async (t) => {
  // Each costs 800,001 (the 1,000,000 characters traversed, the 7,000,000 built): under its own limit.
  const c = compiled({ select: Array.from({ length: 14 }, (_, i) => ({ name: `s${i}`, def: "obj.data.big.replace('a', 'bbbbbbb').size()" })) }).collector!;
  const r = collect(c, objForCel({ data: { big: 'a'.repeat(1_000_000) } }), [report]);
  t.same(r.rows![0]!.columns.map((v) => v.type), [...Array(12).fill('Number'), 'Null', 'Null'], 'twelve fit in the row\'s 10,000,000; the rest find it spent');
  t.same(r.errors, ['wec1: select expression (s12): operation cancelled: actual cost limit exceeded', 'wec1: select expression (s13): operation cancelled: actual cost limit exceeded']);
  const big = collect(compiled({ select: [{ name: 'b', def: 'obj.data.big' }] }).collector!, objForCel({ data: { big: 'x'.repeat(100_000) } }), [report]);
  t.strictSame(big.rows, [{ columns: [{ type: 'Null' }] }]);
  t.match(big.errors, [/^wec1: select expression \(b\): the value is 1000\d\d bytes, more than the 65536 a column holds$/]);
});

t.test('replace: Go\'s strings.Replace, linear', async (t) => {
  const value = (def: string) => collect(compiled({ select: [{ name: 'v', def }] }).collector!, objForCel({}), [report]).rows![0]!.columns[0];
  t.strictSame(value("'abc'.replace('', 'x')"), { type: 'String', string: 'xaxbxcx' }, 'an empty old: before each code point and at the end');
  t.strictSame(value("'aaaa'.replace('a', 'b', 2)"), { type: 'String', string: 'bbaa' });
  t.strictSame(value("'aaaa'.replace('a', 'b', -1)"), { type: 'String', string: 'bbbb' }, 'a negative count: all');
  t.strictSame(value("'aaaa'.replace('a', 'b', 0)"), { type: 'String', string: 'aaaa' });
  t.strictSame(value("'ab-cd-ef'.replace('-', '')"), { type: 'String', string: 'abcdef' });
  t.strictSame(value("'héllo'.replace('', '.', 3)"), { type: 'String', string: '.h.é.llo' });
  // The 9-replace collector took over 100 s in @bufbuild/cel's quadratic replace.
  const nine = `'${'a'.repeat(1190)}'${".replace('a','aa')".repeat(8)}.size()`;
  t.strictSame(value(nine), { type: 'Number', float: String(1190 * 256) });
});
