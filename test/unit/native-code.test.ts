// Unit tests of the client of ksview-native (src/storage/native-code.ts) with a stand-in helper
// (test/fixtures/fake-native-helper.mjs): start-up, a missing or failing binary as one clear
// error, the exchange of a write and of normalize, a helper that dies being started again, and
// restarts that fail never leading to two helpers. Also ksview-native's own Go tests, compiled
// once with the spaces' binaries (src/spaces/binaries.ts ensureGoHelperTests) and run here.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import t from 'tap';
import { defaultCacheDir, nativeCodeTestsPath } from '../../src/spaces/binaries.js';
import { NativeCode, userHeader } from '../../src/storage/native-code.js';
import { UserError } from '../../src/util/user-error.js';
import { repoRoot } from '../../src/util/repo-root.js';

const FAKE = path.join(repoRoot(), 'test', 'fixtures', 'fake-native-helper.mjs');
const log = () => { const lines: string[] = []; return { lines, info: (m: string) => lines.push(m), error: (m: string) => lines.push(m) }; };

t.test('a missing binary or one that does not come up is a UserError naming it', async (t) => {
  const missing = new NativeCode('/nonexistent/ksview-native', log());
  await t.rejects(missing.start(), new UserError('ksview-native is missing: /nonexistent/ksview-native (it is built with the spaces\' binaries: ksview spaces up, or --ksview-native <path>)'));
  await missing.close();
  process.env.FAKE_NATIVE_MODE = 'exit';
  const dying = new NativeCode(FAKE, log());
  t.teardown(() => { delete process.env.FAKE_NATIVE_MODE; });
  await t.rejects(dying.start(), new UserError('ksview-native did not start: fake: cannot start'));
  await dying.close();
  delete process.env.FAKE_NATIVE_MODE;
});

t.test('a write sends the live object, then the body, and returns code, object, warnings and the write to make', async (t) => {
  const native = new NativeCode(FAKE, log());
  t.teardown(() => native.close());
  await native.start();
  const a = await native.write({ method: 'PATCH', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles/x?fieldManager=m', contentType: 'application/apply-patch+yaml',
    userAgent: 'kubectl/v1.32', body: Buffer.from('{"b":1}'), live: Buffer.from('{"live":1}') });
  t.equal(a.status, 200);
  t.equal(a.write, 'update');
  t.same(a.warnings, ['299 - "one"', '299 - "two"'], 'every Warning header');
  t.match(a.json, { method: 'PATCH', url: '/apis/rbac.authorization.k8s.io/v1/clusterroles/x?fieldManager=m', live: '{"live":1}', body: '{"b":1}', contentType: 'application/apply-patch+yaml', userAgent: 'kubectl/v1.32' });
  const created = await native.write({ method: 'POST', path: '/api/v1/namespaces/a/serviceaccounts', contentType: 'application/json', body: Buffer.from('{}') });
  t.match(created, { status: 201, write: 'create', json: { live: '' } }, 'no live object: length 0');
  t.same(await native.normalize('v1', [{ a: 1 }, { bad: 'x' }, { b: 2 }]),
    [{ object: { a: 1, normalized: true } }, { error: 'cannot decode: x' }, { object: { b: 2, normalized: true } }], 'each object on its own');
  t.same(await native.normalize('v1', []), [], 'nothing to normalize: no request');
});

