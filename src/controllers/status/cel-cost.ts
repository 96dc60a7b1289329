// What a CEL expression may cost, as kube-apiserver bounds its own CEL (k8s.io/apiserver
// pkg/apis/cel/config.go, cel-go's checker/cost.go and interpreter/runtimecost.go), for
// @bufbuild/cel, which has no cost tracking of its own (docs/security.md D4):
// - estimateCost: the worst-case cost of an expression before it ever runs, in cel-go's units
//   (1 per identifier, select and call; 0.1 per character a string function traverses; 10 per list
//   and 30 per map literal; a comprehension's step times the items it may iterate), every input of
//   unknown size bounded by what etcd stores (1.5 MiB: strings that long, lists of up to 512 Ki
//   items), and the growth of what it builds tracked (a `replace` that may double a string
//   doubles its size). A collector whose expression could exceed ESTIMATED_COST_LIMIT (kube's
//   StaticEstimatedCostLimit) is invalid, in kube's words: "estimated rule cost exceeds budget".
// - the metered environment: every function of the engine charged as it is called (1 + 0.1 per
//   character of its string arguments and result, + the items of lists it searches), each
//   comprehension iteration charged 1 (a call wrapped around its step), and the engine's `replace`
//   (quadratic in @bufbuild/cel 0.6.1: 4.7 s for 1,335 characters; test/unit/cel-cost.test.ts) replaced by a linear
//   one that charges its result before building it. Past the limit the evaluation is abandoned at
//   once with cel-go's error, "operation cancelled: actual cost limit exceeded": PER_CALL_LIMIT per
//   expression and RUNTIME_BUDGET per row (kube's PerCallLimit and RuntimeCELCostBudget).
// Evaluation is synchronous and one thread runs one evaluation at a time, so the meter is this
// thread's one (`meter`), set before each expression runs.
import { CelScalar, type CelFunc, type CelResult, type CelValue, isCelList, isCelMap } from '@bufbuild/cel';
import type { parse } from '@bufbuild/cel';

type Expr = NonNullable<ReturnType<typeof parse>['expr']>;

/** kube-apiserver's limits (k8s.io/apiserver/pkg/apis/cel/config.go). */
export const ESTIMATED_COST_LIMIT = 10_000_000;
export const ESTIMATED_COLLECTOR_COST_LIMIT = 100_000_000;
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_BUDGET = 10_000_000;
/**
 * The size of an input of unknown size: the largest object etcd stores by default
 * (--max-request-bytes, 1.5 MiB), which every input here is (the WDS object, a WorkStatus's status).
 */
export const INPUT_SIZE = 1.5 * 1024 * 1024;
/** The items of a list (or entries of a map) of unknown size: the request filled with `{},`, as kube estimates unbounded lists. */
export const INPUT_ITEMS = Math.floor((INPUT_SIZE - 2) / 3);

const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;
const MAP_CREATE = 30;

export const COST_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

export class CostLimitExceeded extends Error {
  constructor() {
    super(COST_EXCEEDED);
  }
}

/** The cost left to the expression running on this thread. */
export class Meter {
  private limit = Infinity;
  private left = Infinity;

  start(limit: number): void {
    this.limit = limit;
    this.left = limit;
  }

  /** What the current expression has cost so far. */
  used(): number {
    return this.limit - this.left;
  }

  charge(n: number): void {
    this.left -= n;
    if (this.left < 0) throw new CostLimitExceeded();
  }
}

export const meter = new Meter();

// ---- the estimate ----

/** The largest size a value may have: characters (strings, bytes), items (lists, maps), and its elements'. */
interface Shape { len: number; items: number; elem?: Shape }
interface Estimate { cost: number; shape: Shape }

const SCALAR: Shape = { len: 0, items: 0 };
const INPUT: Shape = { len: INPUT_SIZE, items: INPUT_ITEMS };
(INPUT as { elem?: Shape }).elem = INPUT;

