// The placement reconcile, run on one key over caches the test fills, checked by the requests it
// sends to the WDS and the ITS (test/fixtures/controller-fixture.ts).
import t from 'tap';
import type { BindingPolicy, ManagedCluster, WorkloadObject } from '../../src/controllers/model/api.js';
import { namespaceKey, objectKey, policyKey } from '../../src/controllers/model/keys.js';
import { CLEANUP_FINALIZER } from '../../src/controllers/placement/policy-status.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { manifestWorkName, type ManifestWork } from '../../src/controllers/model/wrapping.js';
import type { Expander } from '../../src/controllers/placement/desired.js';
import type { ExpansionResult } from '../../src/controllers/placement/template-expander.js';
import type { JsonObject } from '../../src/kube/objects.js';
import { controllerFixture, update, type Action, type FixtureInput } from '../fixtures/controller-fixture.js';
import { WRITES_PER_OBJECT } from '../../src/controllers/placement/reconcile.js';
import { RequestLimiter } from '../../src/kube/request-limiter.js';

const CONFIGMAPS: WorkloadResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, native: { group: '', resource: 'configmaps' }, bypassesView: false, hasStatus: false };
const NAMESPACES: WorkloadResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, native: { group: '', resource: 'namespaces' }, bypassesView: false, hasStatus: false };
const CLUSTERROLES: WorkloadResource = {
  group: 'denatured.kubestellar.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false,
  native: { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, bypassesView: false, hasStatus: false,
};

const cluster = (name: string, labels: Record<string, string>): ManagedCluster => ({
  apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels, resourceVersion: '1' },
});
const configMap = (namespace: string, name: string, labels: Record<string, string>, data: Record<string, string> = { a: '1' }): WorkloadObject => ({
  apiVersion: 'v1', kind: 'ConfigMap',
  metadata: { name, namespace, labels, uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{ manager: 'kubectl' }] },
  data,
});
const namespace = (name: string): WorkloadObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: `uid-${name}`, resourceVersion: '3' }, spec: { finalizers: ['kubernetes'] } });
const policy = (name: string, spec: BindingPolicy['spec'], extra: Partial<BindingPolicy['metadata']> = {}, status?: BindingPolicy['status']): BindingPolicy => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
  metadata: { name, uid: `uid-${name}`, generation: 1, resourceVersion: '5', finalizers: [CLEANUP_FINALIZER], ...extra }, spec, ...(status ? { status } : {}),
});

/** A policy sending the app=nginx objects of namespace demo to the clusters labelled location-group=edge. */
const EDGE = policy('edge', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ namespaces: ['demo'], objectSelectors: [{ matchLabels: { app: 'nginx' } }] }] },
  {}, { observedGeneration: 1 });
const CLUSTERS = [cluster('c1', { 'location-group': 'edge' }), cluster('c2', { 'location-group': 'edge' }), cluster('c3', { 'location-group': 'core' })];
const SETTINGS = configMap('demo', 'settings', { app: 'nginx' });
const settingsKey = objectKey(CONFIGMAPS, 'demo', 'settings');
const settingsId = { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'settings' };
const settingsWork = manifestWorkName('wds1', settingsId);
const worksPath = (c: string, name: string) => `/apis/work.open-cluster-management.io/v1/namespaces/${c}/manifestworks/${name}`;

/** The fixture with EDGE, the three clusters, namespace demo and the given ConfigMaps. */
function fixture(o: { leading?: boolean; configMaps?: WorkloadObject[]; policies?: BindingPolicy[]; works?: ManifestWork[]; otherWorks?: ManifestWork[] } = {}) {
  return controllerFixture({
    leading: o.leading, clusters: CLUSTERS, policies: o.policies ?? [EDGE], works: o.works, otherWorks: o.otherWorks,
    workload: [{ resource: CONFIGMAPS, objects: o.configMaps ?? [SETTINGS] }, { resource: NAMESPACES, objects: [namespace('demo')] }],
  });
}

const summary = (as: Action[]) => as.map((a) => `${a.server} ${a.method} ${a.path}`);

t.test('an object with a generation: its works say which (for the returned observedGeneration)', async (t) => {
  const f = fixture({ configMaps: [{ ...SETTINGS, metadata: { ...SETTINGS.metadata, generation: 4 } }] });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const writes = f.writes();
  t.equal(writes.length, 2);
  for (const w of writes) {
    t.same((w.body as ManifestWork).metadata.annotations, { 'view.kubestellar.io/source': 'o||v1|configmaps|demo|settings', 'view.kubestellar.io/source-generation': '4' });
  }
});

