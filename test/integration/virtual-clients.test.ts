// The virtual resources as client libraries read them (docs/status.md, "Clients of the virtual resources": "client-go and TS clients reading
// virtual resources"): a client-go dynamic shared informer (test/clientgo `informer`, as a
// controller would run it) on bindings.view.kubestellar.io and on combinedstatuses in one
// namespace, and @kubernetes/client-node listing them and watching from the list's
// resourceVersion. The sequence: a ConfigMap counted by a StatusCollector goes to wec1; the
// policy then adds wec2 (the Binding changes, the count goes to 2: both informers hear UPDATED);
// the policy is deleted (client-node's watches get DELETED with the last state).
import * as k8s from '@kubernetes/client-node';
import t from 'tap';
import YAML from 'yaml';
import { buildClientGo, followClientGo, runClientGo } from '../fixtures/clientgo.js';
import { bindingPolicy, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const WAIT = 120_000;


t.test('client-go informers and client-node list and watch Bindings and CombinedStatuses', async (t) => {
  const bin = await buildClientGo();
  const run = uniqueName('vc');
  const ns = testNamespace(t, ['wds1'], 'vc');
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'counted', '--from-literal=a=1']);
  kcOk('wds1', ['-n', ns, 'label', 'configmap', 'counted', `app=${run}`]);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: `${run}-count` }, spec: { combinedFields: [{ name: 'count', type: 'COUNT' }] } }));
  t.teardown(() => { kc('wds1', ['delete', 'statuscollector', `${run}-count`, '--ignore-not-found']); });
  const clause = { namespaces: [ns], objectSelectors: [{ matchLabels: { app: run } }], statusCollectors: [`${run}-count`] };
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [clause] });
  const count = (cs: Obj | undefined) => cs?.results?.[0]?.rows?.[0]?.columns?.[0]?.float as string | undefined;
  const combined = () => {
    const r = kc('wds1', ['-n', ns, 'get', 'combinedstatuses.view.kubestellar.io', '-l', `status.kubestellar.io/binding-policy=${run}`, '-o', 'json']);
    return r.status === 0 ? ((JSON.parse(r.stdout) as Obj).items as Obj[])[0] : undefined;
  };
  const first = await waitUntil('the CombinedStatus counting wec1', () => (count(combined()) === '1' ? combined() : undefined), WAIT, 300);
  const csName = first.metadata.name as string;

  // client-go: two dynamic informers; each must hear UPDATED for its object.
  const common = ['--kubeconfig', kubeconfig, '--context', 'wds1', '--timeout', '120s'];
  const bindings = followClientGo(runClientGo(bin, [...common, '--namespace', '', 'informer', '--resource', 'view.kubestellar.io/v1alpha1/bindings', '--wait-for', run]));
  const statuses = followClientGo(runClientGo(bin, [...common, '--namespace', ns, 'informer', '--resource', 'view.kubestellar.io/v1alpha1/combinedstatuses', '--wait-for', csName]));
  const synced = (f: ReturnType<typeof followClientGo>) => f.lines.find((l) => l.synced);
  await waitUntil('both informers synced', () => synced(bindings) && synced(statuses), 60_000, 100);
  t.ok((synced(bindings)!.names as string[]).includes(run), 'the bindings informer\'s cache has the Binding');
  t.match(synced(bindings)!.resourceVersion, /^\d+$/, 'and the list\'s resourceVersion');
  t.same(synced(statuses)!.names, [`${ns}/${csName}`], 'the combinedstatuses informer\'s cache: the one CombinedStatus, namespace/name');
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }, { matchLabels: { name: 'wec2' } }], downsync: [clause] });
  t.equal(await bindings.exit, 0, `client-go: UPDATED of the Binding (${bindings.stderr().trim() || 'no error'})`);
  t.equal(await statuses.exit, 0, `client-go: UPDATED of the CombinedStatus (${statuses.stderr().trim() || 'no error'})`);
  const updated = statuses.lines.filter((l) => l.type === 'UPDATED' && l.name === csName);
  t.ok(updated.length >= 1 && updated.every((l) => /^\d+$/.test(l.resourceVersion as string)), 'each event with a resourceVersion');
  t.notOk(statuses.lines.some((l) => l.type === 'DELETED'), 'nothing deleted meanwhile');
  await waitUntil('the count of 2', () => count(combined()) === '2', WAIT, 300);

  // client-node: lists, then watches from their resourceVersions; the policy goes.
  const config = new k8s.KubeConfig();
  config.loadFromFile(kubeconfig);
  config.setCurrentContext('wds1');
  const api = config.makeApiClient(k8s.CustomObjectsApi);
  const bindingList = await api.listClusterCustomObject({ group: 'view.kubestellar.io', version: 'v1alpha1', plural: 'bindings' }) as Obj;
  t.ok((bindingList.items as Obj[]).some((b) => b.metadata.name === run), 'client-node lists the Binding');
  const csList = await api.listNamespacedCustomObject({ group: 'view.kubestellar.io', version: 'v1alpha1', namespace: ns, plural: 'combinedstatuses', labelSelector: `status.kubestellar.io/name=counted` }) as Obj;
  t.same((csList.items as Obj[]).map((c) => count(c)), ['2'], 'client-node lists the CombinedStatus by label, counting 2');
  const events: Record<string, Array<{ type: string; obj: Obj }>> = { bindings: [], combinedstatuses: [] };
  const watch = new k8s.Watch(config);
  const reqs = [
    await watch.watch('/apis/view.kubestellar.io/v1alpha1/bindings', { resourceVersion: bindingList.metadata.resourceVersion }, (type, obj: Obj) => { events.bindings!.push({ type, obj }); }, () => {}),
    await watch.watch(`/apis/view.kubestellar.io/v1alpha1/namespaces/${ns}/combinedstatuses`, { resourceVersion: csList.metadata.resourceVersion }, (type, obj: Obj) => { events.combinedstatuses!.push({ type, obj }); }, () => {}),
  ];
  t.teardown(() => { for (const r of reqs) r.abort(); });
  await new Promise((r) => setTimeout(r, 500));
  t.notOk(events.bindings!.some((e) => e.obj.metadata?.name === run), 'nothing replayed from before the list');
  kcOk('wds1', ['delete', 'bindingpolicy', run, '--wait=false']);
  const goneBinding = await waitUntil('client-node: the Binding DELETED', () => events.bindings!.find((e) => e.type === 'DELETED' && e.obj.metadata?.name === run), WAIT, 200);
  t.ok(goneBinding.obj.metadata.uid && goneBinding.obj.spec, 'with its last state (uid, spec)');
  const goneStatus = await waitUntil('client-node: the CombinedStatus DELETED', () => events.combinedstatuses!.find((e) => e.type === 'DELETED' && e.obj.metadata?.name === csName), WAIT, 200);
  t.equal(goneStatus.obj.metadata.labels['status.kubestellar.io/binding-policy'], run, 'with its last state (labels)');
});
