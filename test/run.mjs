#!/usr/bin/env node
// The test command behind `make test` and CI: runs tap (TAP output), then prints the closing line
// `N passed, N failed` (assertions) and enforces the coverage we hold on a full run.
// Usage: node test/run.mjs [test files or folders]   (no argument: every test)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// Line coverage of src/ reached by the whole suite; raise it as tests grow, never lower it.
const LINE_COVERAGE_THRESHOLD = 80;

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const unitOnly = args.length > 0 && args.every((a) => a.startsWith('test/unit'));
const env = { ...process.env, ...(unitOnly ? { KSVIEW_TEST_NO_SPACES: '1' } : {}) };

const child = spawn(path.join(root, 'node_modules', '.bin', 'tap'), ['--reporter=tap', ...args], {
  cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'],
});
let summary;
let pending = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const m = /^# (\{ total: .*\})$/.exec(line);
    if (m) summary = m[1];
  }
});
const code = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));

const count = (key) => Number(new RegExp(`\\b${key}: (\\d+)`).exec(summary ?? '')?.[1] ?? 0);
const total = count('total');
const passed = count('pass');
const skipped = count('skip') + count('todo');
let failed = total - passed - skipped;
if (code !== 0 && failed === 0) failed = 1; // tap failed outside any assertion (crash, timeout)

// On a full run, coverage under the threshold (or no coverage report to read) fails the run, and
// the closing line says so: a reader of the last line sees why the exit code is not 0.
let coverageProblem;
if (args.length === 0) {
  try {
    const report = JSON.parse(readFileSync(path.join(root, '.tap', 'report', 'coverage-summary.json'), 'utf8'));
    const pct = report.total.lines.pct;
    console.log(`# line coverage ${pct}% (threshold ${LINE_COVERAGE_THRESHOLD}%)`);
    if (!(pct >= LINE_COVERAGE_THRESHOLD)) coverageProblem = `line coverage ${pct}% is under the threshold of ${LINE_COVERAGE_THRESHOLD}%`;
  } catch (err) {
    coverageProblem = `no coverage report to check (${err.message})`;
  }
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${coverageProblem ? `; FAILED: ${coverageProblem}` : ''}`);
process.exit(code !== 0 ? code : coverageProblem ? 1 : 0);
