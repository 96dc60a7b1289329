// Bad input to `ksview` gives one clear line on stderr and a non-zero exit, never a stack trace:
// unknown flags, bad values, a port already taken, no Go toolchain when a build is needed.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ksview, type RunResult } from '../fixtures/ksview.js';

function oneLineError(t: Test, r: RunResult, pattern: RegExp, what: string): void {
  t.not(r.status, 0, `${what}: non-zero exit`);
  const lines = r.stderr.trim().split('\n');
  t.equal(lines.length, 1, `${what}: one line (${r.stderr.trim()})`);
  t.match(lines[0], pattern, `${what}: says what is wrong`);
  t.notMatch(r.stderr, /\n\s+at |Error: .*\n/, `${what}: no stack trace`);
}

function tmpDir(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('an unknown flag', async (t) => {
  oneLineError(t, ksview(['spaces', 'up', '--bogus']), /unknown option '--bogus'/, 'unknown flag');
});

t.test('an unknown command', async (t) => {
  oneLineError(t, ksview(['spaces', 'sideways']), /unknown command 'sideways'/, 'unknown command');
});

t.test('a bad number', async (t) => {
  oneLineError(t, ksview(['spaces', 'up', '--wecs', 'many']), /--wecs.*whole number/, 'bad --wecs');
  oneLineError(t, ksview(['spaces', 'up', '--port-base', '80']), /--port-base.*whole number from 1024/, 'low port');
});

t.test('a port already taken', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const dir = path.join(tmpDir(t), 'spaces');
  const r = ksview(['spaces', 'up', '--dir', dir, '--port-base', String(port), '--wecs', '0']);
  oneLineError(t, r, new RegExp(`port ${port} .*already in use`), 'port taken');
  const status = ksview(['spaces', 'status', '--dir', dir]);
  t.notMatch(status.stdout, /ok/, 'nothing was left running');
  ksview(['spaces', 'down', '--dir', dir]);
});

t.test('no Go toolchain when the binaries must be built', async (t) => {
  const dir = tmpDir(t);
  // PATH without Go, and an empty binary cache, so ksview has to build and cannot.
  const pathWithoutGo = (process.env.PATH ?? '').split(':').filter((p) => !p.includes('/go')).join(':');
  const env = { ...process.env, PATH: pathWithoutGo, KSVIEW_CACHE_DIR: path.join(dir, 'cache') };
  const r = ksview(['spaces', 'up', '--dir', path.join(dir, 'spaces'), '--wecs', '0', '--port-base', '19900'], env);
  oneLineError(t, r, /Go toolchain \(go\) is not on PATH/, 'missing go');
});

t.test('kubeconfig and status before any up', async (t) => {
  const dir = path.join(tmpDir(t), 'none');
  oneLineError(t, ksview(['kubeconfig', '--dir', dir]), /no kubeconfig in .*ksview spaces up/, 'kubeconfig');
  oneLineError(t, ksview(['spaces', 'status', '--dir', dir]), /no spaces in/, 'status');
});
