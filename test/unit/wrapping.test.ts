import t from 'tap';
import { isDNS1123Label } from '../../src/kube/names.js';
import {
  applyRemovals, bundleGroup, bundleWorkName, feedbackRules, manifestWork, manifestWorkName, parseRemovePath, policyLabel, stripServerFields, WrapError, MAX_MANIFESTS_BYTES,
} from '../../src/controllers/model/wrapping.js';

t.test('stripServerFields keeps what the author wrote', async (t) => {
  const live = {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 's', namespace: 'demo', uid: 'u', resourceVersion: '5', generation: 2, creationTimestamp: 'x', managedFields: [{}],
      ownerReferences: [{}], finalizers: ['f'], selfLink: '/x', generateName: 's-', labels: { app: 'a' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'me' } },
    spec: { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', sessionAffinity: 'None',
      externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] },
    status: { loadBalancer: {} },
  };
  t.same(stripServerFields(live, { group: '', resource: 'services' }), {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'demo', labels: { app: 'a' }, annotations: { keep: 'me' } },
    spec: { type: 'NodePort', ports: [{ port: 80 }] },
  }, 'KubeStellar\'s built-in Service transformation; generateName goes from every object');
  t.equal(live.spec.clusterIP, '10.0.0.1', 'the input is untouched');
  const preserved = { ...live, metadata: { ...live.metadata, annotations: { 'kubestellar.io/annotations/preserve': 'nodeport' } } };
  t.same((stripServerFields(preserved, { group: '', resource: 'services' }).spec as { ports: unknown }).ports, [{ port: 80, nodePort: 30080 }],
    'nodePort kept with kubestellar.io/annotations/preserve=nodeport');
  for (const key of ['annotations.kubestellar.io/preserve', 'control.kubestellar.io/preserve']) {
    const o = { ...live, metadata: { ...live.metadata, annotations: { [key]: 'nodeport' } } };
    t.same((stripServerFields(o, { group: '', resource: 'services' }).spec as { ports: unknown }).ports, [{ port: 80, nodePort: 30080 }], `and with ${key} (a valid key)`);
  }
  const marked = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', labels: { app: 'a', 'kubestellar.io/executing-count': '1' },
    annotations: { 'view.kubestellar.io/status-returned-from': 'wec1' } }, spec: {} };
  t.same(stripServerFields(marked, { group: 'apps', resource: 'deployments' }), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', labels: { app: 'a' } }, spec: {} },
    'the status controller\'s marks on the WDS object do not travel');
  const headless = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db-hl' },
    spec: { clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4'], selector: { app: 'db' }, ports: [{ port: 5432 }] } };
  t.same(stripServerFields(headless, { group: '', resource: 'services' }).spec,
    { clusterIP: 'None', clusterIPs: ['None'], selector: { app: 'db' }, ports: [{ port: 5432 }] }, 'a headless Service stays headless');
  t.same(stripServerFields({ spec: { clusterIPs: ['None', '10.0.0.9'] } }, { group: '', resource: 'services' }).spec, { clusterIPs: ['None'] },
    'clusterIPs holding "None" keep only "None"');
  const job = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', labels: { 'controller-uid': 'u', 'batch.kubernetes.io/controller-uid': 'u' },
      annotations: { 'batch.kubernetes.io/job-tracking': '' } },
    spec: { selector: { matchLabels: { 'controller-uid': 'u' } }, template: { metadata: { labels: { 'controller-uid': 'u', 'job-name': 'j' } }, spec: {} } },
  };
  t.same(stripServerFields(job, { group: 'batch', resource: 'jobs' }), {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { metadata: { labels: { 'job-name': 'j' } }, spec: {} } },
  });
  t.same(stripServerFields({ metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } } }, { group: '', resource: 'configmaps' }),
    { metadata: {} }, 'an annotations map left empty goes');
});

t.test('CustomTransform remove paths', async (t) => {
  t.same(parseRemovePath('$.spec.selector'), ['spec', 'selector']);
  t.same(parseRemovePath('$.metadata.labels["app.kubernetes.io/name"]'), ['metadata', 'labels', 'app.kubernetes.io/name']);
  t.same(parseRemovePath("$.spec.ports[1]"), ['spec', 'ports', 1]);
  t.throws(() => parseRemovePath('spec.x'), WrapError);
  t.throws(() => parseRemovePath('$'), WrapError);
  t.throws(() => parseRemovePath('$.spec[*]'), WrapError);
  const obj = { spec: { selector: { a: 1 }, ports: [{ p: 1 }, { p: 2 }] }, metadata: { labels: { 'x.y/z': '1', k: '2' } } };
  t.same(applyRemovals(obj, ['$.spec.selector', '$.spec.ports[0]', '$.metadata.labels["x.y/z"]', '$.not.there', '$.spec.ports[9]']),
    { spec: { ports: [{ p: 2 }] }, metadata: { labels: { k: '2' } } });
  t.same(obj.spec.ports.length, 2, 'the input is untouched');
});

