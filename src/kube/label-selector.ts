// Label selectors as Kubernetes evaluates them, in both their forms: a metav1.LabelSelector
// (LabelSelectorAsSelector: every matchLabels pair and every matchExpressions requirement must
// hold; `{}` matches everything; operators In, NotIn, Exists, DoesNotExist) and the string of a
// `labelSelector` query parameter (labels.Parse: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
// `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, comma-separated). Both become requirements, which one
// matcher evaluates. A malformed selector (unknown operator, In/NotIn without values,
// Exists/DoesNotExist with values, a string kube cannot parse — with kube's message) is a
// LabelSelectorError, which callers report (e.g. on a BindingPolicy's status, or as a 400)
// instead of treating it as "matches nothing".
import { labelValueErrors, qualifiedNameErrors } from './names.js';

/** One requirement: a matchExpressions item, or a term of a parsed string (which may also be Gt or Lt). */
export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

/** Throws LabelSelectorError for a selector Kubernetes would refuse; `path` names it in the message. */
export function validateLabelSelector(sel: LabelSelector, path = 'selector'): void {
  (sel.matchExpressions ?? []).forEach((r, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) throw new LabelSelectorError(`${at}.values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`);
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) throw new LabelSelectorError(`${at}.values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`);
        break;
      default:
        throw new LabelSelectorError(`${at}.operator: Invalid value: ${JSON.stringify(r.operator)}: not a valid selector operator`);
    }
  });
}

export function matchesLabelSelector(sel: LabelSelector, labels: Labels): boolean {
  validateLabelSelector(sel);
  // matchLabels pairs are `In` requirements of one value: equality.
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  return matchesRequirements(sel.matchExpressions ?? [], labels);
}

/** A decimal integer as strconv.ParseInt reads it, or undefined. */
const integer = (s: string): number | undefined => /^[-+]?\d+$/.test(s) ? Number(s) : undefined;

/** Whether every requirement holds for `labels` (labels.Requirement.Matches). */
export function matchesRequirements(reqs: readonly LabelSelectorRequirement[], labels: Labels): boolean {
  return reqs.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        return has && values.includes(labels[r.key]!);
      case 'NotIn':
        return !has || !values.includes(labels[r.key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      case 'Gt':
      case 'Lt': {
        const v = has ? integer(labels[r.key]!) : undefined;
        const limit = integer(values[0] ?? '');
        if (v === undefined || limit === undefined) return false;
        return r.operator === 'Gt' ? v > limit : v < limit;
      }
      default:
        return false;
    }
  });
}

/** Whether a selector is `{}` (no requirement at all). */
export function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0;
}

// ---- The string form: labels.Parse (k8s.io/apimachinery/pkg/labels/selector.go), messages included.

type Token = 'id' | 'end' | ',' | '!' | '=' | '==' | '!=' | '(' | ')' | 'in' | 'notin' | '>' | '<';

const KEYWORDS: ReadonlyMap<string, Token> = new Map(([')', ',', '!', '==', '=', '>', 'in', '<', '!=', 'notin', '('] as const).map((t) => [t, t]));
const isSpecial = (c: string) => '=!(),><'.includes(c);
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';

function lex(s: string): Array<{ tok: Token; lit: string }> {
  const out: Array<{ tok: Token; lit: string }> = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isSpace(s[i]!)) i++;
    if (i >= s.length) return [...out, { tok: 'end', lit: '' }];
    let lit = s[i++]!;
    if (isSpecial(lit)) {
      // The longest run of symbols that is still an operator ("!=", "=="), as scanSpecialSymbol.
      while (i < s.length && isSpecial(s[i]!) && KEYWORDS.has(lit + s[i]!)) lit += s[i++]!;
    } else {
      while (i < s.length && !isSpecial(s[i]!) && !isSpace(s[i]!)) lit += s[i++]!;
    }
    out.push({ tok: KEYWORDS.get(lit) ?? 'id', lit });
  }
}

