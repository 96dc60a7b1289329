// The house of src/: at every folder level, imports only run down, and no file imports itself
// back through a cycle. Type-only imports count too: they couple the rooms as much.
//
// A folder with sub-folders is a house of floors:
// - its loose files are the top floor: they may import any of its sub-folders;
// - its sub-folders stand in the order FLOORS declares (1 is the highest); a file in a sub-folder
//   imports only sub-folders of a higher number (further down), never one of the same number
//   (rooms side by side never import one another), never one above it, and never the loose files
//   of the folder it is in (its parent's top floor);
// - imports inside one sub-folder are that sub-folder's own business (checked at its own level,
//   if it has sub-folders), and imports into a folder from outside it are checked at the level
//   where both sides meet.
// At src/ itself: cli → apiserver | controllers | agent | spaces → storage → kube → util.
//
// Adding a folder: a new sub-folder of a folder listed here gets a number in that folder's entry
// (its place in the order: which rooms it may import, which may import it); a folder getting its
// first sub-folder gets an entry of its own, keyed by its path under src/ ('' is src/). The test
// fails on a folder with sub-folders that has no entry, on a sub-folder without a number, and on
// an entry naming a folder that does not exist — so nothing slips past unplaced.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';

const src = path.resolve(import.meta.dirname, '..', '..', 'src');

/** Per folder (its path under src/), the floor of each of its sub-folders: loose files are floor 0. */
const FLOORS: Record<string, Record<string, number>> = {
  '': { cli: 1, apiserver: 2, controllers: 2, agent: 2, spaces: 2, storage: 3, kube: 4, util: 5 },
  // hub.ts (loose) runs every controller; placement, status and upsync share only the model below.
  controllers: { placement: 1, status: 1, upsync: 1, hosting: 1, install: 1, clusters: 2, model: 3 },
  // agent.ts, cluster-agent.ts and push-supervisor.ts (loose) wire the rooms, after OCM's work spoke.
  agent: { registration: 1, endpoints: 1, upsync: 1, apply: 1, status: 2, shared: 3 },
  // app.ts and front-door.ts (loose) assemble the server; the virtual-resource framework serves the groups.
  apiserver: { view: 1, admission: 1, groups: 2, virtual: 3, auth: 4, http: 5 },
  // One file per denatured kind; the Table printer kit below them.
  storage: { kinds: 1, printing: 2 },
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

function foldersWithSubfolders(dir: string): string[] {
  const subs = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
  return [...(subs.length > 0 ? [dir] : []), ...subs.flatMap(foldersWithSubfolders)];
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

const rel = (f: string) => path.relative(src, f);

/** Where a file stands in a folder: '' for its loose files, else the sub-folder's name; undefined outside it. */
function partOf(folder: string, file: string): string | undefined {
  const r = path.relative(path.join(src, folder), file);
  if (r.startsWith('..') || path.isAbsolute(r)) return undefined;
  const parts = r.split(path.sep);
  return parts.length === 1 ? '' : parts[0];
}

/** The imports that break the floors of one folder. */
function wrongImports(folder: string, floors: Record<string, number>, graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, deps] of graph) {
    const from = partOf(folder, file);
    if (from === undefined || from === '') continue;
    for (const dep of deps) {
      const to = partOf(folder, dep);
      if (to === undefined || to === from) continue;
      const where = `${rel(file)} imports ${rel(dep)}`;
      if (to === '') wrong.push(`${where}: back up to the loose files of src/${folder}`);
      else if (!(floors[to]! > floors[from]!)) {
        wrong.push(`${where}: ${from} (floor ${floors[from]}) → ${to} (floor ${floors[to]}) of src/${folder || '.'}, ${floors[to] === floors[from] ? 'side by side' : 'upward'}`);
      }
    }
  }
  return wrong;
}

t.test('every folder with sub-folders declares the order of its sub-folders, and only existing ones', async (t) => {
  for (const dir of foldersWithSubfolders(src)) {
    const folder = rel(dir);
    const floors = FLOORS[folder];
    t.ok(floors, `src/${folder || '.'} has an entry in FLOORS`);
    if (!floors) continue;
    const subs = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    for (const s of subs) t.ok(typeof floors[s] === 'number' && floors[s] >= 1, `src/${path.join(folder, s)} has a floor (a number ≥ 1)`);
  }
  for (const [folder, floors] of Object.entries(FLOORS)) {
    for (const s of Object.keys(floors)) t.ok(existsSync(path.join(src, folder, s)), `FLOORS names src/${path.join(folder, s)}, which exists`);
  }
});

t.test('at every folder level, imports only run down the floors', async (t) => {
  const graph = importGraph();
  for (const [folder, floors] of Object.entries(FLOORS)) {
    t.same(wrongImports(folder, floors, graph), [], `src/${folder || '.'}: no import back up, side by side or upward`);
  }
});

t.test('no import cycle between files', async (t) => {
  const graph = importGraph();
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[] = [];
  const visit = (f: string, stack: string[]) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'visiting') {
      cycles.push([...stack.slice(stack.indexOf(f)), f].map(rel).join(' → '));
      return;
    }
    state.set(f, 'visiting');
    for (const d of graph.get(f) ?? []) visit(d, [...stack, f]);
    state.set(f, 'done');
  };
  for (const f of graph.keys()) visit(f, []);
  t.same(cycles, [], 'the file import graph is acyclic');
});
