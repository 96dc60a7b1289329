// The virtual Bindings as KubeStellar's clients read them: inside the view (context wds1-view) as
// bindings.control.kubestellar.io/v1alpha1 — per-object modulation, the ownerReference to the
// BindingPolicy, short name bdg, a table, `kubectl explain` — and still as
// bindings.view.kubestellar.io on the WDS for direct clients. Real kubectl through the aggregator.
import t from 'tap';
import YAML from 'yaml';
import { managedCluster } from '../fixtures/inventory.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const VIEW = 'wds1-view';
type Obj = Record<string, any>;

t.test('a policy\'s Binding inside the view is KubeStellar\'s Binding', async (t) => {
  const run = uniqueName('bk');
  const ns = testNamespace(t, ['wds1'], 'bk');
  const cluster = `${run}-c`;
  managedCluster(t, cluster, { group: run });
  const role = `${run}:reader`;
  kcOk(VIEW, ['-n', ns, 'create', 'configmap', 'once', '--from-literal=a=1']);
  kcOk(VIEW, ['-n', ns, 'create', 'configmap', 'watched', '--from-literal=a=1']);
  kcOk(VIEW, ['create', 'clusterrole', role, '--verb=get', '--resource=pods']);
  t.teardown(() => { kc(VIEW, ['delete', 'clusterrole', role, '--ignore-not-found']); });
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: run },
    spec: {
      clusterSelectors: [{ matchLabels: { group: run } }],
      downsync: [
        { namespaces: [ns], objectNames: ['once'], createOnly: true },
        { namespaces: [ns], objectNames: ['watched'], statusCollectors: ['replicas-ready'], wantSingletonReportedState: true },
        { apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'], objectNames: [role] },
      ],
    },
  }));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', run, '--ignore-not-found']); });
  const policy = JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', run, '-o', 'json'])) as Obj;

  const binding = await waitUntil('the Binding to list the three objects', () => {
    const r = kc(VIEW, ['get', 'bindings.control.kubestellar.io', run, '-o', 'json']);
    if (r.status !== 0) return undefined;
    const b = JSON.parse(r.stdout) as Obj;
    return (b.spec.workload.namespaceScope?.length ?? 0) + (b.spec.workload.clusterScope?.length ?? 0) === 3 ? b : undefined;
  }, 60_000);
  t.equal(binding.apiVersion, 'control.kubestellar.io/v1alpha1');
  t.equal(binding.kind, 'Binding');
  const strip = (o: Obj) => { const { resourceVersion, ...rest } = o; t.match(resourceVersion, /^\d+$/, `${o.name}: its resourceVersion`); return rest; };
  t.strictSame(binding.spec.workload.namespaceScope.map(strip), [
    { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: 'once', createOnly: true },
    { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: 'watched', statusCollectors: ['replicas-ready'], wantSingletonReportedState: true },
  ], 'each object with the modulation its clause asks, and nothing that is not set');
  t.strictSame(binding.spec.workload.clusterScope.map(strip), [{ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', name: role }]);
  t.strictSame(binding.spec.destinations, [{ clusterId: cluster }]);
  t.strictSame(binding.metadata.ownerReferences, [{
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', name: run, uid: policy.metadata.uid, controller: true, blockOwnerDeletion: false,
  }], 'owned by its BindingPolicy, as KubeStellar\'s binding controller sets it');
  t.not(binding.metadata.uid, policy.metadata.uid, 'a uid of its own');
  const settled = await waitUntil('observedGeneration to follow the policy', () => {
    const b = JSON.parse(kcOk(VIEW, ['get', 'bindings.control.kubestellar.io', run, '-o', 'json'])) as Obj;
    const p = JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', run, '-o', 'json'])) as Obj;
    return b.status.observedGeneration === p.metadata.generation ? { b, p } : undefined;
  }, 60_000);
  t.same(settled.b.status.errors, settled.p.status.errors, 'status.errors: the policy\'s');

  t.equal(kcOk(VIEW, ['get', 'bdg', run, '-o', 'name']).trim(), `binding.control.kubestellar.io/${run}`, 'short name bdg');
  t.equal(kcOk(VIEW, ['get', 'binding', run, '-o', 'name']).trim(), `binding.control.kubestellar.io/${run}`, '`bindings` resolves to the one resource, no ambiguity');
  const table = kcOk(VIEW, ['get', 'bindings']).split('\n');
  t.same(table[0]!.trim().split(/\s+/), ['NAME', 'OBJECTS', 'CLUSTERS', 'READY', 'AVAILABLE', 'AGE'], 'kubectl get bindings prints the table');
  // The cluster has no agent: nothing is available there, so the policy is not Ready.
  t.match(table.find((l) => l.startsWith(`${run} `)) ?? '', new RegExp(`^${run}\\s+3\\s+${cluster}\\s+False\\s+${cluster} 0/3\\s+\\S+$`));
  t.match(kcOk(VIEW, ['explain', 'bindings.spec.workload.namespaceScope']), /createOnly[\s\S]*wantSingletonReportedState/, 'kubectl explain from the view\'s OpenAPI');
  t.match(kcOk(VIEW, ['api-resources', '--api-group=control.kubestellar.io', '--no-headers']).trim(),
    /^bindings\s+bdg\s+control\.kubestellar\.io\/v1alpha1\s+false\s+Binding\ncombinedstatuses\s+cs\s+control\.kubestellar\.io\/v1alpha1\s+true\s+CombinedStatus$/,
    'the group holds the Bindings and CombinedStatuses only: the WDS\'s policies stay hidden in the view');

  const del = kc(VIEW, ['delete', 'binding', run]);
  t.not(del.status, 0);
  t.match(del.stderr, /MethodNotAllowed|does not allow this method/, 'a write is 405, as for a verb the resource does not have');

  const direct = JSON.parse(kcOk('wds1', ['get', 'bindings.view.kubestellar.io', run, '-o', 'json'])) as Obj;
  t.equal(direct.apiVersion, 'view.kubestellar.io/v1alpha1', 'bindings.view.kubestellar.io still serves it on the WDS');
  t.same(direct.spec.workload.namespaceScope.map((o: Obj) => o.name), ['once', 'watched']);
  t.same(direct.metadata.ownerReferences, binding.metadata.ownerReferences);
  // kube-apiserver's aggregated discovery of the group refreshes from this server on its own
  // schedule: just after a (re)start it may still list the previous server's resources.
  const viaShortName = await waitUntil('bdg in the WDS\'s aggregated discovery', () => {
    const r = kc('wds1', ['get', 'bdg', run, '-o', 'name']);
    return r.status === 0 ? r.stdout.trim() : undefined;
  }, 240_000);
  t.equal(viaShortName, `binding.view.kubestellar.io/${run}`, 'bdg on the WDS: the view group\'s');
});
