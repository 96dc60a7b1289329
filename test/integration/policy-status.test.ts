// A BindingPolicy's conditions and its Binding's destinations on the test spaces
// (docs/status.md, "Policy and Binding status"): a namespace and a custom resource in it, whose
// CRD exists in wec1 only, go to wec1 and wec2. wec2's agent cannot apply the custom resource: the
// Binding shows wec2's object ApplyFailed with the agent's words, the policy is Synced but not
// Ready; once the CRD exists in wec2 the agent's retry applies it and the policy becomes Ready.
// Read as a user reads them: kubectl get bindingpolicy (its SYNCED and READY columns) and the
// Binding's status. Also a registered cluster whose lease went stale (no agent behind it): the
// hub's lease rule in ksview serve marks it, and its objects show ClusterNotReady until it is back.
import t from 'tap';
import YAML from 'yaml';
import { ADMIN_EXECUTOR, binding, bindingPolicy, policy, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const WAIT = 240_000;

const crd = (group: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `widgets.${group}` },
  spec: { group, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
});

const condition = (p: Obj | undefined, type: string) => (p?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
const destination = (b: Obj | undefined, cluster: string) => (b?.status?.destinations as Obj[] | undefined)?.find((d) => d.clusterId === cluster);

t.test('an object wec2 cannot apply: the Binding says why, the policy is not Ready; it recovers when the cause goes', async (t) => {
  const run = uniqueName('ps');
  const group = `${run}.example.com`;
  const def = YAML.stringify(crd(group));
  for (const space of ['wds1', 'wec1']) kcOk(space, ['apply', '-f', '-'], def);
  t.teardown(() => { for (const space of ['wds1', 'wec1', 'wec2']) kc(space, ['delete', 'crd', `widgets.${group}`, '--ignore-not-found', '--wait=false']); });
  await waitUntil('the CRD established in wds1', () => kc('wds1', ['get', `widgets.${group}`, '-A']).status === 0, 30_000, 200);
  const ns = testNamespace(t, ['wds1'], 'ps');
  kcOk('wds1', ['label', 'namespace', ns, `app=${run}`]);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'gadget', namespace: ns, labels: { app: run } }, spec: { size: 3 } }));
  const name = `${run}-edge`;
  // Custom resources are beyond the spaces' restricted default executor: the admin one, named.
  bindingPolicy(t, name, { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: run } }] }], executor: ADMIN_EXECUTOR });

  const failing = await waitUntil('the Binding to show wec2\'s widget failed', () => {
    const b = binding(name);
    const broken = (destination(b, 'wec2')?.brokenObjects as Obj[] | undefined)?.find((o) => o.resource === 'widgets');
    return broken?.state === 'ApplyFailed' ? { b, broken } : undefined;
  }, WAIT, 300);
  t.match(failing.broken, { group, resource: 'widgets', namespace: ns, name: 'gadget', state: 'ApplyFailed' }, 'wec2: the widget ApplyFailed');
  t.match(failing.broken.message, /widget|Widget|no matches|not found|could not find/i, `with the agent's words: ${failing.broken.message as string}`);
  const wec1 = await waitUntil('wec1 all available', () => {
    const d = destination(binding(name), 'wec1');
    return d && d.objects === 2 && d.states.Available === 2 ? d : undefined;
  }, WAIT, 300);
  t.match(wec1, { clusterId: 'wec1', ready: true, objects: 2, states: { Available: 2 } }, 'wec1: the Namespace and the widget Available');
  t.notOk(wec1.brokenObjects, 'nothing broken in wec1');

  // The widget fails in wec2 (first, maybe, because the Namespace is not there yet: the agent
  // retries it); the counts are read as they stand, the steady state is checked by Ready below.
  const notReady = await waitUntil('the policy Synced and not Ready', () => {
    const p = policy(name);
    return condition(p, 'Ready')?.status === 'False' && condition(p, 'Synced')?.status === 'True' ? p : undefined;
  }, WAIT, 300);
  t.match(condition(notReady, 'Ready'), { status: 'False', reason: 'Unavailable', observedGeneration: notReady.metadata.generation, message: /^[12] of 4 placements are not available; wec2: / }, 'Ready False, saying which');
  t.match(condition(notReady, 'Synced'), { status: 'True', reason: 'ReconcileSuccess', observedGeneration: notReady.metadata.generation });
  t.match(notReady.status.clusters, [{ clusterId: 'wec1', ready: true, objects: 2, states: { Available: 2 } }, { clusterId: 'wec2', ready: true, objects: 2, states: { ApplyFailed: Number } }],
    `per-cluster counts: ${JSON.stringify(notReady.status.clusters)}`);
  const columns = kcOk('wds1', ['get', 'bindingpolicy', name, '--no-headers', '-o', 'custom-columns=SYNCED:.status.conditions[?(@.type=="Synced")].status,READY:.status.conditions[?(@.type=="Ready")].status']).trim().split(/\s+/);
  t.same(columns, ['True', 'False'], 'kubectl: SYNCED True, READY False');
  const table = await waitUntil('the Binding\'s table', () => {
    const text = kcOk('wds1', ['get', 'bindings.view.kubestellar.io', name]);
    return /False\s+wec1 2\/2,wec2 [01]\/2/.test(text) ? text : undefined;
  }, 30_000, 300);
  t.match(table, /READY\s+AVAILABLE/, 'the Binding\'s table has READY and AVAILABLE');
  t.pass(`and shows them: ${table.trim().split('\n')[1]}`);

  // The cause goes: the CRD in wec2. The agent retries with backoff; the policy becomes Ready.
  kcOk('wec2', ['apply', '-f', '-'], def);
  const ready = await waitUntil('the policy Ready', () => {
    const p = policy(name);
    return condition(p, 'Ready')?.status === 'True' ? p : undefined;
  }, WAIT, 500).catch((err: Error) => { throw new Error(`${err.message}; the policy's status: ${JSON.stringify(policy(name)?.status)}`); });
  t.match(condition(ready, 'Ready'), { status: 'True', reason: 'Available', message: 'all 4 placements are available' });
  t.notOk(destination(binding(name), 'wec2')?.brokenObjects, 'nothing broken in wec2 any more');
  t.ok(kc('wec2', ['-n', ns, 'get', `widgets.${group}`, 'gadget']).status === 0, 'the widget is in wec2');
});

