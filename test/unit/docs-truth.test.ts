// What the docs say is what the repository has. Pure file reading (test/fixtures/repo-text.ts),
// no spaces; the commander program of `ksview` is built, not run.
// - Commands and flags: every `ksview …` run written in a code span or a code block of a Markdown
//   file, or in the Makefile, names a command of the program and only flags of that command
//   (hidden aliases included); a code span starting with `-` on the same line continues the
//   last run named on it. Flags on any other line are another program's (kubectl, helm, …).
//   Every `make <target>` named in code exists in the Makefile.
// - Links and paths: every relative Markdown link resolves in the repository (its anchor too,
//   for a .md); no link leads outside the repository (markdown links, autolinks, or bare URLs
//   in prose; addresses in code are examples, and no outside host is allowed); every repository
//   path (src/…, test/…, docs/…, charts/…, ./x, ../x) named in a Markdown file or in a comment
//   of src/, test/, bench/ exists, a `docs/x.md#anchor` has that anchor, and a section quoted
//   after a doc (`docs/x.md, "Section"`) begins a heading of it. Bare file names are not read
//   (a bare name does not say its folder). docs/design/kubestellar-status-reference.md
//   cites KubeStellar's repository, whose paths are not ours: its paths are not read.
// - Fixtures: every entry of test/fixtures/ is in test/README.md's fixture table, and every
//   file the table names is there.
// - Dead exports: a name exported by a file of src/ is imported (statically, by `import()`, or
//   re-exported) by another file of src/, test/ or bench/ (a name only tests use is used), or
//   used in its own file. What neither is dead code that `export` hides from tsc's
//   noUnusedLocals. (An export only its own file uses is a question of the module's contract,
//   not dead code: not read here.)
// - No issue numbers ("issue N"): a reader of the repository cannot open that tracker; say the
//   doc section or the test instead. KubeStellar's own tracker is cited as kubestellar/kubestellar#N.
import type { Command, Option } from 'commander';
import path from 'node:path';
import t from 'tap';
import { buildProgram } from '../../src/cli/main.js';
import {
  anchorOf, codeSpans, comments, filesUnder, headings, isDir, markdownFiles, mdLines, pathExists, read, withoutCode,
} from '../fixtures/repo-text.js';

// ---- commands and flags -------------------------------------------------------------------

const program = buildProgram(['node', 'ksview']);
const flagsOf = (cmd: Command) => new Set([...cmd.options as readonly Option[]]
  .flatMap((o) => [o.long, o.short]).filter((f): f is string => !!f).concat(['--help', '-h']));
const optionOf = (cmd: Command, flag: string) => (cmd.options as readonly Option[]).find((o) => o.long === flag || o.short === flag);
const commandPath = (cmd: Command): string => (cmd.parent ? `${commandPath(cmd.parent)} ${cmd.name()}` : cmd.name());

interface Run { cmd: Command; problems: string[] }

const allCommands = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(allCommands)];

/** Reads the words of a `ksview` run from cmd on: subcommands while cmd has some, then flags. */
function readRun(words: string[], start: Command): Run {
  const problems: string[] = [];
  let cmd = start;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!.replace(/^[[(]+/, '').replace(/[\]…,.:;)]+$/, '');
    if (/^-/.test(w) && w !== '-') {
      const flag = w.replace(/=.*$/, '');
      if (!flagsOf(cmd).has(flag)) {
        problems.push(`\`${commandPath(cmd)}\` has no flag ${flag}`);
        continue;
      }
      const o = optionOf(cmd, flag);
      if (o && (o.required || o.optional) && !w.includes('=')) i++;
      continue;
    }
    if (cmd.commands.length > 0 && /^[a-z][a-z0-9-]*$/.test(w)) {
      const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
      if (!sub) {
        problems.push(`\`${commandPath(cmd)}\` has no command ${w}`);
        break;
      }
      cmd = sub;
    }
  }
  return { cmd, problems };
}