t.test('an object a policy selects: one server-side apply of its ManifestWork per selected cluster', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const writes = f.writes();
  t.same(summary(writes), [`its PATCH ${worksPath('c1', settingsWork)}`, `its PATCH ${worksPath('c2', settingsWork)}`], 'c1 and c2 (edge), not c3');
  for (const w of writes) {
    t.equal(w.contentType, 'application/apply-patch+yaml', 'server-side apply');
    t.equal(w.query.get('fieldManager'), 'kubestellar-view-wds1');
    t.equal(w.query.get('force'), 'true');
  }
  t.same(writes[0]!.body, {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: {
      name: settingsWork, namespace: 'c1',
      labels: { 'view.kubestellar.io/wds': 'wds1', 'bindingpolicy.view.kubestellar.io/edge': '' },
      annotations: { 'view.kubestellar.io/source': 'o||v1|configmaps|demo|settings' },
    },
    spec: {
      workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'demo', labels: { app: 'nginx' } }, data: { a: '1' } }] },
      manifestConfigs: [{
        resourceIdentifier: { group: '', resource: 'configmaps', name: 'settings', namespace: 'demo' },
        updateStrategy: { type: 'ServerSideApply', serverSideApply: { fieldManager: 'work-agent-kubestellar-wds1', force: false } },
      }],
    },
  }, 'the object as its author wrote it (no uid, resourceVersion, managedFields...), labelled and annotated');
  t.same(f.queued.map((q) => q.key), ['o||v1|namespaces||demo'], 'its Namespace is queued: it now goes to c1 and c2 too');
  const binding = f.reconciler.bindings.binding('edge')!;
  t.same(binding.spec.workload.namespaceScope, [{ group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'settings', resourceVersion: '7' }]);
  t.same(binding.spec.destinations, [{ clusterId: 'c1' }, { clusterId: 'c2' }]);
});

t.test('reconciled again unchanged: nothing is written, nothing queued', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.equal(f.writes().length, 2);
  f.clear();
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'no write when the works would not change');
  t.same(f.queued, [], 'and the Namespace is not queued again: what the object adds to it did not change');
});

t.test('a work changed by someone else is written back; status reports and our own echoes write nothing', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const ours = f.caches.works.get('c1', settingsWork)!;
  const seen = (now: ManifestWork, old: ManifestWork) => { update(f.caches.works, now); f.reconciler.works.noteChange('MODIFIED', now, old); };
  f.clear();

  const reported = { ...ours, metadata: { ...ours.metadata, resourceVersion: '2001' }, status: { conditions: [{ type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', lastTransitionTime: '2026-01-01T00:00:00Z' }] } } as ManifestWork;
  seen(reported, ours);
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'an agent reporting status: nothing to write');

  const edited = { ...reported, metadata: { ...reported.metadata, resourceVersion: '2002', generation: 2 },
    spec: { ...reported.spec, workload: { manifests: [{ ...SETTINGS, data: { a: 'changed by hand' } }] } } } as ManifestWork;
  seen(edited, reported);
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', settingsWork)}`], 'its spec edited in the ITS: written back, in that cluster only');
  t.same((f.writes()[0]!.body as ManifestWork).spec!.workload!.manifests![0]!.data, { a: '1' }, 'with the object as the WDS holds it');
  f.clear();

  seen(f.caches.works.get('c1', settingsWork)!, edited);
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'the echo of that write: nothing to write');
});

t.test('a changed object is applied again; its works deleted once no policy selects it', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  f.clear();
  update(f.workloadStore(CONFIGMAPS), configMap('demo', 'settings', { app: 'nginx' }, { a: '2' }));
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', settingsWork)}`, `its PATCH ${worksPath('c2', settingsWork)}`], 'new content: applied again');
  t.same((f.writes()[0]!.body as ManifestWork).spec!.workload!.manifests![0]!.data, { a: '2' });
  f.clear();

  update(f.workloadStore(CONFIGMAPS), configMap('demo', 'settings', { app: 'other' }));
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its DELETE ${worksPath('c1', settingsWork)}`, `its DELETE ${worksPath('c2', settingsWork)}`], 'no longer selected: its works are deleted');
  t.same(f.queued.map((q) => q.key), ['o||v1|namespaces||demo'], 'and its Namespace is queued (it reaches no cluster through it now)');
  t.equal(f.reconciler.bindings.binding('edge')!.spec.workload.namespaceScope, undefined, 'the Binding lists it no more (an empty list is left out, as KubeStellar\'s omitempty does)');
  f.clear();

  f.workloadStore(CONFIGMAPS).delete(SETTINGS);
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'deleted afterwards: nothing left to delete');
});

t.test('a deleted object: its works found by name in every cluster are deleted', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  f.clear();
  f.workloadStore(CONFIGMAPS).delete(SETTINGS);
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()).sort(), [`its DELETE ${worksPath('c1', settingsWork)}`, `its DELETE ${worksPath('c2', settingsWork)}`]);
});

t.test('a standby (not leading) resolves and serves Bindings but writes nothing', async (t) => {
  const f = fixture({ leading: false });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  await f.reconcile(namespaceKey('demo'));
  await f.reconcile(policyKey('edge'));
  t.same(f.actions(), [], 'no request at all');
  t.same(f.reconciler.bindings.binding('edge')!.spec.workload.namespaceScope!.map((o) => o.name), ['settings'], 'the Binding is current');
  f.reconciler.leading = true;
  await f.reconcile(settingsKey);
  t.equal(f.writes().length, 2, 'once leading, it writes');
});

t.test('a Namespace goes wherever an object in it goes, with the policies that send them', async (t) => {
  const f = fixture({ configMaps: [SETTINGS, configMap('demo', 'other', { app: 'none' })] });
  t.teardown(() => f.close());
  await f.reconcile(namespaceKey('demo'));
  const id = { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'demo' };
  const writes = f.writes();
  t.same(summary(writes), [`its PATCH ${worksPath('c1', manifestWorkName('wds1', id))}`, `its PATCH ${worksPath('c2', manifestWorkName('wds1', id))}`],
    'before its objects were reconciled: resolved on the spot');
  const work = writes[0]!.body as ManifestWork;
  t.same(work.spec!.workload!.manifests![0], { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' }, spec: { finalizers: ['kubernetes'] } });
  t.ok('bindingpolicy.view.kubestellar.io/edge' in work.metadata.labels!, 'labelled with the policy sending its object');
  f.clear();
  await f.reconcile(settingsKey);
  t.same(f.queued, [], 'the object then adds nothing new to its Namespace: not queued');

  update(f.workloadStore(CONFIGMAPS), configMap('demo', 'settings', { app: 'none' }));
  await f.reconcile(settingsKey);
  t.same(f.queued.map((q) => q.key), ['o||v1|namespaces||demo']);
  f.clear();
  await f.reconcile(namespaceKey('demo'));
  t.same(summary(f.writes()), [`its DELETE ${worksPath('c1', manifestWorkName('wds1', id))}`, `its DELETE ${worksPath('c2', manifestWorkName('wds1', id))}`],
    'no object in it goes anywhere: the Namespace goes nowhere');
});

t.test('a Namespace sent for what is in it is created if missing and never deleted; one a policy selects is deleted with its work', async (t) => {
  const id = { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'demo' };
  // c1 only (location-group=edge, name c1): the Namespace itself, by name.
  const own = policy('own-ns', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ resources: ['namespaces'], objectNames: ['demo'] }] },
    {}, { observedGeneration: 1 });
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(namespaceKey('demo'));
  const implied = f.writes().map((w) => w.body as ManifestWork);
  t.equal(implied.length, 2);
  for (const w of implied) {
    t.same(w.spec?.deleteOption, { propagationPolicy: 'SelectivelyOrphan',
      selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', name: 'demo', namespace: '' }] } }, `${w.metadata.namespace}: orphaned when its work goes`);
    t.same(w.spec?.manifestConfigs?.[0]?.updateStrategy, { type: 'CreateOnly' }, 'created if missing, never overwritten');
  }
  f.clear();
  update(f.caches.policies, own);
  f.reconciler.resolutionInputsChanged();
  await f.reconcile(namespaceKey('demo'));
  const selected = f.writes().map((w) => w.body as ManifestWork);
  t.same(selected.map((w) => w.metadata.name), [manifestWorkName('wds1', id), manifestWorkName('wds1', id)]);
  for (const w of selected) {
    t.equal(w.spec?.deleteOption, undefined, `${w.metadata.namespace}: selected itself, deleted with its work`);
    t.equal(w.spec?.manifestConfigs?.[0]?.updateStrategy?.type, 'ServerSideApply');
  }
});

t.test('system objects are never sent', async (t) => {
  const f = fixture({ configMaps: [configMap('demo', 'kube-root-ca.crt', { app: 'nginx' })] });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'kube-root-ca.crt'));
  await f.reconcile(namespaceKey('demo'));
  t.same(f.writes(), []);
});

t.test('a denatured object travels under its native identity and name', async (t) => {
  const stored: WorkloadObject = {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
    metadata: { name: 'reader', labels: { app: 'nginx' }, uid: 'u', resourceVersion: '9' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  };
  const f = controllerFixture({
    clusters: CLUSTERS, workload: [{ resource: CLUSTERROLES, objects: [stored] }],
    policies: [policy('rbac', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'] }] })],
  });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CLUSTERROLES, '', 'reader'));
  const name = manifestWorkName('wds1', { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespace: '', name: 'reader' });
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', name)}`, `its PATCH ${worksPath('c2', name)}`]);
  const work = f.writes()[0]!.body as ManifestWork;
  t.same(work.spec!.workload!.manifests![0], { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader', labels: { app: 'nginx' } }, rules: stored.rules });
  t.same(work.spec!.manifestConfigs![0]!.resourceIdentifier, { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'reader' });
});

