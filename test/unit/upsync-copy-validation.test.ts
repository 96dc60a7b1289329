// What serve believes of an agent's copies (the edge is less trusted than the center): forged or
// malformed copies are never shown, a copy shows only the policies whose request selects it, a
// Secret only when named (never a token), and the bounds hold in serve whatever the agent writes.
import t from 'tap';
import { clauseSelects, policiesSelecting, wellFormed } from '../../src/controllers/upsync/copy-validation.js';
import { UpsyncedCache } from '../../src/controllers/upsync/upsynced-cache.js';
import { upsyncedObjectName, upsyncRequestName, type UpsyncedObject, type UpsyncRequest, type UpsyncRequestSpec } from '../../src/kube/upsync-api.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

function copy(o: { group?: string; version?: string; resource?: string; kind?: string; namespace?: string; name?: string; policies?: string[]; object?: Record<string, unknown>; cluster?: string } = {}): UpsyncedObject {
  const group = o.group ?? '', version = o.version ?? 'v1', resource = o.resource ?? 'configmaps', kind = o.kind ?? 'ConfigMap';
  const namespace = o.namespace ?? 'demo', name = o.name ?? 'cm';
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
    metadata: { name: upsyncedObjectName('wds1', { group, resource, namespace, name }), namespace: o.cluster ?? 'wec1' },
    source: { group, version, resource, kind, namespace, name, uid: `u-${name}`, resourceVersion: '1' },
    lastSeen: '2026-11-26T00:00:00Z', policies: o.policies ?? ['p1'],
    object: o.object ?? { apiVersion: group ? `${group}/${version}` : version, kind, metadata: { name, ...(namespace ? { namespace } : {}), labels: { app: 'x' } }, data: { a: '1' } },
  };
}
const spec = (clauses: UpsyncRequestSpec['clauses'], extra: Partial<UpsyncRequestSpec> = {}): UpsyncRequestSpec =>
  ({ wds: 'wds1', policy: 'p1', clauses, maxObjects: 100, maxObjectBytes: 1024, ...extra });

t.test('well formed: source names a real resource, not a hidden group, and the object is what source says', async (t) => {
  t.ok(wellFormed(copy()));
  t.notOk(wellFormed(copy({ group: 'view.kubestellar.io', resource: 'upsyncedobjects', kind: 'UpsyncedObject' })), 'a view group: authorized as every view user\'s right');
  t.notOk(wellFormed(copy({ group: 'control.kubestellar.io', resource: 'bindings', kind: 'Binding' })));
  t.notOk(wellFormed(copy({ resource: 'deployments.apps', kind: 'Deployment' })), 'a resource with a dot (keys would be ambiguous)');
  t.notOk(wellFormed(copy({ object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cm', namespace: 'demo' }, data: { token: 'x' } } })), 'source says ConfigMap, the object is a Secret');
  t.notOk(wellFormed(copy({ object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'prod' } } })), 'another namespace than authorized');
  t.notOk(wellFormed(copy({ object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: 'demo' } } })), 'another name');
  t.notOk(wellFormed({ ...copy(), source: undefined } as unknown as UpsyncedObject), 'no source');
  t.notOk(wellFormed(copy({ version: 'v1; drop' })));
  t.ok(wellFormed(copy({ group: 'apps', resource: 'replicasets', kind: 'ReplicaSet' })));
});

