// Interchangeability, the WDS side: OCM's own work agent (open-cluster-management.io/ocm at
// build/ocm's version, `work agent` with its default intervals) applies the ManifestWorks our
// placement writes (src/controllers/model/wrapping.ts: one work per object, ServerSideApply under
// `work-agent-kubestellar-<wds>`), reports them in OCM's status shape, records its
// AppliedManifestWork `<hub hash>-<work>`, and cleans the WEC when a work is deleted.
//
// Kept apart from the agents `ksview spaces up` runs (a pull agent for wec1, a push agent for
// wec2): a fresh cluster name registered in its1 whose WEC is wec2, with namespaces of its own in
// wec2. The push agent serves only clusters with a `<cluster>-kubeconfig` Secret, which this
// cluster has not, so OCM's agent alone serves it.
//
// Bundled works (ksview serve --max-objects-per-work): OCM's agent applies a work of several
// objects as placement writes it (a manifestConfig per manifest, an implied Namespace orphaned) and
// reports each manifest. An object moved between two works (the receiving work written first, as
// placement does) stays in the WEC with OCM's agent too when the receiving work is applied before
// the releasing one; OCM's agent spares it only through the other AppliedManifestWork's owner
// reference, so where it reconciles the releasing work first it deletes and re-creates the object —
// ours also looks at the works not applied yet (src/agent/apply/handover.ts). The test says which happened.
//
// Executors (docs/agent.md, "Executors"): OCM's agent honours the same work with `spec.executor` that
// test/integration/agent-executor.test.ts gives ours — same outcomes (the namespaced objects
// applied, the ClusterRoleBinding refused, nothing else held back, deletion cleans). The refusal's
// words differ: OCM checks by SubjectAccessReviews before applying with its own identity, and says
// "not allowed to apply the resource <group> <resource>, <ns> <name>, will try again in 1m0s";
// ours impersonates the executor and carries the WEC's own Forbidden message. OCM needs no feature
// gate for it (ExecutorValidatingCaches only caches the reviews), and in the WEC the rights to
// create SubjectAccessReviews and to impersonate the ServiceAccount (its dry-run create of RBAC
// kinds); here it runs with wec2's admin kubeconfig.
import t from 'tap';
import { manifestWork, type ObjectIdentity } from '../../src/controllers/model/wrapping.js';
import { bundledWork } from '../../src/controllers/placement/bundle-slots.js';
import { appliedManifestWorkName, hubHash } from '../../src/kube/ocm-api.js';
import { managedCluster } from '../fixtures/inventory.js';
import { ocmWorkAgent } from '../fixtures/ocm.js';
import { kc, kcOk, layout, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { configMap, deployment, live, manifestStatus, type Obj as AgentObj } from '../fixtures/agent.js';
import { FIELD_MANAGER, malloryAdmin, ssaConfigs, teamExecutor } from '../fixtures/executor.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const WDS = 'wds1';

t.test("OCM's work agent applies the works placement writes, reports them, and cleans up", async (t) => {
  const cluster = uniqueName('ocm-peer');
  const ns = uniqueName('ocm-peer-ns');
  managedCluster(t, cluster, { 'ocm-peer': cluster });
  const agent = await ocmWorkAgent(t, cluster, 'wec2');
  t.teardown(() => { kc('wec2', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); });

  const objects: { id: ObjectIdentity; manifest: Obj }[] = [
    { id: { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: ns },
      manifest: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } },
    { id: { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: 'settings' },
      manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { greeting: 'hello' } } },
    { id: { group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name: 'web' },
      manifest: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } } } },
  ];
  // Exactly as placement writes them (feedbackRules included: WellKnownStatus for the Deployment).
  const works = objects.map(({ id, manifest }) => manifestWork(manifest, { wds: WDS, cluster, id, policies: [cluster], createOnly: false }) as Obj);
  for (const w of works) kcOk('its1', ['apply', '--server-side', '--field-manager', 'ksview-test', '-f', '-'], JSON.stringify(w));

  const get = (name: string): Obj => JSON.parse(kcOk('its1', ['-n', cluster, 'get', 'manifestwork', name, '-o', 'json'])) as Obj;
  const cond = (o: Obj, type: string) => (o.status?.conditions ?? []).find((c: Obj) => c.type === type);
  // A manifest's status holds its conditions itself (resourceStatus.manifests[].conditions).
  const manifestCond = (m: Obj, type: string) => (m.conditions ?? []).find((c: Obj) => c.type === type);

  await t.test('the objects live in wec2, applied under the WDS field manager', async (t) => {
    const cm = await waitUntil('the ConfigMap in wec2', () => {
      const r = kc('wec2', ['-n', ns, 'get', 'configmap', 'settings', '-o', 'json', '--show-managed-fields']);
      return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined;
    }, 90_000);
    t.equal(cm.data.greeting, 'hello');
    t.ok((cm.metadata.managedFields as Obj[]).some((f) => f.manager === `work-agent-kubestellar-${WDS}` && f.operation === 'Apply'),
      'applied server-side by the WDS field manager');
    t.equal(kc('wec2', ['-n', ns, 'get', 'deployment', 'web']).status, 0, 'the Deployment exists');
    t.equal(kc('wec1', ['get', 'namespace', ns]).status, 1, 'nothing in wec1');
  });

  await t.test('each work has Applied and Available, resourceStatus, and an AppliedManifestWork', async (t) => {
    for (const [i, w] of works.entries()) {
      const got = await waitUntil(`Applied and Available on ${w.metadata.name}`, () => {
        const o = get(w.metadata.name);
        return cond(o, 'Applied')?.status === 'True' && cond(o, 'Available')?.status === 'True' ? o : undefined;
      }, 90_000);
      t.ok((got.metadata.finalizers ?? []).includes('cluster.open-cluster-management.io/manifest-work-cleanup'), 'the cleanup finalizer');
      const m = got.status.resourceStatus.manifests[0];
      t.match(m.resourceMeta, { ordinal: 0, kind: objects[i]!.manifest.kind, resource: objects[i]!.id.resource, name: objects[i]!.id.name, version: 'v1' });
      t.equal(manifestCond(m, 'Applied')?.status, 'True', 'the manifest is Applied');
      t.equal(manifestCond(m, 'Available')?.status, 'True', 'the manifest is Available');
    }
    const hash = hubHash(`https://127.0.0.1:${layout.spaces.find((s) => s.name === 'its1')!.apiserverPort}`);
    for (const w of works) {
      const amw = JSON.parse(kcOk('wec2', ['get', 'appliedmanifestwork', appliedManifestWorkName(hash, w.metadata.name), '-o', 'json'])) as Obj;
      t.equal(amw.spec.hubHash, hash);
      t.equal(amw.spec.manifestWorkName, w.metadata.name);
      t.ok(amw.spec.agentID, 'an agent ID');
      t.equal(amw.status.appliedResources?.length, 1, 'the applied resource with its uid');
      t.ok(amw.status.appliedResources[0].uid);
    }
  });

  await t.test("the Deployment's availability reaches the work as status feedback", async (t) => {
    const deploy = works[2]!;
    // OCM polls status every 10 s (jittered) by default; give it a few rounds.
    const values = await waitUntil('AvailableReplicas = 1 in statusFeedbacks', () => {
      const v = get(deploy.metadata.name).status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values as Obj[] | undefined;
      return v?.find((x) => x.name === 'AvailableReplicas')?.fieldValue?.integer === 1 ? v : undefined;
    }, 120_000, 1000);
    t.ok(values.find((x) => x.name === 'ReadyReplicas'), 'ReadyReplicas reported too');
  });

  await t.test('deleting the works removes the objects from wec2, then the works', async (t) => {
    for (const w of [...works].reverse()) kcOk('its1', ['-n', cluster, 'delete', 'manifestwork', w.metadata.name, '--wait=false']);
    await waitUntil('the Deployment and ConfigMap gone from wec2', () =>
      kc('wec2', ['-n', ns, 'get', 'deployment', 'web']).status !== 0 && kc('wec2', ['-n', ns, 'get', 'configmap', 'settings']).status !== 0, 90_000);
    await waitUntil('the works gone (finalizer released)', () =>
      works.every((w) => kc('its1', ['-n', cluster, 'get', 'manifestwork', w.metadata.name]).status !== 0), 90_000);
    t.pass('cleaned');
  });
  t.comment(`OCM work agent pid ${agent.pid}, log ${agent.log}`);
});

