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
// A full run builds every Go program the tests use before the first file (test/fixtures/spaces-up.ts).
const env = { ...process.env, ...(unitOnly ? { KSVIEW_TEST_NO_SPACES: '1' } : {}), ...(args.length === 0 ? { KSVIEW_TEST_FULL_RUN: '1' } : {}) };

const child = spawn(path.join(root, 'node_modules', '.bin', 'tap'), ['--reporter=tap', ...args], {
  cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'],
});
let summary;
let pending = '';
// The failing assertions, each with the path of subtests above it, are printed again just before
// the closing line: a CI log shows only its tail, and the failure may be thousands of lines up.
const subtests = [];
const failures = [];
// Each file's own time (tap's `ok N - file # time=…`): the slowest are printed at the end, so a CI
// log says where a long run went.
const fileTimes = [];
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const m = /^# (\{ total: .*\})$/.exec(line);
    if (m) summary = m[1];
    const sub = /^((?:    )*)# Subtest: (.*)$/.exec(line);
    if (sub) subtests.splice(sub[1].length / 4, Infinity, sub[2]);
    const notOk = /^((?:    )*)not ok \d+ - (.*?)(?: # time=.*)?$/.exec(line);
    if (notOk) failures.push([...subtests.slice(0, notOk[1].length / 4), notOk[2]].join(' › '));
    const file = /^(?:not )?ok \d+ - (test\/\S+) # time=([\d.]+)ms/.exec(line);
    if (file) fileTimes.push([file[1], Number(file[2])]);
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
const SLOWEST_LISTED = 12;
const slowest = fileTimes.sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_LISTED);
if (slowest.length > 1) console.log(`# slowest files: ${slowest.map(([f, ms]) => `${path.basename(f)} ${Math.round(ms / 1000)} s`).join(', ')}`);
// A failing subtest is listed after its failing assertions; the list keeps the deepest ones.
const deepest = failures.filter((f, i) => !failures.slice(0, i).some((g) => g.startsWith(`${f} › `)));
const MAX_LISTED = 40;
for (const f of deepest.slice(0, MAX_LISTED)) console.log(`# failed: ${f}`);
if (deepest.length > MAX_LISTED) console.log(`# failed: … and ${deepest.length - MAX_LISTED} more`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${coverageProblem ? `; FAILED: ${coverageProblem}` : ''}`);
process.exit(code !== 0 ? code : coverageProblem ? 1 : 0);
