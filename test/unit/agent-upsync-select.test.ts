// Upsync's selection and planning, pure (src/agent/upsync/select.ts, plan.ts): clause fields, the
// Secrets rule, associatedWith (owner chain as the garbage collector follows it, StatefulSet
// claims), bounds and the status message, the policies of a copy selected by two requests, the
// executor's read rights, and where each resource is watched.
import t from 'tap';
import type { KubeObject } from '../../src/kube/objects.js';
import { upsyncedObjectName, type UpsyncClause, type UpsyncRequest } from '../../src/kube/upsync-api.js';
import type { Mapping } from '../../src/agent/shared/rest-mapper.js';
import { associatedClauseKeeps, isClaimOf, ownedBy, resourceClauseSelects, statefulSetClaims, type Candidate, type Owner } from '../../src/agent/upsync/select.js';
import { neededResources, plan, watchScopes, type World } from '../../src/agent/upsync/plan.js';
import type { ReadAccess } from '../../src/agent/upsync/read-rights.js';

const obj = (apiVersion: string, kind: string, namespace: string, name: string, extra: Record<string, unknown> = {}): KubeObject => {
  const { metadata, ...rest } = extra as { metadata?: Record<string, unknown> };
  return { apiVersion, kind, metadata: { namespace, name, uid: `uid-${kind}-${namespace}-${name}`, resourceVersion: '7', ...metadata }, ...rest };
};
const cand = (group: string, resource: string, o: KubeObject): Candidate => ({ group, resource, obj: o });

t.test('a resources clause selects as a downsync clause, absent apiGroup meaning core', async (t) => {
  const cm = cand('', 'configmaps', obj('v1', 'ConfigMap', 'demo', 'web', { metadata: { labels: { app: 'web' } } }));
  const dep = cand('apps', 'deployments', obj('apps/v1', 'Deployment', 'demo', 'web'));
  const sel = (c: UpsyncClause, x: Candidate, ns: Record<string, string> = {}) => resourceClauseSelects(c, x, ns);
  t.ok(sel({ resources: ['configmaps'] }, cm));
  t.notOk(sel({ resources: ['deployments'] }, dep), 'absent apiGroup is the core group, not any group');
  t.ok(sel({ apiGroup: 'apps', resources: ['deployments'] }, dep));
  t.notOk(sel({ apiGroup: 'apps', resources: ['configmaps'] }, cm));
  t.notOk(sel({}, cm), 'a clause without resources selects nothing by resource');
  t.ok(sel({ resources: ['configmaps'], namespaces: ['demo'] }, cm));
  t.notOk(sel({ resources: ['configmaps'], namespaces: ['other'] }, cm));
  t.ok(sel({ resources: ['configmaps'], objectNames: ['web'] }, cm));
  t.notOk(sel({ resources: ['configmaps'], objectNames: ['api'] }, cm));
  t.ok(sel({ resources: ['configmaps'], objectSelectors: [{ matchLabels: { app: 'web' } }] }, cm));
  t.notOk(sel({ resources: ['configmaps'], objectSelectors: [{ matchLabels: { app: 'api' } }] }, cm));
  t.ok(sel({ resources: ['configmaps'], namespaceSelectors: [{ matchLabels: { env: 'prod' } }] }, cm, { env: 'prod' }));
  t.notOk(sel({ resources: ['configmaps'], namespaceSelectors: [{ matchLabels: { env: 'prod' } }] }, cm, { env: 'dev' }));
});

