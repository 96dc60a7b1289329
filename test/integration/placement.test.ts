// Placement: BindingPolicies in wds1 resolved into ManifestWorks in its1 by the controllers of
// `ksview serve --its-kubeconfig` (the test spaces' server runs them). Inventory is data here:
// the tests create ManagedClusters and their namespaces in its1 themselves, with names of their
// own so tests do not see each other's clusters.
import { spawn } from 'node:child_process';
import t from 'tap';
import YAML from 'yaml';
import { managedCluster } from '../fixtures/inventory.js';
import { bindingPolicy, cmId, manifestOf, VIEW, work, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

t.test('a BindingPolicy sends the selected objects, in native form, to the selected clusters, and takes them back', async (t) => {
  const run = uniqueName('pl');
  const ns = testNamespace(t, ['wds1'], 'demo');
  const [a, b] = [`${run}-a`, `${run}-b`];
  managedCluster(t, a, { 'location-group': `edge-${run}` });
  managedCluster(t, b, { 'location-group': `edge-${run}` });
  const role = `${run}:reader`;
  const objects: Obj[] = [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns, labels: { app: 'nginx' } },
      spec: { replicas: 2, selector: { matchLabels: { app: 'nginx' } }, template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns, labels: { app: 'nginx' } }, spec: { selector: { app: 'nginx' }, ports: [{ port: 80 }] } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns, labels: { app: 'nginx' } }, data: { a: '1' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unselected', namespace: ns }, data: { a: '1' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role, labels: { app: 'nginx' } }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
  ];
  kcOk(VIEW, ['apply', '-f', '-'], objects.map((o) => YAML.stringify(o)).join('---\n'));
  t.teardown(() => { kc(VIEW, ['delete', 'clusterrole', role, '--ignore-not-found']); });
  const policy = {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: run },
    spec: {
      clusterSelectors: [{ matchLabels: { 'location-group': `edge-${run}` } }],
      downsync: [
        { objectSelectors: [{ matchLabels: { app: 'nginx' } }], namespaces: [ns] },
        { apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'], objectNames: [role] },
      ],
    },
  };
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify(policy));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', run, '--ignore-not-found']); });

  const ids = {
    deployment: { group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name: 'web' },
    service: { group: '', version: 'v1', resource: 'services', namespace: ns, name: 'web' },
    configmap: { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: 'settings' },
    clusterrole: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespace: '', name: role },
    namespace: { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: ns },
  };
  for (const cluster of [a, b]) {
    for (const [what, id] of Object.entries(ids)) {
      const w = await waitUntil(`the ManifestWork of the ${what} in ${cluster}`, () => work(cluster, id), 60_000);
      const manifest = w.spec.workload.manifests[0] as Obj;
      t.equal(manifest.metadata.name, id.name, `${cluster}: ${what} ${id.name}`);
      t.notOk(manifest.metadata.uid ?? manifest.metadata.resourceVersion ?? manifest.metadata.managedFields ?? manifest.status, `${cluster}: ${what} without server-set fields`);
      t.equal(w.metadata.labels['view.kubestellar.io/wds'], 'wds1');
      t.ok(Object.keys(w.metadata.labels).includes(`bindingpolicy.view.kubestellar.io/${run}`), 'labelled with the policy');
    }
  }
  const cr = work(a, ids.clusterrole)!.spec.workload.manifests[0] as Obj;
  t.equal(cr.apiVersion, 'rbac.authorization.k8s.io/v1', 'the denatured ClusterRole travels in native form');
  t.equal(cr.metadata.name, role, 'under its native name');
  t.same(cr.rules, objects[4]!.rules);
  const svc = work(a, ids.service)!.spec.workload.manifests[0] as Obj;
  t.notOk(svc.spec.clusterIP, 'a Service goes without its clusterIP');
  t.equal(work(a, { ...ids.configmap, name: 'unselected' }), undefined, 'an object no clause selects is not sent');
  t.equal(work(a, { ...ids.configmap, name: 'kube-root-ca.crt' }), undefined, 'nor the system ConfigMap');

  // Someone edits a work in the ITS by hand: the controller writes it back as the WDS has it.
  const cmWork = work(a, ids.configmap)!;
  kcOk('its1', ['-n', a, 'patch', 'manifestwork', cmWork.metadata.name, '--type', 'json',
    '-p', JSON.stringify([{ op: 'replace', path: '/spec/workload/manifests/0/data/a', value: 'changed by hand' }])]);
  const restored = await waitUntil('the hand-edited work to be written back', () => {
    const w = work(a, ids.configmap);
    return w && w.metadata.generation > cmWork.metadata.generation && manifestOf(w)?.data?.a === '1' ? w : undefined;
  }, 30_000);
  t.same(manifestOf(restored)!.data, { a: '1' }, 'a work edited in the ITS is written back');

  // The Binding of the policy: what it selects and where it sends it.
  const binding = await waitUntil('the Binding to list every object', () => {
    const bd = JSON.parse(kcOk('wds1', ['get', 'bindings.view.kubestellar.io', run, '-o', 'json'])) as Obj;
    return bd.spec.workload.namespaceScope.length === 3 && bd.spec.workload.clusterScope.length === 1 ? bd : undefined;
  }, 120_000); // kube-apiserver refreshes an aggregated server's discovery about once a minute after it restarts
  t.same(binding.spec.destinations, [{ clusterId: a }, { clusterId: b }], 'destinations: both clusters');
  t.same(binding.spec.workload.clusterScope.map((o: Obj) => [o.group, o.resource, o.name]), [['rbac.authorization.k8s.io', 'clusterroles', role]]);
  t.same(binding.spec.workload.namespaceScope.map((o: Obj) => `${o.resource}/${o.name}`).sort(), ['configmaps/settings', 'deployments/web', 'services/web']);
  t.ok(binding.spec.workload.namespaceScope.every((o: Obj) => o.namespace === ns && o.resourceVersion), 'with namespace and resourceVersion');
  const header = kcOk('wds1', ['get', 'bindings.view.kubestellar.io', run]).split('\n')[0]!.trim().split(/\s+/);
  t.same(header, ['NAME', 'OBJECTS', 'CLUSTERS', 'READY', 'AVAILABLE', 'AGE'], 'kubectl get bindings prints a table');
  const watcher = spawn('kubectl', ['--context', 'wds1', 'get', 'bindings.view.kubestellar.io', run, '-w', '-o', 'json', '--output-watch-events'], { env: { ...process.env, KUBECONFIG: kubeconfig } });
  t.teardown(() => { watcher.kill(); });
  let watched = '';
  watcher.stdout.setEncoding('utf8').on('data', (c: string) => { watched += c; });
  await waitUntil('the watch to start', () => watched.includes('"ADDED"'), 30_000);

  kcOk('its1', ['label', 'managedcluster', b, 'location-group-']);
  const lost = await waitUntil('a MODIFIED Binding with one destination', () => watched.split(/\n(?=\{)/).filter((d) => d.trim()).map((d) => JSON.parse(d) as Obj)
    .find((e) => e.type === 'MODIFIED' && e.object.spec.destinations.length === 1), 30_000);
  t.same(lost.object.spec.destinations, [{ clusterId: a }], `the watch saw the Binding lose ${b}, keep ${a}`);
  await waitUntil(`the works in ${b} to go after it lost its label`, () => Object.values(ids).every((id) => work(b, id) === undefined), 60_000);
  t.ok(work(a, ids.deployment), `${a} keeps its works`);

  kcOk(VIEW, ['-n', ns, 'delete', 'configmap', 'settings']);
  await waitUntil('the ConfigMap\'s work to go', () => work(a, ids.configmap) === undefined, 60_000);
  t.ok(work(a, ids.service), 'the others stay');

  const finalizers = await waitUntil('the cleanup finalizer', () => {
    const f = JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', run, '-o', 'json'])).metadata.finalizers as string[] | undefined;
    return f?.includes('control.kubestellar.io/placement-cleanup') ? f : undefined;
  }, 30_000);
  t.ok(finalizers, 'the policy carries the cleanup finalizer');
  kcOk('wds1', ['delete', 'bindingpolicy', run, '--wait=false']);
  t.ok(await waitUntil('every work of the policy to go', () => Object.values(ids).every((id) => work(a, id) === undefined), 60_000),
    'deleting the policy took every work back');
  const gone = await waitUntil('the policy to be gone once its works are', () => {
    const r = kc('wds1', ['get', 'bindingpolicy', run]);
    return r.status !== 0 ? r : undefined;
  }, 60_000);
  t.match(gone.stderr, /NotFound/, 'and then the finalizer let the policy go');
});

