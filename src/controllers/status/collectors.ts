// StatusCollectors (control.kubestellar.io/v1alpha1), KubeStellar's SQL-SELECT-like recipes in CEL
// for combining the status an object has in its WECs ("Combined Status from WECs" in KubeStellar's
// docs; api/control/v1alpha1/types.go). The CEL half, run in workers (./cel-worker.ts), never on
// the server's own thread; the rest is ./collector-rows.ts. Two steps, both pure:
// - compileCollector: KubeStellar's structural checks and messages (select excludes groupBy and
//   combinedFields; groupBy needs combinedFields; COUNT takes no subject, the others need one),
//   the bounds on the spec's expressions (count, total size, each one's length and nesting), then
//   each expression parsed and its references checked (only `inventory`, `obj`, `returned`,
//   `propagation` and known functions), as cel-go's Compile would refuse them, and its cost
//   estimated (./cel-cost.ts: refused past kube's limit). Any error makes the collector invalid:
//   its errors go to its status.errors and it yields no result.
// - evaluateRow: what CEL computes for one WEC's row, each expression metered (./cel-cost.ts: at
//   most PER_CALL_LIMIT, and RUNTIME_BUDGET for the row); a failing expression never throws: a
//   filter error drops that WEC's row, a select error makes its column Null, a groupBy or subject
//   error leaves the row out of that aggregation, a non-numeric subject counts 0 (the API's words),
//   a value over MAX_VALUE_BYTES is Null — each reported in the result's `errors` (our addition to
//   KubeStellar's shape, capped). `collect` is both halves in one go (for tests).
// The CEL engine is @bufbuild/cel; values cross by ./cel-values.ts.
import { celEnv, celError, CelScalar, isCelError, parse, plan, type CelResult } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import {
  COST_EXCEEDED, ESTIMATED_COLLECTOR_COST_LIMIT, ESTIMATED_COST_LIMIT, estimateCost, meter, meteredFuncs, PER_CALL_LIMIT, RUNTIME_BUDGET, withTicks,
} from './cel-cost.js';
import { isAtomic, numericOf, tagged, toCel } from './cel-values.js';
import {
  AGGREGATORS, combineRows, DEFAULT_LIMIT, MAX_EXPRESSION_LENGTH, specBoundErrors, VARIABLES,
  type Aggregator, type CollectorShape, type NamedStatusCombination, type RowEval, type Value, type Variable,
} from './collector-rows.js';

export { DEFAULT_LIMIT, MAX_EXPRESSION_LENGTH, MAX_RESULT_ERRORS } from './collector-rows.js';
export type { NamedStatusCombination, RowEval } from './collector-rows.js';

export interface NamedExpression { name: string; def: string }
export interface NamedAggregator { name: string; type: string; subject?: string }

export interface StatusCollectorSpec {
  filter?: string;
  groupBy?: NamedExpression[];
  combinedFields?: NamedAggregator[];
  select?: NamedExpression[];
  limit?: number;
}

export interface StatusCollector extends KubeObject {
  metadata: { name: string; generation?: number; resourceVersion?: string; uid?: string };
  spec?: StatusCollectorSpec;
  status?: { observedGeneration?: number; errors?: string[] };
}

/** What one WEC contributes: its name, the object's status there, when that status last changed. */
export interface WecReport {
  cluster: string;
  status: JsonObject;
  /** RFC 3339; KubeStellar's zero time when unknown. */
  lastReturnedUpdateTimestamp?: string;
  /** Changes whenever the report does (the WorkStatus's resourceVersion): rows are kept by it (RowMemo). */
  version?: string;
  /** This row's own `obj` (an upsynced object, without status), instead of the request's shared one. */
  obj?: unknown;
}

const ZERO_TIME = '0001-01-01T00:00:00Z';
/** The largest value (as JSON) a column takes: a larger one is Null, said in the errors. */
export const MAX_VALUE_BYTES = 64 * 1024;
/** Type denotations an expression may name (`type(x) == int`). */
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);
/** Calls the planner handles itself (logic, indexing), not found among the functions. */
const BUILTIN_CALLS = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '@not_strictly_false', '_[?_]', '_?._']);

const variables = Object.fromEntries(VARIABLES.map((v) => [v, CelScalar.DYN])) as Record<Variable, typeof CelScalar.DYN>;
/** The engine's functions with KubeStellar's extensions, every one metered (./cel-cost.ts). */
const env = celEnv({ variables, funcs: meteredFuncs(celEnv({ variables, funcs: strings }).funcs) });

type Bindings = Partial<Record<Variable, unknown>>;

interface Program {
  run(vars: Bindings): CelResult;
  /** The variables it reads: only those are built for it. */
  uses: Set<Variable>;
  /** Its estimated worst-case cost. */
  cost: number;
}

