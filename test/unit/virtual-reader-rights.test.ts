// What a reader sees of the virtual Bindings and CombinedStatuses (src/apiserver/auth/subject-access.ts
// through the app, docs/security.md D3): only what they may `get` natively. A restricted reader's
// Binding lists only their objects, in the workload and in the destinations' counts and broken
// objects, and the policy's own status only if they may get the policy; a CombinedStatus of an
// object they may not get is absent from lists, watches and gets (a Secret's data with it); an
// admin still sees everything (how the reviews are made: ./virtual-subject-access.test.ts).
import t from 'tap';
import type { Attributes } from '../../src/apiserver/auth/authz.js';
import type { BindingSource } from '../../src/apiserver/groups/bindings-resource.js';
import type { CombinedStatusSource } from '../../src/apiserver/groups/combinedstatuses-resource.js';
import type { BindingPolicy, ManagedCluster } from '../../src/controllers/model/api.js';
import { Bindings } from '../../src/controllers/placement/bindings.js';
import type { ObjectOutcome } from '../../src/controllers/placement/destination-state.js';
import { Store } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { UserInfo } from '../../src/kube/user.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

const VIEW = '/apis/view.kubestellar.io/v1alpha1';
const CONTROL = `${ROOT}/apis/control.kubestellar.io/v1alpha1`;
const ADMIN = { 'x-test-user': 'admin' };
const ALICE = { 'x-test-user': 'alice' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** alice: may read the virtual resources themselves; Deployments in team-a; of team-b's Secrets only `shared` (by resourceNames). */
const resourceOf = (a: Attributes) => ('resource' in a ? a.resource : undefined);

function aliceMay(_user: UserInfo, a: Attributes): boolean {
  const r = resourceOf(a);
  if (!r) return false;
  if (r.resource === 'bindings' || r.resource === 'combinedstatuses') return ['get', 'list', 'watch'].includes(r.verb);
  if (r.verb !== 'get') return false;
  if (r.group === 'apps' && r.resource === 'deployments' && r.namespace === 'team-a') return true;
  return r.group === '' && r.resource === 'secrets' && r.namespace === 'team-b' && r.name === 'shared';
}

const OUTCOMES: Record<string, ObjectOutcome> = {
  web: { state: 'Available' },
  shared: { state: 'ApplyFailed', message: 'shared: the WEC refused it' },
  other: { state: 'ApplyFailed', message: 'other-secret-message' },
  cfg: { state: 'Pending', message: 'no ManifestWork yet' },
};

function bindingSource(): { source: BindingSource; bindings: Bindings } {
  const policies = new Store<BindingPolicy>({}, [{
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy',
    metadata: { name: 'team', uid: 'policy-uid', generation: 2, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { clusterSelectors: [{ matchLabels: { location: 'edge' } }] },
    status: {
      observedGeneration: 2, errors: ['team-c/cfg: a template could not be expanded'],
      conditions: [{ type: 'Ready', status: 'False', reason: 'Unavailable', message: '3 of 4 placements are not available; c1: secrets team-b/other ApplyFailed (other-secret-message)' }],
    },
  } as BindingPolicy]);
  const clusters = new Store<ManagedCluster>({}, [{ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'c1', labels: { location: 'edge' } } }]);
  const bindings = new Bindings(policies, clusters, {
    outcome: (_c, id) => OUTCOMES[id.name]!,
    readiness: () => ({ ready: true }),
  });
  const mod = { createOnly: false, wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors: [], clusters: ['c1'] };
  const place = (group: string, resource: string, namespace: string, name: string) => bindings.record(`${namespace}/${name}`, {
    id: { group, version: 'v1', resource, namespace, name }, resourceVersion: '1', policies: ['team'], modulations: { team: mod },
  });
  place('apps', 'deployments', 'team-a', 'web');
  place('', 'secrets', 'team-b', 'shared');
  place('', 'secrets', 'team-b', 'other');
  place('', 'configmaps', 'team-c', 'cfg');
  return {
    bindings,
    source: { bindings: () => bindings.list(), binding: (n, v) => bindings.binding(n, v), onBindingChange: (cb) => bindings.onChange(cb) },
  };
}

function combinedStatus(subject: [string, string, string, string], name: string, secretValue: string): KubeObject {
  const [group, resource, namespace, objectName] = subject;
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'CombinedStatus',
    metadata: {
      name, namespace, uid: `uid-${name}`,
      labels: {
        'status.kubestellar.io/api-group': group, 'status.kubestellar.io/resource': resource, 'status.kubestellar.io/namespace': namespace,
        'status.kubestellar.io/name': objectName, 'status.kubestellar.io/binding-policy': 'team',
      },
    },
    results: [{ name: 'data', columnNames: ['data'], rows: [{ columns: [{ type: 'Object', object: { password: secretValue } }] }] }],
  } as KubeObject;
}