t.test("OCM's work agent honours the executor of the same work: namespaced objects applied, the ClusterRoleBinding refused", async (t) => {
  const cluster = uniqueName('ocm-exec');
  managedCluster(t, cluster, { 'ocm-peer': cluster });
  const agent = await ocmWorkAgent(t, cluster, 'wec2');
  const { ns, sa } = teamExecutor(t, 'wec2');
  const crbName = uniqueName('mallory-admin');
  t.teardown(() => { kc('wec2', ['delete', 'clusterrolebinding', crbName, '--ignore-not-found']); });
  const manifests: AgentObj[] = [malloryAdmin(crbName), deployment(ns, 'web'), configMap(ns, 'settings', { color: 'blue' })];
  const work = uniqueName('mw-exec');
  kcOk('its1', ['apply', '--server-side', '--field-manager', 'ksview-test', '-f', '-'], JSON.stringify({
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name: work, namespace: cluster },
    spec: { workload: { manifests }, manifestConfigs: ssaConfigs(manifests),
      executor: { subject: { type: 'ServiceAccount', serviceAccount: { namespace: ns, name: sa } } } },
  }));
  const get = (): Obj | undefined => {
    const r = kc('its1', ['-n', cluster, 'get', 'manifestwork', work, '-o', 'json']);
    return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined;
  };
  const cond = (m: Obj | undefined, type: string) => (m?.conditions ?? []).find((c: Obj) => c.type === type);

  await waitUntil('the Deployment and the ConfigMap in wec2', () => live('wec2', ['-n', ns, 'deployment', 'web']) && live('wec2', ['-n', ns, 'configmap', 'settings']), 120_000);
  const d = live('wec2', ['-n', ns, 'deployment', 'web', '--show-managed-fields'])!;
  t.ok((d.metadata.managedFields as Obj[]).some((f) => f.manager === FIELD_MANAGER && f.operation === 'Apply'), 'applied server-side under the WDS field manager');
  const refused = await waitUntil('the ClusterRoleBinding\'s manifest Applied=False', () => {
    const m = manifestStatus(get(), 'ClusterRoleBinding', crbName);
    return cond(m, 'Applied')?.status === 'False' ? m : undefined;
  }, 120_000);
  const message = cond(refused, 'Applied').message as string;
  t.match(message, `not allowed to apply the resource rbac.authorization.k8s.io clusterrolebindings,  ${crbName}`, "OCM's words for the refusal");
  t.comment(`OCM's condition: ${message}`);
  t.notOk(live('wec2', ['clusterrolebinding', crbName]), 'no ClusterRoleBinding in wec2');
  t.equal(kc('wec2', ['auth', 'can-i', '*', '*', '--as', 'mallory']).stdout.trim(), 'no', 'mallory holds nothing in wec2');
  const w = await waitUntil('the namespaced manifests Applied=True', () => {
    const got = get();
    return cond(manifestStatus(got, 'Deployment', 'web'), 'Applied')?.status === 'True' && cond(manifestStatus(got, 'ConfigMap', 'settings'), 'Applied')?.status === 'True' ? got : undefined;
  }, 120_000);
  t.equal((w.status.conditions as Obj[]).find((c) => c.type === 'Applied')?.status, 'False', 'the work as a whole not Applied');

  kcOk('its1', ['-n', cluster, 'delete', 'manifestwork', work, '--wait=false']);
  await waitUntil('what the work applied is gone from wec2', () => !live('wec2', ['-n', ns, 'deployment', 'web']) && !live('wec2', ['-n', ns, 'configmap', 'settings']), 120_000);
  t.comment(`OCM work agent pid ${agent.pid}, log ${agent.log}`);
});