const cap = (n: number) => Math.min(n, 1e300);
/** A shape holding both (elements merged a few levels deep: an input's are itself, without end). */
function union(a: Shape | undefined, b: Shape | undefined, depth = 0): Shape | undefined {
  if (!a || !b || a === b) return a ?? b;
  return { len: Math.max(a.len, b.len), items: Math.max(a.items, b.items), elem: depth > 4 ? INPUT : union(a.elem, b.elem, depth + 1) };
}
const traverse = (n: number) => Math.ceil(cap(n) * STRING_TRAVERSAL);

/** The length of a string literal argument, if it is one (its exact size, not a bound). */
function literalLength(e: Expr | undefined): number | undefined {
  const k = e?.exprKind;
  return k?.case === 'constExpr' && k.value.constantKind.case === 'stringValue' ? k.value.constantKind.value.length : undefined;
}

/** The worst-case cost of an expression over inputs of unknown size (variables not in `scope`). */
export function estimateCost(e: Expr): number {
  return estimate(e, new Map()).cost;
}

function estimate(e: Expr | undefined, scope: Map<string, Shape>): Estimate {
  const k = e?.exprKind;
  switch (k?.case) {
    case 'constExpr': {
      const c = k.value.constantKind;
      return { cost: 0, shape: c.case === 'stringValue' || c.case === 'bytesValue' ? { len: c.value.length, items: 0 } : SCALAR };
    }
    case 'identExpr':
      return { cost: 1, shape: scope.get(k.value.name) ?? INPUT };
    case 'selectExpr': {
      const o = estimate(k.value.operand, scope);
      return { cost: cap(o.cost + 1), shape: k.value.testOnly ? SCALAR : o.shape.elem ?? INPUT };
    }
    case 'listExpr': {
      const els = k.value.elements.map((x) => estimate(x, scope));
      return { cost: cap(els.reduce((n, x) => n + x.cost, LIST_CREATE)), shape: { len: 0, items: els.length, elem: els.reduce<Shape | undefined>((u, x) => union(u, x.shape), undefined) } };
    }
    case 'structExpr': {
      const vals = k.value.entries.map((en) => {
        const key = en.keyKind.case === 'mapKey' ? estimate(en.keyKind.value, scope).cost : 0;
        const v = estimate(en.value, scope);
        return { cost: key + v.cost, shape: v.shape };
      });
      return { cost: cap(vals.reduce((n, x) => n + x.cost, MAP_CREATE)), shape: { len: 0, items: vals.length, elem: vals.reduce<Shape | undefined>((u, x) => union(u, x.shape), undefined) } };
    }
    case 'comprehensionExpr': {
      const c = k.value;
      const range = estimate(c.iterRange, scope);
      const accu = estimate(c.accuInit, scope);
      const inner = new Map(scope);
      const elem = range.shape.elem ?? INPUT;
      inner.set(c.iterVar, elem);
      if (c.iterVar2) inner.set(c.iterVar2, elem);
      const accuKind = c.accuInit?.exprKind.case;
      // A list or map built item by item holds at most one item per iteration.
      const accuShape = accuKind === 'listExpr' || accuKind === 'structExpr' ? { len: 0, items: range.shape.items, elem: INPUT } : accu.shape;
      inner.set(c.accuVar, accuShape);
      const cond = estimate(c.loopCondition, inner);
      const step = estimate(c.loopStep, inner);
      const result = estimate(c.result, inner);
      return { cost: cap(range.cost + accu.cost + range.shape.items * (cond.cost + step.cost + 1) + result.cost), shape: result.shape };
    }
    case 'callExpr':
      return estimateCall(k.value, scope);
    default:
      return { cost: 0, shape: SCALAR };
  }
}