t.test('a denatured object Kubernetes\' validation refuses (stored around the view) is not sent; its works stay as they were, its policy says why', async (t) => {
  const binding = (name: string, roleRefKind: string, uid: string): WorkloadObject => ({
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRoleBinding',
    metadata: { name, labels: { app: 'nginx' }, uid, resourceVersion: '9' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleRefKind, name: 'view' }, subjects: [{ kind: 'User', name: 'alice' }],
  } as WorkloadObject);
  const BINDINGS: WorkloadResource = { ...CLUSTERROLES, resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', native: { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' } };
  const id = (name: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespace: '', name });
  const asked: string[] = [];
  const validate = async (objectId: { resource: string; name: string }, stored: WorkloadObject) => {
    asked.push(`${objectId.resource}/${objectId.name} ${stored.apiVersion}`);
    const kind = (stored as unknown as { roleRef: { kind: string } }).roleRef.kind;
    return kind === 'ClusterRole' ? undefined : `ClusterRoleBinding.rbac.authorization.k8s.io "${objectId.name}" is invalid: roleRef.kind: Unsupported value: "${kind}": supported values: "Role", "ClusterRole"`;
  };
  const before: ManifestWork = {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: manifestWorkName('wds1', id('edited')), namespace: 'c1', labels: { 'view.kubestellar.io/wds': 'wds1', 'bindingpolicy.view.kubestellar.io/rbac': '' }, resourceVersion: '1' },
    spec: { workload: { manifests: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'edited' } }] } },
  };
  const rbac = policy('rbac', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterrolebindings'] }] });
  const f = controllerFixture({
    clusters: CLUSTERS, policies: [rbac], validate, works: [before],
    workload: [{ resource: BINDINGS, objects: [binding('bad', 'Secret', 'u1'), binding('edited', 'Secret', 'u2'), binding('good', 'ClusterRole', 'u3')] }],
  });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(BINDINGS, '', 'bad'));
  t.same(f.writes(), [], 'sent nowhere');
  t.same(asked, ['clusterrolebindings/bad denatured.kubestellar.io/v1'], 'asked about its stored form');
  await f.reconcile(objectKey(BINDINGS, '', 'edited'));
  t.same(f.writes(), [], 'an invalid change is not sent, and the work already there is not deleted');
  await f.reconcile(objectKey(BINDINGS, '', 'good'));
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', manifestWorkName('wds1', id('good')))}`, `its PATCH ${worksPath('c2', manifestWorkName('wds1', id('good')))}`],
    'the policy\'s valid objects go on');
  f.clear();
  await f.reconcile(policyKey('rbac'));
  t.same((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors: string[] } }).status.errors, [
    'clusterrolebindings.rbac.authorization.k8s.io bad is not sent: ClusterRoleBinding.rbac.authorization.k8s.io "bad" is invalid: roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"',
    'clusterrolebindings.rbac.authorization.k8s.io edited is not sent: ClusterRoleBinding.rbac.authorization.k8s.io "edited" is invalid: roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"',
  ], 'each named on the policy (and so on its Binding)');
});