t.test('a BindingPolicy with a bad selector operator is refused', async (t) => {
  const name = uniqueName('bad-policy');
  const r = kc('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name },
    spec: { clusterSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Equals', values: ['b'] }] }], downsync: [{ resources: ['configmaps'] }] } }));
  t.not(r.status, 0);
  t.match(r.stderr, /Unsupported value: "Equals"/);
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', name, '--ignore-not-found']); });
});

t.test('modulations and selectors: singleton, createOnly, overlapping policies, objectNames, namespaceSelectors', async (t) => {
  const run = uniqueName('mod');
  const ns = testNamespace(t, ['wds1'], 'mod');
  kcOk('wds1', ['label', 'namespace', ns, `team=${run}`]);
  const [a, b] = [`${run}-a`, `${run}-b`];
  managedCluster(t, a, { group: run, zone: 'a' });
  managedCluster(t, b, { group: run, zone: 'b' });
  for (const n of ['single', 'create-only', 'both', 'named', 'other']) kcOk(VIEW, ['-n', ns, 'create', 'configmap', n, '--from-literal=x=1']);

  bindingPolicy(t, `${run}-single`, { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ namespaces: [ns], objectNames: ['single'], wantSingletonReportedState: true }] });
  bindingPolicy(t, `${run}-create-only`, { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ namespaces: [ns], objectNames: ['create-only'], createOnly: true }] });
  bindingPolicy(t, `${run}-zone-a`, { clusterSelectors: [{ matchLabels: { zone: 'a', group: run } }], downsync: [{ namespaces: [ns], objectNames: ['both'] }] });
  bindingPolicy(t, `${run}-zone-b`, { clusterSelectors: [{ matchLabels: { zone: 'b', group: run } }], downsync: [{ namespaces: [ns], objectNames: ['both'] }] });
  bindingPolicy(t, `${run}-nssel`, { clusterSelectors: [{ matchLabels: { zone: 'b', group: run } }],
    downsync: [{ namespaceSelectors: [{ matchLabels: { team: run } }], resources: ['configmaps'], objectNames: ['named'] }] });

  await waitUntil('the singleton object in both clusters', () => work(a, cmId(ns, 'single')) && work(b, cmId(ns, 'single')), 60_000);
  t.pass(`singleton narrows nothing: ${a} and ${b} both receive it`);
  const singleErrors = await waitUntil('the singleton policy to report two clusters', () => {
    const errs = (JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', `${run}-single`, '-o', 'json'])) as { status?: { errors?: string[] } }).status?.errors ?? [];
    return errs.some((e) => e.includes('2 clusters qualify')) ? errs : undefined;
  }, 60_000);
  t.match(singleErrors, [new RegExp(`configmaps ${ns}/single: wantSingletonReportedState, but 2 clusters qualify`)]);
  const createOnly = await waitUntil('the createOnly work', () => work(b, cmId(ns, 'create-only')), 60_000);
  t.same(createOnly.spec.manifestConfigs[0].updateStrategy, { type: 'CreateOnly' }, 'createOnly → updateStrategy CreateOnly');
  const both = await waitUntil('the overlapping policies\' works', () => { const wa = work(a, cmId(ns, 'both')); const wb = work(b, cmId(ns, 'both')); return wa && wb ? [wa, wb] : undefined; }, 60_000);
  t.ok(Object.keys(both[0]!.metadata.labels).includes(`bindingpolicy.view.kubestellar.io/${run}-zone-a`), 'each work names the policy that selected it');
  t.ok(Object.keys(both[1]!.metadata.labels).includes(`bindingpolicy.view.kubestellar.io/${run}-zone-b`));
  await waitUntil('the namespaceSelector work', () => work(b, cmId(ns, 'named')), 60_000);
  t.equal(work(a, cmId(ns, 'named')), undefined, 'namespaceSelectors and objectNames select exactly that object');
  t.equal(work(a, cmId(ns, 'other')) ?? work(b, cmId(ns, 'other')), undefined, 'an object no policy names goes nowhere');

  kc('wds1', ['delete', 'bindingpolicy', `${run}-zone-b`]);
  await waitUntil(`the work in ${b} to go with its only policy`, () => work(b, cmId(ns, 'both')) === undefined, 60_000);
  t.ok(work(a, cmId(ns, 'both')), 'the other policy keeps its work');
});

