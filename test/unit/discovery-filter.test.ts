import t from 'tap';
import {
  filterAggregatedDiscovery, filterGroupList, filterResourceList, visibleGroupVersions,
} from '../../src/storage/discovery-filter.js';
import type { AggregatedDiscovery } from '../../src/kube/discovery.js';
import { KindCategories } from '../../src/storage/kind-categories.js';

const cats = new KindCategories();
const rk = (group: string, version: string, kind: string) => ({ group, version, kind });

const coreDoc = (): AggregatedDiscovery => ({
  kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {},
  items: [{
    metadata: { creationTimestamp: null } as { name?: string },
    versions: [{
      version: 'v1', freshness: 'Current',
      resources: [
        { resource: 'pods', scope: 'Namespaced', responseKind: rk('', 'v1', 'Pod'), verbs: ['get', 'list'],
          subresources: [{ subresource: 'status' }, { subresource: 'log' }] },
        { resource: 'events', scope: 'Namespaced', responseKind: rk('', 'v1', 'Event') },
        { resource: 'nodes', scope: 'Cluster', responseKind: rk('', 'v1', 'Node'), subresources: [{ subresource: 'status' }] },
        { resource: 'bindings', scope: 'Namespaced', responseKind: rk('', 'v1', 'Binding') },
        { resource: 'configmaps', scope: 'Namespaced', responseKind: rk('', 'v1', 'ConfigMap'), shortNames: ['cm'] },
      ],
    }],
  }],
});

const apisDoc = (): AggregatedDiscovery => ({
  kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {},
  items: [
    { metadata: { name: 'apps' }, versions: [{ version: 'v1', freshness: 'Current', resources: [
      { resource: 'deployments', responseKind: rk('apps', 'v1', 'Deployment'), subresources: [{ subresource: 'scale' }] },
      { resource: 'controllerrevisions', responseKind: rk('apps', 'v1', 'ControllerRevision') },
    ] }] },
    { metadata: { name: 'coordination.k8s.io' }, versions: [{ version: 'v1', resources: [
      { resource: 'leases', responseKind: rk('coordination.k8s.io', 'v1', 'Lease') },
    ] }] },
    { metadata: { name: 'events.k8s.io' }, versions: [{ version: 'v1', resources: [{ resource: 'events' }] }] },
    { metadata: { name: 'control.kubestellar.io' }, versions: [{ version: 'v1alpha1', resources: [{ resource: 'bindingpolicies' }] }] },
    { metadata: { name: 'view.kubestellar.io' }, versions: [{ version: 'v1alpha1', resources: [{ resource: 'spaces' }] }] },
    { metadata: { name: 'example.com' }, preferredVersion: { version: 'v2' }, versions: [
      { version: 'v2', resources: [{ resource: 'widgets', responseKind: rk('example.com', 'v2', 'Widget') }] },
      { version: 'v1', resources: [{ resource: 'widgets', responseKind: rk('example.com', 'v1', 'Widget') }] },
    ] },
  ],
});

const names = (doc: AggregatedDiscovery) => (doc.items ?? []).map((g) => g.metadata?.name ?? '');
const resources = (doc: AggregatedDiscovery, group: string, version: string) => (doc.items ?? [])
  .find((g) => (g.metadata?.name ?? '') === group)?.versions?.find((v) => v.version === version)?.resources?.map((r) => r.resource);

t.test('aggregated discovery of /api: hidden resources removed, the rest as it was', async (t) => {
  const input = coreDoc();
  const out = filterAggregatedDiscovery(input, cats);
  t.strictSame(resources(out, '', 'v1'), ['pods', 'configmaps']);
  const pods = out.items![0]!.versions![0]!.resources![0]!;
  t.strictSame(pods, coreDoc().items![0]!.versions![0]!.resources![0], 'pods unchanged, subresources and responseKind kept');
  t.strictSame(out.items![0]!.versions![0]!.resources![1], coreDoc().items![0]!.versions![0]!.resources![4], 'configmaps unchanged');
  t.equal(out.items![0]!.versions![0]!.freshness, 'Current');
  t.equal(out.kind, 'APIGroupDiscoveryList');
  t.equal(out.apiVersion, 'apidiscovery.k8s.io/v2');
  t.strictSame(input, coreDoc(), 'input not modified');
});