class CombinedSource implements CombinedStatusSource {
  readonly objects = new Map<string, KubeObject>();
  private readonly listeners = new Set<(key: string) => void>();
  constructor(objs: KubeObject[]) {
    for (const o of objs) this.objects.set(`${o.metadata!.namespace}/${o.metadata!.name}`, o);
  }
  combinedStatuses() { return [...this.objects.values()]; }
  combinedStatus(namespace: string, name: string) { return this.objects.get(`${namespace}/${name}`); }
  onCombinedStatusChange(cb: (key: string) => void) {
    this.listeners.add(cb);
    return () => { this.listeners.delete(cb); };
  }
  put(o: KubeObject) {
    const key = `${o.metadata!.namespace}/${o.metadata!.name}`;
    this.objects.set(key, o);
    for (const l of this.listeners) l(key);
  }
}

const combinedSource = () => new CombinedSource([
  combinedStatus(['apps', 'deployments', 'team-a', 'web'], 'web.p', 'not-a-secret'),
  combinedStatus(['', 'secrets', 'team-b', 'shared'], 'shared.p', 'shared-value'),
  combinedStatus(['', 'secrets', 'team-b', 'other'], 'other.p', 'hunter2'),
  combinedStatus(['', 'configmaps', 'team-c', 'cfg'], 'cfg.p', 'cfg-value'),
]);

t.test('a restricted reader\'s Binding lists only the objects they may get, in the workload and in the destinations\' counts', async (t) => {
  const { source } = bindingSource();
  const { app, close } = await testApp({ bindings: source, allow: aliceMay });
  t.teardown(close);

  const full = (await app.inject({ url: `${VIEW}/bindings/team`, headers: ADMIN })).json();
  t.same(full.spec.workload.namespaceScope.map((c: { namespace: string; name: string }) => `${c.namespace}/${c.name}`), ['team-c/cfg', 'team-b/other', 'team-b/shared', 'team-a/web'], 'admin: every object');
  t.match(full.status.destinations, [{ clusterId: 'c1', objects: 4, states: { Available: 1, ApplyFailed: 2, Pending: 1 } }]);
  t.equal(full.status.conditions.length, 1, 'admin: the policy\'s own status');

  for (const url of [`${VIEW}/bindings/team`, `${CONTROL}/bindings/team`]) {
    const res = await app.inject({ url, headers: ALICE });
    t.equal(res.statusCode, 200, url);
    const b = res.json();
    t.same(b.spec.workload.namespaceScope.map((c: { namespace: string; name: string }) => `${c.namespace}/${c.name}`), ['team-b/shared', 'team-a/web'],
      'alice: her Deployment, and the Secret granted by name');
    t.strictSame(b.spec.destinations, [{ clusterId: 'c1' }]);
    t.same(b.status.destinations, [{
      clusterId: 'c1', ready: true, objects: 2, states: { Available: 1, ApplyFailed: 1 },
      brokenObjects: [{ group: '', resource: 'secrets', namespace: 'team-b', name: 'shared', state: 'ApplyFailed', message: 'shared: the WEC refused it' }],
    }], 'counts and broken objects over hers only');
    t.equal(b.status.conditions, undefined, 'no right on the BindingPolicy: not its conditions (they name objects)');
    t.equal(b.status.errors, undefined, 'nor its errors');
    t.notMatch(res.body, /other|team-c|cfg/, 'nothing of the hidden objects anywhere in the answer');
  }
  const list = await app.inject({ url: `${CONTROL}/bindings`, headers: ALICE });
  t.same(list.json().items[0].spec.workload.namespaceScope.length, 2, 'a list shows the same');
  const table = await app.inject({ url: `${VIEW}/bindings`, headers: { ...ALICE, accept: TABLE } });
  t.same(table.json().rows[0].cells.slice(0, 5), ['team', 2, 'c1', '<unknown>', 'c1 1/2'], 'the table counts hers');

  const withPolicy = await testApp({ bindings: source, allow: (u, a) => aliceMay(u, a) || (resourceOf(a)?.resource === 'bindingpolicies' && resourceOf(a)?.verb === 'get') });
  t.teardown(withPolicy.close);
  const b = (await withPolicy.app.inject({ url: `${VIEW}/bindings/team`, headers: ALICE })).json();
  t.equal(b.status.conditions?.[0]?.type, 'Ready', 'a reader who may get the BindingPolicy sees its status');
  t.equal(b.spec.workload.namespaceScope.length, 2, 'and still only her objects');
});

