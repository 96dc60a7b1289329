// The placement controller's keys, and the caches they index: what is queued, what a ManifestWork
// names as its source, and how objects are found again (by namespace, by work name, by policy).
import t from 'tap';
import type { WorkloadObject } from '../../src/controllers/model/api.js';
import { decodeKey, encodeKey, identityKey, namespaceKey, objectKey, policyKey } from '../../src/controllers/model/keys.js';
import { NamespaceReach } from '../../src/controllers/placement/namespace-reach.js';
import { WorkloadCaches } from '../../src/controllers/placement/workload.js';
import { Works } from '../../src/controllers/placement/works.js';
import type { WorkloadResource } from '../../src/controllers/model/workload-resources.js';
import type { ManifestWork } from '../../src/controllers/model/wrapping.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

t.test('queue keys encode as the source annotation of works always did, and decode back', async (t) => {
  const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };
  t.equal(encodeKey(objectKey(deployments, 'demo', 'web')), 'o|apps|v1|deployments|demo|web');
  t.equal(encodeKey(namespaceKey('demo')), 'o||v1|namespaces||demo');
  t.equal(encodeKey(policyKey('edge')), 'p|edge');
  for (const k of [objectKey(deployments, 'demo', 'web'), namespaceKey('demo'), policyKey('edge'), objectKey({ group: '', version: 'v1', resource: 'configmaps' }, 'a', 'b')]) {
    t.same(decodeKey(encodeKey(k)), k, `round trip of ${encodeKey(k)}`);
  }
  for (const foreign of ['', 'x', 'p|', 'o|apps|v1|deployments|demo', 'o|apps|v1||demo|web', 'o|apps|v1|deployments|demo|', 'q|a']) {
    t.equal(decodeKey(foreign), undefined, `${JSON.stringify(foreign)} is no key`);
  }
  t.equal(identityKey('c1', { group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' }), 'c1|apps|deployments|demo|web');
  t.equal(identityKey('c1', { resource: 'namespaces', name: 'demo' }), 'c1||namespaces||demo');
});

const CONFIGMAPS: WorkloadResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, native: { group: '', resource: 'configmaps' }, bypassesView: false, hasStatus: false };
const ROLES: WorkloadResource = {
  group: 'denatured.kubestellar.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true, native: { group: 'rbac.authorization.k8s.io', resource: 'roles' }, bypassesView: false, hasStatus: false,
};
const cm = (namespace: string, name: string): WorkloadObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } });

t.test('workload caches: keys carry native names; objects are found by namespace through an index', async (t) => {
  const caches = new WorkloadCaches();
  const cms = WorkloadCaches.newStore([cm('a', 'one'), cm('a', 'two'), cm('b', 'three')]);
  caches.add(CONFIGMAPS, cms);
  // A denatured Role whose native name is not a valid stored name is stored under an encoded one.
  caches.add(ROLES, WorkloadCaches.newStore([{
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'Role',
    metadata: { name: 'kv-0123', namespace: 'a', annotations: { 'view.kubestellar.io/native-name': 'system:reader' } },
  }]));
  t.same(caches.keysInNamespace('a').map(encodeKey).sort(),
    ['o|denatured.kubestellar.io|v1|roles|a|system:reader', 'o||v1|configmaps|a|one', 'o||v1|configmaps|a|two'].sort());
  t.same(caches.keysFor({ group: 'rbac.authorization.k8s.io', resource: 'roles' }, 'a', 'system:reader').map(encodeKey), ['o|denatured.kubestellar.io|v1|roles|a|system:reader']);
  t.equal(caches.find(objectKey(CONFIGMAPS, 'a', 'one'))?.id.name, 'one');

  cms.set(cm('b', 'one'));
  cms.delete(cm('a', 'two'));
  t.same(caches.keysInNamespace('a').filter((k) => k.resource.resource === 'configmaps').map((k) => k.name), ['one'], 'the index follows deletes');
  t.same(caches.keysInNamespace('b').map((k) => k.name).sort(), ['one', 'three'], 'and adds');
  t.same(caches.keysInNamespace('nowhere'), []);
  t.equal(caches.allKeys().length, 4);
  caches.remove(CONFIGMAPS);
  t.equal(caches.find(objectKey(CONFIGMAPS, 'b', 'one')), undefined, 'a resource no longer watched has no objects');
});

t.test('works are found by name in every cluster, and by the policies their labels name', async (t) => {
  const work = (cluster: string, name: string, policies: string[]): ManifestWork => ({
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name, namespace: cluster, labels: Object.fromEntries([['view.kubestellar.io/wds', 'wds1'], ...policies.map((p) => [`bindingpolicy.view.kubestellar.io/${p}`, ''])]) },
  });
  const store = Works.newStore([work('c1', 'w', ['edge']), work('c2', 'w', ['edge', 'core']), work('c1', 'v', ['core'])]);
  const its = mockUpstream();
  t.teardown(() => its.close());
  const works = new Works(its.up, store, 'm');
  t.same(works.clustersOfName('w').sort(), ['c1', 'c2']);
  t.ok(works.namePolicy('edge'));
  store.set(work('c2', 'w', ['core']));
  store.delete(work('c1', 'w', []));
  t.notOk(works.namePolicy('edge'), 'relabelled and deleted: no work names edge any more');
  t.same(works.clustersOfName('w'), ['c2']);
});

t.test('namespace reach: a record changes only when what the object adds to its Namespace does', async (t) => {
  const reach = new NamespaceReach();
  const k = objectKey(CONFIGMAPS, 'a', 'one');
  t.notOk(reach.record(k, { clusters: [], policies: [] }), 'nothing recorded before, nothing now');
  t.ok(reach.record(k, { clusters: ['c1'], policies: ['p'] }));
  t.notOk(reach.record(k, { clusters: ['c1'], policies: ['p'] }), 'the same again');
  const other = objectKey(CONFIGMAPS, 'a', 'two');
  const resolved: string[] = [];
  const u = reach.union([k, other], (x) => { resolved.push(x.name); return { clusters: ['c2'], policies: ['q'] }; });
  t.same([[...u.clusters].sort(), [...u.policies].sort()], [['c1', 'c2'], ['p', 'q']]);
  t.same(resolved, ['two'], 'only the object without a record is resolved');
  t.notOk(reach.record(other, { clusters: ['c2'], policies: ['q'] }), 'the union recorded it');
  reach.clear();
  resolved.length = 0;
  const fresh = reach.union([k, other], (x) => { resolved.push(x.name); return { clusters: ['c3'], policies: ['r'] }; });
  t.same(resolved, ['one', 'two'], 'after clear (resolution inputs changed) every object is resolved afresh');
  t.same([...fresh.clusters], ['c3'], 'and no old record counts');
  t.same([...reach.forgetResource(CONFIGMAPS)], ['a'], 'forgetting a resource names the namespaces it reached into');
  t.notOk(reach.record(k, undefined), 'after which the object has no record to lose');
});
