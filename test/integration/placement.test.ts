// Placement: BindingPolicies in wds1 resolved into ManifestWorks in its1 by the controllers of
// `ksview serve --its-kubeconfig` (the test spaces' server runs them). Inventory is data here:
// the tests create ManagedClusters and their namespaces in its1 themselves, with names of their
// own so tests do not see each other's clusters.
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { manifestWorkName } from '../../src/controllers/wrapping.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const VIEW = 'wds1-view';
type Obj = Record<string, any>;

function managedCluster(t: Test, name: string, labels: Record<string, string>): void {
  kcOk('its1', ['create', 'namespace', name]);
  kcOk('its1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels }, spec: { hubAcceptsClient: true } }));
  t.teardown(() => {
    kc('its1', ['delete', 'managedcluster', name, '--ignore-not-found']);
    kc('its1', ['delete', 'namespace', name, '--wait=false', '--ignore-not-found']);
  });
}

/** The ManifestWork of an object in a cluster's namespace, or undefined. */
function work(cluster: string, id: { group: string; version: string; resource: string; namespace: string; name: string }): Obj | undefined {
  const r = kc('its1', ['-n', cluster, 'get', 'manifestwork', manifestWorkName('wds1', id), '-o', 'json']);
  return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined;
}

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

  kcOk('its1', ['label', 'managedcluster', b, 'location-group-']);
  await waitUntil(`the works in ${b} to go after it lost its label`, () => Object.values(ids).every((id) => work(b, id) === undefined), 60_000);
  t.ok(work(a, ids.deployment), `${a} keeps its works`);

  kcOk(VIEW, ['-n', ns, 'delete', 'configmap', 'settings']);
  await waitUntil('the ConfigMap\'s work to go', () => work(a, ids.configmap) === undefined, 60_000);
  t.ok(work(a, ids.service), 'the others stay');

  kcOk('wds1', ['delete', 'bindingpolicy', run]);
  await waitUntil('every work of the policy to go', () => Object.values(ids).every((id) => work(a, id) === undefined), 60_000);
  t.pass('deleting the policy took every work back');
});

t.test('a BindingPolicy with a bad selector operator is refused', async (t) => {
  const name = uniqueName('bad-policy');
  const r = kc('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name },
    spec: { clusterSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Equals', values: ['b'] }] }], downsync: [{ resources: ['configmaps'] }] } }));
  t.not(r.status, 0);
  t.match(r.stderr, /Unsupported value: "Equals"/);
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', name, '--ignore-not-found']); });
});