type Expr = ReturnType<typeof parse>['expr'];

/** How deeply comprehensions (all, exists, map, filter…) may nest (the cost estimate would refuse most deeper ones anyway). */
export const MAX_COMPREHENSION_DEPTH = 2;

interface References { idents: Set<string>; funcs: Set<string>; depth: number }

/** The identifiers and functions an expression refers to (comprehension variables excluded), and its deepest comprehension nesting. */
function references(e: Expr | undefined, bound: ReadonlySet<string>, r: References, depth = 0): void {
  const k = e?.exprKind;
  switch (k?.case) {
    case 'identExpr':
      if (!bound.has(k.value.name)) r.idents.add(k.value.name);
      return;
    case 'selectExpr':
      return references(k.value.operand, bound, r, depth);
    case 'callExpr':
      r.funcs.add(k.value.function);
      references(k.value.target, bound, r, depth);
      for (const a of k.value.args) references(a, bound, r, depth);
      return;
    case 'listExpr':
      for (const x of k.value.elements) references(x, bound, r, depth);
      return;
    case 'structExpr':
      if (k.value.messageName) r.idents.add(k.value.messageName);
      for (const en of k.value.entries) {
        if (en.keyKind.case === 'mapKey') references(en.keyKind.value, bound, r, depth);
        references(en.value, bound, r, depth);
      }
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      r.depth = Math.max(r.depth, depth + 1);
      references(c.iterRange, bound, r, depth);
      references(c.accuInit, bound, r, depth);
      const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar].filter(Boolean));
      for (const x of [c.loopCondition, c.loopStep, c.result]) references(x, inner, r, depth + 1);
      return;
    }
    default:
  }
}

