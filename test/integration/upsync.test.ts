// Upsync on the test spaces (docs/upsync.md): objects born in the WECs, made
// there with kubectl as a local operator would, seen from the WDS with plain kubectl — through the
// per-cluster contexts `wds1-view-wec1`/`wds1-view-wec2` (the cluster's upsynced objects as their
// native kinds) and fleet-wide as `upsyncedobjects`. A ConfigMap appears within 1 s, changes and
// goes; the same name in wec2 is a second row; a Secret is upsynced only when named; writes are
// refused (405); an object over the size bound is left out and the policy's status says so; a
// user without the native read right gets 403; `associatedWith: downsync` brings a placed
// Deployment's ReplicaSet and Pods (kwok runs them in wec1) and takes them away with the policy;
// client-go's dynamic informer and client-node list and watch `upsyncedobjects`.
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { chartFile } from '../../src/util/chart-files.js';
import { buildClientGo, followClientGo, runClientGo } from '../fixtures/clientgo.js';
import { bindingPolicy, policy, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, kubeconfig, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { httpsJson, userKubeconfig, WDS1_VIEW_PATH } from '../fixtures/wds1-clients.js';

const WAIT = 120_000;
const UO = 'upsyncedobjects.view.kubestellar.io';
const json = (s: string) => JSON.parse(s) as Obj;

/** One object through a per-cluster context, or undefined. */
function viewed(cluster: string, ns: string, what: string[]): Obj | undefined {
  const r = kc(`wds1-view-${cluster}`, ['-n', ns, 'get', ...what, '-o', 'json']);
  return r.status === 0 ? json(r.stdout) : undefined;
}

/** `kubectl get … -o wide` as cells, the AGE column left out (two reads may straddle a second). */
function cells(context: string, ns: string, what: string): string[][] {
  const lines = kcOk(context, ['-n', ns, 'get', what, '-o', 'wide']).trim().split('\n').map((l) => l.split(/\s{2,}/));
  const age = lines[0]!.indexOf('AGE');
  return lines.map((l) => l.filter((_, i) => i !== age));
}

/** The fleet-wide rows in a namespace (names), by label selector. */
function rows(ns: string, selector?: string): string[] {
  const r = kc('wds1-view', ['-n', ns, 'get', UO, ...(selector ? ['-l', selector] : []), '-o', 'json']);
  return r.status === 0 ? (json(r.stdout).items as Obj[]).map((o) => o.metadata.name as string).sort() : [];
}

t.test('ConfigMaps and Secrets born in wec1 and wec2, seen from the WDS', async (t) => {
  const run = uniqueName('up');
  const ns = testNamespace(t, ['wds1', 'wec1', 'wec2'], 'up');
  bindingPolicy(t, run, {
    clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }],
    upsync: [{ resources: ['configmaps', 'secrets'], namespaces: [ns] }, { resources: ['secrets'], namespaces: [ns], objectNames: ['named'] }],
  });
  const its = (cluster: string) => kc('its1', ['-n', cluster, 'get', 'upsyncrequests', '-o', 'json']);
  await waitUntil('the UpsyncRequests in both mailboxes', () => ['wec1', 'wec2'].every((c) => its(c).status === 0
    && (json(its(c).stdout).items as Obj[]).some((r) => r.spec.policy === run && r.status)), WAIT, 250);

  // Born in wec1: visible through wds1-view-wec1 and in upsyncedobjects within 1 s.
  kcOk('wec1', ['-n', ns, 'create', 'configmap', 'local', '--from-literal=color=blue']);
  const t0 = Date.now();
  const cm = await waitUntil('the ConfigMap through wds1-view-wec1', () => viewed('wec1', ns, ['configmap', 'local']), 10_000, 25);
  const inView = Date.now() - t0;
  t.ok(inView <= 1000, `seen through wds1-view-wec1 ${inView} ms after kubectl create returned (≤ 1 s)`);
  t.match(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'local', namespace: ns }, data: { color: 'blue' } }, 'as its native kind, with its data');
  t.notOk(cm.metadata.managedFields, 'managedFields stripped');
  await waitUntil('its row in upsyncedobjects', () => rows(ns).includes('wec1:configmaps:local'), 1000, 25);
  t.pass(`in upsyncedobjects within ${Date.now() - t0} ms`);

  // Changed → changed; the table columns as a user sees them.
  kcOk('wec1', ['-n', ns, 'patch', 'configmap', 'local', '--type=merge', '-p', '{"data":{"color":"green"}}']);
  await waitUntil('the change', () => viewed('wec1', ns, ['configmap', 'local'])?.data?.color === 'green', 10_000, 50);
  const table = kcOk('wds1-view', ['-n', ns, 'get', UO, '-l', 'view.kubestellar.io/cluster=wec1,view.kubestellar.io/kind=ConfigMap']);
  t.match(table.split('\n')[0], /^NAME\s+CLUSTER\s+KIND\s+AGE\s+LAST-SEEN/, 'upsyncedobjects columns');
  t.match(table, /wec1:configmaps:local\s+wec1\s+ConfigMap/);
  t.match(kcOk('wds1-view', ['explain', 'upsyncedobjects.status.conditions']), /lastTransitionTime/, 'kubectl explain inside the view, from its OpenAPI');
  await waitUntil('the ConfigMaps the same through the view', () => JSON.stringify(cells('wds1-view-wec1', ns, 'configmaps')) === JSON.stringify(cells('wec1', ns, 'configmaps')), 10_000, 200).catch(() => undefined);
  t.same(cells('wds1-view-wec1', ns, 'configmaps'), cells('wec1', ns, 'configmaps'), 'the per-cluster context prints ConfigMaps as wec1 itself does (-o wide, AGE aside)');

  // Read-only: a write is refused, saying where the object lives.
  const del = kc('wds1-view-wec1', ['-n', ns, 'delete', 'configmap', 'local']);
  t.not(del.status, 0, 'delete through the per-cluster context is refused');
  t.match(del.stderr, /wec1/, `the error names the WEC: ${del.stderr.trim()}`);
  t.ok(viewed('wec1', ns, ['configmap', 'local']), 'and nothing was deleted');
  t.equal(kc('wec1', ['-n', ns, 'get', 'configmap', 'local']).status, 0, 'in wec1 either');

  // The same name in wec2: a second row, one per cluster.
  kcOk('wec2', ['-n', ns, 'create', 'configmap', 'local', '--from-literal=color=red']);
  await waitUntil('two rows, one per cluster', () => {
    const r = rows(ns, 'view.kubestellar.io/kind=ConfigMap');
    return r.includes('wec1:configmaps:local') && r.includes('wec2:configmaps:local');
  }, 10_000, 50);
  t.equal(viewed('wec2', ns, ['configmap', 'local'])?.data?.color, 'red', 'wec2\'s own through wds1-view-wec2');
  t.same(rows(ns, 'view.kubestellar.io/cluster=wec2').filter((n) => n.includes(':configmaps:local')), ['wec2:configmaps:local'], 'selected by cluster label');

  // Secrets: only one named by objectNames is upsynced.
  kcOk('wec1', ['-n', ns, 'create', 'secret', 'generic', 'hidden', '--from-literal=password=hunter2']);
  kcOk('wec1', ['-n', ns, 'create', 'secret', 'generic', 'named', '--from-literal=token=t0k3n']);
  await waitUntil('the named Secret', () => viewed('wec1', ns, ['secret', 'named']), 10_000, 50);
  t.notOk(viewed('wec1', ns, ['secret', 'hidden']), 'a Secret selected only by resource and namespace is not upsynced');
  t.notOk(rows(ns).some((n) => n.endsWith(':secrets:hidden')), 'nor in upsyncedobjects');
  const copies = json(kcOk('its1', ['-n', 'wec1', 'get', 'upsyncedobjects', '-o', 'json'])).items as Obj[];
  t.notOk(copies.some((c) => c.source.name === 'hidden' && c.source.namespace === ns), 'and never copied into the ITS');

  // Over the size bound: left out, the policy's status says which cluster and how many.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-upsync-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'big.txt'), 'x'.repeat(300 * 1024));
  kcOk('wec1', ['-n', ns, 'create', 'configmap', 'big', `--from-file=${path.join(dir, 'big.txt')}`]);
  const entry = await waitUntil('status.upsync says one object too large in wec1', () =>
    ((policy(run)?.status?.upsync ?? []) as Obj[]).find((e) => e.clusterId === 'wec1' && e.tooLarge === 1), 30_000, 200);
  t.match(entry.message, /larger than 262144 bytes/, `status.upsync[wec1].message: ${entry.message}`);
  t.notOk(viewed('wec1', ns, ['configmap', 'big']), 'the big ConfigMap is not upsynced');
  t.ok(viewed('wec1', ns, ['configmap', 'local']), 'the others still are');

  // A user who may use the view but not read ConfigMaps in the WDS: 403 on the upsynced ones.
  const alice = uniqueName('alice');
  kcOk('wds1', ['create', 'clusterrolebinding', `${alice}-view`, '--clusterrole=kubestellar-view:user', `--user=${alice}`]);
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebinding', `${alice}-view`, '--ignore-not-found']); });
  const { cert, key } = await userKubeconfig(t, alice);
  const wds = layout.spaces.find((s) => s.name === 'wds1')!;
  const url = `https://127.0.0.1:${wds.apiserverPort}${WDS1_VIEW_PATH}/clusters/wec1/api/v1/namespaces/${ns}/configmaps/local`;
  const denied = await httpsJson(url, { cert, key });
  t.equal(denied.status, 403, 'alice: 403 on wec1\'s upsynced ConfigMap');
  t.match(denied.body, { kind: 'Status', reason: 'Forbidden' });
  const hidden = await httpsJson(`https://127.0.0.1:${wds.apiserverPort}/apis/view.kubestellar.io/v1alpha1/namespaces/${ns}/upsyncedobjects`, { cert, key });
  t.equal(hidden.status, 200, 'alice may list upsyncedobjects');
  t.same((hidden.body.items as Obj[]).map((o) => o.metadata.name), [], 'but sees none of the ConfigMaps she may not read');

  // Deleted in wec1 → gone from the view and from the ITS.
  kcOk('wec1', ['-n', ns, 'delete', 'configmap', 'local']);
  await waitUntil('gone from wds1-view-wec1', () => !viewed('wec1', ns, ['configmap', 'local']), 10_000, 50);
  await waitUntil('and its row', () => !rows(ns).includes('wec1:configmaps:local'), 10_000, 50);
  t.ok(rows(ns).includes('wec2:configmaps:local'), 'wec2\'s stays');
});

