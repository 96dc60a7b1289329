// Two WDSs with long names placing into one mailbox: each keeps its own ManifestWorks, with its own
// objects, whatever the names. Each WDS here is a `ksview serve` of the test's own (serve-replica
// fixture) under a long --wds-name, for wds1 and for wds2 of the test spaces: the names reach
// placement as they do in a deployment, and the spaces' own servers are left alone (they place the
// same policies under their own names, wds1 and wds2: works this test does not look at). Checked in
// the mailbox, as `kubectl get manifestworks -l view.kubestellar.io/wds=<name>` shows it.
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { isDNS1123Label } from '../../src/kube/names.js';
import { managedCluster } from '../fixtures/inventory.js';
import { serveReplica } from '../fixtures/serve-replica.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

interface Work { metadata: { name: string; labels?: Record<string, string> }; spec?: { workload?: { manifests?: Array<{ kind: string; metadata: { name: string; namespace?: string }; data?: Record<string, string> }> } } }

/** What a WDS's works in the mailbox carry: `<kind> <namespace>/<name>=<data.owner>` of each manifest, sorted; and the works' names. */
function carried(cluster: string, wdsName: string): { objects: string[]; works: string[] } {
  const r = kc('its1', ['-n', cluster, 'get', 'manifestworks', '-l', `view.kubestellar.io/wds=${wdsName}`, '-o', 'json']);
  const items = r.status === 0 ? (JSON.parse(r.stdout) as { items: Work[] }).items : [];
  return {
    objects: items.flatMap((w) => (w.spec?.workload?.manifests ?? []).map((m) => `${m.kind} ${m.metadata.namespace ?? ''}/${m.metadata.name}=${m.data?.owner ?? ''}`)).sort(),
    works: items.map((w) => w.metadata.name),
  };
}

/**
 * Two WDSs (a serve for wds1 named `a`, one for wds2 named `b`), each with three ConfigMaps and a
 * policy of the same name sending them to one cluster: each WDS's works carry its three objects and
 * their Namespace, and only them.
 */
async function twoWDSs(t: Test, a: string, b: string, flags: string[]): Promise<void> {
  const run = uniqueName('lw');
  managedCluster(t, run, { group: run });
  const policy = YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: run },
    spec: { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ resources: ['configmaps'], objectSelectors: [{ matchLabels: { run } }] }] } });
  const want = new Map<string, string[]>();
  for (const [wds, name] of [['wds1', a], ['wds2', b]] as const) {
    const replica = await serveReplica(t, { wds, wdsName: name, flags });
    await waitUntil(`the serve named ${name} to lead its placement`, () => replica.leads() || undefined, 90_000);
    const ns = testNamespace(t, [wds], 'lw');
    for (const cm of ['one', 'two', 'three']) {
      kcOk(wds, ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm, namespace: ns, labels: { run } }, data: { owner: name } }));
    }
    // The ConfigMaps, and their Namespace (sent for what is in it).
    want.set(name, [...['one', 'three', 'two'].map((cm) => `ConfigMap ${ns}/${cm}=${name}`), `Namespace /${ns}=`]);
    kcOk(wds, ['apply', '-f', '-'], policy);
    t.teardown(() => { kc(wds, ['delete', 'bindingpolicy', run, '--ignore-not-found', '--wait=false']); });
  }
  for (const name of [a, b]) {
    const got = await waitUntil(`the works of WDS ${name} to carry its three ConfigMaps and their Namespace`, () => {
      const c = carried(run, name);
      return c.objects.length >= 4 ? c : undefined;
    }, 90_000);
    t.same(got.objects, want.get(name), `WDS ${name} (${name.length} characters): its works carry its own three objects and their Namespace, and nothing of the other's`);
    t.ok(got.works.every((w) => isDNS1123Label(w)), `its works' names are DNS labels: ${got.works.join(', ')}`);
  }
  const other = carried(run, a).works.filter((w) => carried(run, b).works.includes(w));
  t.same(other, [], 'no work name is both WDSs\'');
  // Some time on, after each WDS's placement went over its objects again (a ConfigMap changed): still each its own.
  for (const [wds, name] of [['wds1', a], ['wds2', b]] as const) {
    const ns = want.get(name)![0]!.split(' ')[1]!.split('/')[0]!;
    kcOk(wds, ['-n', ns, 'label', 'configmap', 'one', 'changed=yes']);
  }
  for (const name of [a, b]) {
    await waitUntil(`WDS ${name}'s change in its work`, () => {
      const r = kc('its1', ['-n', run, 'get', 'manifestworks', '-l', `view.kubestellar.io/wds=${name}`, '-o', 'json']);
      const items = r.status === 0 ? (JSON.parse(r.stdout) as { items: Array<{ spec?: { workload?: { manifests?: Array<{ metadata: { name: string; labels?: Record<string, string> } }> } } }> }).items : [];
      return items.some((w) => (w.spec?.workload?.manifests ?? []).some((m) => m.metadata.name === 'one' && m.metadata.labels?.changed === 'yes')) || undefined;
    }, 60_000);
    t.same(carried(run, name).objects, want.get(name), `WDS ${name}: still its own objects`);
  }
}

t.test('bundled (4 objects per work): two 42-character WDS names differing at the end get bundles of their own', async (t) => {
  const suffix = uniqueName('').slice(-6);
  const base = `tenant-payments-production-eu-${suffix}-wds`.slice(0, 40);
  await twoWDSs(t, `${base}-a`, `${base}-b`, ['--max-objects-per-work', '4']);
});

t.test('a work per object: WDS names of 62 and 63 characters get a valid, distinct name per object', async (t) => {
  const suffix = uniqueName('').slice(-6);
  const base = `tenant-payments-production-eu-west-1-cluster-pool-${suffix}`.padEnd(61, 'x');
  await twoWDSs(t, `${base}a`, `${base}ab`, []);
});