t.test('CustomTransform and template expansion; a missing template key is reported on the policy', async (t) => {
  const run = uniqueName('tpl');
  const ns = testNamespace(t, ['wds1'], 'tpl');
  const cluster = `${run}-c`;
  managedCluster(t, cluster, { group: run, region: 'eu' });
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'CustomTransform', metadata: { name: run },
    spec: { apiGroup: '', resource: 'configmaps', remove: ['$.data.secretish'] } }));
  t.teardown(() => { kc('wds1', ['delete', 'customtransform', run, '--ignore-not-found']); });
  kcOk(VIEW, ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'where', namespace: ns, annotations: { 'control.kubestellar.io/expand-templates': 'true' } },
    data: { region: 'in {{.region}} on {{.clusterName}}', secretish: 'drop me' } }));
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ namespaces: [ns], resources: ['configmaps'], objectNames: ['where', 'broken'] }] });
  const w = await waitUntil('the expanded work', () => work(cluster, cmId(ns, 'where')), 60_000);
  t.same(manifestOf(w)!.data, { region: `in eu on ${cluster}` }, 'templates expanded with the cluster\'s properties; the CustomTransform removed a field');

  kcOk(VIEW, ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'broken', namespace: ns, annotations: { 'control.kubestellar.io/expand-templates': 'true' } }, data: { x: '{{.nosuchkey}}' } }));
  const errors = await waitUntil('the template error on the policy', () => {
    const p = JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', run, '-o', 'json'])) as Obj;
    return (p.status?.errors as string[] | undefined)?.find((e) => e.includes('nosuchkey'));
  }, 60_000);
  t.match(errors, /map has no entry for key "nosuchkey"/);
  t.equal(work(cluster, cmId(ns, 'broken')), undefined, 'the broken object is not written');
  t.ok(work(cluster, cmId(ns, 'where')), 'the good one stays');
});

t.test('a CRD and its objects created in wds1 after the server started are placed too', async (t) => {
  const run = uniqueName('crd');
  const group = `${run}.example.com`;
  const ns = testNamespace(t, ['wds1'], 'crd');
  const cluster = `${run}-c`;
  managedCluster(t, cluster, { group: run });
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `widgets.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }] } }));
  t.teardown(() => { kc('wds1', ['delete', 'crd', `widgets.${group}`, '--ignore-not-found']); });
  await waitUntil('the CRD to be served', () => kc('wds1', ['get', `widgets.${group}`, '-n', ns]).status === 0, 30_000);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: ns }, spec: { size: 3 } }));
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ apiGroup: group, namespaces: [ns] }] });
  const w = await waitUntil('the Widget\'s work', () => work(cluster, { group, version: 'v1', resource: 'widgets', namespace: ns, name: 'w1' }), 60_000);
  t.same(manifestOf(w), { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: ns }, spec: { size: 3 } }, 'the custom resource, in the form its author wrote');
});
