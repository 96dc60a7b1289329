// Real client libraries through the view, with the kubeconfig `ksview kubeconfig --view` writes:
// a client-go program (typed clientset) and @kubernetes/client-node list and watch ConfigMaps.
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import t, { type Test } from 'tap';
import { buildClientGo, runClientGo } from '../fixtures/clientgo.js';
import { ksview } from '../fixtures/ksview.js';
import { kcOk, testNamespace } from '../fixtures/spaces.js';
import { testSpacesOptions } from '../fixtures/spaces-options.js';

function viewKubeconfig(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-kc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'kubeconfig');
  const r = ksview(['kubeconfig', '--view', '--dir', testSpacesOptions().dir, '-o', file]);
  if (r.status !== 0) throw new Error(`ksview kubeconfig --view: ${r.stderr}`);
  return file;
}

/** Lines of a child's stdout, one promise per line, in order. */
function lines(stream: NodeJS.ReadableStream) {
  const rl = readline.createInterface({ input: stream });
  const queue: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  rl.on('line', (l) => (waiters.length ? waiters.shift()!(l) : queue.push(l)));
  return (timeoutMs = 30_000) => new Promise<string>((resolve, reject) => {
    if (queue.length) return resolve(queue.shift()!);
    const timer = setTimeout(() => reject(new Error('no line in time')), timeoutMs);
    waiters.push((l) => { clearTimeout(timer); resolve(l); });
  });
}

t.test('the view kubeconfig points at the view root of wds1', async (t) => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(viewKubeconfig(t));
  t.equal(kc.getCurrentContext(), 'wds1-view');
  t.match(kc.getCurrentCluster()?.server ?? '', /^https:\/\/127\.0\.0\.1:\d+\/apis\/view\.kubestellar\.io\/v1alpha1\/spaces\/wds1\/proxy$/);
});

t.test('client-go lists and watches ConfigMaps through the view', async (t) => {
  const file = viewKubeconfig(t);
  const ns = testNamespace(t, ['wds1'], 'cgo');
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'alpha']);
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'beta']);
  const bin = await buildClientGo();

  const list = runClientGo(bin, ['--kubeconfig', file, '--context', 'wds1-view', '--namespace', ns, 'list']);
  const listLine = await lines(list.stdout!)(60_000);
  const listed = JSON.parse(listLine) as { names: string[]; resourceVersion: string };
  t.same(listed.names, ['alpha', 'beta'], 'client-go list through the view');
  t.match(listed.resourceVersion, /^\d+$/);

  const watch = runClientGo(bin, ['--kubeconfig', file, '--context', 'wds1-view', '--namespace', ns, 'watch', '--wait-for', 'gamma', '--timeout', '60s']);
  t.teardown(() => { watch.kill(); });
  const next = lines(watch.stdout!);
  t.same(JSON.parse(await next()), { ready: true }, 'watch established');
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'gamma']);
  const seen: string[] = [];
  for (;;) {
    const ev = JSON.parse(await next()) as { type: string; name: string };
    seen.push(`${ev.type} ${ev.name}`);
    if (ev.name === 'gamma') break;
  }
  t.ok(seen.includes('ADDED gamma'), `client-go watch saw gamma (${seen.join(', ')})`);
  const code = await new Promise((r) => watch.on('close', r));
  t.equal(code, 0, 'client-go watch exited cleanly');
});

t.test('client-node lists and watches ConfigMaps through the view', async (t) => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(viewKubeconfig(t));
  const ns = testNamespace(t, ['wds1'], 'cnode');
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'one']);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const list = await core.listNamespacedConfigMap({ namespace: ns });
  t.same(list.items.map((i) => i.metadata?.name), ['one'], 'client-node list');

  const events: Array<{ type: string; name?: string; apiVersion?: string }> = [];
  let resolveSeen: () => void;
  const seen = new Promise<void>((r) => { resolveSeen = r; });
  const req = await new k8s.Watch(kc).watch(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: list.metadata?.resourceVersion },
    (type, obj: k8s.V1ConfigMap) => {
      events.push({ type, name: obj.metadata?.name, apiVersion: obj.apiVersion });
      if (obj.metadata?.name === 'two') resolveSeen();
    }, () => {});
  t.teardown(() => req.abort());
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'two']);
  await Promise.race([seen, new Promise((_, reject) => setTimeout(() => reject(new Error(`no event for two: ${JSON.stringify(events)}`)), 30_000))]);
  t.same(events.find((e) => e.name === 'two'), { type: 'ADDED', name: 'two', apiVersion: 'v1' }, 'client-node watch event, native apiVersion');
});