/** The words after each run of ksview in a piece of shell (ksview in command position), up to the end of that command. */
function ksviewRuns(shell: string): string[][] {
  return [...shell.matchAll(/(?:^|[;&|(]|\$\()\s*(?:sudo\s+)?(?:node\s+)?(?:bin\/ksview\.js|ksview)(?=\s|$)([^;&|)#\n]*)/g)]
    .map((m) => m[1]!.trim().split(/\s+/).filter(Boolean));
}

/** Lines of shell: the fenced code of the Markdown files (continuations joined) and the Makefile. */
function shellLines(): { where: string; shell: string }[] {
  const out: { where: string; shell: string }[] = [];
  for (const file of markdownFiles()) {
    let pending = '';
    for (const l of mdLines(read(file))) {
      if (!l.fenced) continue;
      pending += l.text;
      if (pending.endsWith('\\')) { pending = pending.slice(0, -1); continue; }
      out.push({ where: `${file}:${l.line}`, shell: pending });
      pending = '';
    }
  }
  read('Makefile').split('\n').forEach((text, i) => { if (/^\t/.test(text)) out.push({ where: `Makefile:${i + 1}`, shell: text }); });
  return out;
}

t.test('every ksview command and flag the docs name exists', async (t) => {
  const problems: string[] = [];
  for (const { where, shell } of shellLines()) {
    for (const words of ksviewRuns(shell)) for (const p of readRun(words, program).problems) problems.push(`${where}: ${p}`);
  }
  for (const file of markdownFiles()) {
    for (const l of mdLines(read(file))) {
      if (l.fenced) continue;
      let current: Command | undefined;
      for (const span of codeSpans(l.text)) {
        const runs = ksviewRuns(span);
        if (runs.length > 0) {
          for (const words of runs) {
            const run = readRun(words, program);
            problems.push(...run.problems.map((p) => `${file}:${l.line}: ${p}`));
            if (words.length > 0) current = run.cmd; // `ksview` alone names the program, and runs nothing
          }
        } else if (current && /^(--[a-z]|-[a-zA-Z](\s|$))/.test(span)) {
          // Prose may name another command's flag beside a run (`--port-base`+5): any command's will do.
          const flags = span.split(/\s+/).filter((w) => w.startsWith('-')).flatMap((w) => w.split('/'));
          for (const f of flags) {
            if (!readRun([f], current).problems.length) continue;
            if (!allCommands(program).some((c) => readRun([f], c).problems.length === 0)) problems.push(`${file}:${l.line}: no command of ksview has the flag ${f}`);
          }
        }
      }
    }
  }
  t.same(problems, [], 'no command or flag of ksview that the program lacks');
});

t.test('every make target the docs name exists', async (t) => {
  const targets = new Set([...read('Makefile').matchAll(/^([\w-]+):/gm)].map((m) => m[1]!));
  const problems: string[] = [];
  for (const file of markdownFiles()) {
    for (const l of mdLines(read(file))) {
      const code = l.fenced ? [l.text] : codeSpans(l.text);
      for (const c of code) {
        for (const m of c.matchAll(/(?<![\w-])make\s+(?:-s\s+)?([a-z][\w-]*)/g)) {
          if (!targets.has(m[1]!)) problems.push(`${file}:${l.line}: no make target ${m[1]}`);
        }
      }
    }
  }
  t.same(problems, [], 'no make target the Makefile lacks');
});

// ---- links and paths ----------------------------------------------------------------------

/** Hosts of addresses that are examples, not links: loopback, reserved example names, placeholders. */
const EXAMPLE_HOST = /^(127\.|localhost|[^/]*example\.(com|org)|kubernetes\.default|[^/]*[<…*X])/;

/** What a build or a run writes (dist/, certs/generated/ …): named in docs, absent from a fresh clone. */
const generated = (rel: string) => /^(dist|coverage|\.tap|certs\/generated)(\/|$)/.test(rel);

/** Whether target (a path with an optional #anchor) resolves from the folder dir; the problem if not. */
function resolveTarget(dir: string, target: string): string | undefined {
  const [rawPath, anchor] = target.split('#') as [string, string | undefined];
  const rel = rawPath === '' ? '' : path.normalize(path.join(dir, decodeURIComponent(rawPath)));
  if (rel.startsWith('..')) return `${target} leaves the repository`;
  if (generated(rel)) return undefined;
  if (rawPath !== '' && !pathExists(rel)) return `${target} does not exist`;
  if (anchor !== undefined && rel.endsWith('.md') && !headings(rel).some((h) => h.anchor === anchor)) {
    return `${target}: ${rel} has no heading #${anchor}`;
  }
  return undefined;
}

t.test('every link in the docs resolves inside the repository', async (t) => {
  const problems: string[] = [];
  for (const file of markdownFiles()) {
    const dir = path.dirname(file);
    for (const l of mdLines(read(file))) {
      if (l.fenced) continue;
      const prose = withoutCode(l.text);
      for (const m of prose.matchAll(/\]\(([^)\s]+)\)|<(https?:[^>\s]+)>|(?<![<\w])(https?:\/\/[^\s)>\]]+)/g)) {
        const target = m[1] ?? m[2] ?? m[3]!;
        const url = /^[a-z]+:/.exec(target) ? target : undefined;
        if (url) {
          const host = url.replace(/^[a-z]+:\/\//, '');
          if (!(m[3] && EXAMPLE_HOST.test(host))) problems.push(`${file}:${l.line}: ${url} leads outside the repository`);
          continue;
        }
        const p = target.startsWith('#') ? resolveTarget('.', `${file}${target}`) : resolveTarget(dir, target);
        if (p) problems.push(`${file}:${l.line}: ${p}`);
      }
    }
  }
  t.same(problems, [], 'relative links resolve (anchors too); none leads outside');
});

const ROOTS = 'src|test|bench|docs|charts|manifests|build|certs|bin';
/** A repository path, e.g. src/agent/x.ts or docs/view.md#anchor; a glob or placeholder after it is kept apart. */
const REPO_PATH = new RegExp(`(?<![\\w.@/~$-])((?:${ROOTS})/[\\w./-]*[\\w/])(#[\\w-]+)?([-\\w.]*[*<{…])?`, 'g');
/** A path relative to the file it is written in: ./x.ts, ../kube/y.ts. */
const RELATIVE_PATH = /(?<![\w./-])(\.\.?\/[\w./-]*\w)(#[\w-]+)?([-\w.]*[*<{…])?/g;
/** A section quoted after a doc: docs/x.md "Section", docs/x.md, "Section", docs/x.md ("Section"); a
 *  section is a heading, or a paragraph or item led by those words (often in bold). */
const QUOTED_SECTION = /(?<![\w./-])((?:docs\/)?[\w-]+\.md)[,:]? \(?"([^"]+)"/g;

function pathProblems(file: string, text: string, relativeToFile: boolean): string[] {
  const problems: string[] = [];
  const check = (rel: string, anchor: string | undefined, glob: string | undefined, shown: string) => {
    if (glob) {
      const dir = rel.endsWith('/') ? rel : path.dirname(rel);
      if (!isDir(dir) || !filesUnder(dir).some((f) => f.startsWith(rel + glob.slice(0, -1)))) problems.push(`${shown}${glob} matches nothing`);
      return;
    }
    const p = resolveTarget('.', `${rel}${anchor ?? ''}`);
    if (p) problems.push(p.replace(rel, shown));
  };
  for (const m of text.matchAll(REPO_PATH)) check(m[1]!, m[2], m[3], m[1]!);
  if (relativeToFile) {
    for (const m of text.matchAll(RELATIVE_PATH)) {
      const rel = path.normalize(path.join(path.dirname(file), m[1]!));
      // A module is named by its .js specifier as often as by its .ts file.
      const ts = rel.replace(/\.js$/, '.ts');
      check(pathExists(rel) || !pathExists(ts) ? rel : ts, m[2], m[3], m[1]!);
    }
  }
  for (const m of text.matchAll(QUOTED_SECTION)) {
    const doc = m[1]!.startsWith('docs/') ? m[1]! : file.startsWith('docs/') ? path.join('docs', m[1]!) : undefined;
    if (!doc || !pathExists(doc)) continue; // another project's doc (KubeStellar's), or a missing one: said above
    const quoted = m[2]!.replace(/[`*]/g, '').toLowerCase();
    const parts = quoted.split('…').map((s) => s.trim()).filter(Boolean);
    const begins = (h: string) => h.toLowerCase().startsWith(parts[0]!) && parts.every((p) => h.toLowerCase().includes(p));
    const leads = read(doc).split('\n').map((l) => l.replace(/^\s*(?:[-*]|\d+\.)?\s*/, '').replace(/[`*]/g, ''));
    if (!headings(doc).some((h) => begins(h.text)) && !leads.some(begins)) problems.push(`${doc} has no section "${m[2]}"`);
  }
  return problems;
}

t.test('every repository path named in docs and comments exists', async (t) => {
  const findings: string[] = [];
  // KubeStellar's paths (the reference and the README of its examples), and this test's own examples.
  const NOT_OUR_PATHS = ['docs/design/kubestellar-status-reference.md', 'test/fixtures/kubestellar/README.md', 'test/unit/docs-truth.test.ts'];
  for (const file of markdownFiles()) {
    if (NOT_OUR_PATHS.includes(file)) continue;
    const lines = read(file).split('\n');
    lines.forEach((text, i) => findings.push(...pathProblems(file, text, false).map((p) => `${file}:${i + 1}: ${p}`)));
  }
  const code = ['src', 'test', 'bench'].flatMap((d) => filesUnder(d, (f) => /\.(ts|mjs)$/.test(f)));
  for (const file of code.filter((f) => !NOT_OUR_PATHS.includes(f))) {
    for (const c of comments(read(file))) {
      findings.push(...pathProblems(file, c.text, true).map((p) => `${file}:${c.line}: ${p}`));
    }
  }
  t.same(findings, [], 'no path that does not resolve');
});

/** Files of the machine the project was written on, not of the repository: a design map and its seeds. */
const OUTSIDE = /\bDESIGN\.md\b|\.\.\/shared\b(?:\/[\w.-]*\w)*|(?<![\w./-])\/work\/|\.library\b|kubestellar-architecture\.md/g;

/** What text of file names outside the repository; a `../shared/…` path is outside unless it resolves from file (src/agent/shared/). */
function outsideNamed(file: string, text: string): string[] {
  return [...text.matchAll(OUTSIDE)].map((m) => m[0])
    .filter((m) => !m.startsWith('../shared') || resolveTarget(path.dirname(file), m) !== undefined);
}

t.test('no file outside the repository is named', async (t) => {
  const found: string[] = [];
  for (const file of markdownFiles()) {
    read(file).split('\n').forEach((text, i) => { for (const m of outsideNamed(file, text)) found.push(`${file}:${i + 1}: ${m}`); });
  }
  for (const file of ['src', 'test', 'bench'].flatMap((d) => filesUnder(d, (f) => /\.(ts|mjs)$/.test(f))).filter((f) => f !== 'test/unit/docs-truth.test.ts')) {
    for (const c of comments(read(file))) for (const m of outsideNamed(file, c.text)) found.push(`${file}:${c.line}: ${m}`);
  }
  t.same(found, [], 'the architecture is docs/architecture.md; nothing else outside is named');
});

// ---- fixtures -----------------------------------------------------------------------------

t.test('every fixture is listed in test/README.md', async (t) => {
  const readme = read('test/README.md');
  const section = readme.slice(readme.indexOf('## Fixtures'), readme.indexOf('\n## ', readme.indexOf('## Fixtures') + 1));
  const listed = new Set(section.split('\n').filter((l) => l.startsWith('| '))
    .flatMap((l) => codeSpans(l.split(' | ')[0]!)).filter((s) => /\.\w+$|\/$/.test(s)).map((s) => s.replace(/\/$/, '')));
  const entries = filesUnder('test/fixtures').map((f) => path.relative('test/fixtures', f).split('/')[0]!);
  const fixtures = [...new Set(entries)];
  t.same(fixtures.filter((f) => !listed.has(f)), [], 'every entry of test/fixtures/ has a row');
  t.same([...listed].filter((f) => !pathExists(path.join('test/fixtures', f))), [], 'every row names an entry of test/fixtures/');
});

// ---- dead exports -------------------------------------------------------------------------

/** The names a file of src/ exports (declarations and export lists; not re-exports). */
function exportsOf(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|const|let|var|interface|type|enum)\s+([\w$]+)/gm)) names.push(m[1]!);
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}(?!\s*from)/gm)) {
    for (const part of m[1]!.split(',')) { const n = part.trim().split(/\s+as\s+/).pop()!.replace(/^type\s+/, ''); if (n) names.push(n); }
  }
  return names;
}

