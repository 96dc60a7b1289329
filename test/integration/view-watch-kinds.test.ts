// kubectl get -w through the view on Deployments, Namespaces and a custom resource: each sees the
// object created in wds1, with the native apiVersion in the event.
import { spawn } from 'node:child_process';
import t, { type Test } from 'tap';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

function watchThroughView(t: Test, args: string[]) {
  const child = spawn('kubectl', ['--context', 'wds1-view', ...args, '-w', '-o', 'jsonpath={.apiVersion} {.kind} {.metadata.name}{"\\n"}'],
    { env: { ...process.env, KUBECONFIG: kubeconfig } });
  t.teardown(() => { child.kill(); });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  return { lines: () => out.split('\n').filter(Boolean) };
}

t.test('Deployments', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'ww-deploy');
  const w = watchThroughView(t, ['-n', ns, 'get', 'deployments']);
  await new Promise((r) => setTimeout(r, 1500));
  kcOk('wds1', ['-n', ns, 'create', 'deployment', 'web', '--image=nginx:1.27']);
  await waitUntil('the Deployment event', () => w.lines().includes('apps/v1 Deployment web') || undefined, 30_000);
  t.pass('watched');
});

t.test('Namespaces', async (t) => {
  const w = watchThroughView(t, ['get', 'namespaces']);
  await new Promise((r) => setTimeout(r, 1500));
  const ns = testNamespace(t, ['wds1'], 'ww-ns');
  await waitUntil('the Namespace event', () => w.lines().includes(`v1 Namespace ${ns}`) || undefined, 30_000);
  t.pass('watched');
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
  await new Promise((r) => setTimeout(r, 1500));
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1', namespace: ns } }));
  await waitUntil('the Gadget event', () => w.lines().includes(`${group}/v1 Gadget g1`) || undefined, 30_000);
  t.pass('watched');
});