t.test('clauses as serve can check them; Secrets by name only, never tokens', async (t) => {
  const c = copy();
  t.ok(clauseSelects({ resources: ['configmaps'], namespaces: ['demo'] }, spec([]), c));
  t.notOk(clauseSelects({ resources: ['configmaps'], namespaces: ['other'] }, spec([]), c), 'namespace');
  t.notOk(clauseSelects({ resources: ['pods'] }, spec([]), c), 'resource');
  t.notOk(clauseSelects({ apiGroup: 'apps', resources: ['configmaps'] }, spec([]), c), 'group');
  t.notOk(clauseSelects({ resources: ['configmaps'], objectSelectors: [{ matchLabels: { app: 'y' } }] }, spec([]), c), 'labels');
  t.ok(clauseSelects({ resources: ['configmaps'], namespaceSelectors: [{ matchLabels: { env: 'x' } }] }, spec([]), c), 'namespaceSelectors: the agent\'s to judge');
  const secret = (name: string, type?: string) => copy({ resource: 'secrets', kind: 'Secret', name, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'demo' }, ...(type ? { type } : {}) } });
  t.notOk(clauseSelects({ resources: ['secrets'], namespaces: ['demo'] }, spec([]), secret('s')), 'a Secret not named');
  t.notOk(clauseSelects({ resources: ['secrets'], objectNames: ['*'] }, spec([]), secret('s')), 'not by "*"');
  t.ok(clauseSelects({ resources: ['secrets'], objectNames: ['s'] }, spec([]), secret('s')), 'named');
  t.notOk(clauseSelects({ resources: ['secrets'], objectNames: ['s'] }, spec([]), secret('s', 'bootstrap.kubernetes.io/token')), 'never a bootstrap token');
  t.notOk(clauseSelects({ resources: ['secrets'], objectNames: ['s'] }, spec([]), secret('s', 'kubernetes.io/service-account-token')), 'never a service-account token');
  const pod = copy({ resource: 'pods', kind: 'Pod', name: 'web-1' });
  const downsynced = [{ group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web' }];
  t.ok(clauseSelects({ associatedWith: 'downsync' }, spec([], { downsynced }), pod), 'a Pod where the policy downsyncs');
  t.notOk(clauseSelects({ associatedWith: 'downsync' }, spec([], { downsynced: [{ ...downsynced[0]!, namespace: 'other' }] }), pod), 'not in a namespace the policy downsyncs to');
  t.notOk(clauseSelects({ associatedWith: 'downsync' }, spec([], { downsynced }), c), 'not a kind owners are followed through');
});

t.test('policiesSelecting: only the policies with a request in that mailbox selecting the copy', async (t) => {
  const requests: Record<string, UpsyncRequestSpec> = { p1: spec([{ resources: ['configmaps'] }]), p2: spec([{ resources: ['pods'] }], { policy: 'p2' }) };
  t.same(policiesSelecting(copy({ policies: ['p3', 'p2', 'p1'] }), (p) => requests[p]), ['p1'], 'p2 does not select ConfigMaps, p3 has no request here');
  t.same(policiesSelecting(copy({ policies: 'p1' as unknown as string[] }), (p) => requests[p]), [], 'malformed policies');
});

const request = (cluster: string, policy: string, s: UpsyncRequestSpec): UpsyncRequest => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncRequest', metadata: { name: upsyncRequestName('wds1', policy), namespace: cluster }, spec: s,
});

t.test('the cache: forged copies hidden, policies narrowed, size and count bounds held by serve', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  const requests = new Map<string, UpsyncRequest>([
    ['wec1/p1', request('wec1', 'p1', spec([{ resources: ['configmaps'] }], { maxObjects: 3 }))],
    ['wec1/p2', request('wec1', 'p2', spec([{ resources: ['pods'] }], { policy: 'p2', maxObjects: 0 }))],
  ]);
  const cache = new UpsyncedCache('wds1', its.up, { request: (c, p) => requests.get(`${c}/${p}`), list: () => [...requests.values()], onRequestChange: () => () => {} }, () => {},
    { maxObjects: 3, maxObjectBytes: 200 });
  const put = (o: UpsyncedObject) => { const b = cache.bounded(o); cache.objects.store.set(b); cache.objectChanged(b.metadata.namespace, b.metadata.name, b); };
  put(copy({ name: 'a', policies: ['p1', 'p2'] }));
  t.same(cache.list().map((o) => [o.source.name, o.policies]), [['a', ['p1']]], 'shown with the one policy that selects it (p2 would count it as its own)');
  put(copy({ name: 'forged', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'forged', namespace: 'demo' }, data: { t: 'x' } } }));
  put(copy({ name: 'big', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'demo' }, data: { x: 'y'.repeat(500) } } }));
  t.same(cache.list().map((o) => o.source.name), ['a'], 'a forged copy and one over maxObjectBytes are not shown');
  t.same(cache.objects.get('wec1', copy({ name: 'big' }).metadata.name)?.object, {}, 'and the big one\'s object is not even kept');
  for (const n of ['b', 'c', 'd', 'e']) put(copy({ name: n }));
  t.same(cache.list().map((o) => o.source.name), ['a', 'b', 'c'], 'a cluster shows at most its requests\' maxObjects (3 + 0)');
});
