// StatusCollectors compiled and run over per-WEC reports (src/controllers/status/collectors.ts):
// KubeStellar's documented examples ("Combined Status from WECs"), its validation messages, the
// tagged Values and Go's number formatting, the limit, and expression errors that never throw.
import t from 'tap';
import { collect, compileCollector, objForCel, type StatusCollector, type StatusCollectorSpec, type WecReport } from '../../src/controllers/status/collectors.js';
import { goFloat, numericOf, tagged, toCel } from '../../src/controllers/status/cel-values.js';

const sc = (spec: StatusCollectorSpec, name = 'c'): StatusCollector => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name, generation: 1 }, spec });
const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx', namespace: 'nginx' }, spec: { replicas: 2 }, status: { replicas: 99 } };
const reports: WecReport[] = [
  { cluster: 'wec2', status: { availableReplicas: 1, phase: 'Pending' }, lastReturnedUpdateTimestamp: '2026-11-24T10:00:05Z' },
  { cluster: 'wec1', status: { availableReplicas: 2, phase: 'Running' }, lastReturnedUpdateTimestamp: '2026-11-24T10:00:01Z' },
  { cluster: 'wec3', status: { availableReplicas: 2, phase: 'Running' } },
];

function run(spec: StatusCollectorSpec, r: WecReport[] = reports) {
  const c = compileCollector(sc(spec));
  if (!c.collector) throw new Error(`invalid: ${c.errors.join('; ')}`);
  return collect(c.collector, objForCel(deployment), r);
}
const num = (n: string) => ({ type: 'Number', float: n });
const str = (s: string) => ({ type: 'String', string: s });

t.test('number of WECs (COUNT): one column, one row', async (t) => {
  t.strictSame(run({ combinedFields: [{ name: 'count', type: 'COUNT' }], limit: 10 }), { name: 'c', columnNames: ['count'], rows: [{ columns: [num('3')] }] });
});

t.test('histogram of pod phase and of available replicas (groupBy + COUNT): a row per value, sorted', async (t) => {
  t.strictSame(run({ groupBy: [{ name: 'phase', def: 'returned.status.phase' }], combinedFields: [{ name: 'count', type: 'COUNT' }] }).rows,
    [{ columns: [str('Pending'), num('1')] }, { columns: [str('Running'), num('2')] }]);
  t.strictSame(run({ groupBy: [{ name: 'numAvailable', def: 'returned.status.availableReplicas' }], combinedFields: [{ name: 'count', type: 'COUNT' }] }),
    { name: 'c', columnNames: ['numAvailable', 'count'], rows: [{ columns: [num('1'), num('1')] }, { columns: [num('2'), num('2')] }] });
});

t.test('WECs where the Deployment is not as available as desired (filter + select): obj has no status', async (t) => {
  t.strictSame(run({ filter: 'obj.spec.replicas != returned.status.availableReplicas', select: [{ name: 'wec', def: 'inventory.name' }] }).rows, [{ columns: [str('wec2')] }]);
  t.strictSame(run({ select: [{ name: 's', def: 'has(obj.status)' }] }, reports.slice(0, 1)).rows, [{ columns: [{ type: 'Bool', bool: false }] }], 'obj is the object without its status');
});

t.test('full status from each WEC with retrieval time: rows by WEC name, Objects, the zero time when unknown', async (t) => {
  const r = run({ select: [{ name: 'wec', def: 'inventory.name' }, { name: 'status', def: 'returned.status' }, { name: 'retrievalTime', def: 'propagation.lastReturnedUpdateTimestamp' }] });
  t.strictSame(r.columnNames, ['wec', 'status', 'retrievalTime']);
  t.strictSame(r.rows, [
    { columns: [str('wec1'), { type: 'Object', object: { availableReplicas: 2, phase: 'Running' } }, str('2026-11-24T10:00:01Z')] },
    { columns: [str('wec2'), { type: 'Object', object: { availableReplicas: 1, phase: 'Pending' } }, str('2026-11-24T10:00:05Z')] },
    { columns: [str('wec3'), { type: 'Object', object: { availableReplicas: 2, phase: 'Running' } }, str('0001-01-01T00:00:00Z')] },
  ]);
});

t.test('SUM, AVG, MIN, MAX of availableReplicas; over no WEC: 0, NaN, +Inf, -Inf; COUNT 0, still one row', async (t) => {
  const spec: StatusCollectorSpec = { combinedFields: ['SUM', 'AVG', 'MIN', 'MAX', 'COUNT'].map((type) => ({ name: type.toLowerCase(), type, ...(type === 'COUNT' ? {} : { subject: 'returned.status.availableReplicas' }) })) };
  t.strictSame(run(spec).rows, [{ columns: [num('5'), num('1.6666666666666667'), num('1'), num('2'), num('3')] }]);
  t.strictSame(run(spec, []).rows, [{ columns: [num('0'), num('NaN'), num('+Inf'), num('-Inf'), num('0')] }]);
  t.strictSame(run({ select: [{ name: 'wec', def: 'inventory.name' }] }, []), { name: 'c', columnNames: ['wec'] }, 'select over no WEC: no rows');
});

