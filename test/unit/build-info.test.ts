// What `ksview --version` says (src/util/build-info.ts): the image's build-info.json when there is
// one; else the checkout's commit, with -dirty once anything differs from it (untracked files too).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildInfo, versionLine } from '../../src/util/build-info.js';
import { projectVersion } from '../../src/util/repo-root.js';

function tmp(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-build-info-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('in the image: build-info.json, as written at build', async (t) => {
  const dir = tmp(t);
  writeFileSync(path.join(dir, 'build-info.json'), JSON.stringify({ version: '0.1.0-dirty', commit: 'a'.repeat(40), dirty: true }));
  t.equal(versionLine(buildInfo(dir)), `0.1.0-dirty commit ${'a'.repeat(40)}`);
});

t.test('in a checkout: the commit, then -dirty for a change', async (t) => {
  const dir = tmp(t);
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { encoding: 'utf8' }).trim();
  git('init', '-q');
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  git('add', 'a.txt');
  git('commit', '-qm', 'a');
  const head = git('rev-parse', 'HEAD');
  t.same(buildInfo(dir), { version: projectVersion(), commit: head, dirty: false }, 'clean');
  writeFileSync(path.join(dir, 'b.txt'), 'untracked\n');
  t.same(buildInfo(dir), { version: `${projectVersion()}-dirty`, commit: head, dirty: true }, 'an untracked file makes it dirty');
});

t.test('outside a checkout and the image: the commit is unknown', async (t) => {
  t.same(buildInfo(tmp(t)), { version: projectVersion(), commit: 'unknown', dirty: false });
});