t.test("OCM's work agent applies bundled works: every manifest, each reported; an object moved between works is still there", async (t) => {
  const cluster = uniqueName('ocm-bundle');
  const ns = uniqueName('ocm-bundle-ns');
  managedCluster(t, cluster, { 'ocm-peer': cluster });
  const agent = await ocmWorkAgent(t, cluster, 'wec2');
  t.teardown(() => { kc('wec2', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); });
  const id = (resource: string, name: string, namespace = ns): ObjectIdentity => ({ group: '', version: 'v1', resource, namespace, name });
  const one = (manifest: Obj, oid: ObjectIdentity, implied = false) => manifestWork(manifest, { wds: WDS, cluster, id: oid, policies: [cluster], createOnly: false, impliedNamespace: implied });
  const cm = (name: string) => one({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { name } }, id('configmaps', name));
  const namespace = one({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, id('namespaces', ns, ''), true);
  const write = (w: Obj) => kcOk('its1', ['apply', '--server-side', '--force-conflicts', '--field-manager', 'ksview-test', '-f', '-'], JSON.stringify(w));
  const get = (name: string): Obj | undefined => { const r = kc('its1', ['-n', cluster, 'get', 'manifestwork', name, '-o', 'json']); return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined; };
  const uid = (name: string) => { const r = kc('wec2', ['-n', ns, 'get', 'configmap', name, '-o', 'jsonpath={.metadata.uid}']); return r.status === 0 ? r.stdout : undefined; };
  const b0 = bundledWork(WDS, cluster, 'bundle-0', [namespace, cm('a'), cm('b')]) as Obj;
  const b1 = bundledWork(WDS, cluster, 'bundle-1', [cm('c')]) as Obj;
  write(b0);
  write(b1);
  t.equal(b0.spec.manifestConfigs.length, 3, 'a manifestConfig per manifest');

  for (const w of [b0, b1]) {
    const got = await waitUntil(`every manifest of ${w.metadata.name} Applied and Available`, () => {
      const o = get(w.metadata.name);
      const ms = (o?.status?.resourceStatus?.manifests ?? []) as Obj[];
      return ms.length === w.spec.workload.manifests.length && ms.every((m) => (m.conditions as Obj[]).some((c) => c.type === 'Applied' && c.status === 'True')) ? o : undefined;
    }, 120_000, 500);
    t.same((got!.status.resourceStatus.manifests as Obj[]).map((m) => m.resourceMeta.ordinal), w.spec.workload.manifests.map((_: unknown, i: number) => i), `${w.metadata.name}: each manifest reported by its ordinal`);
  }
  for (const n of ['a', 'b', 'c']) t.ok(uid(n), `${n} in wec2`);
  const before = { a: uid('a'), b: uid('b'), c: uid('c') };

  // b moves to bundle-1: the receiving work first, then the releasing one.
  write(bundledWork(WDS, cluster, 'bundle-1', [cm('b'), cm('c')]) as Obj);
  await waitUntil('bundle-1 applied with b', () => {
    const o = get('bundle-1');
    return (o?.status?.resourceStatus?.manifests ?? []).length === 2 && (o!.status.conditions as Obj[]).some((c) => c.type === 'Applied' && c.status === 'True' && c.observedGeneration === o!.metadata.generation);
  }, 120_000, 500);
  write(bundledWork(WDS, cluster, 'bundle-0', [namespace, cm('a')]) as Obj);
  const settled = await waitUntil('bundle-0 applied without b, b still there', () => {
    const o = get('bundle-0');
    const applied = (o?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Applied');
    return applied?.status === 'True' && applied.observedGeneration === o!.metadata.generation && uid('b') ? uid('b') : undefined;
  }, 120_000, 500);
  t.equal(uid('a'), before.a, 'a untouched');
  t.equal(uid('c'), before.c, 'c untouched');
  t.ok(settled, 'b is in wec2 after the move');
  t.comment(settled === before.b ? "OCM's agent kept b (the receiving work was applied first)" : "OCM's agent deleted and re-created b (a new uid): ours hands it over in place");

  for (const w of ['bundle-0', 'bundle-1']) kcOk('its1', ['-n', cluster, 'delete', 'manifestwork', w, '--wait=false']);
  await waitUntil('the ConfigMaps gone from wec2', () => ['a', 'b', 'c'].every((n) => !uid(n)), 120_000, 500);
  t.equal(kc('wec2', ['get', 'namespace', ns]).status, 0, 'the implied Namespace orphaned: still there');
  t.comment(`OCM work agent pid ${agent.pid}, log ${agent.log}`);
});