t.test('a denatured object whose native metadata cannot be read is not sent, and its policy says why (reconciliation does not fail)', async (t) => {
  const stored: WorkloadObject = {
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
    metadata: { name: 'reader', labels: { app: 'nginx' }, uid: 'u', resourceVersion: '9', annotations: { 'view.kubestellar.io/native-metadata': 'not-json' } },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  };
  const f = controllerFixture({
    clusters: CLUSTERS, workload: [{ resource: CLUSTERROLES, objects: [stored] }], validate: async () => undefined,
    policies: [policy('rbac', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'] }] })],
  });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CLUSTERROLES, '', 'reader'));
  t.same(f.writes(), []);
  f.clear();
  await f.reconcile(policyKey('rbac'));
  t.same((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors: string[] } }).status.errors,
    ['clusterroles.rbac.authorization.k8s.io reader is not sent: its stored form cannot be read: annotation view.kubestellar.io/native-metadata is not JSON (written around the view)']);
});

t.test('policy: the leader adds the cleanup finalizer and writes status.errors and observedGeneration', async (t) => {
  const fresh = policy('fresh', { clusterSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Equals' as never, values: ['b'] }] }], downsync: [{}] }, { finalizers: [], generation: 2 });
  const f = fixture({ policies: [fresh] });
  t.teardown(() => f.close());
  await f.reconcile(policyKey('fresh'));
  const writes = f.writes();
  t.same(summary(writes), ['wds PATCH /apis/control.kubestellar.io/v1alpha1/bindingpolicies/fresh', 'wds PATCH /apis/control.kubestellar.io/v1alpha1/bindingpolicies/fresh/status']);
  t.equal(writes[0]!.contentType, 'application/merge-patch+json');
  t.same(writes[0]!.body, { metadata: { finalizers: [CLEANUP_FINALIZER], resourceVersion: '5' } }, 'the finalizer, guarded by resourceVersion');
  const selectorError = 'spec.clusterSelectors[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator';
  t.match(writes[1]!.body, {
    status: { observedGeneration: 2, errors: [selectorError], clusters: null, conditions: [
      { type: 'Ready', status: 'True', observedGeneration: 2, reason: 'Available', message: 'no object is selected for any cluster' },
      { type: 'Synced', status: 'False', observedGeneration: 2, reason: 'ReconcileError', message: `1 error (status.errors); the first: ${selectorError}` },
    ] },
  }, 'the malformed selector is reported; Synced False, Ready (nothing to place)');

  const g = fixture();
  t.teardown(() => g.close());
  await g.reconcile(policyKey('edge'));
  const written = structuredClone(g.caches.policies.get('', 'edge')!);
  written.status = { ...(g.writes().at(-1)!.body as { status: BindingPolicy['status'] }).status, errors: undefined };
  update(g.caches.policies, written);
  g.clear();
  await g.reconcile(policyKey('edge'));
  t.same(g.writes(), [], 'a policy whose finalizer and status are current: no write');
});

/**
 * A stand-in for the Go helper (its real behaviour is test/unit/template-expander.test.ts's):
 * `{{.key}}` only, Go's message for a missing key.
 */
const fakeExpander: Expander = {
  expand: async (object, properties, names = []) => properties.map((props, i): ExpansionResult => {
    let error: string | undefined;
    const out = JSON.parse(JSON.stringify(object).replace(/\{\{\s*\.(\w+)\s*\}\}/g, (_m, k: string) => {
      const at = `${names[i] ?? '$'}.data.x`;
      if (props[k] === undefined) error ??= `template: ${at}:1:2: executing "${at}" at <.${k}>: map has no entry for key "${k}"`;
      return props[k] ?? '';
    })) as JsonObject;
    return error ? { error, errors: [error] } : { object: out };
  }),
};

const templated = (name: string, data: Record<string, string>): WorkloadObject => {
  const o = configMap('demo', name, { app: 'nginx' }, data);
  o.metadata.annotations = { 'control.kubestellar.io/expand-templates': 'true' };
  return o;
};

t.test('policy: the first failing destination of an object that fails to expand goes to its status', async (t) => {
  const broken = templated('broken', { x: '{{.nosuchkey}}' });
  const f = controllerFixture({ clusters: CLUSTERS, policies: [EDGE], templates: fakeExpander,
    workload: [{ resource: CONFIGMAPS, objects: [broken] }, { resource: NAMESPACES, objects: [namespace('demo')] }] });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'broken'));
  t.same(f.writes(), [], 'the object is written to no cluster');
  t.ok(f.queued.some((q) => q.key === 'p|edge'), 'the policy is queued for its status');
  await f.reconcile(namespaceKey('demo'));
  t.same(f.writes(), [], 'its Namespace is not sent on its own');
  f.clear();
  await f.reconcile(policyKey('edge'));
  const status = f.writes().find((w) => w.path.endsWith('/status'));
  t.same((status?.body as { status: { errors: string[] } }).status.errors,
    ['template: c1/ConfigMap(demo/broken).data.x:1:2: executing "c1/ConfigMap(demo/broken).data.x" at <.nosuchkey>: map has no entry for key "nosuchkey"'],
    'the first failing cluster\'s errors, in KubeStellar\'s words');
});

