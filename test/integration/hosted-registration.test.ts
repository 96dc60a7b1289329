// Hosted registration on the real spaces: the endpoints mirror (src/controllers/hosting/endpoints-mirror.ts)
// reading a Service's EndpointSlices in one space (wec1 plays the hosting cluster) and writing the
// selectorless Service's Endpoints and EndpointSlice in wds1, as the leader of `ksview serve
// --register-endpoints-from` does; and the least rights of the chart's files/wds/registration-rbac.yaml,
// judged by wds1's own RBAC on server-side dry runs of exactly the objects the server writes.
// The objects live in namespaces of the test's own (the routing of the spaces' own view, the
// APIService v1alpha1.view.kubestellar.io, is left alone: only dry runs touch its name).
import { chartFile } from '../../src/util/chart-files.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { EndpointsMirror } from '../../src/controllers/hosting/endpoints-mirror.js';
import { apiService, denaturedWebhookConfiguration, policyWebhookConfiguration, registeredService, webhookConfiguration } from '../../src/apiserver/wds-registration.js';
import { mirroredObjects } from '../../src/controllers/hosting/endpoints-mirror.js';
import { closeUpstream, upstreamFromKubeconfig } from '../../src/kube/upstream.js';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const space = (name: string) => layout.spaces.find((s) => s.name === name)!;

