// Field selectors (the `fieldSelector` query parameter) as fields.ParseSelector reads them: terms
// split on unescaped ',', each `<field><op><value>` with op the first `!=`, `==` or `=` in it,
// values unescaped (`\\`, `\,`, `\=`); empty terms are skipped. Errors are FieldSelectorError
// with kube-apiserver's message, which callers answer as a 400.

export interface FieldRequirement {
  field: string;
  operator: '=' | '==' | '!=';
  value: string;
}

export class FieldSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldSelectorError';
  }
}

const OPERATORS = ['!=', '==', '='] as const;

/** The terms of a selector, split on commas that no backslash escapes (escapes kept). */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    if (selector[i] === '\\') i++;
    else if (selector[i] === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** fields.UnescapeValue. */
function unescapeValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const next = v[++i];
      if (next !== '\\' && next !== ',' && next !== '=') throw new FieldSelectorError(`invalid field selector: invalid escape sequence: \\${next ?? ''}`);
      out += next;
    } else if (c === ',' || c === '=') {
      throw new FieldSelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  return out;
}

/** fields.EscapeValue: the inverse of the unescaping above. */
export function escapeFieldValue(v: string): string {
  return v.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export function parseFieldSelector(selector: string): FieldRequirement[] {
  if (selector === '') return [];
  return splitTerms(selector).filter((term) => term !== '').map((term) => {
    for (let i = 0; i < term.length; i++) {
      const operator = OPERATORS.find((op) => term.startsWith(op, i));
      if (operator) return { field: term.slice(0, i), operator, value: unescapeValue(term.slice(i + operator.length)) };
    }
    throw new FieldSelectorError(`invalid selector: '${selector}'; can't understand '${term}'`);
  });
}

/** The requirement as a selector term again. */
export function fieldSelectorTerm(r: FieldRequirement): string {
  return `${r.field}${r.operator}${escapeFieldValue(r.value)}`;
}

/**
 * The test of a selector on objects' field labels (e.g. `{ 'metadata.name': name }`); a field its
 * resource does not support (not in `supported`) is an error now, as in kube.
 */
export function fieldSelectorMatcher(selector: string, supported: readonly string[]): (fields: Readonly<Record<string, string>>) => boolean {
  const reqs = parseFieldSelector(selector);
  const unsupported = reqs.find((r) => !supported.includes(r.field));
  if (unsupported) throw new FieldSelectorError(`field label not supported: ${unsupported.field}`);
  return (fields) => reqs.every((r) => (fields[r.field] === r.value) === (r.operator !== '!='));
}