t.test('an RBAC object asking for template expansion is not sent: what it grants was checked as written (no roleRef made by a template)', async (t) => {
  const rbac = policy('rbac', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterrolebindings'] }] });
  const crb: WorkloadObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
    metadata: { name: 'mallory', uid: 'uid-mallory', resourceVersion: '4', annotations: { 'control.kubestellar.io/expand-templates': 'true' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: '{{"cluster-admin"}}' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
  };
  const CRBS: WorkloadResource = { ...CLUSTERROLES, resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', native: { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' } };
  const f = controllerFixture({ clusters: CLUSTERS, policies: [rbac], templates: fakeExpander, workload: [{ resource: CRBS, objects: [crb] }] });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CRBS, '', 'mallory'));
  t.same(f.writes().filter((w) => w.server === 'its'), [], 'written to no cluster, expanded or not');
  f.clear();
  await f.reconcile(policyKey('rbac'));
  t.match((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors: string[] } }).status.errors,
    [/^c1: templates are not expanded in rbac\.authorization\.k8s\.io objects .*escalation rules/]);
});

t.test('without the Go helper an object asking for expansion is not sent, and the status says why', async (t) => {
  const f = fixture({ configMaps: [templated('t', { x: '{{.clusterName}}' })] });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 't'));
  t.same(f.writes(), []);
  f.clear();
  await f.reconcile(policyKey('edge'));
  t.match((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors: string[] } }).status.errors, [/c1: .*ksview-gotemplate/]);
});

t.test('an expansion failure in one cluster freezes the policy\'s works there; other clusters and objects go on', async (t) => {
  const props = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'customization-properties' }, data });
  const good = templated('good', { x: 'at {{.clusterName}}' });
  const hashed = templated('hashed', { x: '{{.clusterHash}}' });
  const plain = configMap('demo', 'plain', { app: 'nginx' });
  const plainId = { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'plain' };
  const goodId = { ...plainId, name: 'good' };
  const hashedId = { ...plainId, name: 'hashed' };
  const existing = (c: string, id: typeof plainId): ManifestWork => ({
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: manifestWorkName('wds1', id), namespace: c, labels: { 'view.kubestellar.io/wds': 'wds1', 'bindingpolicy.view.kubestellar.io/edge': '' }, resourceVersion: '1' },
    spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: id.name, namespace: 'demo' }, data: { old: 'yes' } }] } },
  });
  const f = controllerFixture({
    clusters: CLUSTERS, policies: [EDGE], templates: fakeExpander,
    properties: [props('c1', { clusterHash: '1001-dead-beef' })], // c2 has none: {{.clusterHash}} fails there
    works: [existing('c2', plainId)],
    workload: [{ resource: CONFIGMAPS, objects: [good, hashed, plain] }, { resource: NAMESPACES, objects: [namespace('demo')] }],
  });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'hashed'));
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', manifestWorkName('wds1', hashedId))}`], 'expanded where it can be: c1 only');
  t.same((f.writes()[0]!.body as ManifestWork).spec!.workload!.manifests![0]!.data, { x: '1001-dead-beef' }, 'the ConfigMap\'s property');
  t.ok(f.queued.some((q) => q.key === 'o||v1|configmaps|demo|plain'), 'the policy\'s other objects are reconciled again');
  f.clear();
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'plain'));
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', manifestWorkName('wds1', plainId))}`], 'c2 is frozen: its work stays as it was');
  t.same(f.caches.works.get('c2', manifestWorkName('wds1', plainId))?.spec?.workload?.manifests?.[0]?.data, { old: 'yes' });
  f.clear();
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'good'));
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', manifestWorkName('wds1', goodId))}`], 'and no new work is created in c2');

  f.caches.properties.set(props('c2', { clusterHash: 'beef-2' }));
  f.clear();
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'hashed'));
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c2', manifestWorkName('wds1', hashedId))}`], 'the property given: it expands in c2 too');
  t.ok(f.queued.some((q) => q.key === 'o||v1|configmaps|demo|plain'), 'the thaw reconciles the others again');
  f.clear();
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'plain'));
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c2', manifestWorkName('wds1', plainId))}`], 'the frozen work is updated at last');
});