t.test('the WDS holds the hosting endpoints as they change: ready, not ready, terminating, removed', async (t) => {
  const hostingNs = testNamespace(t, ['wec1'], 'host');
  const wdsNs = testNamespace(t, ['wds1'], 'reg');
  const svc = uniqueName('ksview');
  // The hosting side: a Service whose slice the test writes as the EndpointSlice controller would
  // (labelled as its own and owned by the Service as its controller: the only slices mirrored). No
  // selector, so wec1's real controller leaves the slice to the test instead of replacing it with
  // the (no) pods it selects.
  kcOk('wec1', ['apply', '-f', '-'], YAML.stringify({
    apiVersion: 'v1', kind: 'Service', metadata: { name: svc, namespace: hostingNs },
    spec: { ports: [{ port: 443, targetPort: 8443, protocol: 'TCP' }] },
  }));
  const uid = kcOk('wec1', ['-n', hostingNs, 'get', 'service', svc, '-o', 'jsonpath={.metadata.uid}']);
  const sliceOf = (name: string, endpoints: object[], owned: boolean) => YAML.stringify({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
    metadata: {
      name, namespace: hostingNs, labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      ...(owned ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc, uid, controller: true, blockOwnerDeletion: true }] } : {}),
    },
    ports: [{ name: '', port: 8443, protocol: 'TCP' }], endpoints,
  });
  const hostingSlice = (endpoints: object[]) => sliceOf(`${svc}-x1`, endpoints, true);
  const ep = (ip: string, ready: boolean, terminating = false) => ({ addresses: [ip], conditions: { ready, serving: ready || terminating, terminating } });
  kcOk('wec1', ['apply', '-f', '-'], hostingSlice([ep('10.244.0.5', false)]));
  // The WDS side: the Service as hosted registration writes it.
  kcOk('wds1', ['apply', '--server-side', '-f', '-'], YAML.stringify(registeredService({ namespace: wdsNs, service: svc, externalName: '', port: 443, hosted: true })));
  const stored = JSON.parse(kcOk('wds1', ['-n', wdsNs, 'get', 'service', svc, '-o', 'json'])) as { spec: Record<string, unknown> };
  t.equal(stored.spec.type, 'ClusterIP');
  t.notOk(stored.spec.selector, 'no selector: nothing in the WDS computes its endpoints');
  t.notOk(stored.spec.externalName, 'no ExternalName to localhost');

  const hosting = await upstreamFromKubeconfig(path.join(space('wec1').dir, 'kubeconfig'));
  const wds = await upstreamFromKubeconfig(path.join(space('wds1').dir, 'kubeconfig'));
  const mirror = new EndpointsMirror({
    hosting, wds, source: { namespace: hostingNs, service: svc }, target: { namespace: wdsNs, service: svc, portName: 'https' }, serverPort: 8443,
    log: (m) => t.comment(m),
  });
  t.teardown(async () => { mirror.stop(); await closeUpstream(hosting); await closeUpstream(wds); });
  mirror.setLeading(true);

  const endpoints = () => {
    const r = kc('wds1', ['-n', wdsNs, 'get', 'endpoints', svc, '-o', 'json']);
    return r.status === 0 ? JSON.parse(r.stdout) as { subsets?: Array<{ addresses?: Array<{ ip: string }>; notReadyAddresses?: Array<{ ip: string }>; ports: Array<{ name: string; port: number }> }> } : undefined;
  };
  const wdsSlice = () => {
    const r = kc('wds1', ['-n', wdsNs, 'get', 'endpointslices', '-l', `kubernetes.io/service-name=${svc}`, '-o', 'json']);
    return r.status === 0 ? (JSON.parse(r.stdout) as { items: Array<{ addressType: string; metadata: { labels: Record<string, string> }; endpoints?: Array<{ addresses: string[]; conditions: Record<string, boolean> }> }> }).items : [];
  };
  const ready = () => endpoints()?.subsets?.flatMap((s) => s.addresses ?? []).map((a) => a.ip).sort() ?? [];
  const notReady = () => endpoints()?.subsets?.flatMap((s) => s.notReadyAddresses ?? []).map((a) => a.ip).sort() ?? [];

  await waitUntil('the pod not ready yet, in the WDS', () => notReady().join() === '10.244.0.5' || undefined, 30_000);
  t.same(ready(), [], 'nothing for the aggregator to dial yet');
  t.same(endpoints()?.subsets?.[0]?.ports, [{ name: 'https', port: 8443, protocol: 'TCP' }], 'the pods\' port, under the WDS Service\'s port name');

  kcOk('wec1', ['apply', '-f', '-'], hostingSlice([ep('10.244.0.5', true), ep('10.244.0.6', true)]));
  await waitUntil('both pods ready in the WDS', () => ready().join() === '10.244.0.5,10.244.0.6' || undefined, 30_000);
  const slices = wdsSlice();
  t.same(slices.map((s) => s.addressType).sort(), ['IPv4', 'IPv6'], 'one EndpointSlice of ours per family, IPv6 empty (the WDS does not mirror our Endpoints into another)');
  t.ok(slices.every((s) => s.metadata.labels['endpointslice.kubernetes.io/managed-by'] === 'endpoints-mirror.view.kubestellar.io'), 'both managed by the mirror');

  // A slice made by hand, labelled as the EndpointSlice controller's, but not owned by the Service as
  // that controller owns it; then a change of the controller's slice, synced after it.
  kcOk('wec1', ['apply', '-f', '-'], sliceOf(`${svc}-forged`, [ep('10.66.6.6', true)], false));
  kcOk('wec1', ['apply', '-f', '-'], hostingSlice([ep('10.244.0.5', false, true), ep('10.244.0.6', true)]));
  await waitUntil('the terminating pod out of the Endpoints', () => (!ready().includes('10.244.0.5') && ready().includes('10.244.0.6') && notReady().length === 0) || undefined, 30_000);
  t.notOk(wdsSlice().some((x) => (x.endpoints ?? []).some((e) => e.addresses.includes('10.66.6.6'))), 'the hand-made slice\'s 10.66.6.6 is in no EndpointSlice of the WDS');
  t.same(ready(), ['10.244.0.6'], 'nor in its Endpoints');
  kcOk('wec1', ['-n', hostingNs, 'delete', 'endpointslice', `${svc}-forged`]);
  t.match(wdsSlice().find((x) => x.addressType === 'IPv4')!.endpoints?.find((e) => e.addresses[0] === '10.244.0.5')?.conditions, { ready: false, serving: true, terminating: true },
    'the slice says it is terminating, still serving');

  kcOk('wec1', ['-n', hostingNs, 'delete', 'endpointslice', `${svc}-x1`]);
  await waitUntil('no endpoints left in the WDS', () => (endpoints() !== undefined && (endpoints()!.subsets ?? []).length === 0) || undefined, 30_000);
  t.same(wdsSlice().find((x) => x.addressType === 'IPv4')!.endpoints ?? [], []);

  // Leadership lost: the WDS is no longer written.
  mirror.setLeading(false);
  kcOk('wec1', ['apply', '-f', '-'], hostingSlice([ep('10.244.0.9', true)]));
  // A negative: given the time each change above took to show (well under a second), 3 s says it.
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
  t.same(ready(), [], 'a change after leadership was lost is not mirrored');
});

