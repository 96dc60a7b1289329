// End to end from the WDS: a BindingPolicy in wds1 puts a Deployment into wec1 (pull agent) and
// wec2 (push agent) through the ITS; an image change in wds1 reaches both; a Namespace delivered
// only for what is in it survives the policy's end with a user's ConfigMap in it, while a Namespace
// the policy selects itself goes with it.
import t from 'tap';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { bindingPolicy } from '../fixtures/placement.js';
import { configMap, deployment, live } from '../fixtures/agent.js';

const WECS = ['wec1', 'wec2'];
const imageIn = (wec: string, ns: string) => live(wec, ['-n', ns, 'deployment', 'web'])?.spec?.template?.spec?.containers?.[0]?.image as string | undefined;

t.test('a policy in wds1 runs nginx in wec1 (pull) and wec2 (push); an image change reaches both', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'e2e');
  t.teardown(() => { for (const w of WECS) kc(w, ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']); });
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify(deployment(ns, 'web', 'nginx:1.27')));
  bindingPolicy(t, uniqueName('e2e'), {
    clusterSelectors: [{ matchExpressions: [{ key: 'name', operator: 'In', values: WECS }] }],
    downsync: [{ namespaces: [ns], objectSelectors: [{ matchLabels: { app: 'web' } }] }],
  });
  for (const wec of WECS) {
    await waitUntil(`the Deployment available in ${wec}`, () => Number(live(wec, ['-n', ns, 'deployment', 'web'])?.status?.availableReplicas) >= 1, 120_000);
    t.equal(imageIn(wec, ns), 'nginx:1.27', `running in ${wec}`);
  }
  kcOk('wds1', ['-n', ns, 'set', 'image', 'deployment/web', 'c=nginx:1.28']);
  for (const wec of WECS) {
    await waitUntil(`the new image in ${wec}`, () => imageIn(wec, ns) === 'nginx:1.28', 60_000);
    t.pass(`the new image reached ${wec}`);
  }
});

t.test('a Namespace sent only for what is in it survives the policy; a selected one goes with it', async (t) => {
  const implied = testNamespace(t, ['wds1'], 'imp');
  const selected = testNamespace(t, ['wds1'], 'sel');
  t.teardown(() => { for (const n of [implied, selected]) kc('wec1', ['delete', 'namespace', n, '--ignore-not-found', '--wait=false']); });
  // The implied Namespace existed in wec1 before the fleet came, with a user's ConfigMap.
  kcOk('wec1', ['create', 'namespace', implied]);
  kcOk('wec1', ['apply', '-f', '-'], JSON.stringify(configMap(implied, 'users-own', { mine: 'yes' })));
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify(configMap(implied, 'sent', { a: '1' })));
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify(configMap(selected, 'sent', { a: '1' })));
  const name = uniqueName('nsp');
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name }, spec: {
    clusterSelectors: [{ matchLabels: { name: 'wec1' } }],
    downsync: [
      { resources: ['configmaps'], namespaces: [implied], objectNames: ['sent'] },
      { resources: ['configmaps', 'namespaces'], namespaces: [selected] },
      { resources: ['namespaces'], objectNames: [selected] },
    ] } }));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', name, '--ignore-not-found', '--wait=false']); });
  await waitUntil('both ConfigMaps in wec1', () => live('wec1', ['-n', implied, 'configmap', 'sent']) && live('wec1', ['-n', selected, 'configmap', 'sent']), 60_000);

  kcOk('wds1', ['delete', 'bindingpolicy', name, '--timeout=60s']);
  await waitUntil('the sent objects gone from wec1', () => !live('wec1', ['-n', implied, 'configmap', 'sent']), 60_000);
  await waitUntil('the selected Namespace deleted', () => {
    const n = live('wec1', ['namespace', selected]);
    return !n || Boolean(n.metadata.deletionTimestamp);
  }, 60_000);
  const kept = live('wec1', ['namespace', implied]);
  t.ok(kept && !kept.metadata.deletionTimestamp, 'the implied Namespace is kept');
  t.equal(live('wec1', ['-n', implied, 'configmap', 'users-own'])?.data?.mine, 'yes', 'with the user\'s ConfigMap in it');
});
