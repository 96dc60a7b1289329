// Bundled works (src/controllers/placement/bundles.ts) through the reconciler, with the fixture's
// recorded ITS requests: packing by N and B, stable slots, one work rewritten per change, moves
// written receiver first, a restart that reads the slots back, the switch from a work per object.
import t from 'tap';
import type { BindingPolicy, ManagedCluster, WorkloadObject } from '../../src/controllers/model/api.js';
import { namespaceKey, objectKey } from '../../src/controllers/model/keys.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import { BUNDLE_ANNOTATION, bundleGroup, bundleWorkName, manifestWorkName, policyLabel, SOURCES_ANNOTATION, type ManifestWork } from '../../src/controllers/model/wrapping.js';
import { SOURCE_GENERATIONS_ANNOTATION, type Condition } from '../../src/kube/ocm-api.js';
import { controllerFixture, update, type Action, type ControllerFixture } from '../fixtures/controller-fixture.js';
import { Works } from '../../src/controllers/placement/works.js';
import { WRITE_DELAY_MS } from '../../src/controllers/placement/bundles.js';

const CONFIGMAPS: WorkloadResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, native: { group: '', resource: 'configmaps' }, bypassesView: false, hasStatus: false };
const NAMESPACES: WorkloadResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, native: { group: '', resource: 'namespaces' }, bypassesView: false, hasStatus: false };
const cluster = (name: string): ManagedCluster => ({
  apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name, labels: { 'location-group': 'edge' }, resourceVersion: '1' },
});
const configMap = (name: string, data: Record<string, string> = { a: '1' }, generation = 1): WorkloadObject => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'demo', labels: { app: 'nginx' }, uid: `uid-${name}`, resourceVersion: '7', generation }, data,
});
const EDGE: BindingPolicy = {
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
  metadata: { name: 'edge', uid: 'uid-edge', generation: 1, resourceVersion: '5' },
  spec: { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ namespaces: ['demo'], objectSelectors: [{ matchLabels: { app: 'nginx' } }] }] },
};
const NAMES = Array.from({ length: 20 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
const GROUP = bundleGroup({ [policyLabel('edge')]: '' }, undefined);
const slot = (i: number) => bundleWorkName('wds1', GROUP, i);
const worksPath = (c: string, name: string) => `/apis/work.open-cluster-management.io/v1/namespaces/${c}/manifestworks/${name}`;
const summary = (as: Action[]) => as.map((a) => `${a.method} ${a.path.replace('/apis/work.open-cluster-management.io/v1/namespaces/', '')}`);

function fixture(o: { objects?: number; bytes?: number; configMaps?: WorkloadObject[]; works?: ManifestWork[] } = {}): ControllerFixture {
  return controllerFixture({
    clusters: [cluster('c1'), cluster('c2')], policies: [EDGE], works: o.works,
    bundleLimits: { objects: o.objects ?? 8, bytes: o.bytes ?? 512_000 },
    workload: [{ resource: CONFIGMAPS, objects: o.configMaps ?? NAMES.map((n) => configMap(n)) }, { resource: NAMESPACES, objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo', uid: 'uid-demo', resourceVersion: '3' } }] }],
  });
}

/** Until the bundles' writes (done by Bundles shortly after a reconcile, retried until done) are over. */
async function settle(f: ControllerFixture, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  do {
    await new Promise((r) => setTimeout(r, WRITE_DELAY_MS + 5));
  } while (!f.reconciler.bundles.idle() && Date.now() < end);
  if (!f.reconciler.bundles.idle()) throw new Error('the bundles\' writes did not settle');
}

/** Reconciles one object and waits for its bundles to be written. */
async function reconcile(f: ControllerFixture, name: string): Promise<void> {
  await f.reconcile(objectKey(CONFIGMAPS, 'demo', name));
  await settle(f);
}

/** Reconciles every object of the fixture at once, as the workers would, and waits for the writes. */
async function reconcileAll(f: ControllerFixture, names = NAMES): Promise<void> {
  await Promise.all([...names.map((n) => f.reconcile(objectKey(CONFIGMAPS, 'demo', n))), f.reconcile(namespaceKey('demo'))]);
  await settle(f);
}

const manifestNames = (w: ManifestWork | undefined) => (w?.spec?.workload?.manifests ?? []).map((m) => `${(m as { kind: string }).kind}/${(m as { metadata: { name: string } }).metadata.name}`);

t.test('20 objects and their Namespace, N = 8: three works per cluster, each manifest with its own config, sources and generations', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await reconcileAll(f);
  for (const c of ['c1', 'c2']) {
    const works = f.caches.works.list().filter((w) => w.metadata.namespace === c).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    t.same(works.map((w) => w.metadata.name), [slot(0), slot(1), slot(2)], `${c}: three slots of one group`);
    t.same(works.map((w) => w.spec!.workload!.manifests!.length), [8, 8, 5], `${c}: 21 manifests (20 ConfigMaps and the Namespace), 8 at most per work`);
    const all = works.flatMap(manifestNames).sort();
    t.same(all, [...NAMES.map((n) => `ConfigMap/${n}`), 'Namespace/demo'].sort(), `${c}: each object once`);
    for (const w of works) {
      t.equal(w.metadata.labels?.[policyLabel('edge')], '', 'labelled with its policy');
      t.equal(w.metadata.annotations?.[BUNDLE_ANNOTATION], GROUP);
      const sources = JSON.parse(w.metadata.annotations![SOURCES_ANNOTATION]!) as string[];
      const configs = w.spec!.manifestConfigs!;
      t.equal(configs.length, w.spec!.workload!.manifests!.length, 'a manifestConfig per manifest');
      w.spec!.workload!.manifests!.forEach((m, i) => {
        const meta = (m as { metadata: { name: string } }).metadata;
        t.equal(configs[i]!.resourceIdentifier.name, meta.name, 'configs in manifest order');
        t.match(sources[i], new RegExp(`\\|${meta.name}$`), 'sources in manifest order');
      });
      t.ok(JSON.parse(w.metadata.annotations![SOURCE_GENERATIONS_ANNOTATION]!) instanceof Array);
    }
    const nsWork = works.find((w) => manifestNames(w).includes('Namespace/demo'))!;
    const i = manifestNames(nsWork).indexOf('Namespace/demo');
    t.same(nsWork.spec!.manifestConfigs![i]!.updateStrategy, { type: 'CreateOnly' }, 'the implied Namespace: CreateOnly on its manifest alone');
    t.same(nsWork.spec!.deleteOption, { propagationPolicy: 'SelectivelyOrphan', selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', name: 'demo', namespace: '' }] } }, '… and orphaned');
    t.equal(nsWork.spec!.manifestConfigs!.filter((x) => x.updateStrategy?.type === 'ServerSideApply').length, nsWork.spec!.workload!.manifests!.length - 1, 'the others server-side applied');
  }
  t.ok(f.writes().length <= 12, `at most two writes per work while 21 objects were placed at once (${f.writes().length})`);
  t.notOk(f.writes().some((w) => w.method === 'DELETE'), 'nothing deleted');
  const binding = f.reconciler.bindings.binding('edge')!;
  t.equal(binding.spec.workload.namespaceScope?.length, 20, 'the Binding lists each object');
});

t.test('one object changed: only its work is rewritten; reconciled again unchanged: nothing', async (t) => {
  const f = fixture();
  t.teardown(() => f.close());
  await reconcileAll(f);
  const home = f.caches.works.list().find((w) => w.metadata.namespace === 'c1' && manifestNames(w).includes('ConfigMap/cm-13'))!.metadata.name;
  f.clear();
  update(f.workloadStore(CONFIGMAPS), configMap('cm-13', { a: '2' }, 2));
  await reconcile(f, 'cm-13');
  t.same(summary(f.writes()), [`PATCH c1/manifestworks/${home}`, `PATCH c2/manifestworks/${home}`], 'its own slot, in each cluster');
  const w = f.caches.works.get('c1', home)!;
  const i = manifestNames(w).indexOf('ConfigMap/cm-13');
  t.same((w.spec!.workload!.manifests![i] as { data: unknown }).data, { a: '2' });
  t.equal((JSON.parse(w.metadata.annotations![SOURCE_GENERATIONS_ANNOTATION]!) as number[])[i], 2, 'its generation');
  f.clear();
  await reconcileAll(f);
  t.same(f.writes(), [], 'nothing else changed: nothing written');
});

t.test('an object removed: its slot rewritten without it; a slot emptied: its work deleted, after the others', async (t) => {
  const few = NAMES.slice(0, 9);
  const f = fixture({ configMaps: few.map((n) => configMap(n)) });
  t.teardown(() => f.close());
  await reconcileAll(f, few);
  t.same(f.caches.works.list().filter((w) => w.metadata.namespace === 'c1').map((w) => w.spec!.workload!.manifests!.length).sort(), [2, 8]);
  const lonely = f.caches.works.get('c1', slot(1))!;
  const [lastKind, lastName] = manifestNames(lonely).find((n) => n.startsWith('ConfigMap/'))!.split('/') as [string, string];
  t.equal(lastKind, 'ConfigMap');
  f.clear();
  f.workloadStore(CONFIGMAPS).delete(configMap(lastName));
  await reconcile(f, lastName);
  t.same(summary(f.writes()), [`PATCH c1/manifestworks/${slot(1)}`, `PATCH c2/manifestworks/${slot(1)}`], 'removed from its slot only');
  t.notOk(manifestNames(f.caches.works.get('c1', slot(1))).includes(`ConfigMap/${lastName}`));
  t.ok(f.caches.works.get('c1', slot(0))!.spec!.workload!.manifests!.length === 8, 'the full slot untouched');
});

t.test('an object that outgrows its slot (B) moves to one with room: the receiving work is written before the releasing one', async (t) => {
  const few = NAMES.slice(0, 4);
  const f = fixture({ objects: 8, bytes: 2_000, configMaps: few.map((n) => configMap(n)) });
  t.teardown(() => f.close());
  await reconcileAll(f, few);
  t.same(f.caches.works.list().filter((w) => w.metadata.namespace === 'c1').map((w) => w.metadata.name), [slot(0)], 'all in one slot');
  f.clear();
  update(f.workloadStore(CONFIGMAPS), configMap('cm-01', { a: 'x'.repeat(1_500) }, 2));
  await reconcile(f, 'cm-01');
  const c1 = summary(f.writes()).filter((s) => s.includes(' c1/'));
  t.same(c1, [`PATCH c1/manifestworks/${slot(1)}`, `PATCH c1/manifestworks/${slot(0)}`], 'the new slot first, then the old one');
  t.same(manifestNames(f.caches.works.get('c1', slot(1))), ['ConfigMap/cm-01']);
  t.notOk(manifestNames(f.caches.works.get('c1', slot(0))).includes('ConfigMap/cm-01'));
  t.notOk(f.writes().some((w) => w.method === 'DELETE'), 'nothing deleted');
});

t.test('a restart with a lower N: slots are read back from the ITS, nothing is dropped before its object says so, the objects past N move', async (t) => {
  const first = fixture();
  await reconcileAll(first);
  const stored = first.caches.works.list().map((w) => structuredClone(w));
  await first.close();
  const f = fixture({ objects: 5, works: stored });
  t.teardown(() => f.close());
  // One object alone first: its slot (read whole) keeps the others it does not know yet.
  const home = stored.find((w) => w.metadata.namespace === 'c1' && manifestNames(w).includes('ConfigMap/cm-00'))!;
  const before = manifestNames(home);
  await reconcile(f, 'cm-00');
  t.ok(f.actions().some((a) => a.method === 'GET' && a.path === worksPath('c1', home.metadata.name)), 'its slot read whole from the ITS');
  const after = manifestNames(f.caches.works.get('c1', home.metadata.name));
  t.same(after.sort(), before.sort(), 'every manifest of the slot still there');
  f.clear();
  await reconcileAll(f);
  const c1 = f.caches.works.list().filter((w) => w.metadata.namespace === 'c1');
  t.ok(c1.every((w) => w.spec!.workload!.manifests!.length <= 5), `at most 5 per work now (${c1.map((w) => w.spec!.workload!.manifests!.length).join(', ')})`);
  t.same(c1.flatMap(manifestNames).sort(), [...NAMES.map((n) => `ConfigMap/${n}`), 'Namespace/demo'].sort(), 'each object exactly once');
  // Every move wrote its receiver before its releaser: the first write carrying the object in its
  // new slot comes before the first write of its old slot without it.
  const writes = f.writes().filter((w) => w.path.includes('/c1/') && w.method === 'PATCH');
  const slotOf = (works: ManifestWork[], n: string) => works.find((w) => w.metadata.namespace === 'c1' && manifestNames(w).includes(n))?.metadata.name;
  let moved = 0;
  for (const n of NAMES.map((x) => `ConfigMap/${x}`)) {
    const from = slotOf(stored, n)!;
    const to = slotOf(c1, n)!;
    if (from === to) continue;
    moved++;
    const received = writes.findIndex((w) => w.path.endsWith(`/${to}`) && manifestNames(w.body as ManifestWork).includes(n));
    const released = writes.findIndex((w) => w.path.endsWith(`/${from}`) && !manifestNames(w.body as ManifestWork).includes(n));
    t.ok(received >= 0 && received < released, `${n}: ${to} written (${received}) before ${from} (${released})`);
  }
  t.ok(moved >= 6, `the objects past 5 in the two full slots moved (${moved})`);
  t.notOk(f.writes().some((w) => w.method === 'DELETE'), 'nothing deleted: no slot emptied');
});

t.test('from a work per object to bundles and back: the other layout\'s works go only after the new ones are written', async (t) => {
  const few = NAMES.slice(0, 3);
  const perObject = controllerFixture({
    clusters: [cluster('c1')], policies: [EDGE],
    workload: [{ resource: CONFIGMAPS, objects: few.map((n) => configMap(n)) }],
  });
  for (const n of few) await perObject.reconcile(objectKey(CONFIGMAPS, 'demo', n));
  const own = perObject.caches.works.list().map((w) => structuredClone(w));
  await perObject.close();
  t.equal(own.length, 3, 'three works of one object each');
  const f = controllerFixture({
    clusters: [cluster('c1')], policies: [EDGE], works: own, bundleLimits: { objects: 8, bytes: 512_000 },
    workload: [{ resource: CONFIGMAPS, objects: few.map((n) => configMap(n)) }],
  });
  t.teardown(() => f.close());
  await reconcile(f, 'cm-00');
  const cm00 = manifestWorkName('wds1', { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'cm-00' });
  t.same(summary(f.writes()), [`PATCH c1/manifestworks/${slot(0)}`, `DELETE c1/manifestworks/${cm00}`], 'the bundle first, then its own work');
  for (const n of few.slice(1)) await reconcile(f, n);
  t.same(f.caches.works.list().map((w) => w.metadata.name), [slot(0)], 'one bundle left');
  const bundled = f.caches.works.list().map((w) => structuredClone(w));
  const back = controllerFixture({
    clusters: [cluster('c1')], policies: [EDGE], works: bundled,
    workload: [{ resource: CONFIGMAPS, objects: few.map((n) => configMap(n)) }],
  });
  t.teardown(() => back.close());
  await reconcile(back, 'cm-00');
  t.same(summary(back.writes()), [`PATCH c1/manifestworks/${cm00}`, `PATCH c1/manifestworks/${slot(0)}`], 'N = 1 again: its own work first, then the bundle without it');
  for (const n of few.slice(1)) await reconcile(back, n);
  t.notOk(back.caches.works.get('c1', slot(0)), 'the emptied bundle deleted');
  t.equal(back.caches.works.list().length, 3);
});

t.test('what a cluster says of one manifest of a bundle is that object\'s: its state and its apply failure', async (t) => {
  const few = NAMES.slice(0, 3);
  const f = fixture({ configMaps: few.map((n) => configMap(n)) });
  t.teardown(() => f.close());
  await reconcileAll(f, few);
  const w = structuredClone(f.caches.works.get('c1', slot(0))!);
  const names = manifestNames(w);
  const bad = names.indexOf('ConfigMap/cm-01');
  const cond = (type: string, status: 'True' | 'False', message = ''): Condition => ({ type, status, reason: type, message, lastTransitionTime: '2026-01-01T00:00:00Z' });
  w.metadata.generation = 1;
  w.status = {
    conditions: [{ ...cond('Applied', 'False', 'some failed'), observedGeneration: 1 }, { ...cond('Available', 'True'), observedGeneration: 1 }],
    resourceStatus: {
      manifests: names.map((n, i) => ({
        resourceMeta: { ordinal: i, group: '', version: 'v1', kind: n.split('/')[0]!, resource: n.startsWith('Namespace') ? 'namespaces' : 'configmaps', namespace: n.startsWith('Namespace') ? '' : 'demo', name: n.split('/')[1]! },
        conditions: i === bad ? [cond('Applied', 'False', 'Failed to apply manifest: Apply failed with 1 conflict: conflict with "other": .data.a')] : [cond('Applied', 'True'), cond('Available', 'True')],
      })),
    },
  };
  f.caches.works.set(w);
  const works = new Works(f.its.up, f.caches.works, 'm', 'wds1', true);
  const id = (name: string) => ({ group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name });
  t.equal(works.carrying('c1', id('cm-00'))?.status?.conditions?.find((c) => c.type === 'Applied')?.status, 'True', 'cm-00 applied');
  t.equal(works.carrying('c1', id('cm-01'))?.status?.conditions?.find((c) => c.type === 'Applied')?.status, 'False', 'cm-01 not');
  f.clear();
  await reconcile(f, 'cm-01');
  await f.reconcile({ kind: 'policy', name: 'edge' });
  const status = f.writes().find((a) => a.path.endsWith('/status'))?.body as { status: { errors?: string[] } } | undefined;
  t.same(status?.status.errors, ['cluster c1 did not apply configmaps demo/cm-01: Apply failed with 1 conflict: conflict with "other": .data.a'], 'the policy names the manifest that failed, not its neighbours');
});

t.test('a releasing write that fails is tried again until it is done (the object\'s reconcile does not have to)', async (t) => {
  const few = NAMES.slice(0, 4);
  let refuse = 1;
  const f = controllerFixture({
    clusters: [cluster('c1')], policies: [EDGE], bundleLimits: { objects: 8, bytes: 2_000 },
    workload: [{ resource: CONFIGMAPS, objects: few.map((n) => configMap(n)) }],
    answer: (server, call) => {
      const body = call.body as ManifestWork | undefined;
      if (server === 'its' && call.method === 'PATCH' && call.path === worksPath('c1', slot(0)) && refuse > 0 && body && !manifestNames(body).includes('ConfigMap/cm-01')) {
        refuse--;
        return { status: 500, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, message: 'etcd hiccup' } };
      }
      return undefined;
    },
  });
  t.teardown(() => f.close());
  await reconcileAll(f, few);
  update(f.workloadStore(CONFIGMAPS), configMap('cm-01', { a: 'x'.repeat(1_500) }, 2));
  f.clear();
  await reconcile(f, 'cm-01');
  const toSlot0 = f.writes().filter((w) => w.path === worksPath('c1', slot(0)));
  t.equal(toSlot0.length, 2, 'the releasing write refused once, then written again');
  t.notOk(manifestNames(f.caches.works.get('c1', slot(0))).includes('ConfigMap/cm-01'), 'cm-01 gone from slot 0');
  t.same(manifestNames(f.caches.works.get('c1', slot(1))), ['ConfigMap/cm-01'], 'and in slot 1');
});

t.test('after a crash between a move\'s two writes: the object in two slots stays in one, nothing deleted', async (t) => {
  const few = NAMES.slice(0, 4);
  const first = controllerFixture({ clusters: [cluster('c1')], policies: [EDGE], bundleLimits: { objects: 8, bytes: 512_000 }, workload: [{ resource: CONFIGMAPS, objects: few.map((n) => configMap(n)) }] });
  await reconcileAll(first, few);
  const s0 = structuredClone(first.caches.works.get('c1', slot(0))!);
  await first.close();
  // What a crash leaves: cm-01 written into slot 1 and not yet out of slot 0.
  const cm01 = manifestNames(s0).indexOf('ConfigMap/cm-01');
  const s1 = structuredClone(s0);
  s1.metadata.name = slot(1);
  s1.spec!.workload!.manifests = [s0.spec!.workload!.manifests![cm01]!];
  s1.spec!.manifestConfigs = [s0.spec!.manifestConfigs![cm01]!];
  s1.metadata.annotations = { ...s1.metadata.annotations, [SOURCES_ANNOTATION]: JSON.stringify([JSON.parse(s0.metadata.annotations![SOURCES_ANNOTATION]!)[cm01]]), [SOURCE_GENERATIONS_ANNOTATION]: '[1]' };
  const f = controllerFixture({ clusters: [cluster('c1')], policies: [EDGE], works: [s0, s1], bundleLimits: { objects: 8, bytes: 512_000 }, workload: [{ resource: CONFIGMAPS, objects: few.map((n) => configMap(n)) }] });
  t.teardown(() => f.close());
  await reconcileAll(f, few);
  const carriers = f.caches.works.list().filter((w) => manifestNames(w).includes('ConfigMap/cm-01'));
  t.equal(carriers.length, 1, `cm-01 in one slot now (${carriers.map((w) => w.metadata.name).join(', ')})`);
  t.notOk(f.writes().some((w) => w.method === 'DELETE' && f.caches.works.list().length === 0), 'nothing emptied wrongly');
  t.same(f.caches.works.list().flatMap(manifestNames).filter((n) => n.startsWith('ConfigMap/')).sort(), few.map((n) => `ConfigMap/${n}`), 'every object once');
});

t.test('an object bigger than B alone in its slot stays there; a slot of that name the cache has not shown is read before it is written', async (t) => {
  const big = configMap('cm-00', { a: 'x'.repeat(3_000) });
  const f = controllerFixture({ clusters: [cluster('c1')], policies: [EDGE], bundleLimits: { objects: 8, bytes: 2_000 }, workload: [{ resource: CONFIGMAPS, objects: [big] }] });
  t.teardown(() => f.close());
  await reconcile(f, 'cm-00');
  t.same(f.caches.works.list().map((w) => w.metadata.name), [slot(0)]);
  f.clear();
  update(f.workloadStore(CONFIGMAPS), configMap('cm-00', { a: 'y'.repeat(3_000) }, 2));
  await reconcile(f, 'cm-00');
  t.same(summary(f.writes()), [`PATCH c1/manifestworks/${slot(0)}`], 'rewritten in place, no new slot');

  // Another leader wrote slot 0 of a group a moment ago; this one's cache does not show it yet.
  const lagging = controllerFixture({ clusters: [cluster('c1')], policies: [EDGE], bundleLimits: { objects: 8, bytes: 512_000 }, workload: [{ resource: CONFIGMAPS, objects: [configMap('cm-05')] }],
    answer: (server, call) => (server === 'its' && call.method === 'GET' && call.path === worksPath('c1', slot(0)) ? { status: 200, body: f.caches.works.get('c1', slot(0)) } : undefined) });
  t.teardown(() => lagging.close());
  await reconcile(lagging, 'cm-05');
  t.same(manifestNames(lagging.caches.works.get('c1', slot(0))).sort(), ['ConfigMap/cm-00', 'ConfigMap/cm-05'], 'what the ITS held is kept, the new object added');
});

t.test('a slot whose work is being deleted gets no object: an executor switched and switched back places it into a new slot', async (t) => {
  const withExecutor = (name: string): BindingPolicy => ({ ...EDGE, spec: { ...EDGE.spec, executor: { serviceAccount: { namespace: 'ex', name } } } as never });
  let terminate: (name: string) => ManifestWork | undefined = () => undefined;
  // The ITS as the agent keeps it: a deleted work stays, terminating, while its finalizer is held.
  const f = controllerFixture({
    clusters: [cluster('c1')], policies: [withExecutor('admin')], bundleLimits: { objects: 4, bytes: 512_000 },
    workload: [{ resource: CONFIGMAPS, objects: [configMap('x')] }],
    answer: (server, call) => {
      const m = /manifestworks\/([^/?]+)/.exec(call.path);
      if (server === 'its' && m && call.method === 'DELETE') return { status: 200, body: terminate(m[1]!) };
      return undefined;
    },
  });
  terminate = (name) => {
    const w = f.caches.works.get('c1', name);
    if (w) update(f.caches.works, { ...w, metadata: { ...w.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['cluster.open-cluster-management.io/manifest-work-cleanup'] } });
    return w;
  };
  t.teardown(() => f.close());
  const settle = async () => { do { await new Promise((r) => setTimeout(r, WRITE_DELAY_MS + 5)); } while (!f.reconciler.bundles.idle()); };
  const x = objectKey(CONFIGMAPS, 'demo', 'x');
  const carrying = () => f.caches.works.list().filter((w) => (w.spec?.workload?.manifests ?? []).length > 0).map((w) => [w.metadata.name, w.metadata.deletionTimestamp !== undefined]);
  await f.reconcile(x); await settle();
  const [first] = carrying();
  t.equal(first?.[1], false, 'x in a slot of the admin group');
  update(f.caches.policies, withExecutor('default'));
  await f.reconcile(x); await settle();
  t.ok(f.caches.works.get('c1', String(first![0]))?.metadata.deletionTimestamp, 'the admin slot, emptied, is being deleted (its agent holds x until the new work applies it)');
  f.clear();
  update(f.caches.policies, withExecutor('admin'));
  await f.reconcile(x); await settle();
  t.same(f.writes().filter((a) => a.method !== 'DELETE' && a.path.endsWith(`/${String(first![0])}`)), [], 'nothing written into the terminating work');
  const live = carrying().filter(([, terminating]) => !terminating);
  t.equal(live.length, 1, 'x is carried by one live work');
  t.not(live[0]![0], first![0], 'a new slot, of another name');
});
