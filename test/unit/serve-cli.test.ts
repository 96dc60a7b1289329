// `ksview serve` flag mistakes of hosted registration and graceful shutdown: one line, non-zero
// exit, nothing started (no WDS is reached: the mistakes are found first).
import t from 'tap';
import { main } from '../../src/cli/main.js';
import { inClusterUpstream } from '../../src/kube/in-cluster-config.js';

async function run(args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => { err += s; return true; }) as typeof process.stderr.write;
  try {
    const code = await main(['node', 'ksview', 'serve', ...args]);
    return { code, err };
  } finally {
    process.stderr.write = write;
  }
}

t.test('hosted registration and shutdown flags: mistakes are one line', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--wds-kubeconfig', 'k', '--register', '--register-endpoints-from', 'ksview'], /--register-endpoints-from .*must be NAMESPACE\/NAME/],
    [['--wds-kubeconfig', 'k', '--register', '--register-endpoints-from', 'Bad/ksview'], /must be NAMESPACE\/NAME/],
    [['--wds-kubeconfig', 'k', '--hosting-kubeconfig', 'h'], /--hosting-kubeconfig is for hosted registration/],
    [['--wds-kubeconfig', 'k', '--shutdown-delay-duration', 'soon'], /--shutdown-delay-duration .*must be a duration/],
    [['--wds-kubeconfig', 'k', '--shutdown-delay-duration', '11m'], /--shutdown-delay-duration .*must be a duration/],
  ];
  for (const [args, message] of cases) {
    const r = await run(args);
    t.not(r.code, 0, args.join(' '));
    t.match(r.err, message, args.join(' '));
    t.equal(r.err.trim().split('\n').length, 1, `one line: ${r.err.trim()}`);
  }
});

t.test('in-cluster configuration outside a pod: a one-line error naming the way out', async (t) => {
  await t.rejects(inClusterUpstream({}), { name: 'UserError', message: /not running in a pod.*--hosting-kubeconfig/ });
  await t.rejects(inClusterUpstream({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, '/nonexistent/serviceaccount'),
    { name: 'UserError', message: 'in-cluster configuration: /nonexistent/serviceaccount/ca.crt: no such file or folder' });
});

t.test('in-cluster configuration in a pod: the Service address, the ServiceAccount\'s CA and token', async (t) => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const { createCA } = await import('../../src/kube/pki.js');
  const { closeUpstream } = await import('../../src/kube/upstream.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'ksview-sa-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ca = await createCA('cluster-ca');
  writeFileSync(path.join(dir, 'ca.crt'), ca.certPem);
  writeFileSync(path.join(dir, 'token'), 'tok-1\n');
  const v4 = await inClusterUpstream({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir);
  t.teardown(async () => { v4.stop(); await closeUpstream(v4.up); });
  t.equal(v4.up.origin, 'https://10.96.0.1', 'the default port is implied');
  t.equal(v4.up.authorization, 'Bearer tok-1');
  t.equal(String(v4.up.tls.ca), ca.certPem, 'verified against the ServiceAccount\'s CA');
  t.not(v4.up.tls.rejectUnauthorized, false);
  const v6 = await inClusterUpstream({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, dir);
  t.teardown(async () => { v6.stop(); await closeUpstream(v6.up); });
  t.equal(v6.up.origin, 'https://[fd00::1]:6443');
});