t.test('Secrets only by name, service-account and bootstrap tokens never', async (t) => {
  const s = cand('', 'secrets', obj('v1', 'Secret', 'demo', 'creds', { type: 'Opaque' }));
  const token = cand('', 'secrets', obj('v1', 'Secret', 'demo', 'sa-token', { type: 'kubernetes.io/service-account-token' }));
  const bootstrap = cand('', 'secrets', obj('v1', 'Secret', 'kube-system', 'bootstrap-token-abcdef', { type: 'bootstrap.kubernetes.io/token' }));
  t.notOk(resourceClauseSelects({ resources: ['secrets'], namespaces: ['kube-system'], objectNames: ['bootstrap-token-abcdef'] }, bootstrap, {}),
    'never a bootstrap token, even by name (downsync\'s rule too)');
  t.notOk(associatedClauseKeeps({ associatedWith: 'downsync', objectNames: ['sa-token'] }, token, {}));
  t.notOk(resourceClauseSelects({ resources: ['secrets'] }, s, {}), 'not by resource alone');
  t.notOk(resourceClauseSelects({ resources: ['secrets'], objectNames: ['*'] }, s, {}), 'not by "*"');
  t.notOk(resourceClauseSelects({ resources: ['secrets'], objectSelectors: [{}] }, s, {}), 'not by a selector');
  t.ok(resourceClauseSelects({ resources: ['secrets'], objectNames: ['creds'] }, s, {}), 'by name');
  t.notOk(resourceClauseSelects({ resources: ['secrets'], objectNames: ['sa-token'] }, token, {}), 'never a service-account token');
});

/** An ownerReference to `o`, as Kubernetes writes one. */
const ownerRef = (o: KubeObject) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata!.name, uid: o.metadata!.uid, controller: true });
/** Owners by uid, each with the group and kind of its apiVersion (the planner's come from the mappings). */
const ownersOf = (...objs: KubeObject[]) => (u: string): Owner | undefined => {
  const o = objs.find((x) => x.metadata!.uid === u);
  return o && { group: o.apiVersion!.includes('/') ? o.apiVersion!.split('/')[0]! : '', kind: o.kind!, obj: o };
};

t.test('owner chains and StatefulSet claims', async (t) => {
  const dep = obj('apps/v1', 'Deployment', 'demo', 'web');
  const rs = obj('apps/v1', 'ReplicaSet', 'demo', 'web-1', { metadata: { ownerReferences: [ownerRef(dep)] } });
  const pod = obj('v1', 'Pod', 'demo', 'web-1-a', { metadata: { ownerReferences: [ownerRef(rs)] } });
  const stray = obj('v1', 'Pod', 'demo', 'stray', { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: 'nobody' }] } });
  const byUid = ownersOf(dep, rs, pod);
  const roots = new Set([dep.metadata!.uid!]);
  t.ok(ownedBy(rs, roots, byUid));
  t.ok(ownedBy(pod, roots, byUid), 'Pod → ReplicaSet → Deployment');
  t.notOk(ownedBy(stray, roots, byUid));
  // A cycle of owners ends.
  const a = obj('v1', 'Pod', 'demo', 'a', { metadata: { uid: 'a', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'b', uid: 'b' }] } });
  const b = obj('v1', 'Pod', 'demo', 'b', { metadata: { uid: 'b', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'a', uid: 'a' }] } });
  t.notOk(ownedBy(a, roots, ownersOf(a, b)));
  const sts = obj('apps/v1', 'StatefulSet', 'demo', 'db', { spec: { volumeClaimTemplates: [{ metadata: { name: 'data' } }] } });
  const claims = statefulSetClaims(sts);
  t.ok(isClaimOf(obj('v1', 'PersistentVolumeClaim', 'demo', 'data-db-0'), claims));
  t.ok(isClaimOf(obj('v1', 'PersistentVolumeClaim', 'demo', 'data-db-12'), claims));
  t.notOk(isClaimOf(obj('v1', 'PersistentVolumeClaim', 'demo', 'data-db-x'), claims));
  t.notOk(isClaimOf(obj('v1', 'PersistentVolumeClaim', 'other', 'data-db-0'), claims), 'same namespace only');
});

