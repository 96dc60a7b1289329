// kubectl 1.32 through the view (context wds1-view) works as on the WDS itself, for Deployments,
// ConfigMaps, Namespaces and a custom resource: every change made through the view is read back
// natively from wds1, and what the view returns equals what wds1 returns.
import t from 'tap';
import YAML from 'yaml';
import { kc, kcEnv, kcOk, sedEditor, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const VIEW = 'wds1-view';
const jsonOf = (space: string, args: string[]) => JSON.parse(kcOk(space, [...args, '-o', 'json'])) as Record<string, any>;

t.test('api-resources through the view lists workload kinds and no hidden kind', async (t) => {
  const out = kcOk(VIEW, ['api-resources', '-o', 'name']).split('\n').filter(Boolean);
  for (const want of ['configmaps', 'namespaces', 'deployments.apps', 'secrets', 'services', 'customresourcedefinitions.apiextensions.k8s.io']) {
    t.ok(out.includes(want), `lists ${want}`);
  }
  const hidden = ['events', 'events.events.k8s.io', 'leases.coordination.k8s.io', 'nodes', 'componentstatuses', 'bindings',
    'tokenreviews.authentication.k8s.io', 'subjectaccessreviews.authorization.k8s.io', 'selfsubjectaccessreviews.authorization.k8s.io',
    'localsubjectaccessreviews.authorization.k8s.io', 'certificatesigningrequests.certificates.k8s.io', 'controllerrevisions.apps'];
  for (const h of hidden) t.notOk(out.includes(h), `hides ${h}`);
  t.same(out.filter((r) => /kubestellar\.io$/.test(r)), ['bindings.control.kubestellar.io', 'combinedstatuses.control.kubestellar.io', 'upsyncedobjects.view.kubestellar.io'],
    'of kubestellar-view\'s groups only the virtual Bindings and CombinedStatuses, as KubeStellar\'s tools read them, and the upsynced objects (no BindingPolicies, no denatured CRs)');
  t.ok(kcOk('wds1', ['api-resources', '-o', 'name']).split('\n').includes('events'), 'wds1 itself has events');
  const ev = kc(VIEW, ['get', 'events', '-A']);
  t.not(ev.status, 0, 'kubectl get events through the view fails');
  t.match(ev.stderr, /doesn't have a resource type "events"/);
});

t.test('explain deployment.spec through the view', async (t) => {
  const out = kcOk(VIEW, ['explain', 'deployment.spec']);
  t.match(out, /KIND:\s+Deployment/);
  t.match(out, /replicas\s+<integer>/);
});

t.test('Deployment: apply, diff, apply again, server-side apply, patch x3, edit, label, get, delete', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'vk-deploy');
  const manifest = (replicas: number) => YAML.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
  });
  const replicas = () => jsonOf('wds1', ['-n', ns, 'get', 'deployment', 'web']).spec.replicas;
  t.match(kcOk(VIEW, ['apply', '-f', '-'], manifest(2)), /deployment.apps\/web created/);
  t.equal(replicas(), 2, 'created natively in wds1');
  const diff = kc(VIEW, ['diff', '-f', '-'], manifest(3));
  t.equal(diff.status, 1, 'diff reports a difference');
  t.match(diff.stdout, /-\s+replicas: 2\n\+\s+replicas: 3/);
  t.match(kcOk(VIEW, ['apply', '-f', '-'], manifest(3)), /configured/);
  t.equal(replicas(), 3, 'client-side apply (strategic merge patch) landed');
  t.match(kcOk(VIEW, ['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest(4)), /serverside-applied/);
  t.equal(replicas(), 4, 'server-side apply landed');
  const conflict = kc(VIEW, ['apply', '--server-side', '--field-manager', 'other', '-f', '-'], manifest(5));
  t.not(conflict.status, 0, 'a second field manager conflicts');
  t.match(conflict.stderr, /conflict with "kubectl"/);
  kcOk(VIEW, ['-n', ns, 'patch', 'deployment', 'web', '--type', 'strategic', '-p', '{"spec":{"replicas":1}}']);
  t.equal(replicas(), 1, 'strategic patch');
  kcOk(VIEW, ['-n', ns, 'patch', 'deployment', 'web', '--type', 'merge', '-p', '{"spec":{"replicas":6}}']);
  t.equal(replicas(), 6, 'merge patch');
  kcOk(VIEW, ['-n', ns, 'patch', 'deployment', 'web', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/replicas","value":7}]']);
  t.equal(replicas(), 7, 'json patch');
  const edited = kcEnv(VIEW, ['-n', ns, 'edit', 'deployment', 'web'], { KUBE_EDITOR: sedEditor(t, 's/^  replicas: 7$/  replicas: 8/') });
  t.equal(edited.status, 0, `edit succeeds ${edited.stderr}`);
  t.equal(replicas(), 8, 'edit landed');
  kcOk(VIEW, ['-n', ns, 'label', 'deployment', 'web', 'tier=frontend']);
  t.equal(jsonOf('wds1', ['-n', ns, 'get', 'deployment', 'web']).metadata.labels.tier, 'frontend', 'label landed');
  const viaView = jsonOf(VIEW, ['-n', ns, 'get', 'deployment', 'web']);
  const direct = jsonOf('wds1', ['-n', ns, 'get', 'deployment', 'web']);
  t.same(viaView, direct, 'get -o json through the view equals wds1');
  t.equal(YAML.parse(kcOk(VIEW, ['-n', ns, 'get', 'deployment', 'web', '-o', 'yaml'])).metadata.uid, direct.metadata.uid, 'get -o yaml');
  t.match(kcOk(VIEW, ['-n', ns, 'get', 'deployments']), /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s/, 'table output');
  t.match(kcOk(VIEW, ['-n', ns, 'delete', 'deployment', 'web']), /deleted/);
  t.equal(kc('wds1', ['-n', ns, 'get', 'deployment', 'web']).status, 1, 'gone from wds1');
});

t.test('ConfigMap: apply twice, server-side apply, patch, edit, delete', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'vk-cm');
  const manifest = (v: string) => YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: ns }, data: { key: v } });
  const data = () => jsonOf('wds1', ['-n', ns, 'get', 'configmap', 'cfg']).data;
  kcOk(VIEW, ['apply', '-f', '-'], manifest('one'));
  t.same(data(), { key: 'one' });
  const diff = kc(VIEW, ['diff', '-f', '-'], manifest('two'));
  t.equal(diff.status, 1, 'diff reports a difference');
  t.match(diff.stdout, /-\s+key: one\n\+\s+key: two/);
  kcOk(VIEW, ['apply', '-f', '-'], manifest('two'));
  t.same(data(), { key: 'two' });
  kcOk(VIEW, ['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest('three'));
  t.same(data(), { key: 'three' });
  kcOk(VIEW, ['-n', ns, 'patch', 'configmap', 'cfg', '-p', '{"data":{"extra":"x"}}']);
  t.same(data(), { key: 'three', extra: 'x' });
  const edited = kcEnv(VIEW, ['-n', ns, 'edit', 'configmap', 'cfg'], { KUBE_EDITOR: sedEditor(t, 's/^  key: three$/  key: four/') });
  t.equal(edited.status, 0, `edit succeeds ${edited.stderr}`);
  t.same(data(), { key: 'four', extra: 'x' });
  kcOk(VIEW, ['-n', ns, 'delete', 'configmap', 'cfg']);
  t.equal(kc('wds1', ['-n', ns, 'get', 'configmap', 'cfg']).status, 1);
});

