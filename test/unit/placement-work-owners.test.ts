// Whose a ManifestWork is (label view.kubestellar.io/wds), through the reconciler and the fixture's
// recorded ITS requests (test/fixtures/controller-fixture.ts): a work of one of this WDS's names
// that another WDS (or nobody) holds is never written nor deleted, per object or bundled; the object
// is sent elsewhere (a bundle) or not at all and its policy says why; and the works an earlier
// release named otherwise (a long WDS name cut short) are replaced, receiver first.
import t from 'tap';
import type { BindingPolicy, ManagedCluster, WorkloadObject } from '../../src/controllers/model/api.js';
import { WRITE_DELAY_MS } from '../../src/controllers/placement/bundles.js';
import { namespaceKey, objectKey, policyKey } from '../../src/controllers/model/keys.js';
import { CLEANUP_FINALIZER } from '../../src/controllers/placement/policy-status.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { BUNDLE_ANNOTATION, bundleGroup, bundleWorkName, manifestWorkName, policyLabel, SOURCES_ANNOTATION, type ManifestWork } from '../../src/controllers/model/wrapping.js';
import { isDNS1123Label } from '../../src/kube/names.js';
import { controllerFixture, type Action, type ControllerFixture, type FixtureInput } from '../fixtures/controller-fixture.js';

const CONFIGMAPS: WorkloadResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, native: { group: '', resource: 'configmaps' }, bypassesView: false, hasStatus: false };
const NAMESPACES: WorkloadResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, native: { group: '', resource: 'namespaces' }, bypassesView: false, hasStatus: false };
const cluster = (name: string): ManagedCluster => ({
  apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels: { 'location-group': 'edge' }, resourceVersion: '1' },
});
const configMap = (name: string): WorkloadObject => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'demo', labels: { app: 'nginx' }, uid: `uid-${name}`, resourceVersion: '7' }, data: { a: '1' },
});
const EDGE: BindingPolicy = {
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
  metadata: { name: 'edge', uid: 'uid-edge', generation: 1, resourceVersion: '5', finalizers: [CLEANUP_FINALIZER] },
  spec: { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ namespaces: ['demo'], objectSelectors: [{ matchLabels: { app: 'nginx' } }] }] },
  status: { observedGeneration: 1 },
};
// Two WDSs named as a tenant's would be: 55 characters, differing only at the end.
const WDS_A = 'tenant-payments-production-eu-west-1-cluster-pool-wds-a';
const WDS_B = 'tenant-payments-production-eu-west-1-cluster-pool-wds-b';
const settingsId = { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'settings' };
const GROUP = bundleGroup({ [policyLabel('edge')]: '' }, undefined);
const NAMES = ['cm-0', 'cm-1', 'cm-2'];
const worksPath = (c: string, name: string) => `/apis/work.open-cluster-management.io/v1/namespaces/${c}/manifestworks/${name}`;
const summary = (as: Action[]) => as.filter((a) => a.path.includes('/manifestworks/')).map((a) => `${a.method} ${a.path.replace('/apis/work.open-cluster-management.io/v1/namespaces/', '')}`);
const touching = (as: Action[], c: string, name: string) => as.filter((a) => a.method !== 'GET' && a.path === worksPath(c, name));

/** A work another WDS (or, with wds '', nobody) holds in the ITS under `name`. */
const theirs = (c: string, name: string, wds: string, extra: Partial<ManifestWork> = {}): ManifestWork => ({
  apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
  metadata: { name, namespace: c, labels: wds ? { 'view.kubestellar.io/wds': wds } : {}, resourceVersion: '40' },
  spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'demo' } }] },
    manifestConfigs: [{ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'demo', name: 'theirs' } }] },
  ...extra,
});