function estimateCall(call: { function: string; target?: Expr; args: Expr[] }, scope: Map<string, Shape>): Estimate {
  const target = call.target ? estimate(call.target, scope) : undefined;
  const args = call.args.map((a) => estimate(a, scope));
  const sum = (target?.cost ?? 0) + args.reduce((n, a) => n + a.cost, 0);
  const t = target?.shape ?? args[0]?.shape ?? SCALAR;
  const a0 = (target ? args[0] : args[1])?.shape ?? SCALAR;
  const out = (extra: number, shape: Shape = SCALAR): Estimate => ({ cost: cap(sum + extra), shape });
  switch (call.function) {
    case '_&&_': case '_||_': case '@not_strictly_false': case '!_':
      return out(call.function === '!_' ? 1 : 0);
    case '_?_:_': {
      const [c, x, y] = args;
      return { cost: cap((c?.cost ?? 0) + Math.max(x?.cost ?? 0, y?.cost ?? 0)), shape: union(x?.shape, y?.shape) ?? SCALAR };
    }
    case '_[_]': case '_[?_]': case '_?._':
      return out(1, t.elem ?? INPUT);
    case '_+_': {
      const [x, y] = [args[0]?.shape ?? SCALAR, args[1]?.shape ?? SCALAR];
      const shape = { len: cap(x.len + y.len), items: cap(x.items + y.items), elem: union(x.elem, y.elem) };
      return out(1 + traverse(shape.len), shape);
    }
    case '@in':
      return out(1 + (args[1]?.shape.items ?? 0));
    case '_==_': case '_!=_': case '_<_': case '_<=_': case '_>_': case '_>=_': {
      const [x, y] = [args[0]?.shape ?? SCALAR, args[1]?.shape ?? SCALAR];
      return out(1 + traverse(Math.min(x.len, y.len)) + Math.min(x.items, y.items));
    }
    case 'contains':
      return out(1 + traverse(t.len) * Math.max(1, traverse(a0.len)));
    case 'startsWith': case 'endsWith':
      return out(1 + traverse(a0.len));
    case 'matches':
      return out(1 + traverse(t.len + 1) * Math.max(1, Math.ceil(a0.len * REGEX_LENGTH)));
    case 'indexOf': case 'lastIndexOf': case 'charAt':
      return out(1 + traverse(t.len + a0.len));
    case 'lowerAscii': case 'upperAscii': case 'trim': case 'substring':
      return out(1 + 2 * traverse(t.len), { len: t.len, items: 0 });
    case 'strings.quote':
      return out(1 + 3 * traverse(a0.len), { len: cap(2 * t.len + 2), items: 0 });
    case 'split':
      return out(1 + 2 * traverse(t.len), { len: 0, items: cap(t.len + 1), elem: { len: t.len, items: 0 } });
    case 'join': {
      const len = cap(t.items * ((t.elem ?? INPUT).len + a0.len));
      return out(1 + traverse(len), { len, items: 0 });
    }
    case 'format': {
      const len = cap(t.len + a0.items * ((a0.elem ?? INPUT).len + 32));
      return out(1 + traverse(len), { len, items: 0 });
    }
    case 'replace': {
      const n = t.len;
      const oldLen = literalLength(call.args[0]) ?? 0;
      const newLen = args[1]?.shape.len ?? 0;
      // Each match may grow by (new - old); an empty `old` matches between every two characters.
      const len = cap(oldLen > 0 ? n + Math.floor(n / oldLen) * Math.max(0, newLen - oldLen) : (n + 1) * newLen + n);
      return out(1 + 2 * traverse(n) + traverse(len), { len, items: 0 });
    }
    case 'string':
      return out(1 + traverse(t.len), { len: Math.max(t.len, 32), items: 0 });
    case 'bytes':
      return out(1 + traverse(t.len), { len: cap(t.len * 4), items: 0 });
    default:
      return out(1);
  }
}

// ---- the meter ----

/** The size a value charges: its characters (0.1 each), or its items (1 each). */
function sizeCost(v: CelValue | undefined): number {
  if (typeof v === 'string') return traverse(v.length);
  if (v instanceof Uint8Array) return traverse(v.length);
  if (isCelList(v) || isCelMap(v)) return v.size;
  return 0;
}

const strLen = (v: unknown) => (typeof v === 'string' || v instanceof Uint8Array ? v.length : 0);

