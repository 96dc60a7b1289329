// `ksview serve` flag mistakes of hosted registration and graceful shutdown: one line, non-zero
// exit, nothing started (no WDS is reached: the mistakes are found first).
import t from 'tap';
import { main } from '../../src/cli/main.js';
import { inClusterUpstream } from '../../src/kube/in-cluster.js';

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
    [['--wds-kubeconfig', 'k', '--shutdown-delay', 'soon'], /--shutdown-delay .*must be a duration/],
    [['--wds-kubeconfig', 'k', '--shutdown-delay', '11m'], /--shutdown-delay .*must be a duration/],
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