t.test('associatedWith: downsync — a placed Deployment\'s ReplicaSet and Pods come back, and go with the policy', async (t) => {
  const run = uniqueName('ua');
  const ns = testNamespace(t, ['wds1'], 'ua');
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns, labels: { app: run } },
    spec: { replicas: 2, selector: { matchLabels: { app: run } }, template: { metadata: { labels: { app: run } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
  }));
  bindingPolicy(t, run, {
    clusterSelectors: [{ matchLabels: { name: 'wec1' } }],
    downsync: [{ namespaces: [ns] }],
    upsync: [{ associatedWith: 'downsync' }],
  });
  const rs = await waitUntil('the ReplicaSet through wds1-view-wec1', () => (viewed('wec1', ns, ['replicasets'])?.items as Obj[] | undefined)?.[0], WAIT, 250);
  t.match(rs.metadata.ownerReferences, [{ kind: 'Deployment', name: 'web' }], 'the Deployment\'s ReplicaSet');
  const pods = await waitUntil('its two Pods, Running', () => {
    const items = (viewed('wec1', ns, ['pods'])?.items ?? []) as Obj[];
    return items.length === 2 && items.every((p) => p.status?.phase === 'Running') ? items : undefined;
  }, WAIT, 250);
  t.ok(pods.every((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid), 'owned by that ReplicaSet');
  for (const what of ['pods', 'replicasets']) {
    // A status written in wec1 a moment ago may still be on its way (the ReplicaSet's ready count).
    await waitUntil(`${what} the same through the view`, () => JSON.stringify(cells('wds1-view-wec1', ns, what)) === JSON.stringify(cells('wec1', ns, what)), 10_000, 200).catch(() => undefined);
    t.same(cells('wds1-view-wec1', ns, what), cells('wec1', ns, what), `${what} printed through wds1-view-wec1 as wec1 itself prints them (-o wide, AGE aside)`);
  }
  t.same(rows(ns, 'view.kubestellar.io/kind=Pod').length, 2, 'and in upsyncedobjects');
  t.notOk(viewed('wec1', ns, ['deployments'])?.items?.length, 'the Deployment itself is downsynced, not upsynced');

  kcOk('wds1', ['delete', 'bindingpolicy', run, '--wait=false']);
  await waitUntil('the ReplicaSet and Pods gone from the view', () => rows(ns).length === 0
    && ((viewed('wec1', ns, ['pods'])?.items ?? []) as Obj[]).length === 0, WAIT, 250);
  await waitUntil('and their copies from the ITS', () => !(json(kcOk('its1', ['-n', 'wec1', 'get', 'upsyncedobjects', '-o', 'json'])).items as Obj[])
    .some((c) => c.source.namespace === ns), WAIT, 250);
});