t.test('limit: 20 by default, and as given', async (t) => {
  const many = Array.from({ length: 25 }, (_, i) => ({ cluster: `wec${String(i).padStart(2, '0')}`, status: { n: i } }));
  t.equal(run({ select: [{ name: 'wec', def: 'inventory.name' }] }, many).rows?.length, 20);
  t.equal(compileCollector(sc({ select: [{ name: 'wec', def: 'inventory.name' }] })).collector?.limit, 20);
  t.strictSame(run({ select: [{ name: 'wec', def: 'inventory.name' }], limit: 2 }, many).rows, [{ columns: [str('wec00')] }, { columns: [str('wec01')] }]);
  t.strictSame(run({ groupBy: [{ name: 'n', def: 'returned.status.n' }], combinedFields: [{ name: 'count', type: 'COUNT' }], limit: 3 }, many).rows?.map((r) => r.columns[0]), [num('0'), num('1'), num('2')]);
});

t.test('invalid collectors: KubeStellar\'s messages, every error at once', async (t) => {
  t.strictSame(compileCollector(sc({ select: [{ name: 'a', def: '1' }], groupBy: [{ name: 'b', def: '1' }] })).errors, ['groupBy and combinedFields must be empty if select is not']);
  t.strictSame(compileCollector(sc({ groupBy: [{ name: 'b', def: '1' }] })).errors, ['groupBy must be empty if combinedFields is']);
  t.strictSame(compileCollector(sc({
    filter: 'obj.spec.(', select: [{ name: 'x', def: 'foo.bar' }, { name: 'y', def: 'returned.status.nope()' }, { name: 'ok', def: 'obj.metadata.name.startsWith("n")' }],
  })).errors, [
    'filter expression invalid: <input>:1:9: found . but expecting end of input',
    'select expression (x) invalid: undeclared reference to \'foo\'',
    'select expression (y) invalid: undeclared reference to \'nope\'',
  ]);
  const aggregators = compileCollector(sc({ combinedFields: [{ name: 'a', type: 'COUNT', subject: 'returned.status' }, { name: 'b', type: 'SUM' }, { name: 'c', type: 'MEDIAN', subject: '1' }, { name: 'd', type: 'MAX', subject: '[' }], limit: -1 })).errors;
  t.strictSame(aggregators.slice(0, 4), [
    'limit must be a non-negative integer, not -1',
    'combinedField expression (a) invalid: subject must be nil for COUNT type',
    'combinedField expression (b) invalid: subject must be set',
    'combinedField expression (c) invalid: type must be one of COUNT, SUM, AVG, MIN, MAX, not "MEDIAN"',
  ]);
  t.match(aggregators[4], /^combinedField expression \(d\) subject invalid: <input>:1:2: found end of input but expecting /);
  t.equal(aggregators.length, 5);
  t.strictSame(compileCollector(sc({ select: [{ name: 'a', def: '1' }, { name: 'a', def: '2' }] })).errors, ['column name "a" is used more than once']);
  t.strictSame(compileCollector(sc({ select: [{ name: 'a', def: '[1,2].all(x, x > 0) && type(1) == int' }] })).errors, [], 'comprehension variables and type names are declared');
  t.strictSame(compileCollector(sc({ select: [{ name: 'a', def: '[1].all(x, [2].all(y, y > x))' }] })).errors, [], 'comprehensions nested 2 deep');
  t.strictSame(compileCollector(sc({ select: [{ name: 'a', def: '[1].all(x, [2].all(y, [3].exists(z, z > y)))' }] })).errors,
    ['select expression (a) invalid: comprehensions nested 3 deep, more than the 2 allowed'], 'no deeper: the engine has no cost limit');
  t.strictSame(compileCollector(sc({ select: [{ name: 'a', def: `1${' + 1'.repeat(2000)}` }] })).errors, ['select expression (a) invalid: 8001 characters, more than the 4096 allowed']);
});

