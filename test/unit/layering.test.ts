// The rooms of src/ stand in one order, and imports only run down it:
//   cli → apiserver | controllers | agent | spaces → storage → kube → util
// (apiserver, controllers, agent and spaces are side by side and never import one another).
// Also no cycle between files. Type-only imports count too: they couple the rooms as much.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';

const src = path.resolve(import.meta.dirname, '..', '..', 'src');
const RANK: Record<string, number> = { cli: 0, apiserver: 1, controllers: 1, agent: 1, spaces: 1, storage: 2, kube: 3, util: 4 };

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

/** file → the src files it imports (relative specifiers only). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesUnder(src)) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
      const spec = m[1] ?? m[2]!;
      deps.push(path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts'));
    }
    graph.set(file, deps);
  }
  return graph;
}

const room = (file: string) => path.relative(src, file).split(path.sep)[0]!;

t.test('every room of src/ has a rank', async (t) => {
  const rooms = new Set([...importGraph().keys()].map(room));
  for (const r of rooms) t.ok(r in RANK, `src/${r} is placed in the order`);
});

t.test('imports only run down the order of rooms', async (t) => {
  const wrong: string[] = [];
  for (const [file, deps] of importGraph()) {
    for (const dep of deps) {
      const [from, to] = [room(file), room(dep)];
      if (from === to) continue;
      if (!(RANK[to]! > RANK[from]!)) wrong.push(`${path.relative(src, file)} imports ${path.relative(src, dep)} (${from} → ${to})`);
    }
  }
  t.same(wrong, [], 'no import from a room to one beside or above it');
});

t.test('no import cycle between files', async (t) => {
  const graph = importGraph();
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[] = [];
  const visit = (f: string, stack: string[]) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'visiting') {
      cycles.push([...stack.slice(stack.indexOf(f)), f].map((x) => path.relative(src, x)).join(' → '));
      return;
    }
    state.set(f, 'visiting');
    for (const d of graph.get(f) ?? []) visit(d, [...stack, f]);
    state.set(f, 'done');
  };
  for (const f of graph.keys()) visit(f, []);
  t.same(cycles, [], 'the file import graph is acyclic');
});
