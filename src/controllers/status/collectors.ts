// StatusCollectors (control.kubestellar.io/v1alpha1), KubeStellar's SQL-SELECT-like recipes in CEL
// for combining the status an object has in its WECs ("Combined Status from WECs" in KubeStellar's
// docs; api/control/v1alpha1/types.go). Two steps, both pure:
// - compileCollector: KubeStellar's structural checks and messages (select excludes groupBy and
//   combinedFields; groupBy needs combinedFields; COUNT takes no subject, the others need one),
//   then each expression parsed and its references checked (only `inventory`, `obj`, `returned`,
//   `propagation` and known functions), as cel-go's Compile would refuse them. Any error makes the
//   collector invalid: its errors go to its status.errors and it yields no result.
// - collect: one result (a NamedStatusCombination) from the per-WEC rows: `filter` (null and
//   false drop a row), then either `select` (a row per WEC, sorted by WEC name) or `groupBy` +
//   `combinedFields` (a row per distinct tuple; without groupBy exactly one row, COUNT 0 over no
//   WEC), then `limit` (default 20, enforced). A failing expression never throws: a filter error
//   drops that WEC's row, a select error makes its column Null, a groupBy or subject error leaves
//   the row out of that aggregation, a non-numeric subject counts 0 (the API's words) — each
//   reported in the result's `errors` (our addition to KubeStellar's shape, capped).
// The CEL engine is @bufbuild/cel; values cross by ./cel-values.ts.
import { celEnv, CelScalar, isCelError, parse, plan, type CelResult } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import { isAtomic, numericOf, tagged, toCel, type Value } from './cel-values.js';

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

/** One collector's rows in a CombinedStatus (KubeStellar's NamedStatusCombination, plus `errors`). */
export interface NamedStatusCombination {
  name: string;
  columnNames: string[];
  rows?: { columns: Value[] }[];
  errors?: string[];
}

/** What one WEC contributes: its name, the object's status there, when that status last changed. */
export interface WecReport {
  cluster: string;
  status: JsonObject;
  /** RFC 3339; KubeStellar's zero time when unknown. */
  lastReturnedUpdateTimestamp?: string;
  /** Changes whenever the report does (the WorkStatus's resourceVersion): rows are kept by it (RowMemo). */
  version?: string;
}

export const DEFAULT_LIMIT = 20;
const AGGREGATORS = ['COUNT', 'SUM', 'AVG', 'MIN', 'MAX'] as const;
type Aggregator = typeof AGGREGATORS[number];
/** How many expression errors a result lists before it says how many more there were. */
export const MAX_RESULT_ERRORS = 10;
const ZERO_TIME = '0001-01-01T00:00:00Z';

const VARIABLES = ['inventory', 'obj', 'returned', 'propagation'] as const;
type Variable = typeof VARIABLES[number];
/** Type denotations an expression may name (`type(x) == int`). */
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);
/** Calls the planner handles itself (logic, indexing), not found among the functions. */
const BUILTIN_CALLS = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '@not_strictly_false', '_[?_]', '_?._']);

const env = celEnv({
  variables: Object.fromEntries(VARIABLES.map((v) => [v, CelScalar.DYN])) as Record<Variable, typeof CelScalar.DYN>,
  funcs: strings,
});

type Bindings = Partial<Record<Variable, unknown>>;

interface Program {
  run(vars: Bindings): CelResult;
  /** The variables it reads: only those are built for it. */
  uses: Set<Variable>;
}

type Expr = ReturnType<typeof parse>['expr'];

/**
 * Expressions run on the server's one thread for every cluster of every object, and the engine has
 * no cost limit: their size and how deeply comprehensions (all, exists, map, filter…) nest are
 * bounded at compile time, so no collector can make the server loop for long.
 */
export const MAX_EXPRESSION_LENGTH = 4096;
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
  const run = plan(env, parsed) as (ctx: Bindings) => CelResult;
  return { run: (vars) => run(vars), uses: new Set(VARIABLES.filter((v) => idents.has(v))) };
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
  if (errors.length > 0) return { errors };
  const programs = [filter, ...selected.map((s) => s.program), ...groups.map((g) => g.program), ...aggregators.map((a) => a.subject)];
  const uses = new Set(programs.flatMap((p) => (p ? [...p.uses] : [])));
  return { collector: { name: sc.metadata.name, filter, select: selected, groupBy: groups, combinedFields: aggregators, limit, columnNames, uses }, errors: [] };
}

/** The object as `obj` shows it: everything but its status (KubeStellar's docs). */
export function objForCel(obj: JsonObject): unknown {
  const { status: _status, ...rest } = obj;
  return toCel(rest);
}