t.test('expression errors at run time: reported in the result, never thrown', async (t) => {
  const r = run({ select: [{ name: 'x', def: 'returned.status.missing' }, { name: 'wec', def: 'inventory.name' }] }, reports.slice(0, 2));
  t.strictSame(r.rows, [{ columns: [{ type: 'Null' }, str('wec1')] }, { columns: [{ type: 'Null' }, str('wec2')] }]);
  t.match(r.errors, [/^wec1: select expression \(x\): /, /^wec2: select expression \(x\): /]);
  const f = run({ filter: 'returned.status.phase', select: [{ name: 'wec', def: 'inventory.name' }] });
  t.notOk(f.rows, 'a non-bool filter keeps no row');
  t.match(f.errors, [/^wec1: filter: the result is string, not a bool$/]);
  const s = run({ combinedFields: [{ name: 'sum', type: 'SUM', subject: 'returned.status.phase' }, { name: 'bad', type: 'SUM', subject: 'returned.status.x' }] }, reports.slice(0, 1));
  t.strictSame(s.rows, [{ columns: [num('0'), num('0')] }]);
  t.strictSame(s.errors, ['wec2: combinedField (sum) subject is "Pending", 0 used', 'wec2: combinedField (bad) subject: field not found: x']);
  const many = Array.from({ length: 30 }, (_, i) => ({ cluster: `w${String(i).padStart(2, '0')}`, status: {} }));
  const capped = run({ select: [{ name: 'x', def: 'returned.status.x' }], limit: 100 }, many).errors!;
  t.equal(capped.length, 11, 'errors capped at 10');
  t.equal(capped.at(-1), '… and 20 more errors');
});

t.test('values: integers are CEL ints, numbers print as Go prints them, strings parse for aggregation', async (t) => {
  t.equal(toCel(2), 2n);
  t.equal(toCel(2.5), 2.5);
  for (const [n, s] of [[2.5, '2.5'], [1e6, '1e+06'], [123456, '123456'], [1234567, '1.234567e+06'], [0.0001, '0.0001'], [0.00001, '1e-05'], [-3, '-3'], [0, '0']] as const) t.equal(goFloat(n), s, `${n} → ${s}`);
  t.strictSame(tagged(5n), num('5'));
  t.strictSame(tagged(null), { type: 'Null' });
  t.equal(numericOf('3.5'), 3.5);
  t.equal(numericOf('-Inf'), -Infinity);
  t.equal(numericOf('abc'), undefined);
  t.equal(numericOf(' 3'), undefined, 'as Go\'s ParseFloat: no spaces');
  t.strictSame(run({ select: [{ name: 'l', def: '[1, "a"]' }, { name: 'm', def: '{"a": 1.5}' }] }, reports.slice(0, 1)).rows, [{ columns: [{ type: 'Array', array: [1, 'a'] }, { type: 'Object', object: { a: 1.5 } }] }]);
});

t.test('rows kept by report version (RowMemo): the same results, one row recomputed per changed WEC', async (t) => {
  const specs: StatusCollectorSpec[] = [
    { combinedFields: [{ name: 'sum', type: 'SUM', subject: 'returned.status.availableReplicas' }, { name: 'max', type: 'MAX', subject: 'returned.status.x' }] },
    { filter: 'obj.spec.replicas != returned.status.availableReplicas', select: [{ name: 'wec', def: 'inventory.name' }, { name: 'bad', def: 'returned.status.nope' }] },
    { filter: 'returned.status.phase', groupBy: [{ name: 'phase', def: 'returned.status.phase' }], combinedFields: [{ name: 'count', type: 'COUNT' }] },
  ];
  const versioned = reports.map((r, i) => ({ ...r, version: String(i + 1) }));
  for (const spec of specs) {
    const c = compileCollector(sc(spec)).collector!;
    const memo = new Map();
    const first = collect(c, objForCel(deployment), versioned, memo);
    t.strictSame(first, collect(c, objForCel(deployment), reports), `${JSON.stringify(spec).slice(0, 60)}: the same as without a memo, errors included`);
    t.equal(memo.size, 3, 'a row kept per WEC');
    // Same versions, other content: the kept rows are used (and obj is not even computed).
    let objAsked = 0;
    const changedUnversioned = versioned.map((r) => ({ ...r, status: { availableReplicas: 7, phase: 'Gone', x: 9 } }));
    t.strictSame(collect(c, () => { objAsked++; return objForCel(deployment); }, changedUnversioned, memo), first, 'unchanged versions: kept rows');
    t.equal(objAsked, 0, 'obj not computed when every row is kept');
    // wec2 changes (a new version): its row alone is new.
    const wec2 = versioned.map((r) => (r.cluster === 'wec2' ? { ...r, version: '9', status: { availableReplicas: 2, phase: 'Running', x: 5 } } : r));
    t.strictSame(collect(c, () => { objAsked++; return objForCel(deployment); }, wec2, memo), collect(c, objForCel(deployment), wec2.map(({ version: _v, ...r }) => r)), 'a new version: recomputed');
    t.equal(objAsked, 1, 'obj computed once for the new row');
    // wec3 gone: its kept row goes too.
    collect(c, objForCel(deployment), wec2.filter((r) => r.cluster !== 'wec3'), memo);
    t.same([...memo.keys()].sort(), ['wec1', 'wec2'], 'rows of WECs no longer reporting are dropped');
  }
});