/** Functions whose work does not depend on the size of their arguments (a string's length is known). */
const CONSTANT_TIME = new Set(['size', 'type', 'dyn', 'int', 'uint', 'double', 'bool', 'duration', 'timestamp', 'charAt', 'substring']);

/** What a call cost: 1, its string arguments traversed, the list `in` searched, what `join` built. */
function callCost(name: string, target: CelValue | undefined, args: readonly CelValue[]): number {
  let c = 1;
  if (CONSTANT_TIME.has(name) || name.startsWith('get')) return c;
  for (const v of target === undefined ? args : [target, ...args]) c += typeof v === 'string' || v instanceof Uint8Array ? traverse(v.length) : 0;
  switch (name) {
    case '@in':
      return c + sizeCost(args[1]);
    case '_==_': case '_!=_':
      return c + Math.min(isCelList(args[0]) || isCelMap(args[0]) ? args[0].size : 0, isCelList(args[1]) || isCelMap(args[1]) ? args[1].size : 0);
    case 'matches':
      return 1 + traverse(strLen(target) + 1) * Math.max(1, Math.ceil(strLen(args[0]) * REGEX_LENGTH));
    case 'join': {
      if (!isCelList(target)) return c;
      let len = 0;
      for (const x of target) len += strLen(x) + strLen(args[0]);
      return c + traverse(len);
    }
    default:
      return c;
  }
}

/**
 * A function of the engine, charged once it ran (an overload that does not match costs nothing):
 * its arguments and what it built. None of the engine's functions but `replace` (ours, charged
 * before it builds) can build more than a few times its arguments' size in one call.
 */
function metered(f: CelFunc): CelFunc {
  return {
    get id() { return f.id; },
    get name() { return f.name; },
    get target() { return f.target; },
    get arguments() { return f.arguments; },
    get result() { return f.result; },
    call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined {
      const r = f.call(id, target, args);
      if (r === undefined) return r;
      meter.charge(callCost(f.name, target, args) + (typeof r === 'string' && f.name !== 'replace' ? traverse(r.length) : 0));
      return r;
    },
  } as CelFunc;
}

/** CEL's replace (Go's strings.Replace: `n` < 0 replaces all; an empty `old` matches before each code point and at the end), linear, its result charged before it is built. */
export function replaceMetered(s: string, old: string, repl: string, n = -1): string {
  // Count first (nothing built), charge what the result will be, then build it.
  let count = 0;
  if (old === '') {
    for (const _ of s) count++;
    count++;
  } else {
    for (let i = s.indexOf(old); i >= 0; i = s.indexOf(old, i + old.length)) count++;
  }
  if (n >= 0) count = Math.min(count, n);
  meter.charge(1 + traverse(s.length) + traverse(s.length + count * Math.max(0, repl.length - old.length)));
  if (count === 0) return s;
  if (old === '') {
    const points = [...s];
    if (count > points.length) return `${repl}${points.join(repl)}${repl}`;
    return points.slice(0, count).map((p) => repl + p).join('') + points.slice(count).join('');
  }
  if (n < 0) return s.split(old).join(repl);
  const parts = s.split(old);
  return parts.slice(0, count + 1).join(repl) + (parts.length > count + 1 ? old + parts.slice(count + 1).join(old) : '');
}

function rawFunc(name: string, target: CelFunc['target'], args: CelFunc['arguments'], result: CelFunc['result'], call: (target: CelValue | undefined, args: CelValue[]) => CelResult | undefined): CelFunc {
  const id = `${target ? `${target.name}.` : ''}${name}(${args.map((a) => a.name).join(',')})`;
  return { id, name, target, arguments: args, result, call: (_id: number, t: CelValue | undefined, a: CelValue[]) => call(t, a) } as CelFunc;
}

/** The function wrapped around each comprehension's step: `tick(step, n)` charges n per iteration. */
export const TICK = '@ksview.tick';

/**
 * What one evaluation of a loop's condition and step costs beyond the calls in them (which charge
 * themselves) and the loops nested in them (which tick themselves): 1 per identifier and select,
 * 10 per list literal, 30 per map literal, as cel-go counts them, and 1 for the iteration.
 */