/** Compiles one expression; throws an Error whose message says what is wrong. */
function compile(source: string): Program {
  if (typeof source !== 'string') throw new Error(`not a string: ${JSON.stringify(source)}`);
  if (source.length > MAX_EXPRESSION_LENGTH) throw new Error(`${source.length} characters, more than the ${MAX_EXPRESSION_LENGTH} allowed`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (err) {
    throw new Error((err as Error).message);
  }
  const refs: References = { idents: new Set(), funcs: new Set(), depth: 0 };
  references(parsed.expr, new Set(), refs);
  const { idents, funcs } = refs;
  if (refs.depth > MAX_COMPREHENSION_DEPTH) throw new Error(`comprehensions nested ${refs.depth} deep, more than the ${MAX_COMPREHENSION_DEPTH} allowed`);
  for (const name of idents) {
    if (!(VARIABLES as readonly string[]).includes(name) && !TYPE_NAMES.has(name)) throw new Error(`undeclared reference to '${name}'`);
  }
  for (const f of funcs) if (!BUILTIN_CALLS.has(f) && !env.funcs.find(f)) throw new Error(`undeclared reference to '${f}'`);
  const cost = estimateCost(parsed.expr!);
  if (cost > ESTIMATED_COST_LIMIT) throw new Error(overBudget(cost, ESTIMATED_COST_LIMIT));
  const run = plan(env, withTicks(parsed.expr!)) as (ctx: Bindings) => CelResult;
  return { run: (vars) => run(vars), uses: new Set(VARIABLES.filter((v) => idents.has(v))), cost };
}

/** kube-apiserver's words for an expression that could cost too much. */
function overBudget(cost: number, limit: number): string {
  const factor = cost / limit;
  return `estimated rule cost exceeds budget by factor of ${factor >= 1e6 ? 'more than 1000000' : Number(factor.toPrecision(4))}x (the limit is ${limit}, with inputs of any size up to 1.5 MiB; try simplifying the expression)`;
}

interface CompiledNamed { name: string; program: Program }
interface CompiledAggregator { name: string; type: Aggregator; subject?: Program }

export interface CompiledCollector {
  name: string;
  filter?: Program;
  select: CompiledNamed[];
  groupBy: CompiledNamed[];
  combinedFields: CompiledAggregator[];
  limit: number;
  columnNames: string[];
  uses: Set<Variable>;
  /** What the server's thread needs of it (./collector-rows.ts). */
  shape: CollectorShape;
}

export type CompileResult = { collector: CompiledCollector; errors: [] } | { collector?: undefined; errors: string[] };

/** KubeStellar's validation of a StatusCollector (pkg/status/statuscollector.go), messages as its. */
export function compileCollector(sc: StatusCollector): CompileResult {
  const spec = sc.spec ?? {};
  const select = spec.select ?? [];
  const groupBy = spec.groupBy ?? [];
  const combined = spec.combinedFields ?? [];
  if (select.length > 0 && (groupBy.length > 0 || combined.length > 0)) return { errors: ['groupBy and combinedFields must be empty if select is not'] };
  if (combined.length === 0 && groupBy.length > 0) return { errors: ['groupBy must be empty if combinedFields is'] };
  const bounds = specBoundErrors(spec);
  if (bounds.length > 0) return { errors: bounds };
  const errors: string[] = [];
  const limit = spec.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) errors.push(`limit must be a non-negative integer, not ${limit}`);
  const attempt = <T>(what: (m: string) => string, f: () => T): T | undefined => {
    try {
      return f();
    } catch (err) {
      errors.push(what((err as Error).message));
      return undefined;
    }
  };
  const filter = spec.filter !== undefined && spec.filter !== '' ? attempt((m) => `filter expression invalid: ${m}`, () => compile(spec.filter!)) : undefined;
  const named = (kind: string, list: NamedExpression[]) => list.flatMap((n) => {
    const program = attempt((m) => `${kind} expression (${n.name}) invalid: ${m}`, () => compile(n.def ?? ''));
    return program ? [{ name: n.name, program }] : [];
  });
  const selected = named('select', select);
  const groups = named('groupBy', groupBy);
  const aggregators: CompiledAggregator[] = [];
  for (const a of combined) {
    if (!(AGGREGATORS as readonly string[]).includes(a.type)) {
      errors.push(`combinedField expression (${a.name}) invalid: type must be one of ${AGGREGATORS.join(', ')}, not ${JSON.stringify(a.type)}`);
    } else if (a.type === 'COUNT') {
      if (a.subject) errors.push(`combinedField expression (${a.name}) invalid: subject must be nil for ${a.type} type`);
      else aggregators.push({ name: a.name, type: 'COUNT' });
    } else if (!a.subject) {
      errors.push(`combinedField expression (${a.name}) invalid: subject must be set`);
    } else {
      const subject = attempt((m) => `combinedField expression (${a.name}) subject invalid: ${m}`, () => compile(a.subject!));
      if (subject) aggregators.push({ name: a.name, type: a.type as Aggregator, subject });
    }
  }
  const columnNames = select.length > 0 ? select.map((s) => s.name) : [...groupBy.map((g) => g.name), ...combined.map((c) => c.name)];
  const seen = new Set<string>();
  for (const c of columnNames) {
    if (seen.has(c)) errors.push(`column name ${JSON.stringify(c)} is used more than once`);
    seen.add(c);
  }
  const programs = [filter, ...selected.map((s) => s.program), ...groups.map((g) => g.program), ...aggregators.map((a) => a.subject)];
  const total = programs.reduce((n, p) => n + (p?.cost ?? 0), 0);
  if (total > ESTIMATED_COLLECTOR_COST_LIMIT) errors.push(`the estimated cost of all expressions together exceeds budget by factor of ${Number((total / ESTIMATED_COLLECTOR_COST_LIMIT).toPrecision(4))}x (the limit is ${ESTIMATED_COLLECTOR_COST_LIMIT})`);
  if (errors.length > 0) return { errors };
  const uses = new Set(programs.flatMap((p) => (p ? [...p.uses] : [])));
  const shape: CollectorShape = {
    name: sc.metadata.name, select: selected.map((x) => x.name), groupBy: groups.map((g) => g.name),
    combinedFields: aggregators.map((a) => ({ name: a.name, type: a.type })), limit, columnNames, uses: VARIABLES.filter((v) => uses.has(v)),
  };
  return { collector: { name: sc.metadata.name, filter, select: selected, groupBy: groups, combinedFields: aggregators, limit, columnNames, uses, shape }, errors: [] };
}

/** The object as `obj` shows it: everything but its status (KubeStellar's docs). */
export function objForCel(obj: JsonObject): unknown {
  const { status: _status, ...rest } = obj;
  return toCel(rest);
}

function bindingsFor(c: CompiledCollector, obj: unknown, r: WecReport): Bindings {
  const b: Bindings = {};
  if (c.uses.has('obj')) b.obj = obj;
  if (c.uses.has('inventory')) b.inventory = { name: r.cluster };
  if (c.uses.has('returned')) b.returned = { status: toCel(r.status) };
  if (c.uses.has('propagation')) {
    const t = Date.parse(r.lastReturnedUpdateTimestamp ?? ZERO_TIME);
    b.propagation = { lastReturnedUpdateTimestamp: timestampFromMs(Number.isNaN(t) ? Date.parse(ZERO_TIME) : t) };
  }
  return b;
}

/** The rows a collector computed for one object, by WEC, each with the version of the report it came from. */
export type RowMemo = Map<string, { version: string; row: RowEval }>;

/**
 * Runs one program under the meter: at most PER_CALL_LIMIT, and what is left of the row's budget.
 * Past it the result is cel-go's error (the evaluation was abandoned where it was).
 */