/** The src file a module specifier of file names (a .js of src/ or of dist/src/), if any. */
function targetOf(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const abs = path.normalize(path.join(path.dirname(file), spec)).replace(/^dist\//, '').replace(/\.js$/, '.ts');
  return abs.startsWith('src/') ? abs : undefined;
}

/** file of src/ → the names other files take from it ('*' for all). */
function namesTaken(): Map<string, Set<string>> {
  const taken = new Map<string, Set<string>>();
  const take = (target: string | undefined, names: string[]) => {
    if (!target) return;
    const set = taken.get(target) ?? new Set<string>();
    names.forEach((n) => set.add(n));
    taken.set(target, set);
  };
  const bindings = (list: string) => list.split(',').map((p) => p.trim().replace(/^type\s+/, '').split(/\s+as\s+|\s*:\s*/)[0]!).filter(Boolean);
  const files = ['src', 'test', 'bench'].flatMap((d) => filesUnder(d, (f) => /\.(ts|mjs)$/.test(f)));
  for (const file of files) {
    const text = read(file);
    for (const m of text.matchAll(/(?:import|export)\s+(?:type\s+)?([\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*'([^']+)'/g)) take(targetOf(file, m[3]!), bindings(m[2]!));
    for (const m of text.matchAll(/(?:import|export)\s+(?:type\s+)?\*(?:\s+as\s+[\w$]+)?\s+from\s*'([^']+)'/g)) take(targetOf(file, m[1]!), ['*']);
    for (const m of text.matchAll(/import\s+([\w$]+)\s+from\s*'([^']+)'/g)) take(targetOf(file, m[2]!), ['default', m[1]!]);
    for (const m of text.matchAll(/\{([^{}]*)\}\s*=\s*await\s+import\('([^']+)'\)/g)) take(targetOf(file, m[2]!), bindings(m[1]!));
    for (const m of text.matchAll(/\(await\s+import\('([^']+)'\)\)\.([\w$]+)|import\('([^']+)'\)\.([\w$]+)/g)) take(targetOf(file, (m[1] ?? m[3])!), [(m[2] ?? m[4])!]);
    // A module held in a variable: the names read from it (`v.name`, `v!.name`, `v?.name`).
    for (const m of text.matchAll(/(?:const|let)\s+([\w$]+)\s*=[^;\n]*?import\('([^']+)'\)/g)) {
      take(targetOf(file, m[2]!), [...text.matchAll(new RegExp(`\\b${m[1]}[!?]*\\.([\\w$]+)`, 'g'))].map((u) => u[1]!));
    }
  }
  // The Makefile's helm target imports a built module by name.
  for (const m of read('Makefile').matchAll(/\{([^{}]*)\}\s*=\s*await\s+import\('\.\/dist\/(src\/[^']+)'\)/g)) take(m[2]!.replace(/\.js$/, '.ts'), bindings(m[1]!));
  return taken;
}

t.test('no export of src/ is dead', async (t) => {
  const taken = namesTaken();
  const dead: string[] = [];
  for (const file of filesUnder('src', (f) => f.endsWith('.ts'))) {
    const names = taken.get(file) ?? new Set<string>();
    if (names.has('*')) continue;
    const text = read(file);
    const usedHere = (name: string) => (text.match(new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g')) ?? []).length > 1;
    for (const name of exportsOf(text)) if (!names.has(name) && !usedHere(name)) dead.push(`${file}: ${name}`);
  }
  t.same(dead, [], 'every exported name is imported somewhere');
});

// ---- issue numbers ------------------------------------------------------------------------

t.test('no issue numbers in the repository', async (t) => {
  const files = ['README.md', 'Makefile', ...['docs', 'src', 'test', 'bench', 'charts', 'manifests', 'build'].flatMap((d) => filesUnder(d))]
    .filter((f) => /\.(md|ts|mjs|js|yaml|yml|json|go|txt|tpl)$|Makefile$/.test(f));
  const found: string[] = [];
  for (const file of files) {
    read(file).split('\n').forEach((text, i) => {
      for (const m of text.matchAll(/\bissues?[\s-]*#?\d+/gi)) found.push(`${file}:${i + 1}: ${m[0]}`);
    });
  }
  t.same(found, [], 'no "issue N": the doc section or the test it stands for instead');
});

// The anchors this test computes are GitHub's.
t.test('anchors are computed as GitHub does', async (t) => {
  t.equal(anchorOf('Real nodes (`--real-nodes`)'), 'real-nodes---real-nodes');
  t.equal(anchorOf('Executor: as whom a work runs in the WEC'), 'executor-as-whom-a-work-runs-in-the-wec');
});