t.test('a cluster whose lease went stale: the hub marks it, the Binding shows its objects ClusterNotReady, the policy not Ready', async (t) => {
  // A registered cluster with no agent behind it: its Lease in its mailbox was last renewed a
  // minute ago and its lease duration is 1 s, so the hub's rule (5 × duration) finds it stale.
  const cluster = uniqueName('stale');
  const mc = (leaseDurationSeconds: number) => YAML.stringify({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster',
    metadata: { name: cluster, labels: { name: cluster } }, spec: { hubAcceptsClient: true, leaseDurationSeconds } });
  kcOk('its1', ['create', 'namespace', cluster]);
  t.teardown(() => { kc('its1', ['delete', 'managedcluster', cluster, '--ignore-not-found', '--wait=false']); kc('its1', ['delete', 'namespace', cluster, '--ignore-not-found', '--wait=false']); });
  kcOk('its1', ['apply', '-f', '-'], mc(1));
  const available = (status: string, reason: string) => JSON.stringify({ status: { conditions: [{ type: 'ManagedClusterConditionAvailable', status, reason, message: 'set by the test, as a registration agent would', lastTransitionTime: new Date().toISOString() }] } });
  kcOk('its1', ['patch', 'managedcluster', cluster, '--subresource=status', '--type=merge', '-p', available('True', 'ManagedClusterAvailable')]);
  const lease = (renewTime: Date) => YAML.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'managed-cluster-lease', namespace: cluster },
    spec: { holderIdentity: cluster, leaseDurationSeconds: 1, renewTime: renewTime.toISOString().replace('Z', '000Z') } });
  kcOk('its1', ['apply', '-f', '-'], lease(new Date(Date.now() - 60_000)));

  const ns = testNamespace(t, ['wds1'], 'sl');
  kcOk('wds1', ['label', 'namespace', ns, `app=${cluster}`]);
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'c', '--from-literal=a=1']);
  kcOk('wds1', ['-n', ns, 'label', 'configmap', 'c', `app=${cluster}`]);
  const name = `${cluster}-p`;
  bindingPolicy(t, name, { clusterSelectors: [{ matchLabels: { name: cluster } }], downsync: [{ objectSelectors: [{ matchLabels: { app: cluster } }] }] });

  const marked = await waitUntil('the hub to mark the cluster Available Unknown', () => {
    const c = (JSON.parse(kcOk('its1', ['get', 'managedcluster', cluster, '-o', 'json'])).status?.conditions as Obj[] | undefined)?.find((x) => x.type === 'ManagedClusterConditionAvailable');
    return c?.status === 'Unknown' ? c : undefined;
  }, 60_000, 300);
  t.equal(marked.reason, 'ManagedClusterLeaseUpdateStopped', 'OCM\'s reason');
  const dest = await waitUntil('the Binding to show the cluster not ready', () => {
    const d = destination(binding(name), cluster);
    return d && d.ready === false && d.states?.ClusterNotReady === 2 ? d : undefined;
  }, 60_000, 300);
  t.match(dest.brokenObjects, [{ state: 'ClusterNotReady', message: /ManagedClusterConditionAvailable Unknown: ManagedClusterLeaseUpdateStopped/ }, { state: 'ClusterNotReady' }], 'each object: ClusterNotReady, saying why');
  const ready = await waitUntil('the policy not Ready', () => { const c = condition(policy(name), 'Ready'); return c?.status === 'False' ? c : undefined; }, 60_000, 300);
  t.match(ready.message, new RegExp(cluster), `Ready False: ${ready.message as string}`);

  // The agent comes back: it renews the lease and says the cluster is available. The cluster is
  // ready again; its objects wait for an agent to apply them (Pending), no longer ClusterNotReady.
  kcOk('its1', ['apply', '-f', '-'], mc(3600));
  kcOk('its1', ['apply', '-f', '-'], lease(new Date()));
  kcOk('its1', ['patch', 'managedcluster', cluster, '--subresource=status', '--type=merge', '-p', available('True', 'ManagedClusterAvailable')]);
  const back = await waitUntil('the cluster ready again in the Binding', () => {
    const d = destination(binding(name), cluster);
    return d?.ready === true && !d.states?.ClusterNotReady ? d : undefined;
  }, 60_000, 300);
  t.match(back.states, { Pending: 2 }, 'its objects now wait for the agent');
});