function runMetered(p: Program, vars: Bindings, budget: { left: number }): CelResult {
  if (budget.left <= 0) return celError(COST_EXCEEDED);
  meter.start(Math.min(PER_CALL_LIMIT, budget.left));
  try {
    return p.run(vars);
  } finally {
    budget.left -= meter.used();
    meter.start(Infinity);
  }
}

/** A CEL result as a column Value, or why it cannot be one (larger than a column holds). */
function columnValue(r: unknown): Value | string {
  const v = tagged(r);
  const bytes = Buffer.byteLength(JSON.stringify(v));
  return bytes > MAX_VALUE_BYTES ? `the value is ${bytes} bytes, more than the ${MAX_VALUE_BYTES} a column holds` : v;
}

export function evaluateRow(c: CompiledCollector, obj: unknown, report: WecReport): RowEval {
  const vars = bindingsFor(c, obj, report);
  const budget = { left: RUNTIME_BUDGET };
  const run = (p: Program) => runMetered(p, vars, budget);
  const failed = isCelError;
  if (c.filter) {
    const r = run(c.filter);
    if (failed(r)) return { kept: false, filterError: `${report.cluster}: filter: ${r.message}` };
    if (r !== true) return { kept: false, ...(r !== false && r !== null ? { filterError: `${report.cluster}: filter: the result is ${typeof r}, not a bool` } : {}) };
  }
  if (c.select.length > 0) {
    const selectErrors: string[] = [];
    const select = c.select.map((x) => {
      const r = run(x.program);
      const v = failed(r) ? r.message : columnValue(r);
      if (typeof v !== 'string') return v;
      selectErrors.push(`${report.cluster}: select expression (${x.name}): ${v}`);
      return { type: 'Null' as const };
    });
    return { kept: true, select, ...(selectErrors.length > 0 ? { selectErrors } : {}) };
  }
  const key: Value[] = [];
  for (const g of c.groupBy) {
    const r = run(g.program);
    if (failed(r)) return { kept: true, groupError: `${report.cluster}: groupBy expression (${g.name}): ${r.message}` };
    if (!isAtomic(r)) return { kept: true, groupError: `${report.cluster}: groupBy expression (${g.name}): the value is not atomic` };
    const v = columnValue(r);
    if (typeof v === 'string') return { kept: true, groupError: `${report.cluster}: groupBy expression (${g.name}): ${v}` };
    key.push(v);
  }
  const subjects: (number | undefined)[] = [];
  const subjectErrors: (string | undefined)[] = [];
  for (const a of c.combinedFields) {
    if (a.type === 'COUNT') {
      subjects.push(undefined);
      subjectErrors.push(undefined);
      continue;
    }
    const r = run(a.subject!);
    if (failed(r)) {
      subjects.push(undefined);
      subjectErrors.push(`${report.cluster}: combinedField (${a.name}) subject: ${r.message}`);
      continue;
    }
    const n = numericOf(r);
    subjects.push(n ?? 0);
    subjectErrors.push(n === undefined ? `${report.cluster}: combinedField (${a.name}) subject is ${r === null ? 'null' : typeof r === 'string' ? JSON.stringify(r.length > 64 ? `${r.slice(0, 64)}…` : r) : 'not a number'}, 0 used` : undefined);
  }
  return { kept: true, key, subjects, subjectErrors };
}

/**
 * `c` over the WECs' reports of one object (`obj` as objForCel gives it, or a function giving it:
 * it is only needed for rows not in `memo`). With a memo, a row whose report has the same
 * `version` as before is not computed again: a change in one WEC costs one row's CEL, not every
 * WEC's. The caller drops the memo when the collector or the object changes.
 */
export function collect(c: CompiledCollector, obj: unknown, reports: WecReport[], memo?: RowMemo): NamedStatusCombination {
  let objValue: unknown;
  let objDone = false;
  const objOnce = () => {
    if (!objDone) { objValue = typeof obj === 'function' ? (obj as () => unknown)() : obj; objDone = true; }
    return objValue;
  };
  const sorted = [...reports].sort((a, b) => a.cluster.localeCompare(b.cluster));
  const rows = sorted.map((report) => {
    const had = memo && report.version !== undefined ? memo.get(report.cluster) : undefined;
    if (had && had.version === report.version) return had.row;
    const row = evaluateRow(c, objOnce(), report);
    if (memo && report.version !== undefined) memo.set(report.cluster, { version: report.version, row });
    return row;
  });
  if (memo && memo.size > reports.length) {
    const present = new Set(reports.map((r) => r.cluster));
    for (const cluster of [...memo.keys()]) if (!present.has(cluster)) memo.delete(cluster);
  }
  return combineRows(c.shape, rows);
}