t.test('the user of a write goes in X-Ksview-User (ASCII JSON); the helper is given the WDS to ask about RBAC escalation', async (t) => {
  const native = new NativeCode(FAKE, log(), { kubeconfig: '/k/wds.kubeconfig', context: 'wds1' });
  t.teardown(() => native.close());
  await native.start();
  const user = { username: 'zoë', uid: 'u-1', groups: ['team-a', 'system:authenticated'], extra: { scopes: ['a', 'b'] } };
  const a = await native.write({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', contentType: 'application/json', body: Buffer.from('{}'), user });
  const json = a.json as { user: string; argv: string[] };
  t.same(JSON.parse(json.user), { name: 'zoë', uid: 'u-1', groups: ['team-a', 'system:authenticated'], extra: { scopes: ['a', 'b'] } }, 'name, uid, groups and extra');
  t.ok(/^[\x20-\x7e]*$/.test(userHeader(user)), 'a header value of ASCII only');
  t.same(json.argv.slice(2), ['--kubeconfig', '/k/wds.kubeconfig', '--context', 'wds1'], 'the WDS kubeconfig and context');
  const none = await native.write({ method: 'POST', path: '/api/v1/namespaces/a/serviceaccounts', contentType: 'application/json', body: Buffer.from('{}') });
  t.equal((none.json as { user?: string }).user, undefined, 'no user: no header (Kubernetes\' checks then grant no escalation)');
});

t.test('a helper that dies is started again; meanwhile requests are 503', async (t) => {
  const l = log();
  const native = new NativeCode(FAKE, l);
  t.teardown(() => native.close());
  await native.start();
  const first = (await native.write({ method: 'POST', path: '/x', contentType: 'application/json', body: Buffer.from('{}') })).json as { pid: number };
  process.kill(first.pid, 'SIGKILL');
  let pid = first.pid;
  let refused = 0;
  for (const deadline = Date.now() + 10_000; pid === first.pid && Date.now() < deadline;) {
    try {
      pid = ((await native.write({ method: 'POST', path: '/x', contentType: 'application/json', body: Buffer.from('{}') })).json as { pid: number }).pid;
    } catch (err) {
      if ((err as { code?: number }).code !== 503) throw err;
      refused++;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.not(pid, first.pid, 'a new helper answers');
  t.ok(refused > 0, `while it restarted requests were 503 (${refused})`);
  t.ok(l.lines.some((m) => /ksview-native exited \(SIGKILL\)/.test(m)), 'the death is logged');
});

/** Stand-in helpers that are children of this test process. */
function ownHelpers(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('fake-native-helper.mjs')) continue;
      const ppid = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))![1]);
      if (ppid === process.pid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

t.test('restarts that fail are tried again with one helper at a time, and one helper runs in the end', async (t) => {
  const l = log();
  const native = new NativeCode(FAKE, l);
  t.teardown(async () => { delete process.env.FAKE_NATIVE_MODE; await native.close(); });
  await native.start();
  const first = ((await native.write({ method: 'POST', path: '/x', contentType: 'application/json', body: Buffer.from('{}') })).json as { pid: number }).pid;
  process.env.FAKE_NATIVE_MODE = 'exit';
  process.kill(first, 'SIGKILL');
  // Restarts after 0.5 s and 1 s fail (the stand-in exits at once).
  for (const deadline = Date.now() + 10_000; l.lines.filter((m) => /did not start/.test(m)).length < 2 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
  t.ok(l.lines.filter((m) => /did not start: fake: cannot start/.test(m)).length >= 2, 'two restarts failed');
  delete process.env.FAKE_NATIVE_MODE;
  let pid = first;
  for (const deadline = Date.now() + 15_000; pid === first && Date.now() < deadline;) {
    try {
      pid = ((await native.write({ method: 'POST', path: '/x', contentType: 'application/json', body: Buffer.from('{}') })).json as { pid: number }).pid;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.not(pid, first, 'a new helper answers');
  // Had a failed restart scheduled a second chain beside the first, a second helper would start.
  await new Promise((r) => setTimeout(r, 3000));
  t.same(ownHelpers(), [pid], 'exactly one helper runs, the one that answers');
});

/** Bound of a run of the compiled Go tests (seconds on a quiet machine), well under tap's 900 s per file. */
const GO_TESTS_TIMEOUT_MS = 180_000;
// Compiled once with the spaces' binaries (their `before` hook); a run of unit tests alone, which
// starts no spaces, finds them only once built.
const goTests = nativeCodeTestsPath(defaultCacheDir());
const notBuilt = !existsSync(goTests) && process.env.KSVIEW_TEST_NO_SPACES === '1'
  && `ksview-native's compiled Go tests are not built yet (${goTests}): a run with the spaces builds them`;

t.test("ksview-native's own Go tests of the escalation check pass", { skip: notBuilt }, async (t) => {
  // Kubernetes' policybased storages with a fake WDS: the denatured resource asked, the roleRef
  // union, aggregation and same-name roles (escalation_test.go, escalation_holes_test.go).
  const { stdout } = await promisify(execFile)(goTests, ['-test.v', `-test.timeout=${GO_TESTS_TIMEOUT_MS / 1000 - 10}s`], {
    cwd: path.join(repoRoot(), 'build', 'kubernetes', 'ksview-native'), timeout: GO_TESTS_TIMEOUT_MS, maxBuffer: 16 << 20,
  });
  const passed = stdout.match(/^--- PASS: \S+/gm) ?? [];
  t.ok(passed.length > 0, `${passed.length} Go tests passed`);
  t.notMatch(stdout, /^--- FAIL/m, 'none failed');
  t.match(stdout, /^PASS$/m);
});