function nodeCost(e: Expr | undefined): number {
  const k = e?.exprKind;
  switch (k?.case) {
    case 'identExpr': return 1;
    case 'selectExpr': return 1 + nodeCost(k.value.operand);
    case 'callExpr': return nodeCost(k.value.target) + k.value.args.reduce((n, a) => n + nodeCost(a), 0);
    case 'listExpr': return k.value.elements.reduce((n, x) => n + nodeCost(x), LIST_CREATE);
    case 'structExpr': return k.value.entries.reduce((n, en) => n + nodeCost(en.value) + (en.keyKind.case === 'mapKey' ? nodeCost(en.keyKind.value) : 0), MAP_CREATE);
    default: return 0;
  }
}

/**
 * Every function of `all` (the engine's standard library and extensions, as an environment
 * resolves them) metered, `replace` linear, and the iteration tick: the `funcs` of a metered
 * environment (they replace the standard ones of the same id).
 */
export function meteredFuncs(all: Iterable<CelFunc>): CelFunc[] {
  const { STRING, INT, DYN } = CelScalar;
  const out: CelFunc[] = [];
  for (const f of all) if (f.name !== 'replace') out.push(metered(f));
  const replace = (t: CelValue | undefined, a: CelValue[]) => (typeof t === 'string' && typeof a[0] === 'string' && typeof a[1] === 'string' && (a[2] === undefined || typeof a[2] === 'bigint')
    ? replaceMetered(t, a[0], a[1], a[2] === undefined ? -1 : Number(a[2]))
    : undefined);
  out.push(rawFunc('replace', STRING, [STRING, STRING], STRING, (t, a) => (a.length === 2 ? replace(t, a) : undefined)));
  out.push(rawFunc('replace', STRING, [STRING, STRING, INT], STRING, (t, a) => (a.length === 3 ? replace(t, a) : undefined)));
  out.push(rawFunc(TICK, undefined, [DYN, INT], DYN, (_t, a) => { meter.charge(Number(a[1])); return a[0]; }));
  return out;
}

/** The expression with each comprehension's step wrapped in the tick (a new tree; the parsed one is left as it was). */
export function withTicks(e: Expr): Expr {
  const k = e.exprKind;
  const wrap = (x: Expr | undefined) => (x ? withTicks(x) : x);
  switch (k.case) {
    case 'selectExpr':
      return { ...e, exprKind: { case: k.case, value: { ...k.value, operand: wrap(k.value.operand) } } } as Expr;
    case 'callExpr':
      return { ...e, exprKind: { case: k.case, value: { ...k.value, target: wrap(k.value.target), args: k.value.args.map(withTicks) } } } as Expr;
    case 'listExpr':
      return { ...e, exprKind: { case: k.case, value: { ...k.value, elements: k.value.elements.map(withTicks) } } } as Expr;
    case 'structExpr':
      return { ...e, exprKind: { case: k.case, value: { ...k.value, entries: k.value.entries.map((en) => ({ ...en, keyKind: en.keyKind.case === 'mapKey' ? { case: 'mapKey', value: withTicks(en.keyKind.value) } : en.keyKind, value: wrap(en.value) })) } } } as Expr;
    case 'comprehensionExpr': {
      const c = k.value;
      const step = wrap(c.loopStep);
      const weight = { id: step?.id, exprKind: { case: 'constExpr', value: { constantKind: { case: 'int64Value', value: BigInt(1 + nodeCost(c.loopCondition) + nodeCost(c.loopStep)) } } } };
      const ticked = step ? { id: step.id, exprKind: { case: 'callExpr', value: { function: TICK, args: [step, weight] } } } as unknown as Expr : step;
      return { ...e, exprKind: { case: k.case, value: { ...c, iterRange: wrap(c.iterRange), accuInit: wrap(c.accuInit), loopCondition: wrap(c.loopCondition), loopStep: ticked, result: wrap(c.result) } } } as Expr;
    }
    default:
      return e;
  }
}