t.test('policy being deleted: the finalizer goes only once no work names it', async (t) => {
  const deleting = policy('edge', EDGE.spec, { deletionTimestamp: '2026-01-01T00:00:00Z' });
  const f = fixture();
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  update(f.caches.policies, deleting);
  f.clear();
  await f.reconcile(policyKey('edge'));
  t.same(f.writes(), [], 'works still name it: no write');
  t.same(f.queued, [{ key: 'p|edge', afterMs: 500 }], 'looked at again later');
  f.clear();
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its DELETE ${worksPath('c1', settingsWork)}`, `its DELETE ${worksPath('c2', settingsWork)}`], 'a deleting policy selects nothing');
  f.clear();
  await f.reconcile(policyKey('edge'));
  t.same(f.writes().map((w) => w.body), [{ metadata: { finalizers: [], resourceVersion: '5' } }], 'then the finalizer is removed');
});

t.test('another WDS sending the same object to the same cluster: a conflict on the policy, announced once in the object\'s namespace', async (t) => {
  const theirs: ManifestWork = {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: 'wds2-x', namespace: 'c1', labels: { 'view.kubestellar.io/wds': 'wds2' } },
    spec: { manifestConfigs: [{ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'demo', name: 'settings' } }] },
  };
  const f = fixture({ otherWorks: [theirs] });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const events = f.writes().filter((w) => w.path.endsWith('/events'));
  t.equal(events.length, 1, 'one Warning Event');
  t.equal(events[0]!.path, '/api/v1/namespaces/demo/events', 'in the object\'s namespace, never in default');
  t.match(events[0]!.body, { reason: 'WDSConflict', type: 'Warning', metadata: { namespace: 'demo' },
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'demo', name: 'settings', uid: 'uid-settings' },
    message: 'conflict: cluster c1 also receives configmaps demo/settings from WDS wds2 (selected by BindingPolicy edge)' });
  t.ok(f.queued.some((q) => q.key === 'p|edge'), 'the policy is queued for its status');
  f.clear();
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'not announced twice');
});

t.test('a manifest a cluster could not apply goes to the status of the policies sending it there, and leaves when it applies', async (t) => {
  // core sends settings to c3 only: c1's failure is none of its business.
  const core = policy('core', { clusterSelectors: [{ matchLabels: { 'location-group': 'core' } }], downsync: [{ namespaces: ['demo'], objectSelectors: [{ matchLabels: { app: 'nginx' } }] }] },
    {}, { observedGeneration: 1 });
  const f = fixture({ policies: [EDGE, core] });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  const conflictText = 'Apply failed with 1 conflict: conflict with "work-agent-kubestellar-wds2": .data.a';
  const withApplied = (cluster: string, status: 'True' | 'False', message: string): ManifestWork => {
    const w = structuredClone(f.caches.works.get(cluster, settingsWork)!);
    w.metadata.resourceVersion = `${w.metadata.resourceVersion}1`;
    w.status = { resourceStatus: { manifests: [{
      resourceMeta: { ordinal: 0, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespace: 'demo', name: 'settings' },
      conditions: [{ type: 'Applied', status, reason: status === 'True' ? 'AppliedManifestComplete' : 'AppliedManifestFailed', message, lastTransitionTime: '2026-01-01T00:00:00Z' }],
    }] } };
    return w;
  };
  update(f.caches.works, withApplied('c1', 'False', `Failed to apply manifest: ${conflictText}`));
  update(f.caches.works, withApplied('c2', 'True', 'Apply manifest complete'));
  f.clear();
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'the works are not written again: their content did not change');
  t.same(f.queued.map((q) => q.key), ['p|edge'], 'only the policy sending it to c1 is queued');
  await f.reconcile(policyKey('edge'));
  t.match(f.writes().map((w) => w.body), [{ status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False' }, { type: 'Synced', status: 'True' }],
    errors: [`cluster c1 did not apply configmaps demo/settings: ${conflictText}`] } }], 'the cluster, the object and the WEC\'s words');
  f.clear();
  await f.reconcile(policyKey('core'));
  t.notOk((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors?: unknown } } | undefined)?.status.errors, 'core\'s status has no error to say');

  update(f.caches.works, withApplied('c1', 'True', 'Apply manifest complete'));
  f.clear();
  await f.reconcile(settingsKey);
  t.same(f.queued.map((q) => q.key), ['p|edge'], 'applied at last: the policy is queued again');
  const edgeWithError = structuredClone(EDGE);
  edgeWithError.status = { observedGeneration: 1, errors: [`cluster c1 did not apply configmaps demo/settings: ${conflictText}`] };
  update(f.caches.policies, edgeWithError);
  await f.reconcile(policyKey('edge'));
  t.match(f.writes().map((w) => w.body), [{ status: { observedGeneration: 1, errors: null, conditions: [{ type: 'Ready' }, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' }] } }], 'and its error is cleared');
});

t.test('a ManifestWork the controller did not expect (left over) is deleted when its object is gone', async (t) => {
  const leftover: ManifestWork = {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: manifestWorkName('wds1', { ...settingsId, name: 'gone' }), namespace: 'c3', labels: { 'view.kubestellar.io/wds': 'wds1' } },
  };
  const f = fixture({ works: [leftover] });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'gone'));
  t.same(summary(f.writes()), [`its DELETE ${worksPath('c3', leftover.metadata.name)}`]);
});

const NATIVE_CLUSTERROLES: WorkloadResource = {
  group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false,
  native: { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, bypassesView: true, hasStatus: false,
};
const RBAC_POLICY = policy('rbac', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'] }] });
const nativeRole = (name: string, extra: Partial<WorkloadObject['metadata']> = {}): WorkloadObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, uid: `uid-${name}`, resourceVersion: '4', ...extra }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
});
const roleWork = (name: string) => manifestWorkName('wds1', { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespace: '', name });

t.test('an object of a denatured kind written straight to the WDS is sent, with a Warning Event and a status line', async (t) => {
  const f = controllerFixture({
    clusters: CLUSTERS, policies: [RBAC_POLICY],
    workload: [{ resource: NATIVE_CLUSTERROLES, objects: [nativeRole('direct'), nativeRole('system:basic-user'), nativeRole('admin', { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } })] },
      { resource: CLUSTERROLES, objects: [] }],
  });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(NATIVE_CLUSTERROLES, '', 'direct'));
  const works = f.writes().filter((w) => w.server === 'its');
  t.same(summary(works), [`its PATCH ${worksPath('c1', roleWork('direct'))}`, `its PATCH ${worksPath('c2', roleWork('direct'))}`], 'sent, as KubeStellar sends it');
  const events = f.writes().filter((w) => w.path.endsWith('/events'));
  t.same(events.map((e) => e.path), ['/api/v1/namespaces/default/events'], 'a cluster-scoped object: its Event in default');
  t.match(events.map((e) => e.body), [{ reason: 'WrittenToWDS', type: 'Warning',
    involvedObject: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'direct', uid: 'uid-direct' },
    message: /written to the WDS directly.*wds1-view.*\(selected by BindingPolicy rbac\)$/ }]);
  t.notOk((events[0]!.body as { involvedObject: object }).involvedObject.hasOwnProperty('namespace'));
  f.clear();
  for (const name of ['system:basic-user', 'admin']) await f.reconcile(objectKey(NATIVE_CLUSTERROLES, '', name));
  t.same(f.writes(), [], 'the WDS\'s own bootstrap RBAC is never sent');
});

const NATIVE_ROLES: WorkloadResource = {
  group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true,
  native: { group: 'rbac.authorization.k8s.io', resource: 'roles' }, bypassesView: true, hasStatus: false,
};

t.test('an object of another namespace is never named in default: a Role written straight to the WDS, its Event in its namespace', async (t) => {
  const roles = policy('roles', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['roles'], namespaces: ['team-a'] }] });
  const role: WorkloadObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'secret-reader', namespace: 'team-a', uid: 'uid-secret-reader', resourceVersion: '4' },
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  };
  const f = controllerFixture({ clusters: CLUSTERS, policies: [roles], workload: [{ resource: NATIVE_ROLES, objects: [role] }] });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(NATIVE_ROLES, 'team-a', 'secret-reader'));
  const events = f.writes().filter((w) => w.path.endsWith('/events'));
  t.same(events.map((e) => e.path), ['/api/v1/namespaces/team-a/events'], 'in team-a only');
  t.match(events[0]!.body, { reason: 'WrittenToWDS', metadata: { namespace: 'team-a' },
    involvedObject: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespace: 'team-a', name: 'secret-reader', uid: 'uid-secret-reader' },
    message: /roles\.rbac\.authorization\.k8s\.io team-a\/secret-reader was written to the WDS directly/ });
});

t.test('a view object and a native one of the same identity: the view\'s is sent, the conflict reported', async (t) => {
  const viaView: WorkloadObject = { apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole', metadata: { name: 'twin', uid: 'u-view', resourceVersion: '9' }, rules: [] };
  const f = controllerFixture({
    clusters: CLUSTERS, policies: [RBAC_POLICY],
    workload: [{ resource: NATIVE_CLUSTERROLES, objects: [nativeRole('twin')] }, { resource: CLUSTERROLES, objects: [viaView] }],
  });
  t.teardown(() => f.close());
  await f.reconcile(objectKey(NATIVE_CLUSTERROLES, '', 'twin'));
  t.same(f.writes(), [], 'the native key writes nothing');
  t.same(f.queued.map((q) => q.key), ['o|denatured.kubestellar.io|v1|clusterroles||twin'], 'it hands over to the view object\'s key');
  f.clear();
  await f.reconcile(objectKey(CLUSTERROLES, '', 'twin'));
  const work = f.writes().find((w) => w.server === 'its')!.body as ManifestWork;
  t.same(work.spec!.workload!.manifests![0]!.rules, [], 'the view\'s content');
  t.match(f.writes().filter((w) => w.path === '/api/v1/namespaces/default/events').map((e) => e.body),
    [{ reason: 'ViewAndWDSConflict', involvedObject: { kind: 'ClusterRole', name: 'twin' }, message: /both through the view and natively/ }]);
});

t.test('wantSingletonReportedState narrows nothing: every selected cluster, and the policy says more than one qualifies', async (t) => {
  const single = policy('single', { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ objectNames: ['settings'], wantSingletonReportedState: true }] });
  const f = fixture({ policies: [single] });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', settingsWork)}`, `its PATCH ${worksPath('c2', settingsWork)}`]);
  f.clear();
  await f.reconcile(policyKey('single'));
  t.match((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors: string[] } }).status.errors,
    ['configmaps demo/settings: wantSingletonReportedState, but 2 clusters qualify (c1, c2); it goes to all of them and no single cluster\'s status can be returned']);
});