t.test('client-go\'s dynamic informer and client-node list and watch upsyncedobjects', async (t) => {
  const bin = await buildClientGo();
  const run = uniqueName('uc');
  const ns = testNamespace(t, ['wds1', 'wec1'], 'uc');
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], upsync: [{ resources: ['configmaps'], namespaces: [ns], objectNames: ['watched'] }] });
  kcOk('wec1', ['-n', ns, 'create', 'configmap', 'watched', '--from-literal=v=1']);
  const name = 'wec1:configmaps:watched';
  await waitUntil('its row', () => rows(ns).includes(name), WAIT, 100);

  const common = ['--kubeconfig', kubeconfig, '--context', 'wds1', '--timeout', '120s'];
  const informer = followClientGo(runClientGo(bin, [...common, '--namespace', ns, 'informer', '--resource', 'view.kubestellar.io/v1alpha1/upsyncedobjects', '--wait-for', name]));
  await waitUntil('the informer synced', () => informer.lines.find((l) => l.synced), 60_000, 100);
  t.same(informer.lines.find((l) => l.synced)!.names, [`${ns}/${name}`], 'its cache: the one row');

  const config = new k8s.KubeConfig();
  config.loadFromFile(kubeconfig);
  config.setCurrentContext('wds1');
  const api = config.makeApiClient(k8s.CustomObjectsApi);
  const list = await api.listNamespacedCustomObject({ group: 'view.kubestellar.io', version: 'v1alpha1', namespace: ns, plural: 'upsyncedobjects', labelSelector: 'view.kubestellar.io/cluster=wec1' }) as Obj;
  t.same((list.items as Obj[]).map((o) => o.metadata.name), [name], 'client-node lists it by cluster label');
  const events: Array<{ type: string; obj: Obj }> = [];
  const req = await new k8s.Watch(config).watch(`/apis/view.kubestellar.io/v1alpha1/namespaces/${ns}/upsyncedobjects`,
    { resourceVersion: list.metadata.resourceVersion }, (type, obj: Obj) => { events.push({ type, obj }); }, () => {});
  t.teardown(() => req.abort());

  kcOk('wec1', ['-n', ns, 'patch', 'configmap', 'watched', '--type=merge', '-p', '{"data":{"v":"2"}}']);
  t.equal(await informer.exit, 0, `client-go: UPDATED of the row (${informer.stderr().trim() || 'no error'})`);
  const modified = await waitUntil('client-node: MODIFIED', () => events.find((e) => e.type === 'MODIFIED' && e.obj.spec?.object?.data?.v === '2'), WAIT, 100);
  t.equal(modified.obj.metadata.name, name, 'client-node: MODIFIED of the row, with the new data');
  t.notOk(events.some((e) => e.type === 'ADDED'), 'nothing replayed from before the list');
  kcOk('wec1', ['-n', ns, 'delete', 'configmap', 'watched']);
  const gone = await waitUntil('client-node: DELETED', () => events.find((e) => e.type === 'DELETED'), WAIT, 100);
  t.equal(gone.obj.metadata.name, name, 'with its last state');
});

