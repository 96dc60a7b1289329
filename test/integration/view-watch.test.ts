// A watch through the view is long-running: kube-apiserver cuts ordinary requests at 60 s, but
// `kubectl get -w` through the view (a proxy subresource) is still streaming after 2 minutes.
import { spawn } from 'node:child_process';
import t from 'tap';
import { kcOk, kubeconfig, testNamespace, waitUntil } from '../fixtures/spaces.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('kubectl get -w through the view still streams after 2 minutes', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'watch');
  const child = spawn('kubectl', ['--context', 'wds1-view', '-n', ns, 'get', 'configmaps', '-w', '-o', 'name'],
    { env: { ...process.env, KUBECONFIG: kubeconfig } });
  t.teardown(() => { child.kill(); });
  let out = '';
  let exited: number | null | undefined;
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  child.on('close', (code) => { exited = code; });

  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'early']);
  await waitUntil('the first event', () => out.split('\n').includes('configmap/early') || undefined, 30_000);
  await sleep(125_000);
  t.equal(exited, undefined, 'kubectl is still watching after 2 minutes');
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'late']);
  await waitUntil('an event after 2 minutes', () => out.split('\n').includes('configmap/late') || undefined, 30_000);
  t.pass('the watch delivered an event after more than 2 minutes');
});
