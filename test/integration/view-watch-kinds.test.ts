// kubectl get -w through the view on Deployments, Namespaces and a custom resource: each sees the
// object created in wds1, with the native apiVersion in the event. The object is created only once
// the watch has printed something, so its line comes from the watch, not from the list before it.
import { spawn } from 'node:child_process';
import t, { type Test } from 'tap';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

function watchThroughView(t: Test, args: string[]) {
  const child = spawn('kubectl', ['--context', 'wds1-view', ...args, '-w', '-o', 'jsonpath={.apiVersion} {.kind} {.metadata.name}{"\\n"}'],
    { env: { ...process.env, KUBECONFIG: kubeconfig } });
  t.teardown(() => { child.kill(); });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  const lines = () => out.split('\n').filter(Boolean);
  return { lines, line: (suffix: string) => lines().find((l) => l.endsWith(suffix)) };
}

t.test('Deployments', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'ww-deploy');
  const w = watchThroughView(t, ['-n', ns, 'get', 'deployments']);
  kcOk('wds1', ['-n', ns, 'create', 'deployment', 'first', '--image=nginx:1.27']);
  await waitUntil('the watch to print the first Deployment', () => w.line(' first'), 30_000);
  kcOk('wds1', ['-n', ns, 'create', 'deployment', 'web', '--image=nginx:1.27']);
  t.equal(await waitUntil('the Deployment event', () => w.line(' web'), 30_000), 'apps/v1 Deployment web', 'the event, with the native apiVersion');
});

t.test('Namespaces', async (t) => {
  const w = watchThroughView(t, ['get', 'namespaces']);
  await waitUntil('the watch to print the Namespace default', () => w.line(' default'), 30_000);
  const ns = testNamespace(t, ['wds1'], 'ww-ns');
  t.equal(await waitUntil('the Namespace event', () => w.line(` ${ns}`), 30_000), `v1 Namespace ${ns}`, 'the event, with the native apiVersion');
});

t.test('a custom resource', async (t) => {
  const group = `${uniqueName('w')}.test.kubestellar.io`;
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `gadgets.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  }));
  t.teardown(() => { kc('wds1', ['delete', 'crd', `gadgets.${group}`, '--wait=false']); });
  const ns = testNamespace(t, ['wds1'], 'ww-cr');
  await waitUntil('the view serves the new kind', () => kc('wds1-view', ['-n', ns, 'get', `gadgets.${group}`]).status === 0 || undefined, 60_000);
  const w = watchThroughView(t, ['-n', ns, 'get', `gadgets.${group}`]);
  const gadget = (name: string) => JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name, namespace: ns } });
  kcOk('wds1', ['apply', '-f', '-'], gadget('g0'));
  await waitUntil('the watch to print the first Gadget', () => w.line(' g0'), 30_000);
  kcOk('wds1', ['apply', '-f', '-'], gadget('g1'));
  t.equal(await waitUntil('the Gadget event', () => w.line(' g1'), 30_000), `${group}/v1 Gadget g1`, 'the event, with the native apiVersion');
});
