// Where placement's Warning Events go (docs/security.md D11): an Event about an object lives in that
// object's namespace, so whoever may read Events in another namespace (default included) learns
// nothing of it. A Role written straight to the WDS (not through the view) and selected by a
// BindingPolicy gets its WrittenToWDS Event in its own namespace, about the Role; none in default
// names it.
import t from 'tap';
import YAML from 'yaml';
import { managedCluster } from '../fixtures/inventory.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

t.test('a WrittenToWDS Event is in the object\'s namespace, about the object; default names nothing of it', async (t) => {
  const run = uniqueName('ev');
  const ns = testNamespace(t, ['wds1'], 'ev');
  managedCluster(t, run, { group: run });
  kcOk('wds1', ['-n', ns, 'create', 'role', 'secret-reader', '--verb=get', '--resource=secrets']);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: run },
    spec: { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['roles'], namespaces: [ns] }] } }));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', run, '--ignore-not-found']); });

  const event = await waitUntil('the WrittenToWDS Event of the Role', () => {
    const events = JSON.parse(kcOk('wds1', ['-n', ns, 'get', 'events', '--field-selector', 'reason=WrittenToWDS', '-o', 'json'])) as { items: Record<string, any>[] };
    return events.items.find((e) => e.involvedObject?.name === 'secret-reader');
  }, 60_000);
  t.match(event, { type: 'Warning', metadata: { namespace: ns }, involvedObject: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespace: ns, name: 'secret-reader' } });
  t.match(event.message, new RegExp(`roles\\.rbac\\.authorization\\.k8s\\.io ${ns}/secret-reader was written to the WDS directly.*\\(selected by BindingPolicy ${run}\\)`));
  const inDefault = JSON.parse(kcOk('wds1', ['-n', 'default', 'get', 'events', '-o', 'json'])) as { items: Record<string, any>[] };
  t.same(inDefault.items.filter((e) => String(e.message).includes(`${ns}/`) || e.involvedObject?.namespace === ns).map((e) => e.message), [],
    'no Event in default names the Role or its namespace');
});