t.test('a sibling reconciled before the object that fails to expand is not written to the frozen cluster', async (t) => {
  const hashed = templated('hashed', { x: '{{.clusterHash}}' });
  const f = controllerFixture({
    clusters: CLUSTERS, policies: [EDGE], templates: fakeExpander,
    properties: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', namespace: 'customization-properties' }, data: { clusterHash: 'h1' } }],
    workload: [{ resource: CONFIGMAPS, objects: [hashed, SETTINGS] }, { resource: NAMESPACES, objects: [namespace('demo')] }],
  });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', settingsWork)}`], 'the policy is frozen in c2 from the start');
  f.clear();
  await f.reconcile(namespaceKey('demo'));
  const nsWork = manifestWorkName('wds1', { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'demo' });
  t.same(summary(f.writes()), [`its PATCH ${worksPath('c1', nsWork)}`], 'and its Namespace goes only where something in it is sent');
});

t.test('a CustomTransform that cannot be applied holds the object back and says why, instead of failing reconciliation', async (t) => {
  const f = controllerFixture({
    clusters: CLUSTERS, policies: [EDGE],
    transforms: [{ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'CustomTransform', metadata: { name: 'bad' }, spec: { apiGroup: '', resource: 'configmaps', remove: ['spec.x'] } }],
    workload: [{ resource: CONFIGMAPS, objects: [SETTINGS] }, { resource: NAMESPACES, objects: [namespace('demo')] }],
  });
  t.teardown(() => f.close());
  await f.reconcile(settingsKey);
  t.same(f.writes(), [], 'nothing sent');
  f.clear();
  await f.reconcile(policyKey('edge'));
  t.match((f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors: string[] } }).status.errors,
    [/^c1: CustomTransform bad: remove path "spec.x": must start with \$/, /^c2: CustomTransform bad/]);
});