t.test('the chart\'s wds/registration-rbac.yaml: exactly the hosted registration\'s writes, by name', async (t) => {
  const who = 'system:serviceaccount:kubestellar-view:ksview';
  const text = readFileSync(chartFile('wds/registration-rbac.yaml'), 'utf8');
  const docs = YAML.parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } }).filter(Boolean);
  // Applied with this test's names, so the spaces' own objects are not replaced.
  const suffix = uniqueName('r');
  const renamed = docs.map((d) => ({ ...d, metadata: { ...d.metadata, name: `${d.metadata.name}-${suffix}` },
    ...('roleRef' in d ? { roleRef: { ...(d as { roleRef: Record<string, string> }).roleRef, name: `${(d as { roleRef: { name: string } }).roleRef.name}-${suffix}` } } : {}) }));
  if (kc('wds1', ['get', 'namespace', 'kubestellar-view']).status !== 0) kcOk('wds1', ['create', 'namespace', 'kubestellar-view']);
  kcOk('wds1', ['apply', '-f', '-'], renamed.map((d) => YAML.stringify(d)).join('---\n'));
  t.teardown(() => { for (const d of renamed) kc('wds1', ['delete', d.kind.toLowerCase(), d.metadata.name, ...(d.metadata.namespace ? ['-n', d.metadata.namespace] : []), '--ignore-not-found']); });

  const can = (verb: string, resource: string, ns?: string) =>
    kc('wds1', ['auth', 'can-i', verb, resource, '--as', who, ...(ns ? ['-n', ns] : [])]).stdout.trim();
  await waitUntil('the grants to be in effect', () => can('patch', 'endpoints/ksview', 'kubestellar-view') === 'yes' || undefined, 30_000);
  const o = { namespace: 'kubestellar-view', service: 'ksview', externalName: '', port: 443, hosted: true, caBundlePem: 'x' };
  const objects = [registeredService(o), apiService(o), webhookConfiguration(o), policyWebhookConfiguration(o), denaturedWebhookConfiguration(o),
    ...mirroredObjects([], { namespace: 'kubestellar-view', service: 'ksview', portName: 'https' }, 8443, undefined).map((w) => w.object)];
  for (const obj of objects) {
    const o2 = obj as { kind: string; metadata: { name: string } };
    // A server-side apply as the server would send it, dry run: authorized (create and patch by name) and admitted.
    const r = kc('wds1', ['apply', '--server-side', '--field-manager', 'ksview-serve', '--force-conflicts', '--dry-run=server', '--as', who, '-f', '-'],
      YAML.stringify(obj));
    t.equal(r.status, 0, `${o2.kind} ${o2.metadata.name}: ${r.stderr.trim() || 'allowed'}`);
  }
  t.equal(can('patch', 'endpoints/other', 'kubestellar-view'), 'no', 'another Service\'s endpoints: no');
  t.equal(can('patch', 'services/kubernetes', 'default'), 'no', 'elsewhere: no');
  t.equal(can('patch', 'apiservices/v1.apps'), 'no', 'another APIService: no');
  t.equal(can('create', 'clusterrolebindings'), 'no', 'no RBAC of its own making');
  t.equal(can('update', 'leases/kubestellar-view-placement-wds1', 'kubestellar-view'), 'yes', 'its Lease');
  t.equal(can('list', 'endpointslices', 'kubestellar-view'), 'no', 'reads nothing of the WDS\'s endpoints');
});