t.test('a mailbox\'s ResourceQuota bounds what an agent may write there: the honest one says so in the policy, a hostile one is refused by the ITS', async (t) => {
  // The chart's quota (files/its/mailbox-quota.yaml) on wec2's mailbox, at 2 for this test: only
  // this file upsyncs from wec2 (no other test file's copies count there).
  const COUNT = 'count/upsyncedobjects.control.kubestellar.io';
  const copies = () => (json(kcOk('its1', ['-n', 'wec2', 'get', 'upsyncedobjects', '-o', 'json'])).items as Obj[]);
  const quota = () => json(kcOk('its1', ['-n', 'wec2', 'get', 'resourcequota', 'kubestellar-view-mailbox', '-o', 'json']));
  const applyQuota = (max: number) => kcOk('its1', ['apply', '-f', '-'],
    readFileSync(chartFile('its/mailbox-quota.yaml'), 'utf8').replaceAll('CLUSTER_NAME', 'wec2').replaceAll('MAX_UPSYNCED_OBJECTS', String(max))
      // The chart's default for WorkStatuses: wec2's other reports are not this test's subject.
      .replaceAll('MAX_WORK_STATUSES', '5000'));
  await waitUntil('the copies of the tests before gone from wec2\'s mailbox', () => copies().length === 0, WAIT, 250);
  // kube-controller-manager's quota controller discovers new resources every 30 s; a quota made
  // before it knows the CRD is counted only at its next full resync (5 min): made after, at once.
  const crdAge = () => Date.now() - Date.parse(kcOk('its1', ['get', 'crd', 'upsyncedobjects.control.kubestellar.io', '-o', 'jsonpath={.metadata.creationTimestamp}']));
  await waitUntil('the UpsyncedObject CRD known to the quota controller (31 s old)', () => crdAge() > 31_000, WAIT, 500);
  applyQuota(2);
  t.teardown(() => { kc('its1', ['-n', 'wec2', 'delete', 'resourcequota', 'kubestellar-view-mailbox', '--ignore-not-found']); });
  await waitUntil('the quota counted', () => quota().status?.used?.[COUNT] === '0' && quota().status?.hard?.[COUNT] === '2', WAIT, 200);

  const run = uniqueName('upq');
  const ns = testNamespace(t, ['wds1', 'wec2'], 'upq');
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { name: 'wec2' } }], upsync: [{ resources: ['configmaps'], namespaces: [ns], objectSelectors: [{ matchLabels: { quota: run } }] }] });
  for (const n of ['q1', 'q2', 'q3', 'q4']) kcOk('wec2', ['-n', ns, 'create', 'configmap', n, '--from-literal=k=v']);
  kcOk('wec2', ['-n', ns, 'label', 'configmap', 'q1', 'q2', 'q3', 'q4', `quota=${run}`]);
  const entry = () => ((policy(run)?.status?.upsync ?? []) as Obj[]).find((e) => e.clusterId === 'wec2');
  const refused = await waitUntil('status.upsync[wec2] says the quota refused 2', () => {
    const e = entry();
    return e?.objects === 2 && e.selected === 4 && /2 refused by the mailbox's ResourceQuota/.test(e.message ?? '') ? e : undefined;
  }, WAIT, 250);
  t.match(refused.message, /exceeded quota: kubestellar-view-mailbox/, `with kube's reason: ${refused.message}`);
  t.equal(copies().length, 2, 'two copies in the mailbox');
  t.equal(rows(ns).length, 2, 'two rows in the view');

  // A hostile agent (the push agent's own identity, which may write into wec2's mailbox) gets no further.
  const forged = structuredClone(copies()[0]!);
  forged.metadata = { name: `${forged.metadata.name}-forged`, namespace: 'wec2', labels: forged.metadata.labels };
  const hostile = kc('its1-agent-push', ['create', '-f', '-'], JSON.stringify(forged));
  t.not(hostile.status, 0, 'a copy past the quota, written by hand as the agent, is refused');
  t.match(hostile.stderr, /exceeded quota/, hostile.stderr.trim());

  // Room made at the bound (a ConfigMap whose copy is there deleted in wec2): a waiting copy takes
  // it once the quota controller has counted the deletion; the other still waits, said.
  const written = copies()[0]!.source.name as string;
  kcOk('wec2', ['-n', ns, 'delete', 'configmap', written]);
  await waitUntil('a waiting copy in the room made', () => {
    const e = entry();
    return e?.objects === 2 && e.selected === 3 && /^1 refused by the mailbox's ResourceQuota/.test(e.message ?? '') && copies().length === 2;
  }, 30_000, 250);
  t.pass(`${written} deleted: one waiting copy written at the bound, one still refused`);

  // The bound raised (the chart's default): the last one comes through at the next probe (at most
  // a minute), the message clears: the agent kept working all along.
  applyQuota(50_000);
  await waitUntil('the last one upsynced, the status clear', () => {
    const e = entry();
    return e?.objects === 3 && e.selected === 3 && !e.message && rows(ns).length === 3;
  }, 90_000, 250);
  t.pass('all three upsynced after the bound was raised, status.upsync[wec2] without a message');
});