const M: Record<string, Mapping> = {
  '|configmaps': { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
  '|pods': { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true },
  '|persistentvolumeclaims': { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true },
  'apps|replicasets': { group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true },
  'apps|deployments': { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true },
  'apps|statefulsets': { group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true },
  'batch|jobs': { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true },
};

function world(objects: Record<string, KubeObject[]>, unserved: string[] = []): World {
  return {
    resource: (gr) => (M[gr] && !unserved.includes(gr) ? {
      mapping: M[gr]!, objects: objects[gr] ?? [],
      get: (ns, n) => (objects[gr] ?? []).find((o) => o.metadata!.namespace === ns && o.metadata!.name === n),
    } : undefined),
    unserved: (gr) => unserved.includes(gr) || !M[gr],
    namespaceLabels: () => ({}),
  };
}

/** Requests without an executor never ask. */
const ANYONE: ReadAccess = () => true;

const request = (name: string, wds: string, clauses: UpsyncClause[], extra: Partial<UpsyncRequest['spec']> = {}): UpsyncRequest => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncRequest',
  metadata: { name: `${wds}.${name}`, namespace: 'wec1', generation: 3 },
  spec: { wds, policy: name, clauses, maxObjects: 10_000, maxObjectBytes: 262_144, ...extra },
});

t.test('an owner link holds only as the garbage collector would follow it: same namespace (or a cluster-scoped owner), the reference\'s kind and name', async (t) => {
  const dep = obj('apps/v1', 'Deployment', 'team-a', 'web');
  const rs = obj('apps/v1', 'ReplicaSet', 'team-a', 'web-1', { metadata: { ownerReferences: [ownerRef(dep)] } });
  const roots = new Set([dep.metadata!.uid!]);
  // A Pod in another namespace whose author copied the Deployment's (or its ReplicaSet's) uid.
  const foreign = obj('v1', 'Pod', 'team-b', 'thief', { metadata: { ownerReferences: [ownerRef(dep)] } });
  const foreign2 = obj('v1', 'Pod', 'team-b', 'thief-2', { metadata: { ownerReferences: [ownerRef(rs)] } });
  const byUid = ownersOf(dep, rs, foreign, foreign2);
  t.notOk(ownedBy(foreign, roots, byUid), 'the root is in another namespace');
  t.notOk(ownedBy(foreign2, roots, byUid), 'nor through an owner of another namespace');
  t.ok(ownedBy(rs, roots, byUid), 'the same reference in the owner\'s namespace holds');
  const local = (ref: Record<string, unknown>) => obj('v1', 'Pod', 'team-a', 'p', { metadata: { ownerReferences: [{ ...ownerRef(dep), ...ref }] } });
  t.notOk(ownedBy(local({ name: 'other' }), roots, byUid), 'the uid of one object under the name of another');
  t.notOk(ownedBy(local({ kind: 'StatefulSet' }), roots, byUid), 'another kind');
  t.notOk(ownedBy(local({ apiVersion: 'example.com/v1' }), roots, byUid), 'another group');
  t.notOk(ownedBy(local({ apiVersion: undefined }), roots, byUid), 'no apiVersion');
  t.ok(ownedBy(local({ apiVersion: 'apps/v1beta2' }), roots, byUid), 'another version of the group is the same owner');
  // A cluster-scoped owner (a Namespace, say) owns dependents in any namespace.
  const ns = obj('v1', 'Namespace', '', 'team-a');
  t.ok(ownedBy(obj('v1', 'Pod', 'team-b', 'q', { metadata: { ownerReferences: [ownerRef(ns)] } }), new Set([ns.metadata!.uid!]), ownersOf(ns)));
  // A cluster-scoped dependent has no namespaced owner.
  t.notOk(ownedBy(obj('v1', 'PersistentVolume', '', 'pv', { metadata: { ownerReferences: [ownerRef(dep)] } }), roots, byUid));
});