t.test('aggregated discovery of /apis: groups left empty and hidden groups dropped', async (t) => {
  const input = apisDoc();
  const out = filterAggregatedDiscovery(input, cats);
  t.strictSame(names(out), ['apps', 'example.com']);
  t.strictSame(resources(out, 'apps', 'v1'), ['deployments']);
  t.strictSame(out.items![0]!.versions![0]!.resources![0], apisDoc().items![0]!.versions![0]!.resources![0]);
  const ex = out.items![1]!;
  t.strictSame(ex, apisDoc().items![5], 'a group with nothing hidden is unchanged (preferredVersion, version order)');
  t.strictSame(input, apisDoc(), 'input not modified');
});

t.test('a version left with only hidden resources is dropped, its sibling kept', async (t) => {
  const c = new KindCategories([{ group: 'example.com', resource: 'widgets' }], []);
  const doc: AggregatedDiscovery = { items: [{ metadata: { name: 'example.com' }, versions: [
    { version: 'v2', resources: [{ resource: 'widgets' }, { resource: 'gadgets' }] },
    { version: 'v1', resources: [{ resource: 'widgets' }] },
  ] }] };
  const out = filterAggregatedDiscovery(doc, c);
  t.strictSame(out.items, [{ metadata: { name: 'example.com' }, versions: [{ version: 'v2', resources: [{ resource: 'gadgets' }] }] }]);
});

t.test('visibleGroupVersions lists what the filtered documents keep', async (t) => {
  const visible = visibleGroupVersions([filterAggregatedDiscovery(coreDoc(), cats), filterAggregatedDiscovery(apisDoc(), cats)]);
  t.strictSame([...visible].sort(), ['apps/v1', 'example.com/v1', 'example.com/v2', 'v1']);
});

t.test('filterGroupList keeps visible groups and versions, with a visible preferred version', async (t) => {
  const gv = (groupVersion: string) => ({ groupVersion, version: groupVersion.split('/')[1]! });
  const doc = {
    kind: 'APIGroupList', apiVersion: 'v1',
    groups: [
      { name: 'apps', versions: [gv('apps/v1')], preferredVersion: gv('apps/v1') },
      { name: 'coordination.k8s.io', versions: [gv('coordination.k8s.io/v1')], preferredVersion: gv('coordination.k8s.io/v1') },
      { name: 'control.kubestellar.io', versions: [gv('control.kubestellar.io/v1alpha1')], preferredVersion: gv('control.kubestellar.io/v1alpha1') },
      { name: 'example.com', versions: [gv('example.com/v2'), gv('example.com/v1')], preferredVersion: gv('example.com/v2') },
    ],
  };
  const out = filterGroupList(doc, new Set(['v1', 'apps/v1', 'example.com/v1']));
  t.equal(out.kind, 'APIGroupList');
  t.strictSame(out.groups, [
    { name: 'apps', versions: [gv('apps/v1')], preferredVersion: gv('apps/v1') },
    { name: 'example.com', versions: [gv('example.com/v1')], preferredVersion: gv('example.com/v1') },
  ]);
});

t.test('filterResourceList drops hidden resources and their subresources only', async (t) => {
  const r = (name: string) => ({ name, namespaced: true, kind: 'X', verbs: ['get'] });
  const doc = { kind: 'APIResourceList', groupVersion: 'v1',
    resources: ['pods', 'pods/status', 'nodes', 'nodes/status', 'nodes/proxy', 'events', 'configmaps', 'bindings'].map(r) };
  const out = filterResourceList(doc, '', cats);
  t.equal(out.groupVersion, 'v1');
  t.equal(out.kind, 'APIResourceList');
  t.strictSame(out.resources, [r('pods'), r('pods/status'), r('configmaps')]);
  const apps = filterResourceList({ groupVersion: 'apps/v1', resources: [r('deployments'), r('deployments/scale'), r('controllerrevisions')] }, 'apps', cats);
  t.strictSame(apps.resources?.map((x) => x.name), ['deployments', 'deployments/scale']);
  t.strictSame(filterResourceList({ groupVersion: 'example.com/v1', resources: [r('bindings'), r('events')] }, 'example.com', cats).resources?.map((x) => x.name),
    ['bindings', 'events'], 'names hidden only in other groups stay');
});