const OPERATORS: Readonly<Partial<Record<Token, string>>> = { in: 'In', notin: 'NotIn', '=': 'In', '==': 'In', '!=': 'NotIn', '>': 'Gt', '<': 'Lt' };

/**
 * The requirements of a `labelSelector` string, as labels.Parse reads it: `=` and `==` become In,
 * `!=` NotIn, with one value. Throws LabelSelectorError with kube-apiserver's message.
 */
export function parseLabelSelector(selector: string): LabelSelectorRequirement[] {
  const items = lex(selector);
  let pos = 0;
  // In the values context ("in" and "notin" may be values), keywords read as identifiers.
  const peek = () => { const x = items[pos]!; return x.tok === 'in' || x.tok === 'notin' ? { tok: 'id' as Token, lit: x.lit } : x; };
  const next = () => { const x = peek(); pos++; return x; };
  const fail = (message: string): never => { throw new LabelSelectorError(message); };
  const failRequirement = (message: string): never => fail(`unable to parse requirement: ${message}`);
  const invalid = (path: string, value: string, errs: string[]) => `${path}: Invalid value: ${JSON.stringify(value)}: ${errs.join('; ')}`;

  const values = (): string[] => {
    const open = next();
    if (open.tok !== '(') failRequirement(`found '${open.lit}' expected: '('`);
    const first = peek();
    if (first.tok === ')') { pos++; return ['']; }
    if (first.tok !== 'id' && first.tok !== ',') failRequirement(`found '${first.lit}', expected: ',', ')' or identifier`);
    const set = new Set<string>();
    for (;;) {
      const t = next();
      if (t.tok === 'id') {
        set.add(t.lit);
        const after = peek();
        if (after.tok === ')') break;
        if (after.tok !== ',') failRequirement(`found '${after.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        // "(,", ",," and ",)" hold the empty value.
        if (set.size === 0) set.add('');
        if (peek().tok === ')') { set.add(''); break; }
        if (peek().tok === ',') { pos++; set.add(''); }
      } else {
        failRequirement(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    if (next().tok !== ')') failRequirement(`found '${first.lit}', expected: ')'`);
    return [...set].sort();
  };

  const requirement = (): LabelSelectorRequirement => {
    let t = next();
    const negated = t.tok === '!';
    if (negated) t = next();
    if (t.tok !== 'id') failRequirement(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrors = qualifiedNameErrors(key);
    if (keyErrors.length > 0) failRequirement(invalid('<nil>', key, keyErrors));
    if (negated) return { key, operator: 'DoesNotExist' };
    if (peek().tok === 'end' || peek().tok === ',') return { key, operator: 'Exists' };
    const op = items[pos++]!;
    const operator = OPERATORS[op.tok] ?? failRequirement(`found '${op.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    let vals: string[];
    if (op.tok === 'in' || op.tok === 'notin') {
      vals = values();
    } else if (peek().tok === 'end' || peek().tok === ',') {
      vals = [''];
    } else {
      const v = next();
      if (v.tok !== 'id') failRequirement(`found '${v.lit}', expected: identifier`);
      vals = [v.lit];
    }
    const errs: string[] = [];
    if (operator === 'Gt' || operator === 'Lt') {
      vals.forEach((v, i) => { if (integer(v) === undefined) errs.push(invalid(`values[${i}]`, v, ["for 'Gt', 'Lt' operators, the value must be an integer"])); });
    }
    vals.forEach((v, i) => { const e = labelValueErrors(v); if (e.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, e)); });
    if (errs.length > 0) failRequirement(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
    return { key, operator, values: vals };
  };

  const reqs: LabelSelectorRequirement[] = [];
  for (;;) {
    const t = peek();
    if (t.tok === 'end') return reqs;
    if (t.tok !== 'id' && t.tok !== '!') fail(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
    reqs.push(requirement());
    const sep = next();
    if (sep.tok === 'end') return reqs;
    if (sep.tok !== ',') fail(`found '${sep.lit}', expected: ',' or 'end of string'`);
    const following = peek();
    if (following.tok !== 'id' && following.tok !== '!') fail(`found '${following.lit}', expected: identifier after ','`);
  }
}