t.test('manifestWork: stable name, labels, update strategy, size limit', async (t) => {
  const id = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web' };
  const name = manifestWorkName('wds1', id);
  t.match(name, /^wds1-[0-9a-f]{20}$/);
  t.equal(manifestWorkName('wds1', id), name, 'stable');
  t.not(manifestWorkName('wds2', id), name, 'per WDS');
  t.not(manifestWorkName('wds1', { ...id, namespace: 'other' }), name, 'per object');
  const manifest = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'demo' } };
  const work = manifestWork(manifest, { wds: 'wds1', cluster: 'wec1', id, policies: ['edge', 'p'.repeat(70)], createOnly: false }) as any;
  t.equal(work.apiVersion, 'work.open-cluster-management.io/v1');
  t.same(work.metadata, { name, namespace: 'wec1', labels: { 'view.kubestellar.io/wds': 'wds1', [policyLabel('edge')]: '', [policyLabel('p'.repeat(70))]: '' } });
  t.match(policyLabel('p'.repeat(70)), /^bindingpolicy\.view\.kubestellar\.io\/h-[0-9a-f]{40}$/, 'a long policy name is hashed');
  t.same(work.spec.workload.manifests, [manifest]);
  t.same(work.spec.manifestConfigs, [{ resourceIdentifier: { group: 'apps', resource: 'deployments', name: 'web', namespace: 'demo' },
    updateStrategy: { type: 'ServerSideApply', serverSideApply: { fieldManager: 'work-agent-kubestellar-wds1', force: false } },
    feedbackRules: [{ type: 'WellKnownStatus' }] }]);
  t.equal(work.spec.deleteOption, undefined, 'deleted with its work (the default)');
  const createOnly = manifestWork(manifest, { wds: 'wds1', cluster: 'wec1', id: { ...id, namespace: '' }, policies: [], createOnly: true }) as any;
  t.same(createOnly.spec.manifestConfigs[0], { resourceIdentifier: { group: 'apps', resource: 'deployments', name: 'web' }, updateStrategy: { type: 'CreateOnly' },
    feedbackRules: [{ type: 'WellKnownStatus' }] });
  const big = { ...manifest, data: { x: 'a'.repeat(MAX_MANIFESTS_BYTES) } };
  t.throws(() => manifestWork(big, { wds: 'wds1', cluster: 'wec1', id, policies: [], createOnly: false }), WrapError);
});

t.test('feedbackRules: OCM v1.2.0 well-known kinds, JSONPaths for a few more, none for the rest', async (t) => {
  for (const [g, k] of [['apps', 'Deployment'], ['apps', 'DaemonSet'], ['batch', 'Job'], ['', 'Pod']] as const) {
    t.same(feedbackRules(g, k), [{ type: 'WellKnownStatus' }], `${g}/${k}`);
  }
  t.same(feedbackRules('apps', 'StatefulSet')?.[0]?.jsonPaths?.map((p) => p.name), ['ReadyReplicas', 'Replicas', 'AvailableReplicas', 'UpdatedReplicas']);
  t.same(feedbackRules('apiextensions.k8s.io', 'CustomResourceDefinition'),
    [{ type: 'JSONPaths', jsonPaths: [{ name: 'Established', path: '.status.conditions[?(@.type=="Established")].status' }] }]);
  t.equal(feedbackRules('', 'ConfigMap'), undefined, 'no status, no rule');
  t.equal(feedbackRules('example.com', 'Deployment'), undefined, 'the group counts');
  const sts = manifestWork({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's', namespace: 'n' } },
    { wds: 'w', cluster: 'c', id: { group: 'apps', version: 'v1', resource: 'statefulsets', namespace: 'n', name: 's' }, policies: [], createOnly: false });
  t.equal(sts.spec?.manifestConfigs?.[0]?.feedbackRules?.[0]?.type, 'JSONPaths');
});

