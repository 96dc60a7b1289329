// A small evaluator of the Kubernetes JSONPath subset OCM's feedback rules use (client-go
// util/jsonpath with AllowMissingKeys): `.a.b`, `['a']`, `[n]`, `[*]`, `..`-free paths and filters
// `[?(@.x=="v")]` / `[?(@.x)]` with == and !=. No npm library matches k8s' dialect (its filters and
// missing-key rules), hence this. Returns every match, in order; a missing key yields nothing.
type Step =
  | { t: 'key'; key: string }
  | { t: 'index'; i: number }
  | { t: 'all' }
  | { t: 'filter'; path: string[]; op?: '==' | '!='; value?: unknown };

export class JsonPathError extends Error {}

export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '.') {
      const m = /^[^.[\]]+/.exec(p.slice(i + 1));
      if (!m) { i += 1; continue; }
      steps.push({ t: 'key', key: m[0] });
      i += 1 + m[0].length;
    } else if (c === '[') {
      const end = closing(p, i);
      const inner = p.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ t: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ t: 'index', i: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ t: 'key', key: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) steps.push(parseFilter(inner.slice(2, -1)));
      else throw new JsonPathError(`unrecognized character in action: ${inner}`);
    } else {
      throw new JsonPathError(`unrecognized identifier ${p.slice(i)}`);
    }
  }
  return steps;
}

function closing(p: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let j = open; j < p.length; j++) {
    const c = p[j]!;
    if (quote) { if (c === quote) quote = undefined; continue; }
    if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  throw new JsonPathError('unclosed array expect ]');
}

function parseFilter(expr: string): Step {
  const m = /^@((?:\.[^.=!<> ]+)+)\s*(?:(==|!=)\s*(.+))?$/.exec(expr.trim());
  if (!m) throw new JsonPathError(`unsupported filter ${expr}`);
  const path = m[1]!.slice(1).split('.');
  if (!m[2]) return { t: 'filter', path };
  const raw = m[3]!.trim();
  let value: unknown;
  if (/^".*"$|^'.*'$/.test(raw)) value = raw.slice(1, -1);
  else if (raw === 'true' || raw === 'false') value = raw === 'true';
  else if (!Number.isNaN(Number(raw))) value = Number(raw);
  else throw new JsonPathError(`unsupported filter value ${raw}`);
  return { t: 'filter', path, op: m[2] as '==' | '!=', value };
}

export function evalJsonPath(obj: unknown, path: string): unknown[] {
  let cur: unknown[] = [obj];
  for (const s of parseJsonPath(path)) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (s.t === 'key') {
        if (v && typeof v === 'object' && !Array.isArray(v) && s.key in v) next.push((v as Record<string, unknown>)[s.key]);
      } else if (s.t === 'index') {
        if (Array.isArray(v)) { const i = s.i < 0 ? v.length + s.i : s.i; if (i >= 0 && i < v.length) next.push(v[i]); }
      } else if (s.t === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (v && typeof v === 'object') next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const item of v) {
          let x: unknown = item;
          for (const k of s.path) x = x && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined;
          if (x === undefined) continue;
          if (!s.op || (s.op === '==' ? x === s.value : x !== s.value)) next.push(item);
        }
      }
    }
    cur = next;
  }
  return cur;
}
