// Small files with one purpose: no file of src/ over MAX_FILE_LINES lines, no function over
// MAX_FUNCTION_LINES lines, and no two files of src/ with the same name (a name says what a file
// is wherever it is named: in an import, a stack trace, a doc). A file's lines are counted as `wc -l` does. A function is every
// function-like node TypeScript's own parser finds (function declarations and expressions,
// methods, constructors, get/set accessors, arrow functions, with a block body or an expression
// body), measured from the line where it starts to the line where its body ends, both included;
// a function nested in another counts on its own and inside the outer one too. Nothing is left
// out: comments and blank lines inside a body count, as they do for a reader.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 120;
const src = path.resolve(import.meta.dirname, '..', '..', 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

const rel = (f: string) => path.relative(src, f);

function functionName(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(sf);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(sf);
  return `(anonymous ${ts.SyntaxKind[node.kind]})`;
}

/** `file:line name: N lines` of each function longer than `max`. */
function longFunctions(file: string, text: string, max: number): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition((node.body as ts.Node).getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push(`${file}:${first + 1} ${functionName(node, sf)}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

t.test(`no file of src/ over ${MAX_FILE_LINES} lines`, async (t) => {
  const long = filesUnder(src)
    .map((f) => ({ f, lines: (readFileSync(f, 'utf8').match(/\n/g) ?? []).length }))
    .filter(({ lines }) => lines > MAX_FILE_LINES)
    .map(({ f, lines }) => `${rel(f)}: ${lines} lines`);
  t.same(long, [], 'every file is small enough to read whole');
});

t.test(`no function of src/ over ${MAX_FUNCTION_LINES} lines`, async (t) => {
  const long = filesUnder(src).flatMap((f) => longFunctions(rel(f), readFileSync(f, 'utf8'), MAX_FUNCTION_LINES));
  t.same(long, [], 'every function is small enough to hold in mind');
});

t.test('no two files of src/ share a name', async (t) => {
  const byName = new Map<string, string[]>();
  for (const f of filesUnder(src)) byName.set(path.basename(f), [...byName.get(path.basename(f)) ?? [], rel(f)]);
  const repeated = [...byName.values()].filter((files) => files.length > 1).map((files) => files.join(' and '));
  t.same(repeated, [], 'every file name of src/ is said once');
});

t.test('the measure finds what it should', async (t) => {
  // Over a limit of 2 lines: what spans 3 or more is found, nested functions on their own, whatever
  // braces hide in strings, template literals, regular expressions and comments.
  const sample = [
    '// a { in a comment',
    'function outer() {',
    "  const inner = () => {",
    "    return '}';",
    '  };',
    '  return inner;',
    '}',
    'class C {',
    '  method(): string {',
    '    const r = /[{]/;',
    '    return `${r.source}}`;',
    '  }',
    '  short() { return 1; }',
    '}',
    'const arrow = (a: number) =>',
    '  a + 1;',
    '',
  ].join('\n');
  t.same(longFunctions('sample.ts', sample, 2),
    ['sample.ts:2 outer: 6 lines', 'sample.ts:3 inner: 3 lines', 'sample.ts:9 method: 4 lines']);
  t.same(longFunctions('sample.ts', sample, 1).filter((l) => / (arrow|short):/.test(l)), ['sample.ts:15 arrow: 2 lines']);
});