t.test('a Namespace: selected → SSA, deleted with its work; implied → CreateOnly, orphaned', async (t) => {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo', labels: { a: 'b' } } };
  const id = { group: '', version: 'v1', resource: 'namespaces', namespace: '', name: 'demo' };
  const selected = manifestWork(ns, { wds: 'wds1', cluster: 'wec1', id, policies: ['p'], createOnly: false });
  t.equal(selected.spec?.deleteOption, undefined);
  t.equal(selected.spec?.manifestConfigs?.[0]?.updateStrategy?.type, 'ServerSideApply');
  t.equal(selected.spec?.manifestConfigs?.[0]?.feedbackRules, undefined);
  const implied = manifestWork(ns, { wds: 'wds1', cluster: 'wec1', id, policies: ['p'], createOnly: false, impliedNamespace: true });
  t.same(implied.spec?.deleteOption, { propagationPolicy: 'SelectivelyOrphan',
    selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', name: 'demo', namespace: '' }] } });
  t.same(implied.spec?.manifestConfigs?.[0]?.updateStrategy, { type: 'CreateOnly' });
  t.equal(implied.metadata.name, selected.metadata.name, 'the same work changes, so going from one to the other is an update');
  const cm = manifestWork({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'demo' } },
    { wds: 'wds1', cluster: 'wec1', id: { group: '', version: 'v1', resource: 'configmaps', namespace: 'demo', name: 'c' }, policies: [], createOnly: false, impliedNamespace: true });
  t.equal(cm.spec?.deleteOption, undefined, 'only a Namespace is ever implied');
});

t.test('work names: a valid DNS label for any WDS name, never the same for two WDSs or two objects', async (t) => {
  const id = (name: string) => ({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name });
  const group = bundleGroup({ [policyLabel('edge')]: '' }, undefined);
  // The review's pair (42 characters, differing at the end), longer pairs, and the longest WDS names a DNS label allows.
  const pairs: [string, string][] = [
    ['tenant-payments-production-eu-west-1-wds-a', 'tenant-payments-production-eu-west-1-wds-b'],
    ['tenant-payments-production-eu-west-1-cluster-pool-wds-a', 'tenant-payments-production-eu-west-1-cluster-pool-wds-b'],
    [`${'w'.repeat(61)}a`, `${'w'.repeat(61)}b`],
    [`${'w'.repeat(62)}a`, `${'w'.repeat(62)}b`],
    [`${'w'.repeat(61)}-a`, `${'w'.repeat(61)}-b`],
    ['w'.repeat(62), 'w'.repeat(63)],
  ];
  for (const [a, b] of pairs) {
    t.not(manifestWorkName(a, id('web')), manifestWorkName(b, id('web')), `${a.length}/${b.length} characters: one object's works differ`);
    for (const slot of [0, 7, 12345]) t.not(bundleWorkName(a, group, slot), bundleWorkName(b, group, slot), `${a.length}/${b.length} characters: bundle slot ${slot} differs`);
  }
  // Every length of WDS name (two names of each, one of them hyphenated), two objects, a few slots: all valid, all different.
  const names = new Map<string, string>();
  const invalid: string[] = [];
  const twice: string[] = [];
  const seen = (name: string, what: string) => {
    if (!isDNS1123Label(name)) invalid.push(`${what}: ${name}`);
    if (names.has(name)) twice.push(`${what} and ${names.get(name)}: ${name}`);
    names.set(name, what);
  };
  const wdsNames = new Set<string>();
  for (let n = 1; n <= 63; n++) wdsNames.add('w'.repeat(n)).add(`a${'-0'.repeat(32)}`.slice(0, n).replace(/-$/, '0'));
  for (const wds of wdsNames) {
    seen(manifestWorkName(wds, id('web')), `${wds} web`);
    seen(manifestWorkName(wds, id('api')), `${wds} api`);
    for (const slot of [0, 1, 99999]) seen(bundleWorkName(wds, group, slot), `${wds} bundle ${slot}`);
  }
  t.same(invalid, [], `${names.size} names, each a DNS label (at most 63 characters)`);
  t.same(twice, [], 'no name given twice');
  t.equal(manifestWorkName('w'.repeat(42), id('web')).startsWith(`${'w'.repeat(42)}-`), true, 'a WDS name that fits is whole in its works\' names (and they stay as they were)');
  t.match(bundleWorkName('wds1', group, 3), `wds1-b${group}-3`, 'a bundle of a short WDS name: named as before');
});
