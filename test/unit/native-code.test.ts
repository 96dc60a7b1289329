// Unit tests of the client of ksview-native (src/storage/native-code.ts) with a stand-in helper
// (test/fixtures/fake-native-helper.mjs): start-up, a missing or failing binary as one clear
// error, the exchange of a write and of normalize, and a helper that dies being started again.
import path from 'node:path';
import t from 'tap';
import { NativeCode } from '../../src/storage/native-code.js';
import { UserError } from '../../src/util/user-error.js';
import { repoRoot } from '../../src/util/repo-root.js';

const FAKE = path.join(repoRoot(), 'test', 'fixtures', 'fake-native-helper.mjs');
const log = () => { const lines: string[] = []; return { lines, info: (m: string) => lines.push(m), error: (m: string) => lines.push(m) }; };

t.test('a missing binary or one that does not come up is a UserError naming it', async (t) => {
  const missing = new NativeCode('/nonexistent/ksview-native', log());
  await t.rejects(missing.start(), new UserError('ksview-native is missing: /nonexistent/ksview-native (it is built with the spaces\' binaries: ksview spaces up, or --native-code <path>)'));
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
  t.same(await native.normalize('v1', [{ a: 1 }, { b: 2 }]), [{ a: 1, normalized: true }, { b: 2, normalized: true }]);
  t.same(await native.normalize('v1', []), [], 'nothing to normalize: no request');
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