t.test('a CombinedStatus is shown only to a reader who may get its object: lists, gets, both groups; no Secret data otherwise', async (t) => {
  const { app, close } = await testApp({ combinedStatuses: combinedSource(), allow: aliceMay });
  t.teardown(close);
  const names = (body: { items: KubeObject[] }) => body.items.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`).sort();

  const admin = (await app.inject({ url: `${VIEW}/combinedstatuses`, headers: ADMIN })).json();
  t.same(names(admin), ['team-a/web.p', 'team-b/other.p', 'team-b/shared.p', 'team-c/cfg.p'], 'admin: all');
  for (const url of [`${VIEW}/combinedstatuses`, `${CONTROL}/combinedstatuses`, `${CONTROL}/namespaces/team-b/combinedstatuses`]) {
    const res = await app.inject({ url, headers: ALICE });
    t.equal(res.statusCode, 200);
    const expected = url.includes('team-b') ? ['team-b/shared.p'] : ['team-a/web.p', 'team-b/shared.p'];
    t.same(names(res.json()), expected, `alice: her objects' only (${url})`);
    t.notMatch(res.body, /hunter2|cfg-value/, 'no data of objects she may not get');
    t.equal(res.headers.warning, undefined, 'nothing left undecided');
  }
  const hidden = await app.inject({ url: `${CONTROL}/namespaces/team-b/combinedstatuses/other.p`, headers: ALICE });
  t.equal(hidden.statusCode, 404, 'a get of a hidden one: as if it did not exist');
  t.notMatch(hidden.body, /hunter2/);
  const mine = await app.inject({ url: `${CONTROL}/namespaces/team-b/combinedstatuses/shared.p`, headers: ALICE });
  t.equal(mine.statusCode, 200);
  t.match(mine.json().results[0].rows[0].columns[0].object, { password: 'shared-value' }, 'the Secret she may get: its data, as she could read it natively');
  const adminGet = await app.inject({ url: `${CONTROL}/namespaces/team-b/combinedstatuses/other.p`, headers: ADMIN });
  t.equal(adminGet.statusCode, 200, 'admin gets it');
});

t.test('a watch delivers, in order, the events of what the reader may see, and nothing of the rest', async (t) => {
  const src = combinedSource();
  const { app, close } = await testApp({ combinedStatuses: src, allow: aliceMay });
  t.teardown(close);
  const watching = app.inject({ url: `${VIEW}/combinedstatuses?watch=true&timeoutSeconds=2`, headers: ALICE });
  const adminWatching = app.inject({ url: `${VIEW}/combinedstatuses?watch=true&timeoutSeconds=2`, headers: ADMIN });
  await sleep(300);
  src.put(combinedStatus(['', 'secrets', 'team-b', 'other'], 'other.p', 'hunter3'));
  src.put(combinedStatus(['apps', 'deployments', 'team-a', 'web'], 'web.p', 'v2'));
  src.put(combinedStatus(['', 'secrets', 'team-b', 'shared'], 'shared.p', 'v2'));
  await sleep(300); // changes within 100 ms are recomputed together (the feed's coalescing)
  src.put(combinedStatus(['apps', 'deployments', 'team-a', 'web'], 'web.p', 'v3'));
  type Event = { type: string; object: KubeObject & { results: [{ rows: [{ columns: [{ object: { password: string } }] }] }] } };
  const events = (body: string) => body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event)
    .map((e) => `${e.type} ${e.object.metadata!.name} ${e.object.results[0].rows[0].columns[0].object.password}`);
  const seen = events((await watching).body);
  t.same(seen.slice(0, 2).sort(), ['ADDED shared.p shared-value', 'ADDED web.p not-a-secret'], 'the initial state: hers only');
  t.same(seen.slice(2), ['MODIFIED web.p v2', 'MODIFIED shared.p v2', 'MODIFIED web.p v3'], 'then her changes, in order; none of the hidden one');
  const all = events((await adminWatching).body);
  t.equal(all.length, 8, 'admin: 4 ADDED and 4 MODIFIED');
  t.ok(all.includes('MODIFIED other.p hunter3'));
});