function fixture(o: Partial<FixtureInput> & { configMaps?: WorkloadObject[] } = {}): ControllerFixture {
  return controllerFixture({
    wdsName: WDS_A, clusters: [cluster('c1'), cluster('c2')], policies: [EDGE], ...o,
    workload: [{ resource: CONFIGMAPS, objects: o.configMaps ?? [configMap('settings')] }, { resource: NAMESPACES, objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo', uid: 'uid-demo', resourceVersion: '3' } }] }],
  });
}

async function settle(f: ControllerFixture): Promise<void> {
  const end = Date.now() + 10_000;
  do await new Promise((r) => setTimeout(r, WRITE_DELAY_MS + 5));
  while (!f.reconciler.bundles.idle() && Date.now() < end);
  if (!f.reconciler.bundles.idle()) throw new Error('the bundles\' writes did not settle');
}

async function reconcileAll(f: ControllerFixture): Promise<void> {
  await Promise.all([...NAMES.map((n) => f.reconcile(objectKey(CONFIGMAPS, 'demo', n))), f.reconcile(namespaceKey('demo'))]);
  await settle(f);
}

const policyErrors = async (f: ControllerFixture) => {
  f.clear();
  await f.reconcile(policyKey('edge'));
  return (f.writes().find((w) => w.path.endsWith('/status'))?.body as { status: { errors?: string[] } } | undefined)?.status.errors ?? [];
};

t.test('a work of one object: its name held by another WDS\'s work (or one naming none) is never written; the policy says why', async (t) => {
  const name = manifestWorkName(WDS_A, settingsId);
  for (const [owner, says] of [[WDS_B, `WDS ${WDS_B}`], ['', 'no WDS (no view.kubestellar.io/wds label)']] as const) {
    const f = fixture({ otherWorks: [theirs('c1', name, owner)] });
    t.teardown(() => f.close());
    await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'settings'));
    t.same(touching(f.actions(), 'c1', name), [], `${says}: nothing written to its work in c1`);
    t.same(summary(f.writes()), [`PATCH c2/manifestworks/${name}`], 'the other cluster gets the object');
    t.same(await policyErrors(f), [`conflict: configmaps demo/settings is not sent to cluster c1: ManifestWork ${name} in cluster c1 belongs to ${says}`],
      'the policy says why it is not in c1');
    // Nor deleted, whoever asks.
    f.clear();
    await t.rejects(f.reconciler.works.delete('c1', name), { message: new RegExp(`not deleted: ManifestWork ${name} in cluster c1 belongs to`) });
    await t.rejects(f.reconciler.works.apply('c1', { ...theirs('c1', name, WDS_A) }), { message: /not written/ });
    t.same(f.actions(), [], 'no request for it');
  }
});

t.test('bundled: a slot name another WDS\'s work holds is skipped; a foreign bundle found on reading is neither adopted nor written', async (t) => {
  const limits = { objects: 8, bytes: 512_000 };
  const slot0 = bundleWorkName(WDS_A, GROUP, 0);
  // Known from the cache of the others' works.
  const f = fixture({ bundleLimits: limits, configMaps: NAMES.map(configMap), otherWorks: [theirs('c1', slot0, WDS_B)] });
  t.teardown(() => f.close());
  await reconcileAll(f);
  t.same(touching(f.actions(), 'c1', slot0), [], 'c1\'s slot 0 is another\'s: untouched');
  t.same(f.caches.works.list().map((w) => `${w.metadata.namespace}/${w.metadata.name}`).sort(),
    [`c1/${bundleWorkName(WDS_A, GROUP, 1)}`, `c2/${slot0}`], 'c1\'s objects in slot 1, c2\'s in slot 0');

  // Not in the cache yet (a race): the read before a slot's first write finds it, a bundle of WDS B's own objects.
  const foreign = theirs('c1', slot0, WDS_B, { metadata: { name: slot0, namespace: 'c1', labels: { 'view.kubestellar.io/wds': WDS_B, [policyLabel('edge')]: '' },
    annotations: { [BUNDLE_ANNOTATION]: GROUP, [SOURCES_ANNOTATION]: JSON.stringify(['o||v1|configmaps|demo|theirs']) }, resourceVersion: '40' } });
  const g = fixture({ bundleLimits: limits, configMaps: NAMES.map(configMap),
    answer: (server, call) => (server === 'its' && call.method === 'GET' && call.path === worksPath('c1', slot0) ? { status: 200, body: foreign } : undefined) });
  t.teardown(() => g.close());
  await reconcileAll(g);
  t.same(touching(g.actions(), 'c1', slot0), [], 'read, never written nor deleted');
  const c1 = g.caches.works.list().filter((w) => w.metadata.namespace === 'c1');
  t.same(c1.map((w) => w.metadata.name), [bundleWorkName(WDS_A, GROUP, 1)], 'c1\'s objects went to slot 1');
  t.same(c1[0]!.spec!.manifestConfigs!.map((c) => c.resourceIdentifier.name).sort(), ['cm-0', 'cm-1', 'cm-2', 'demo'], 'with nothing of WDS B\'s');
});

