// The WEC side, tried as an OCM user would: a ManifestWork written by hand into wec1's mailbox of
// its1 is applied in wec1 by the pull agent `ksview spaces up` runs (and nowhere else), its status
// is reported in OCM's shape (and passes OCM's own CRD), a WorkStatus per object carries the
// object's status, and the work's lifecycle (a dropped manifest, Orphan, deletion) cleans exactly
// what it should.
import t from 'tap';
import { OCM_CRD_FILES, ocmApiYaml } from '../fixtures/ocm.js';
import { kc, kcOk, uniqueName, waitUntil, type TapLike } from '../fixtures/spaces.js';
import {
  condition, configMap, deployment, feedback, getWork, isTrue, live, manifestStatus, namespaceObj, writeWork, type Obj,
} from '../fixtures/agent.js';

const CLUSTER = 'wec1';

function cleanupWec(t: TapLike, ns: string, clusterScoped: string[][] = []): void {
  t.teardown(() => {
    kc('wec1', ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
    for (const args of clusterScoped) kc('wec1', ['delete', ...args, '--ignore-not-found']);
  });
}

t.test('a hand-written ManifestWork: everything lives in wec1 only, and its status says so', async (t) => {
  const ns = uniqueName('ag');
  const work = uniqueName('mw');
  const user = `${ns}-user`;
  const role = `${ns}-reader`;
  const webhook = `${ns}-hook`;
  cleanupWec(t, ns, [['clusterrole', role], ['clusterrolebinding', role], ['validatingwebhookconfiguration', webhook]]);
  const manifests: Obj[] = [
    deployment(ns, 'web'),
    configMap(ns, 'settings', { color: 'blue' }),
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: webhook },
      webhooks: [{ name: 'check.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Ignore',
        clientConfig: { url: 'https://127.0.0.1:1/validate' },
        objectSelector: { matchLabels: { [`${ns}-never`]: 'x' } },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
    namespaceObj(ns),
  ];
  writeWork(t, CLUSTER, work, manifests, {
    manifestConfigs: [{ resourceIdentifier: { group: 'apps', resource: 'deployments', namespace: ns, name: 'web' }, feedbackRules: [{ type: 'WellKnownStatus' }],
      updateStrategy: { type: 'ServerSideApply', serverSideApply: { fieldManager: 'work-agent-test', force: false } } }],
  });

  // Dependency order makes the namespaced objects land although the Namespace comes last.
  await waitUntil('every object in wec1', () => live('wec1', ['-n', ns, 'deployment', 'web']) && live('wec1', ['-n', ns, 'configmap', 'settings'])
    && live('wec1', ['clusterrolebinding', role]) && live('wec1', ['validatingwebhookconfiguration', webhook]), 60_000);
  t.equal(live('wec1', ['-n', ns, 'configmap', 'settings'])?.data?.color, 'blue', 'the ConfigMap as written');
  t.equal(kc('wec1', ['auth', 'can-i', 'list', 'pods', '--as', user]).stdout.trim(), 'yes', 'the ClusterRoleBinding grants in wec1');
  t.notOk(live('wec2', ['namespace', ns]), 'nothing reached wec2');
  t.equal(kc('wec2', ['auth', 'can-i', 'list', 'pods', '--as', user]).stdout.trim(), 'no', 'and nothing grants there');

  // kubectl leaves managedFields out of -o json unless asked.
  const deploy = live('wec1', ['-n', ns, 'deployment', 'web', '--show-managed-fields'])!;
  t.ok((deploy.metadata.managedFields as Obj[]).some((m) => m.manager === 'work-agent-test' && m.operation === 'Apply'), 'applied by server-side apply under the work\'s field manager');

  const done = await waitUntil('the work Applied and Available with the Deployment available', () => {
    const w = getWork(CLUSTER, work);
    const m = manifestStatus(w, 'Deployment', 'web');
    return isTrue(w, 'Applied') && isTrue(w, 'Available') && Number(feedback(m, 'AvailableReplicas')) >= 1 ? w : undefined;
  }, 120_000);
  t.equal(done.metadata.finalizers?.includes('cluster.open-cluster-management.io/manifest-work-cleanup'), true, 'OCM\'s finalizer held');
  const manifestsStatus = done.status.resourceStatus.manifests as Obj[];
  t.equal(manifestsStatus.length, manifests.length, 'one manifest status per manifest');
  const meta = manifestStatus(done, 'Deployment', 'web')!.resourceMeta;
  t.same(meta, { ordinal: 0, group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', name: 'web', namespace: ns }, 'resourceMeta as OCM fills it');
  t.ok(manifestsStatus.every((m) => (m.conditions as Obj[]).some((c) => c.type === 'Applied' && c.status === 'True')), 'each manifest Applied');
  t.equal(condition(done, 'Applied')?.observedGeneration, done.metadata.generation, 'conditions name the generation they saw');

  // The AppliedManifestWork in wec1, as OCM's agent records it.
  const applied = (JSON.parse(kcOk('wec1', ['get', 'appliedmanifestworks', '-o', 'json'])).items as Obj[]).find((a) => a.spec.manifestWorkName === work);
  t.ok(applied, 'an AppliedManifestWork for the work');
  t.match(applied?.metadata.name, new RegExp(`^[0-9a-f]{64}-${work}$`), 'named <hub hash>-<work>');
  t.equal(applied?.spec.hubHash, applied?.metadata.name.slice(0, 64), 'spec.hubHash');
  t.ok(applied?.spec.agentID, 'spec.agentID');
  const uid = deploy.metadata.uid as string;
  t.ok((applied?.status.appliedResources as Obj[]).some((r) => r.resource === 'deployments' && r.name === 'web' && r.uid === uid), 'appliedResources with the live uid');

  // A WorkStatus per applied object, carrying its status.
  const ws = await waitUntil('a WorkStatus with the Deployment available', () => {
    const items = JSON.parse(kcOk('its1', ['-n', CLUSTER, 'get', 'workstatuses', '-o', 'json'])).items as Obj[];
    return items.find((w) => w.spec?.sourceRef?.name === 'web' && w.spec?.sourceRef?.namespace === ns && Number(w.status?.availableReplicas) >= 1);
  }, 60_000);
  t.same(ws.spec.sourceRef, { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: ns, name: 'web' }, 'sourceRef as KubeStellar has it');

  // The status passes OCM's own CRD: the work with its status written to wec2, where the real CRD is installed.
  const crd = ocmApiYaml(OCM_CRD_FILES['work.open-cluster-management.io_manifestworks.yaml']);
  if (kc('wec2', ['get', 'crd', crd.metadata.name]).status !== 0) {
    kcOk('wec2', ['create', '-f', '-'], JSON.stringify(crd));
    t.teardown(() => { kc('wec2', ['delete', 'crd', crd.metadata.name, '--ignore-not-found', '--wait=false']); });
  }
  await waitUntil('the real CRD to be served', () => kc('wec2', ['get', 'manifestworks', '-n', 'default']).status === 0, 60_000);
  const copy = { apiVersion: done.apiVersion, kind: done.kind, metadata: { name: work, namespace: 'default' }, spec: done.spec };
  kcOk('wec2', ['create', '-f', '-'], JSON.stringify(copy));
  t.teardown(() => { kc('wec2', ['-n', 'default', 'delete', 'manifestwork', work, '--ignore-not-found', '--wait=false']); });
  const check = kc('wec2', ['-n', 'default', 'patch', 'manifestwork', work, '--subresource=status', '--type=merge', '--dry-run=server', '-p', JSON.stringify({ status: done.status })]);
  t.equal(check.status, 0, `OCM's CRD accepts the status: ${check.stderr.trim()}`);
});

t.test('lifecycle: a dropped manifest, Orphan, and a deletion that cleans wec1 before the work goes', async (t) => {
  const ns = uniqueName('agl');
  cleanupWec(t, ns);
  const work = uniqueName('mw');
  const objects = [namespaceObj(ns), configMap(ns, 'a', { k: 'a' }), configMap(ns, 'b', { k: 'b' })];
  writeWork(t, CLUSTER, work, objects);
  await waitUntil('both ConfigMaps in wec1', () => live('wec1', ['-n', ns, 'configmap', 'a']) && live('wec1', ['-n', ns, 'configmap', 'b']), 60_000);

  writeWork(undefined, CLUSTER, work, [objects[0]!, objects[1]!]);
  await waitUntil('the dropped ConfigMap deleted', () => !live('wec1', ['-n', ns, 'configmap', 'b']), 30_000);
  t.ok(live('wec1', ['-n', ns, 'configmap', 'a']), 'only the dropped object was deleted');

  // Deletion: the work stays until wec1 is clean (the finalizer), then goes.
  const del = kc('its1', ['-n', CLUSTER, 'delete', 'manifestwork', work, '--timeout=60s']);
  t.equal(del.status, 0, `the work is deleted: ${del.stderr.trim()}`);
  t.notOk(live('wec1', ['-n', ns, 'configmap', 'a']), 'its ConfigMap was gone before the work disappeared');
  const nsAfter = live('wec1', ['namespace', ns]);
  t.ok(!nsAfter || nsAfter.metadata.deletionTimestamp, 'its Namespace deleted with it');

  // Orphan keeps the objects.
  const ns2 = uniqueName('ago');
  cleanupWec(t, ns2);
  const orphan = uniqueName('mw');
  writeWork(t, CLUSTER, orphan, [namespaceObj(ns2), configMap(ns2, 'kept', { k: 'v' })], { deleteOption: { propagationPolicy: 'Orphan' } });
  await waitUntil('the orphan work applied', () => isTrue(getWork(CLUSTER, orphan), 'Applied'), 60_000);
  t.equal(kc('its1', ['-n', CLUSTER, 'delete', 'manifestwork', orphan, '--timeout=60s']).status, 0, 'the Orphan work is deleted');
  t.equal(live('wec1', ['-n', ns2, 'configmap', 'kept'])?.data?.k, 'v', 'Orphan keeps the objects');
  t.notOk(live('wec1', ['namespace', ns2])?.metadata.deletionTimestamp, 'and their Namespace');
});

/**
 * A drift is undone by the object's watch, well before the 5-minute backstop resync (docs/agent.md,
 * "Drift"); the bound leaves room for a loaded machine, where each kubectl of the polling alone
 * takes up to 3.5 s.
 */
const BY_THE_WATCH_MS = 30_000;

t.test('drift: a deleted object comes back, a forced field is put back, an unforced one is left to its new manager', async (t) => {
  const ns = uniqueName('agd');
  cleanupWec(t, ns);
  const work = uniqueName('mw');
  const ssa = (force: boolean, name: string) => ({ resourceIdentifier: { group: '', resource: 'configmaps', namespace: ns, name },
    updateStrategy: { type: 'ServerSideApply', serverSideApply: { fieldManager: 'work-agent-drift', force } } });
  writeWork(t, CLUSTER, work, [namespaceObj(ns), configMap(ns, 'forced', { k: 'ours' }), configMap(ns, 'polite', { k: 'ours' })],
    { manifestConfigs: [ssa(true, 'forced'), ssa(false, 'polite')] });
  await waitUntil('applied', () => isTrue(getWork(CLUSTER, work), 'Applied') && live('wec1', ['-n', ns, 'configmap', 'polite']), 60_000);

  kcOk('wec1', ['-n', ns, 'delete', 'configmap', 'forced']);
  const t0 = Date.now();
  await waitUntil('the deleted ConfigMap re-created', () => live('wec1', ['-n', ns, 'configmap', 'forced']), BY_THE_WATCH_MS, 50);
  t.ok(Date.now() - t0 <= BY_THE_WATCH_MS, `re-created in ${Date.now() - t0} ms: by the watch, not the backstop resync`);

  kcOk('wec1', ['-n', ns, 'patch', 'configmap', 'forced', '--type=merge', '-p', '{"data":{"k":"theirs"}}']);
  const t1 = Date.now();
  await waitUntil('the forced field put back', () => live('wec1', ['-n', ns, 'configmap', 'forced'])?.data?.k === 'ours', BY_THE_WATCH_MS, 50);
  t.ok(Date.now() - t1 <= BY_THE_WATCH_MS, `drift reverted in ${Date.now() - t1} ms: by the watch, not the backstop resync`);

  // Another manager takes the field by server-side apply: without force, SSA leaves it to them
  // and the conflict is reported on that manifest.
  kcOk('wec1', ['-n', ns, 'apply', '--server-side', '--force-conflicts', '--field-manager=someone-else', '-f', '-'],
    JSON.stringify(configMap(ns, 'polite', { k: 'theirs' })));
  writeWork(undefined, CLUSTER, work, [namespaceObj(ns), configMap(ns, 'forced', { k: 'ours' }), configMap(ns, 'polite', { k: 'ours', more: 'x' })],
    { manifestConfigs: [ssa(true, 'forced'), ssa(false, 'polite')] });
  const conflicted = await waitUntil('the conflict reported', () => {
    const m = manifestStatus(getWork(CLUSTER, work), 'ConfigMap', 'polite');
    const applied = (m?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Applied');
    return applied?.status === 'False' ? applied : undefined;
  }, 30_000);
  t.match(conflicted.message, /conflict/i, `the manifest says why: ${conflicted.message}`);
  t.equal(live('wec1', ['-n', ns, 'configmap', 'polite'])?.data?.k, 'theirs', 'the other manager\'s value stays');
  t.equal(condition(getWork(CLUSTER, work), 'Applied')?.status, 'False', 'the work is not Applied while a manifest is not');
});

t.test('a manifest whose Namespace is not in wec1 yet fails, and applies once the Namespace comes (another work\'s, in no order)', async (t) => {
  const ns = uniqueName('agn');
  cleanupWec(t, ns);
  const work = uniqueName('mw');
  writeWork(t, CLUSTER, work, [configMap(ns, 'early', { k: 'v' })]);
  const failed = await waitUntil('the apply refused: no Namespace', () => {
    const m = manifestStatus(getWork(CLUSTER, work), 'ConfigMap', 'early');
    const applied = (m?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Applied');
    return applied?.status === 'False' ? applied : undefined;
  }, 30_000);
  t.match(failed.message, /not found/, `the manifest says why: ${failed.message}`);
  kcOk('wec1', ['create', 'namespace', ns]);
  const t0 = Date.now();
  await waitUntil('applied once the Namespace is there', () => isTrue(getWork(CLUSTER, work), 'Applied') && live('wec1', ['-n', ns, 'configmap', 'early']), 90_000, 100);
  t.ok(Date.now() - t0 <= 70_000, `applied ${Date.now() - t0} ms after the Namespace came (the retry backs off from 1 s up to a minute)`);
  t.equal(live('wec1', ['-n', ns, 'configmap', 'early'])?.data?.k, 'v', 'the ConfigMap as written');
});