t.test('Namespace: create, label, get, delete through the view', async (t) => {
  const ns = uniqueName('vk-ns');
  t.teardown(() => { kc('wds1', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); });
  kcOk(VIEW, ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  t.equal(jsonOf('wds1', ['get', 'namespace', ns]).status.phase, 'Active');
  const diff = kc(VIEW, ['diff', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { team: 'red' } } }));
  t.equal(diff.status, 1, 'diff reports a difference');
  t.match(diff.stdout, /\+\s+team: red/);
  kcOk(VIEW, ['label', 'namespace', ns, 'team=blue']);
  t.equal(jsonOf('wds1', ['get', 'namespace', ns]).metadata.labels.team, 'blue');
  t.same(jsonOf(VIEW, ['get', 'namespace', ns]).metadata, jsonOf('wds1', ['get', 'namespace', ns]).metadata);
  kcOk(VIEW, ['delete', 'namespace', ns, '--wait=false']);
  const gone = await waitUntil(`namespace ${ns} gone`, () => {
    const r = kc('wds1', ['get', 'namespace', ns]);
    return r.status !== 0 ? r : undefined;
  }, 90_000);
  t.match(gone.stderr, /NotFound/, 'deleted through the view: gone from wds1');
});

t.test('a custom resource: CRD applied through the view, then its objects', async (t) => {
  const group = `${uniqueName('g')}.test.kubestellar.io`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `widgets.${group}` },
    spec: {
      group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
    },
  };
  t.teardown(() => { kc('wds1', ['delete', 'crd', `widgets.${group}`, '--ignore-not-found', '--wait=false']); });
  kcOk(VIEW, ['apply', '-f', '-'], JSON.stringify(crd));
  await waitUntil('CRD established', () => kcOk('wds1', ['get', 'crd', `widgets.${group}`, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']) === 'True' || undefined);
  const ns = testNamespace(t, ['wds1'], 'vk-cr');
  const widget = (size: number) => JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { size } });
  const size = () => jsonOf('wds1', ['-n', ns, 'get', `widgets.${group}`, 'w']).spec.size;
  await waitUntil('kubectl sees the new kind through the view', () => kc(VIEW, ['apply', '-f', '-'], widget(1)).status === 0 || undefined, 60_000);
  t.equal(size(), 1, 'created');
  kcOk(VIEW, ['apply', '-f', '-'], widget(2));
  t.equal(size(), 2, 'client-side apply (merge patch for custom resources)');
  kcOk(VIEW, ['apply', '--server-side', '--force-conflicts', '-f', '-'], widget(3));
  t.equal(size(), 3, 'server-side apply');
  kcOk(VIEW, ['-n', ns, 'patch', `widgets.${group}`, 'w', '--type', 'merge', '-p', '{"spec":{"size":4}}']);
  t.equal(size(), 4, 'merge patch');
  kcOk(VIEW, ['-n', ns, 'patch', `widgets.${group}`, 'w', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/size","value":5}]']);
  t.equal(size(), 5, 'json patch');
  const edited = kcEnv(VIEW, ['-n', ns, 'edit', `widgets.${group}`, 'w'], { KUBE_EDITOR: sedEditor(t, 's/^  size: 5$/  size: 6/') });
  t.equal(edited.status, 0, `edit succeeds ${edited.stderr}`);
  t.equal(size(), 6, 'edit');
  const diff = kc(VIEW, ['diff', '-f', '-'], widget(7));
  t.equal(diff.status, 1);
  t.match(diff.stdout, /\+\s+size: 7/);
  t.same(jsonOf(VIEW, ['-n', ns, 'get', `widgets.${group}`, 'w']), jsonOf('wds1', ['-n', ns, 'get', `widgets.${group}`, 'w']));
  kcOk(VIEW, ['-n', ns, 'delete', `widgets.${group}`, 'w']);
  t.equal(kc('wds1', ['-n', ns, 'get', `widgets.${group}`, 'w']).status, 1, 'deleted');
});

t.test('exec and port-forward upgrades pass through the view to the WDS', async (t) => {
  // The WDS has no nodes, so no pod runs: the WDS's own refusal must come back unchanged, which
  // shows the upgrade request (WebSocket, then SPDY fallback) reached it as this user.
  const ns = testNamespace(t, ['wds1'], 'vk-exec');
  kcOk('wds1', ['-n', ns, 'create', 'serviceaccount', 'default']);
  kcOk('wds1', ['-n', ns, 'run', 'p', '--image=nginx:1.27']);
  const direct = kc('wds1', ['-n', ns, 'exec', 'p', '--', 'ls']);
  const viaView = kc(VIEW, ['-n', ns, 'exec', 'p', '--', 'ls']);
  t.not(viaView.status, 0);
  t.match(viaView.stderr, /pod p does not have a host assigned/);
  t.equal(viaView.stderr, direct.stderr, 'exec: same answer as the WDS gives directly');
  const attach = kc(VIEW, ['-n', ns, 'attach', 'p']);
  t.match(attach.stderr, /Pending|does not have a host assigned|not running/, 'attach reaches the WDS');
});