t.test('plan: bounds by count (sorted by namespace/name) and bytes, said in the status', async (t) => {
  const cms = Array.from({ length: 5 }, (_, i) => obj('v1', 'ConfigMap', i % 2 ? 'b' : 'a', `cm${i}`));
  cms.push(obj('v1', 'ConfigMap', 'a', 'big', { data: { x: 'y'.repeat(2000) } }));
  const r = request('p1', 'wds1', [{ resources: ['configmaps'] }], { maxObjects: 3, maxObjectBytes: 1000 });
  const p = plan([r], world({ '|configmaps': cms }), (o) => Buffer.byteLength(JSON.stringify(o)), ANYONE);
  t.same([...p.desired.values()].map((d) => `${d.source.namespace}/${d.source.name}`), ['a/cm0', 'a/cm2', 'a/cm4'], 'the first 3 by namespace/name');
  t.same(p.statuses.get('wds1.p1'), {
    observedGeneration: 3, objects: 3, selected: 6, tooLarge: 1,
    message: '6 objects selected, 3 upsynced (maxObjects 3); 1 larger than 1000 bytes left out',
  });
  const d = [...p.desired.values()][0]!;
  t.equal(d.name, upsyncedObjectName('wds1', { group: '', resource: 'configmaps', namespace: 'a', name: 'cm0' }));
  t.same(d.source, { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'a', name: 'cm0', uid: 'uid-ConfigMap-a-cm0', resourceVersion: '7' });
  const none = plan([request('p0', 'wds1', [{ resources: ['configmaps'] }], { maxObjects: 0 })], world({ '|configmaps': cms }), () => 1, ANYONE);
  t.equal(none.desired.size, 0, 'maxObjects 0: nothing, and nothing crashes');
});

t.test('plan: two requests of a WDS share one copy listing both policies; another WDS has its own', async (t) => {
  const cms = [obj('v1', 'ConfigMap', 'demo', 'web')];
  const reqs = [request('zeta', 'wds1', [{ resources: ['configmaps'] }]), request('alpha', 'wds1', [{ resources: ['configmaps'], namespaces: ['demo'] }]),
    request('p', 'wds2', [{ resources: ['configmaps'] }])];
  const p = plan(reqs, world({ '|configmaps': cms }), () => 1, ANYONE);
  t.equal(p.desired.size, 2);
  const ref = { group: '', resource: 'configmaps', namespace: 'demo', name: 'web' };
  t.same(p.desired.get(upsyncedObjectName('wds1', ref))!.policies, ['alpha', 'zeta'], 'sorted');
  t.same(p.desired.get(upsyncedObjectName('wds2', ref))!.policies, ['p']);
});

