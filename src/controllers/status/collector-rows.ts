// The half of StatusCollectors that needs no CEL engine, so that the server's own thread never
// loads or runs one (the CEL half runs in workers: ./cel-pool.ts): the bounds on a collector's
// spec checked before anything is parsed, the shape of a compiled collector (its columns and
// aggregators), the per-WEC rows CEL computed (RowEval, plain data that crosses threads), and their
// combination into one result: `filter` drops, then `select` rows sorted by WEC name, or
// `groupBy` + `combinedFields` (COUNT, SUM, AVG, MIN, MAX; a row per distinct tuple, sorted;
// without groupBy exactly one row), then `limit`; every expression error of the rows listed in the
// result's `errors`, capped (./collectors.ts says how each arises).

/** A column value of a CombinedStatus row (KubeStellar's `Value`). */
export interface Value {
  type: 'String' | 'Number' | 'Bool' | 'Null' | 'Object' | 'Array';
  string?: string;
  float?: string;
  bool?: boolean;
  object?: unknown;
  array?: unknown[];
}

/** One collector's rows in a CombinedStatus (KubeStellar's NamedStatusCombination, plus `errors`). */
export interface NamedStatusCombination {
  name: string;
  columnNames: string[];
  rows?: { columns: Value[] }[];
  errors?: string[];
}

export const AGGREGATORS = ['COUNT', 'SUM', 'AVG', 'MIN', 'MAX'] as const;
export type Aggregator = typeof AGGREGATORS[number];
export const VARIABLES = ['inventory', 'obj', 'returned', 'propagation'] as const;
export type Variable = typeof VARIABLES[number];
export const DEFAULT_LIMIT = 20;
/** How many expression errors a result lists before it says how many more there were. */
export const MAX_RESULT_ERRORS = 10;

/**
 * Bounds on one collector's spec, checked before any expression is parsed: KubeStellar's CRD has
 * none, and compiling costs time (@bufbuild/cel parses a 4,096-character expression in up to
 * ~1 s on this machine, measured), so what one collector (or one admission review) can make the
 * server compile is bounded by the count and total size of its expressions, and each by its length.
 */
export const MAX_EXPRESSION_LENGTH = 4096;
export const MAX_EXPRESSIONS = 32;
export const MAX_TOTAL_EXPRESSION_LENGTH = 16 * 1024;

/** The shape of a valid collector: all the server's thread needs to combine the rows CEL computed. */
export interface CollectorShape {
  name: string;
  select: string[];
  groupBy: string[];
  combinedFields: { name: string; type: Aggregator }[];
  limit: number;
  columnNames: string[];
  /** The variables its expressions read: only those are sent for evaluation. */
  uses: Variable[];
}

/**
 * Everything CEL computes for one WEC's row under one collector, with the errors it met by phase
 * (so that a result lists them in the same order however its rows were computed). Pure in
 * (collector, obj, report): the caller may keep it while neither changes (RowMemo).
 */
export interface RowEval {
  /** Why the filter left the row out (an error or a non-bool, or why the row could not be evaluated), or absent when it just said false/null. */
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

/** A row that could not be evaluated at all (the evaluation was stopped): left out, and why. */
export const failedRow = (cluster: string, why: string): RowEval => ({ kept: false, filterError: `${cluster}: ${why}` });

/** The expressions of a spec, in the order their errors are reported. */
export function expressionsOf(spec: { filter?: unknown; select?: unknown; groupBy?: unknown; combinedFields?: unknown }): unknown[] {
  const defs = (l: unknown, key: 'def' | 'subject') => (Array.isArray(l) ? l.map((x) => (x && typeof x === 'object' ? (x as Record<string, unknown>)[key] : undefined)) : []);
  return [spec.filter, ...defs(spec.select, 'def'), ...defs(spec.groupBy, 'def'), ...defs(spec.combinedFields, 'subject')].filter((e) => e !== undefined && e !== '');
}

/** The errors of a spec over the count and total size bounds (each expression's length is the compiler's). */
export function specBoundErrors(spec: { filter?: unknown; select?: unknown; groupBy?: unknown; combinedFields?: unknown }): string[] {
  const exprs = expressionsOf(spec);
  const errors: string[] = [];
  if (exprs.length > MAX_EXPRESSIONS) errors.push(`${exprs.length} expressions, more than the ${MAX_EXPRESSIONS} allowed`);
  const total = exprs.reduce<number>((n, e) => n + (typeof e === 'string' ? e.length : 0), 0);
  if (total > MAX_TOTAL_EXPRESSION_LENGTH) errors.push(`expressions of ${total} characters in all, more than the ${MAX_TOTAL_EXPRESSION_LENGTH} allowed`);
  return errors;
}

/**
 * Go's strconv.FormatFloat(f, 'g', -1, 64): the shortest digits that round-trip; the exponent form
 * (two exponent digits at least) when the decimal exponent is below -4 or at least 6, Go's
 * threshold for the shortest %g. So 2.5 → "2.5", 1e6 → "1e+06", NaN → "NaN", +∞ → "+Inf".
 */
export function goFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (Object.is(f, -0)) return '-0';
  const [mantissa, expText] = f.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (f !== 0 && (exp < -4 || exp >= 6)) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(f);
}

const numberValue = (n: number): Value => ({ type: 'Number', float: goFloat(n) });

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

/** The result of a collector from its rows, one per WEC sorted by WEC name. */
export function combineRows(c: CollectorShape, rows: readonly RowEval[]): NamedStatusCombination {
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

function aggregateRows(c: CollectorShape, kept: RowEval[], errors: ErrorList): Value[][] {
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
  const rows = [...groups.values()].map((g) => [...g.key, ...c.combinedFields.map((a, i) => aggregate(a.type, i, g.members, errors))]);
  return rows.sort(compareRows);
}

/** One aggregate over a group; the empty aggregation is the identity in float64 (AVG: NaN). */
function aggregate(type: Aggregator, i: number, members: RowEval[], errors: ErrorList): Value {
  if (type === 'COUNT') return numberValue(members.length);
  const values: number[] = [];
  for (const m of members) {
    const e = m.subjectErrors?.[i];
    if (e) errors.add(e);
    const n = m.subjects?.[i];
    if (n !== undefined) values.push(n);
  }
  const sum = values.reduce((s, v) => s + v, 0);
  switch (type) {
    case 'SUM': return numberValue(sum);
    case 'AVG': return numberValue(values.length === 0 ? NaN : sum / values.length);
    case 'MIN': return numberValue(values.reduce((s, v) => Math.min(s, v), Infinity));
    default: return numberValue(values.reduce((s, v) => Math.max(s, v), -Infinity));
  }
}
