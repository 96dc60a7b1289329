// A watch through the view is long-running for kube-apiserver, so it is not cut after 60 s.
// kube-apiserver gives every other request a deadline, its --request-timeout (60 s) or the
// request's own ?timeout= when that is shorter, and cuts the request there; a long-running request
// (a watch, or any request to a proxy subresource such as the view's spaces/<wds>/proxy) gets no
// deadline at all. A watch through the view asked to end after 1 ns therefore proves at once what
// a watch kept quiet for more than 60 s proves in minutes; an ordinary request of the same API,
// given the same deadline, shows the deadline is real.
import { spawn } from 'node:child_process';
import t from 'tap';
import { viewRoot } from '../../src/apiserver/groups/view-group.js';
import { kc, kcOk, kubeconfig, testNamespace, waitUntil } from '../fixtures/spaces.js';

interface WatchEvent { type: string; object: { metadata: { name: string } } }

t.test('kube-apiserver puts no deadline on a watch through the view', async (t) => {
  const control = kc('wds1', ['get', '--raw', '/apis/view.kubestellar.io/v1alpha1/spaces?timeout=1ns']);
  t.not(control.status, 0, 'an ordinary request to the view group with timeout=1ns fails');
  t.match(control.stderr, /\(Timeout\)/, 'kube-apiserver cut it at its deadline');

  const ns = testNamespace(t, ['wds1'], 'watch');
  // The request `kubectl get -w` makes through the view (the view kubeconfig's server is the view
  // root), with a deadline of 1 ns; raw, because kubectl sets no ?timeout= of its own on a watch.
  const child = spawn('kubectl', ['--context', 'wds1', 'get', '--raw', `${viewRoot('wds1')}/api/v1/namespaces/${ns}/configmaps?watch=true&timeout=1ns`],
    { env: { ...process.env, KUBECONFIG: kubeconfig } });
  t.teardown(() => { child.kill(); });
  let out = '';
  let exited: number | null | undefined;
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
  child.on('close', (code) => { exited = code; });
  const event = (name: string) => {
    if (exited !== undefined) throw new Error(`the watch ended (exit ${exited}): ${stderr.trim()}`);
    return out.split('\n').slice(0, -1).map((l) => JSON.parse(l) as WatchEvent).find((e) => e.object.metadata.name === name);
  };

  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'early']);
  const early = await waitUntil('the event of the first ConfigMap', () => event('early'), 30_000);
  t.equal(early.type, 'ADDED', 'the watch streams, its 1 ns deadline long past');
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'late']);
  const late = await waitUntil('the event of a later ConfigMap', () => event('late'), 30_000);
  t.equal(late.type, 'ADDED', 'and goes on streaming');
  t.equal(exited, undefined, 'kubectl is still watching');
});