/** Collects errors up to MAX_RESULT_ERRORS, counting the rest. */
class ErrorList {
  private readonly list: string[] = [];
  private dropped = 0;
  add(msg: string): void {
    if (this.list.length < MAX_RESULT_ERRORS) this.list.push(msg);
    else this.dropped++;
  }
  done(): string[] | undefined {
    if (this.list.length === 0) return undefined;
    return this.dropped > 0 ? [...this.list, `… and ${this.dropped} more errors`] : this.list;
  }
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

/** Orders Values: Numbers by value, others by their JSON; Null first. */
function compareValues(a: Value, b: Value): number {
  if (a.type !== b.type) return a.type === 'Null' ? -1 : b.type === 'Null' ? 1 : a.type.localeCompare(b.type);
  if (a.type === 'Number') return Number(a.float) - Number(b.float) || a.float!.localeCompare(b.float!);
  return JSON.stringify(a).localeCompare(JSON.stringify(b));
}

function compareRows(a: Value[], b: Value[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = compareValues(a[i]!, b[i]!);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Everything CEL computes for one WEC's row under one collector, with the errors it met by phase
 * (so that a result lists them in the same order however its rows were computed). Pure in
 * (collector, obj, report): the caller may keep it while neither changes (RowMemo).
 */
export interface RowEval {
  /** Why the filter left the row out (an error or a non-bool), or '' when it just said false/null. */
  filterError?: string;
  /** The filter kept the row. */
  kept: boolean;
  /** select: the cells (Null where the expression failed) and those errors. */
  select?: Value[];
  selectErrors?: string[];
  /** groupBy: the row's key, or the error that left it out of the aggregation. */
  key?: Value[];
  groupError?: string;
  /** Per combinedField: the subject's number (0 for a non-number, said), undefined when it failed (said). */
  subjects?: (number | undefined)[];
  subjectErrors?: (string | undefined)[];
}

/** The rows a collector computed for one object, by WEC, each with the version of the report it came from. */
export type RowMemo = Map<string, { version: string; row: RowEval }>;

export function evaluateRow(c: CompiledCollector, obj: unknown, report: WecReport): RowEval {
  const vars = bindingsFor(c, obj, report);
  if (c.filter) {
    const r = c.filter.run(vars);
    if (isCelError(r)) return { kept: false, filterError: `${report.cluster}: filter: ${r.message}` };
    if (r !== true) return { kept: false, ...(r !== false && r !== null ? { filterError: `${report.cluster}: filter: the result is ${typeof r}, not a bool` } : {}) };
  }
  if (c.select.length > 0) {
    const selectErrors: string[] = [];
    const select = c.select.map((x) => {
      const r = x.program.run(vars);
      if (!isCelError(r)) return tagged(r);
      selectErrors.push(`${report.cluster}: select expression (${x.name}): ${r.message}`);
      return { type: 'Null' as const };
    });
    return { kept: true, select, ...(selectErrors.length > 0 ? { selectErrors } : {}) };
  }
  const key: Value[] = [];
  for (const g of c.groupBy) {
    const r = g.program.run(vars);
    if (isCelError(r)) return { kept: true, groupError: `${report.cluster}: groupBy expression (${g.name}): ${r.message}` };
    if (!isAtomic(r)) return { kept: true, groupError: `${report.cluster}: groupBy expression (${g.name}): the value is not atomic` };
    key.push(tagged(r));
  }
  const subjects: (number | undefined)[] = [];
  const subjectErrors: (string | undefined)[] = [];
  for (const a of c.combinedFields) {
    if (a.type === 'COUNT') {
      subjects.push(undefined);
      subjectErrors.push(undefined);
      continue;
    }
    const r = a.subject!.run(vars);
    if (isCelError(r)) {
      subjects.push(undefined);
      subjectErrors.push(`${report.cluster}: combinedField (${a.name}) subject: ${r.message}`);
      continue;
    }
    const n = numericOf(r);
    subjects.push(n ?? 0);
    subjectErrors.push(n === undefined ? `${report.cluster}: combinedField (${a.name}) subject is ${r === null ? 'null' : typeof r === 'string' ? JSON.stringify(r) : 'not a number'}, 0 used` : undefined);
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
  const errors = new ErrorList();
  for (const r of rows) if (r.filterError) errors.add(r.filterError);
  const kept = rows.filter((r) => r.kept);
  const out = c.select.length > 0 ? selectRows(kept, errors) : aggregateRows(c, kept, errors);
  const limited = out.slice(0, c.limit);
  const errs = errors.done();
  return { name: c.name, columnNames: c.columnNames, ...(limited.length > 0 ? { rows: limited.map((columns) => ({ columns })) } : {}), ...(errs ? { errors: errs } : {}) };
}

function selectRows(kept: RowEval[], errors: ErrorList): Value[][] {
  for (const r of kept) for (const e of r.selectErrors ?? []) errors.add(e);
  return kept.map((r) => r.select ?? []);
}

function aggregateRows(c: CompiledCollector, kept: RowEval[], errors: ErrorList): Value[][] {
  const groups = new Map<string, { key: Value[]; members: RowEval[] }>();
  if (c.groupBy.length === 0) groups.set(JSON.stringify([]), { key: [], members: [] });
  for (const m of kept) {
    if (m.groupError) {
      errors.add(m.groupError);
      continue;
    }
    const key = m.key ?? [];
    const id = JSON.stringify(key);
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { key, members: [] }));
    group.members.push(m);
  }
  const rows = [...groups.values()].map((g) => [...g.key, ...c.combinedFields.map((a, i) => aggregate(a, i, g.members, errors))]);
  return rows.sort(compareRows);
}

/** One aggregate over a group; the empty aggregation is the identity in float64 (AVG: NaN). */
function aggregate(a: CompiledAggregator, i: number, members: RowEval[], errors: ErrorList): Value {
  if (a.type === 'COUNT') return tagged(members.length);
  const values: number[] = [];
  for (const m of members) {
    const e = m.subjectErrors?.[i];
    if (e) errors.add(e);
    const n = m.subjects?.[i];
    if (n !== undefined) values.push(n);
  }
  const sum = values.reduce((s, v) => s + v, 0);
  switch (a.type) {
    case 'SUM': return tagged(sum);
    case 'AVG': return tagged(values.length === 0 ? NaN : sum / values.length);
    case 'MIN': return tagged(values.reduce((s, v) => Math.min(s, v), Infinity));
    default: return tagged(values.reduce((s, v) => Math.max(s, v), -Infinity));
  }
}