t.test('plan: associatedWith downsync follows owners from the live downsynced objects, and claims', async (t) => {
  const dep = obj('apps/v1', 'Deployment', 'demo', 'web');
  const rs = obj('apps/v1', 'ReplicaSet', 'demo', 'web-1', { metadata: { ownerReferences: [ownerRef(dep)] } });
  const pod = obj('v1', 'Pod', 'demo', 'web-1-a', { metadata: { ownerReferences: [ownerRef(rs)] } });
  const other = obj('v1', 'Pod', 'demo', 'other');
  const sts = obj('apps/v1', 'StatefulSet', 'demo', 'db', { spec: { volumeClaimTemplates: [{ metadata: { name: 'data' } }] } });
  const pvc = obj('v1', 'PersistentVolumeClaim', 'demo', 'data-db-0');
  const pvc2 = obj('v1', 'PersistentVolumeClaim', 'demo', 'unrelated');
  const r = request('p', 'wds1', [{ associatedWith: 'downsync' }], {
    downsynced: [{ group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' }, { group: 'apps', resource: 'statefulsets', namespace: 'demo', name: 'db' }],
  });
  t.same([...neededResources([r])].sort(), ['apps|deployments', 'apps|replicasets', 'apps|statefulsets', 'batch|jobs', '|persistentvolumeclaims', '|pods'].sort());
  const p = plan([r], world({ 'apps|deployments': [dep], 'apps|replicasets': [rs], '|pods': [pod, other], 'apps|statefulsets': [sts], '|persistentvolumeclaims': [pvc, pvc2] }), () => 1, ANYONE);
  t.same([...p.desired.values()].map((d) => `${d.source.kind}/${d.source.name}`).sort(), ['PersistentVolumeClaim/data-db-0', 'Pod/web-1-a', 'ReplicaSet/web-1']);
  const narrowed = plan([{ ...r, spec: { ...r.spec, clauses: [{ associatedWith: 'downsync', resources: ['pods'] }] } }],
    world({ 'apps|deployments': [dep], 'apps|replicasets': [rs], '|pods': [pod] }), () => 1, ANYONE);
  t.same([...narrowed.desired.values()].map((d) => d.source.name), ['web-1-a'], 'resources narrow an associatedWith clause');
});

t.test('watch scopes: the namespaces the clauses name, every namespace as soon as one clause needing the resource names none', async (t) => {
  const scopes = (reqs: UpsyncRequest[]) => Object.fromEntries([...watchScopes(reqs)].map(([gr, ns]) => [gr, ns && [...ns].sort()]));
  t.same(scopes([request('a', 'wds1', [{ resources: ['configmaps'], namespaces: ['x'] }, { resources: ['configmaps', 'secrets'], namespaces: ['y'] }])]),
    { '|configmaps': ['x', 'y'], '|secrets': ['y'] });
  t.same(scopes([request('a', 'wds1', [{ resources: ['configmaps'], namespaces: ['x'] }]), request('b', 'wds1', [{ resources: ['configmaps'] }])]),
    { '|configmaps': null }, 'another request naming none');
  t.same(scopes([request('a', 'wds1', [{ resources: ['configmaps'], namespaces: ['x', '*'] }])]), { '|configmaps': null }, '"*"');
  t.same(scopes([request('a', 'wds1', [{ resources: ['configmaps'], namespaces: ['x'], namespaceSelectors: [{}] }])]),
    { '|configmaps': null, '|namespaces': null }, 'namespaceSelectors');
  t.same(scopes([request('a', 'wds1', [{ associatedWith: 'downsync', namespaces: ['x'] }], {
    downsynced: [{ group: 'apps', resource: 'deployments', namespace: 'x', name: 'web' }, { group: '', resource: 'namespaces', namespace: '', name: 'x' }],
  })]), {
    'apps|replicasets': ['x'], '|pods': ['x'], 'batch|jobs': ['x'], '|persistentvolumeclaims': ['x'], 'apps|deployments': ['x'], '|namespaces': ['x'],
  }, 'associatedWith: owners are followed in their dependent\'s namespace only (a cluster-scoped resource is watched whole all the same)');
});

t.test('plan: only what the request\'s executor may read; undecided objects are held; none without an executor', async (t) => {
  const cms = [obj('v1', 'ConfigMap', 'a', 'x'), obj('v1', 'ConfigMap', 'b', 'y'), obj('v1', 'ConfigMap', 'c', 'z')];
  const asked: string[] = [];
  const access: ReadAccess = (ex, r, ns) => {
    asked.push(`${ex.namespace}/${ex.name} ${r.resource} ${ns}`);
    return ns === 'a' ? true : ns === 'b' ? false : undefined;
  };
  const r = request('p', 'wds1', [{ resources: ['configmaps'] }], { executor: { namespace: 'team', name: 'sa' } });
  const p = plan([r], world({ '|configmaps': cms }), () => 1, access);
  t.same([...p.desired.values()].map((d) => d.source.name), ['x']);
  t.same([...p.undecided], [upsyncedObjectName('wds1', { group: '', resource: 'configmaps', namespace: 'c', name: 'z' })]);
  t.same(p.statuses.get('wds1.p'), {
    observedGeneration: 3, objects: 1, selected: 3, tooLarge: 0,
    message: '1 object the executor team/sa may not read was left out; 1 object not yet authorized for the executor team/sa',
  });
  t.same(asked, ['team/sa configmaps a', 'team/sa configmaps b', 'team/sa configmaps c']);
  asked.length = 0;
  const free = plan([request('p', 'wds1', [{ resources: ['configmaps'] }])], world({ '|configmaps': cms }), () => 1, access);
  t.equal(free.desired.size, 3, 'no executor: the agent\'s own rights');
  t.same(asked, [], 'and nothing asked');
});

t.test('plan: a resource the WEC does not serve is said in the message', async (t) => {
  const r = request('p', 'wds1', [{ apiGroup: 'example.com', resources: ['widgets'] }, { resources: ['configmaps'] }]);
  const p = plan([r], world({ '|configmaps': [obj('v1', 'ConfigMap', 'a', 'x')] }), () => 1, ANYONE);
  t.equal(p.statuses.get('wds1.p')!.message, 'not served by the cluster: widgets.example.com');
  t.equal(p.statuses.get('wds1.p')!.objects, 1);
});