/** EDGE's ConfigMap with `n` edge clusters; `answer` overrides the ITS's answers. */
function wideFixture(n: number, answer?: FixtureInput['answer']) {
  const clusters = Array.from({ length: n }, (_, i) => cluster(`e${i}`, { 'location-group': 'edge' }));
  return controllerFixture({
    clusters, policies: [EDGE], answer,
    workload: [{ resource: CONFIGMAPS, objects: [SETTINGS] }, { resource: NAMESPACES, objects: [namespace('demo')] }],
  });
}

t.test('one object on many clusters: its works are written at once (bounded), not one after another', async (t) => {
  const f = wideFixture(100);
  t.teardown(() => f.close());
  // Every ITS request of the controller's own goes through ownPool: count those in flight.
  const pool = f.its.up.ownPool;
  let inFlight = 0;
  let most = 0;
  f.its.up.ownPool = {
    request: async (opts: Parameters<typeof pool.request>[0]) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 2));
      try { return await pool.request(opts); } finally { inFlight--; }
    },
  } as unknown as typeof pool;
  await f.reconcile(settingsKey);
  t.equal(f.writes().length, 100, 'a work in each of the 100 clusters');
  t.equal(most, WRITES_PER_OBJECT, `${WRITES_PER_OBJECT} in flight at most, and that many used`);
  // The object leaves every cluster: the deletions likewise.
  f.clear();
  update(f.caches.clusters, cluster('e0', { 'location-group': 'core' }));
  for (let i = 1; i < 100; i++) update(f.caches.clusters, cluster(`e${i}`, { 'location-group': 'core' }));
  most = 0;
  await f.reconcile(settingsKey);
  t.equal(f.writes().filter((w) => w.method === 'DELETE').length, 100);
  t.equal(most, WRITES_PER_OBJECT);
});

t.test('the ITS answers 429 under its limiter: the controller waits as asked, and every work is written', async (t) => {
  const refusedOnce = new Set<string>();
  const f = wideFixture(30, (server, call) => {
    if (server !== 'its' || call.method !== 'PATCH' || refusedOnce.has(call.path)) return undefined;
    refusedOnce.add(call.path);
    return { status: 429, headers: { 'retry-after': '0' }, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 } };
  });
  t.teardown(() => f.close());
  const limiter = new RequestLimiter({ maxInFlight: 8 });
  f.its.up.limiter = limiter;
  await f.reconcile(settingsKey);
  t.equal(refusedOnce.size, 30, 'each work refused once');
  t.equal(limiter.stats.throttled, 30);
  t.equal(f.caches.works.list().length, 30, 'and each written in the end');
  t.equal(f.writes().length, 60, 'one retry each, no more');
});

t.test('the ITS refuses longer than the limiter retries: the reconcile fails (requeued), and the next writes what is missing', async (t) => {
  let overloaded = true;
  const f = wideFixture(10, (server, call) => (server === 'its' && call.method === 'PATCH' && overloaded && call.path.includes('/e3/')
    ? { status: 429, headers: { 'retry-after': '0' }, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 } }
    : undefined));
  t.teardown(() => f.close());
  f.its.up.limiter = new RequestLimiter({ maxInFlight: 4, maxRetries: 2 });
  await t.rejects(f.reconcile(settingsKey), /: 429 /, 'the error (429) reaches the work queue, which retries the key');
  t.equal(f.caches.works.list().length, 9, 'the other nine written meanwhile');
  overloaded = false;
  f.clear();
  await f.reconcile(settingsKey);
  t.same(summary(f.writes()), [`its PATCH ${worksPath('e3', settingsWork)}`], 'only the missing one is written');
});
