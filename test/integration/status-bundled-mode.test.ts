// Status in both modes: the suite's status tests — singleton and multi-WEC return, CombinedStatus,
// the policies' Ready and status.errors — run a second time on spaces of their own whose serve
// packs objects into bundled works (`--max-objects-per-work 8`), where the agents report each
// object's status in its work rather than in a WorkStatus (docs/placement.md "Bundled works").
// The same test files, unchanged, as a user of either mode would check them: tap runs them with
// the spaces' folder and ports of this test (test/fixtures/spaces-up.ts reads them from the
// environment); each of their failing assertions is named here.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ksview } from '../fixtures/ksview.js';

const FILES = ['status-return', 'combined-status', 'policy-status'].map((f) => `test/integration/${f}.test.ts`);
const root = path.resolve(import.meta.dirname, '..', '..');

t.test('the status tests pass with bundled works', async (t) => {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'ksview-status-bundled-'));
  const dir = path.join(parent, 'spaces');
  t.teardown(() => {
    ksview(['spaces', 'down', '--dir', dir]);
    rmSync(parent, { recursive: true, force: true });
  });
  // Without this process's own tap settings (it runs under tap: a nested tap would report to it).
  const own = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS$)/.test(k)));
  const env = {
    ...own, KSVIEW_TEST_SPACES_DIR: dir, KSVIEW_TEST_PORT_BASE: process.env.KSVIEW_STATUS_BUNDLED_PORT_BASE ?? '18900',
    KSVIEW_TEST_MAX_OBJECTS_PER_WORK: '8', CI: 'false',
  };
  // One file at a time (the suite runs two beside this one), no coverage (the suite's own report is the one kept).
  // In a project root of its own (the repository's files linked into it): tap empties
  // <project root>/.tap/processinfo and .tap/coverage when it starts, which in the repository
  // would be the suite's own, still being written (a CI run failed on that race).
  const project = path.join(parent, 'project');
  mkdirSync(project);
  for (const entry of readdirSync(root)) if (entry !== '.tap' && entry !== '.git') symlinkSync(path.join(root, entry), path.join(project, entry));
  const child = spawn(path.join(root, 'node_modules', '.bin', 'tap'), ['--reporter=tap', '--disable-coverage', '--jobs=1', ...FILES], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; });
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const summary = /# \{ total: (\d+), pass: (\d+)/.exec(out);
  const failing = out.split('\n').filter((l) => /^\s*not ok /.test(l)).map((l) => l.trim());
  t.equal(code, 0, `tap ${FILES.join(' ')} on bundled spaces: ${code === 0 ? 'passed' : `failed: ${failing.slice(0, 20).join('; ') || err.trim().split('\n').slice(-5).join(' | ')}`}`);
  t.ok(summary && Number(summary[1]) > 30 && summary[1] === summary[2], `every assertion passed (${summary ? `${summary[2]} of ${summary[1]}` : 'no summary'})`);
  // The spaces ran serve bundled (src/spaces/view-server.ts passes the recorded limits to it).
  t.match(JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')), { bundle: { objects: 8 } }, 'serve ran with --max-objects-per-work 8');
  for (const f of FILES) t.match(out, new RegExp(`^ok \\d+ - ${f.replace(/\./g, '\\.')}`, 'm'), `${f} ran and passed`);
});