t.test('an upgrade: works an earlier release named by a long WDS name cut short are replaced, the new written first', async (t) => {
  // What names were: the WDS name and a hash of the object, cut at 63 (or the WDS name cut at 40, for a bundle).
  const oldName = `${WDS_A}-${'0123456789abcdef0123'}`.slice(0, 63);
  const oldWork = (c: string): ManifestWork => ({
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: oldName, namespace: c, labels: { 'view.kubestellar.io/wds': WDS_A, [policyLabel('edge')]: '' }, annotations: { 'view.kubestellar.io/source': 'o||v1|configmaps|demo|settings' }, resourceVersion: '9' },
    spec: { workload: { manifests: [configMap('settings')] }, manifestConfigs: [{ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'demo', name: 'settings' } }] },
  });
  const f = fixture({ works: [oldWork('c1'), oldWork('c2')] });
  t.teardown(() => f.close());
  const name = manifestWorkName(WDS_A, settingsId);
  t.not(name, oldName, 'this release names it otherwise');
  t.ok(isDNS1123Label(name), `${name}: a DNS label`);
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', 'settings'));
  t.same(summary(f.writes()), [`PATCH c1/manifestworks/${name}`, `PATCH c2/manifestworks/${name}`, `DELETE c1/manifestworks/${oldName}`, `DELETE c2/manifestworks/${oldName}`],
    'the work of the new name written in each cluster, then the old one deleted (an agent hands the object over in place)');

  // Bundled: a slot of the old name is emptied into slots of the new names, then deleted.
  const oldSlot = `${WDS_A.slice(0, 40)}-b${GROUP}-0`;
  const oldBundle: ManifestWork = {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: oldSlot, namespace: 'c1', labels: { 'view.kubestellar.io/wds': WDS_A, [policyLabel('edge')]: '' }, resourceVersion: '9',
      annotations: { [BUNDLE_ANNOTATION]: GROUP, [SOURCES_ANNOTATION]: JSON.stringify(NAMES.map((n) => `o||v1|configmaps|demo|${n}`)) } },
    spec: { workload: { manifests: NAMES.map(configMap) }, manifestConfigs: NAMES.map((n) => ({ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'demo', name: n } })) },
  };
  const g = fixture({ bundleLimits: { objects: 8, bytes: 512_000 }, configMaps: NAMES.map(configMap), works: [oldBundle] });
  t.teardown(() => g.close());
  t.not(bundleWorkName(WDS_A, GROUP, 0), oldSlot, 'this release names the slot otherwise');
  await reconcileAll(g);
  const c1 = summary(g.writes()).filter((w) => w.includes(' c1/'));
  t.same(c1, [`PATCH c1/manifestworks/${bundleWorkName(WDS_A, GROUP, 0)}`, `DELETE c1/manifestworks/${oldSlot}`], 'the new slot written, then the old one deleted');
  t.same(g.caches.works.list().filter((w) => w.metadata.namespace === 'c1').map((w) => w.metadata.name), [bundleWorkName(WDS_A, GROUP, 0)]);
});
