// The UpsyncAgent of one cluster (src/agent/upsync/upsync-agent.ts) with fake informers (stores
// the test fills) and an in-memory ITS recording writes (test/fixtures/agent/fake-cluster.ts): copies
// written and coalesced, deleted when the WEC object or the request goes, leftovers of a former
// run removed by the first resync, request status written once; the executor's read rights
// (SubjectAccessReviews of a mock WEC) deciding what is copied; resources watched only in the
// namespaces the clauses name.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChangeType } from '../../src/kube/informer.js';
import { deepFreeze } from '../../src/kube/json.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { RateLimit } from '../../src/kube/work-queue.js';
import {
  UPSYNC_WDS_LABEL, upsyncRequestsPath, upsyncedObjectName, upsyncedObjectsPath, type UpsyncRequest,
} from '../../src/kube/upsync-api.js';
import type { Mapping } from '../../src/agent/shared/rest-mapper.js';
import { UpsyncAgent } from '../../src/agent/upsync/upsync-agent.js';
import type { InformerLike } from '../../src/agent/upsync/sources.js';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { mockUpstream, requestBody, type MockUpstream } from '../fixtures/mock-upstream.js';

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

type OnChange = (type: ChangeType, obj: KubeObject, old?: KubeObject) => void;

class FakeInformer implements InformerLike {
  readonly store = new Map<string, KubeObject>();
  hasSynced = false;
  stopped = false;
  constructor(readonly path: string, private readonly onChange: OnChange, private readonly onRelisted: () => void, seed: KubeObject[]) {
    for (const o of seed) this.store.set(key(o), deepFreeze(structuredClone(o)));
  }
  start() {
    if (this.path.endsWith('/secrets') && neverSyncSecrets) return; // a list the WEC forbids: retried forever
    setImmediate(() => {
      for (const o of this.store.values()) this.onChange('ADDED', o);
      this.hasSynced = true;
      this.onRelisted();
    });
  }
  stop() { this.stopped = true; }
  list() { return [...this.store.values()]; }
  get(ns: string, name: string) { return this.store.get(`${ns}/${name}`); }
  set(o: KubeObject) {
    const v = deepFreeze(structuredClone(o));
    const old = this.store.get(key(v));
    this.store.set(key(v), v);
    this.onChange(old ? 'MODIFIED' : 'ADDED', v, old);
  }
  del(ns: string, name: string) {
    const old = this.store.get(`${ns}/${name}`);
    if (!old) return;
    this.store.delete(`${ns}/${name}`);
    this.onChange('DELETED', old);
  }
}
let neverSyncSecrets = false;
const key = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

const MAPPINGS: Mapping[] = [
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, singular: 'configmap', shortNames: ['cm'] },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false },
];
const CM_PATH = '/api/v1/configmaps';
const DEMO_CM_PATH = '/api/v1/namespaces/demo/configmaps';
let rv = 1000;
const cm = (namespace: string, name: string, data: Record<string, string> = { a: '1' }): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name, uid: `uid-${namespace}-${name}`, resourceVersion: String(++rv) }, data });

const request = (policy: string, clauses: UpsyncRequest['spec']['clauses'], wds = 'wds1'): UpsyncRequest => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncRequest',
  metadata: { name: `${wds}.${policy}`, namespace: 'wec1', generation: 1, resourceVersion: '1', uid: `uid-${policy}` },
  spec: { wds, policy, clauses, maxObjects: 100, maxObjectBytes: 262_144 },
});

/** A namespace's informer is seeded with that namespace's objects of the cluster-wide path's seed. */
function seedOf(seed: Record<string, KubeObject[]>, path: string): KubeObject[] {
  const m = /^(.*)\/namespaces\/([^/]+)(\/[^/]+)$/.exec(path);
  if (seed[path] || !m) return seed[path] ?? [];
  return (seed[`${m[1]}${m[3]}`] ?? []).filter((o) => o.metadata?.namespace === m[2]);
}

interface Review { user: string; groups: string[]; resourceAttributes: Record<string, string> }

/**
 * A WEC answering SubjectAccessReviews only: `answer` says allowed (true/false), or 'fail' for a
 * 500. Every review is recorded.
 */
function sarWec(answer: (r: Review) => boolean | 'fail') {
  const m = mockUpstream('https://wec.test:6443');
  const reviews: Review[] = [];
  m.pool.intercept({ path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', method: 'POST' }).reply<object>((o) => {
    const body = requestBody(o) as { spec: Review };
    reviews.push(body.spec);
    const a = answer(body.spec);
    if (a === 'fail') return { statusCode: 500, data: { kind: 'Status', code: 500, message: 'etcd timeout' } };
    return { statusCode: 201, data: { ...body, status: { allowed: a } } };
  }).persist();
  return { m, reviews };
}

function harness(t: { teardown(fn: () => Promise<void>): void }, seed: Record<string, KubeObject[]> = {}, o: { wec?: MockUpstream; readRightTtlMs?: number; writeRetry?: RateLimit } = {}) {
  const its = fakeCluster('https://its.test:6443');
  const informers = new Map<string, FakeInformer>();
  const log: string[] = [];
  const up = new UpsyncAgent({
    cluster: 'wec1', its: its.up, wec: o.wec?.up ?? its.up, log: (l) => log.push(l), debounceMs: 20, resyncMs: 60_000, readRightTtlMs: o.readRightTtlMs, writeRetry: o.writeRetry,
    mapper: { byResource: (g, r) => MAPPINGS.find((m) => m.group === g && m.resource === r), refresh: async () => {} },
    informers: (_where, path, onChange, onRelisted) => {
      const inf = new FakeInformer(path, onChange, onRelisted, seedOf(seed, path));
      informers.set(path, inf);
      return inf;
    },
  });
  // Requests live in the ITS too, so that their status can be patched.
  for (const r of (seed[upsyncRequestsPath('wec1')] ?? []) as UpsyncRequest[]) its.put(`${upsyncRequestsPath('wec1')}/${r.metadata.name}`, r);
  t.teardown(async () => { await up.stop(); await its.close(); await o.wec?.close(); });
  const inf = (path: string) => informers.get(path)!;
  const copies = () => [...its.objects.entries()].filter(([p]) => p.startsWith(`${upsyncedObjectsPath('wec1')}/`)).map(([, o]) => o as any);
  const writesOf = (method: string) => its.writes.filter((w) => w.method === method && w.path.startsWith(upsyncedObjectsPath('wec1')));
  const settle = async () => { await sleep(40); await until(() => up.idle()); };
  return { its, up, inf, copies, writesOf, settle, log };
}

const ref = (namespace: string, name: string) => ({ group: '', resource: 'configmaps', namespace, name });

t.test('copies are created with their identity, policies and object; a burst of changes is one write', async (t) => {
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'], namespaces: ['demo'] }])],
    [CM_PATH]: [cm('demo', 'a'), cm('other', 'b')],
  });
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  const [c] = h.copies();
  t.equal(h.copies().length, 1);
  t.equal(c.metadata.name, upsyncedObjectName('wds1', ref('demo', 'a')));
  t.same(c.metadata.labels, { [UPSYNC_WDS_LABEL]: 'wds1' });
  t.match(c.source, { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'demo', name: 'a', uid: 'uid-demo-a' });
  t.same([c.source.singular, c.source.shortNames], ['configmap', ['cm']], 'with the WEC\'s discovery of the resource, for the view\'s');
  t.same(c.policies, ['p1']);
  t.same(c.object.data, { a: '1' });
  t.match(c.lastSeen, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const status = (h.its.objects.get(`${upsyncRequestsPath('wec1')}/wds1.p1`) as UpsyncRequest).status;
  t.same(status, { observedGeneration: 1, objects: 1, selected: 1, tooLarge: 0, message: '' }, 'the request status');

  t.same(h.up.sources.watching(), ['|configmaps@demo'], 'a clause naming its namespaces: only those are watched');
  const before = h.writesOf('PUT').length;
  for (let i = 0; i < 20; i++) h.inf(DEMO_CM_PATH).set(cm('demo', 'a', { a: String(i) }));
  await h.settle();
  t.equal(h.writesOf('PUT').length - before, 1, '20 changes within the debounce: one write');
  t.same(h.copies()[0].object.data, { a: '19' }, 'of the latest version');

  // The mailbox informer sees our write: nothing more is written.
  const n = h.its.writes.length;
  h.inf(upsyncedObjectsPath('wec1')).set(h.copies()[0]);
  h.up.resync();
  await h.settle();
  t.equal(h.its.writes.length, n, 'an unchanged copy and status are not written again');
});

t.test('a copy goes when its object goes from the WEC, and when its request goes', async (t) => {
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'] }]), request('p2', [{ resources: ['configmaps'], objectNames: ['a'] }])],
    [CM_PATH]: [cm('demo', 'a'), cm('demo', 'b')],
  });
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  const nameA = upsyncedObjectName('wds1', ref('demo', 'a'));
  t.same(h.copies().find((c) => c.metadata.name === nameA)?.policies, ['p1', 'p2'], 'both policies');
  h.inf(CM_PATH).del('demo', 'b');
  await h.settle();
  t.same(h.copies().map((c) => c.source.name), ['a'], 'b deleted from the mailbox');
  h.inf(upsyncRequestsPath('wec1')).del('wec1', 'wds1.p1');
  await h.settle();
  t.same(h.copies().map((c) => [c.source.name, c.policies]), [['a', ['p2']]], 'a stays, selected by p2 alone');
  h.inf(upsyncRequestsPath('wec1')).del('wec1', 'wds1.p2');
  await h.settle();
  t.same(h.copies(), [], 'nothing left');
  t.ok(h.inf(CM_PATH).stopped, 'the WEC informer no request needs is stopped');
  t.same(h.up.sources.watching(), []);
});

t.test('after a restart, the first resync deletes leftovers and updates what changed', async (t) => {
  const stale = cm('demo', 'a', { a: 'old' });
  const leftover = { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
    metadata: { name: upsyncedObjectName('wds1', ref('demo', 'gone')), namespace: 'wec1', labels: { [UPSYNC_WDS_LABEL]: 'wds1' }, resourceVersion: '5' },
    source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'demo', name: 'gone', uid: 'u', resourceVersion: '1' },
    lastSeen: '2026-01-01T00:00:00Z', policies: ['p1'], object: {} };
  const old = { ...leftover, metadata: { ...leftover.metadata, name: upsyncedObjectName('wds1', ref('demo', 'a')) },
    source: { ...leftover.source, name: 'a', uid: 'uid-demo-a', resourceVersion: stale.metadata!.resourceVersion } };
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'] }])],
    [upsyncedObjectsPath('wec1')]: [leftover, old],
    [CM_PATH]: [cm('demo', 'a', { a: 'new' })],
  });
  for (const o of [leftover, old]) h.its.put(`${upsyncedObjectsPath('wec1')}/${o.metadata.name}`, o);
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  t.same(h.copies().map((c) => [c.source.name, c.object.data]), [['a', { a: 'new' }]], 'leftover deleted, a updated');
  t.same(h.writesOf('DELETE').map((w) => w.path), [`${upsyncedObjectsPath('wec1')}/${leftover.metadata.name}`]);
});

t.test('Secrets by name only, never a service-account or bootstrap token; a resource the WEC does not serve is in the status', async (t) => {
  const secret = (name: string, type = 'Opaque') => ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'demo', name, uid: name, resourceVersion: '3' }, type });
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['secrets'], objectNames: ['creds', 'tok', 'bootstrap-token-abcdef'] }, { resources: ['secrets'] }, { apiGroup: 'example.com', resources: ['widgets'] }])],
    '/api/v1/secrets': [secret('creds'), secret('other'), secret('tok', 'kubernetes.io/service-account-token'), secret('bootstrap-token-abcdef', 'bootstrap.kubernetes.io/token')],
  });
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  t.same(h.copies().map((c) => c.source.name), ['creds']);
  const status = (h.its.objects.get(`${upsyncRequestsPath('wec1')}/wds1.p1`) as UpsyncRequest).status;
  t.match(status, { objects: 1, selected: 1, message: 'not served by the cluster: widgets.example.com' });
});

const READER = { namespace: 'team-a', name: 'reader' };
const withExecutor = (r: UpsyncRequest, executor: unknown = READER): UpsyncRequest => ({ ...r, spec: { ...r.spec, executor: executor as never } });
const statusOf = (h: ReturnType<typeof harness>, name = 'wds1.p1') => (h.its.objects.get(`${upsyncRequestsPath('wec1')}/${name}`) as UpsyncRequest).status;
const leftoverOf = (namespace: string, name: string) => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
  metadata: { name: upsyncedObjectName('wds1', ref(namespace, name)), namespace: 'wec1', labels: { [UPSYNC_WDS_LABEL]: 'wds1' }, resourceVersion: '5' },
  source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace, name, uid: `uid-${namespace}-${name}`, resourceVersion: '1' },
  lastSeen: '2026-01-01T00:00:00Z', policies: ['p1'], object: {} });

t.test('the executor decides what is read: only what it may get is copied, a copy it may not read is deleted, the status says how many', async (t) => {
  // team-a/reader may get ConfigMaps in demo only (a RoleBinding there), not cluster-wide.
  const wec = sarWec((r) => r.resourceAttributes.namespace === 'demo');
  const held = leftoverOf('private', 'b');
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [withExecutor(request('p1', [{ resources: ['configmaps'] }]))],
    [upsyncedObjectsPath('wec1')]: [held],
    [CM_PATH]: [cm('demo', 'a'), cm('private', 'b'), cm('private', 'c')],
  }, { wec: wec.m });
  h.its.put(`${upsyncedObjectsPath('wec1')}/${held.metadata.name}`, held);
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  await until(() => statusOf(h)?.message !== undefined && !/not yet/.test(statusOf(h)!.message!));
  await h.settle();
  t.same(h.copies().map((c) => `${c.source.namespace}/${c.source.name}`), ['demo/a'], 'private/b and private/c are not copied; the copy of private/b is deleted');
  t.same(h.writesOf('DELETE').map((w) => w.path), [`${upsyncedObjectsPath('wec1')}/${held.metadata.name}`]);
  t.same(statusOf(h), { observedGeneration: 1, objects: 1, selected: 3, tooLarge: 0, message: '2 objects the executor team-a/reader may not read were left out' });
  t.same(wec.reviews.map((r) => r.resourceAttributes.namespace).sort(), ['', 'demo', 'private'],
    'asked for every namespace first, then per namespace (one review per namespace, not per object)');
  t.same(wec.reviews[0], {
    user: 'system:serviceaccount:team-a:reader', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'],
    resourceAttributes: { group: '', version: 'v1', resource: 'configmaps', namespace: '', verb: 'get' },
  }, 'as the ServiceAccount, with its groups, for get');
  // A new object in a namespace already answered: no new review.
  const n = wec.reviews.length;
  h.inf(CM_PATH).set(cm('demo', 'd'));
  await h.settle();
  t.same(h.copies().map((c) => c.source.name).sort(), ['a', 'd']);
  t.equal(wec.reviews.length, n, 'answers are reused');
});

t.test('an executor allowed cluster-wide costs one review; a request without executor none; a malformed executor reads nothing', async (t) => {
  const wec = sarWec(() => true);
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [
      withExecutor(request('p1', [{ resources: ['configmaps'] }])),
      request('p2', [{ resources: ['configmaps'], namespaces: ['other'] }]),
      withExecutor(request('p3', [{ resources: ['configmaps'] }]), { namespace: 'Team A', name: 'reader' }),
    ],
    [CM_PATH]: [cm('demo', 'a'), cm('other', 'b')],
  }, { wec: wec.m });
  h.up.start();
  await until(() => h.up.synced());
  await until(() => statusOf(h)?.objects === 2);
  await h.settle();
  t.same(h.copies().map((c) => [c.source.name, c.policies]).sort(), [['a', ['p1']], ['b', ['p1', 'p2']]]);
  t.equal(wec.reviews.length, 1, 'allowed in every namespace: one review answers for all');
  await until(() => statusOf(h, 'wds1.p3') !== undefined);
  t.match(statusOf(h, 'wds1.p3'), { objects: 0, selected: 2, message: /executor is refused .*nothing is upsynced with the agent's own rights/ });
  t.equal(h.up.rights.size, 1);
  h.inf(upsyncRequestsPath('wec1')).del('wec1', 'wds1.p1');
  await h.settle();
  t.equal(h.up.rights.size, 0, 'an answer no request needs any more is forgotten');
});

t.test('while the executor\'s answer is missing nothing new is copied and a copy is left as it is; a right revoked later is seen without a WEC change', async (t) => {
  let answer: boolean | 'fail' = 'fail';
  const wec = sarWec(() => answer);
  const held = leftoverOf('demo', 'a');
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [withExecutor(request('p1', [{ resources: ['configmaps'], namespaces: ['demo'] }]))],
    [upsyncedObjectsPath('wec1')]: [held],
    [CM_PATH]: [cm('demo', 'a'), cm('demo', 'b')],
  }, { wec: wec.m, readRightTtlMs: 150 });
  h.its.put(`${upsyncedObjectsPath('wec1')}/${held.metadata.name}`, held);
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  h.up.resync();
  await h.settle();
  await until(() => statusOf(h)?.message !== undefined);
  t.same(h.copies().map((c) => [c.source.name, c.source.resourceVersion]), [['a', '1']], 'the held copy stays as it was; b is not copied');
  t.same(h.writesOf('DELETE'), []);
  t.same(statusOf(h), { observedGeneration: 1, objects: 0, selected: 2, tooLarge: 0, message: '2 objects not yet authorized for the executor team-a/reader' });
  t.ok(h.log.some((l) => /SubjectAccessReview of an executor: .*500/.test(l)), 'the failed review is logged');
  answer = true; // the WEC answers again: retried
  await until(() => h.copies().length === 2);
  await until(() => statusOf(h)?.message === '');
  t.same(h.copies().map((c) => c.source.name).sort(), ['a', 'b']);
  t.not(h.copies().find((c) => c.source.name === 'a').source.resourceVersion, '1', 'the held copy is brought up to date');
  answer = false; // the RoleBinding is removed
  await until(() => h.copies().length === 0);
  await until(() => /2 objects the executor team-a\/reader may not read were left out/.test(statusOf(h)?.message ?? ''));
  t.pass('revoked: the copies are deleted and the status says why');
});

t.test('a WEC resource that never lists holds back only its own requests', async (t) => {
  neverSyncSecrets = true;
  t.teardown(() => { neverSyncSecrets = false; });
  const leftover = { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
    metadata: { name: upsyncedObjectName('wds1', ref('demo', 'gone')), namespace: 'wec1', labels: { [UPSYNC_WDS_LABEL]: 'wds1' }, resourceVersion: '5' },
    source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'demo', name: 'gone', uid: 'u', resourceVersion: '1' },
    lastSeen: '2026-01-01T00:00:00Z', policies: ['p1'], object: {} };
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'] }]), request('p2', [{ resources: ['secrets'], objectNames: ['x'] }])],
    [upsyncedObjectsPath('wec1')]: [leftover],
    [CM_PATH]: [cm('demo', 'a')],
  });
  h.its.put(`${upsyncedObjectsPath('wec1')}/${leftover.metadata.name}`, leftover);
  h.up.start();
  await sleep(60);
  h.up.resync();
  await h.settle();
  t.notOk(h.up.synced(), 'not all listed');
  t.same(h.copies().map((c) => c.source.name), ['a'], 'p1 copied and its leftover deleted all the same');
  t.match((h.its.objects.get(`${upsyncRequestsPath('wec1')}/wds1.p1`) as UpsyncRequest).status, { objects: 1 }, 'p1 status written');
  t.notOk((h.its.objects.get(`${upsyncRequestsPath('wec1')}/wds1.p2`) as UpsyncRequest).status, 'p2 waits for its secrets');
});

t.test('a resource is watched only in the namespaces every clause needing it names; cluster-wide as soon as one does not', async (t) => {
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'], namespaces: ['demo', 'other'] }, { resources: ['secrets'], namespaces: ['demo'], objectNames: ['creds'] }])],
    [CM_PATH]: [cm('demo', 'a'), cm('other', 'b'), cm('third', 'c')],
  });
  h.up.start();
  await until(() => h.up.synced());
  await h.settle();
  t.same(h.up.sources.watching(), ['|configmaps@demo', '|configmaps@other', '|secrets@demo']);
  t.same(h.copies().map((c) => c.source.name).sort(), ['a', 'b']);
  const reqs = h.inf(upsyncRequestsPath('wec1'));
  reqs.set(request('p2', [{ resources: ['configmaps'], namespaces: ['*'] }]));
  await until(() => h.copies().length === 3);
  t.same(h.up.sources.watching(), ['|configmaps', '|secrets@demo'], 'p2 wants every namespace: one informer over all');
  t.ok(h.inf('/api/v1/namespaces/demo/configmaps').stopped && h.inf('/api/v1/namespaces/other/configmaps').stopped, 'the namespace informers are stopped');
  reqs.del('wec1', 'wds1.p2');
  await until(() => h.copies().length === 2);
  t.same(h.up.sources.watching(), ['|configmaps@demo', '|configmaps@other', '|secrets@demo']);
  reqs.set(request('p3', [{ resources: ['configmaps'], namespaces: ['demo'], namespaceSelectors: [{ matchLabels: { env: 'prod' } }] }]));
  await h.settle();
  t.same(h.up.sources.watching(), ['|configmaps', '|namespaces', '|secrets@demo'], 'namespaceSelectors: every namespace');
});

t.test('CopyWriter: a create that finds the copy there (409) reads it and updates it', async (t) => {
  const { CopyWriter } = await import('../../src/agent/upsync/copy-writer.js');
  const its = fakeCluster('https://its.test:6443');
  t.teardown(() => its.close());
  const name = upsyncedObjectName('wds1', ref('demo', 'a'));
  its.put(`${upsyncedObjectsPath('wec1')}/${name}`, { metadata: { name, namespace: 'wec1' }, source: {}, policies: [] });
  const d = { name, wds: 'wds1', policies: ['p1'], object: cm('demo', 'a'),
    source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'demo', name: 'a', uid: 'u', resourceVersion: '9' } };
  const w = new CopyWriter({ cluster: 'wec1', its: its.up, desired: () => d, held: () => undefined, mayDelete: () => true, onError: () => {} });
  await w.sync(name);
  t.same(its.writes.map((x) => x.method), ['POST', 'PUT']);
  t.same((its.objects.get(`${upsyncedObjectsPath('wec1')}/${name}`) as any).policies, ['p1']);
  await w.sync(name);
  t.equal(its.writes.length, 2, 'written once: the next sync finds our write current');
});

t.test('the mailbox\'s ResourceQuota refuses copies: the status counts them out and says so, the agent stays up; room made is used', async (t) => {
  // The quota breaker's probe every 5 s: within this test's windows, only room made in the mailbox
  // writes a waiting copy sooner.
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'], namespaces: ['demo'] }])],
    [CM_PATH]: ['a', 'b', 'c', 'd'].map((n) => cm('demo', n)),
  }, { writeRetry: { baseMs: 5000, maxMs: 5000 } });
  h.its.quota = { collection: upsyncedObjectsPath('wec1'), max: 2 };
  const status = () => (h.its.objects.get(`${upsyncRequestsPath('wec1')}/wds1.p1`) as UpsyncRequest).status;
  h.up.start();
  await until(() => h.up.synced());
  await until(() => status()?.objects === 2 && h.copies().length === 2);
  t.match(status(), { objects: 2, selected: 4, message: /^2 refused by the mailbox's ResourceQuota \("[^"]+" is forbidden: exceeded quota: mailbox, .*limited: count\/upsyncedobjects=2\)$/ });
  t.same(h.copies().map((c) => c.source.name), ['a', 'b'], 'the first two written');
  t.equal(h.log.filter((l) => /ResourceQuota refuses copies/.test(l)).length, 1, 'said once in the log');

  // A WEC object goes: its copy goes, and a waiting one takes its room about 1 s later (the quota
  // controller's time to count the deletion), not at the next probe.
  h.inf(DEMO_CM_PATH).del('demo', 'a');
  await until(() => !h.copies().some((c) => c.source.name === 'a'));
  // The mailbox informer sees the copy (it had not: this one is fed by the test) and then its deletion.
  const gone = upsyncedObjectName('wds1', ref('demo', 'a'));
  h.inf(upsyncedObjectsPath('wec1')).set({ metadata: { name: gone, namespace: 'wec1', resourceVersion: '1' } });
  h.inf(upsyncedObjectsPath('wec1')).del('wec1', gone);
  await until(() => h.copies().length === 2 && h.copies().some((c) => c.source.name === 'c'), 2500);
  t.pass('the first waiting copy written within 2.5 s of the room made');
  await until(() => status()?.objects === 2 && /^1 refused/.test(status()?.message ?? ''));
  t.pass('one still refused, said');

  // The quota raised: the next probe writes it; the message clears.
  h.its.quota = { collection: upsyncedObjectsPath('wec1'), max: 10 };
  await until(() => h.copies().length === 3 && status()?.message === '', 7000);
  t.match(status(), { objects: 3, selected: 3 });
  t.same(h.up.writer.refused.size, 0);
});

t.test('a full quota costs the ITS one create per probe, not one per waiting copy; a copy no longer wanted stops waiting', async (t) => {
  const names = Array.from({ length: 50 }, (_, i) => `n${String(i).padStart(2, '0')}`);
  const h = harness(t, {
    [upsyncRequestsPath('wec1')]: [request('p1', [{ resources: ['configmaps'], namespaces: ['demo'] }])],
    [CM_PATH]: names.map((n) => cm('demo', n)),
  }, { writeRetry: { baseMs: 200, maxMs: 200 } });
  h.its.quota = { collection: upsyncedObjectsPath('wec1'), max: 2 };
  const status = () => (h.its.objects.get(`${upsyncRequestsPath('wec1')}/wds1.p1`) as UpsyncRequest).status;
  h.up.start();
  await until(() => h.up.synced());
  await until(() => status()?.objects === 2 && /^48 refused/.test(status()?.message ?? ''));
  const before = h.writesOf('POST').length;
  await sleep(2000);
  const probes = h.writesOf('POST').length - before;
  t.ok(probes >= 3 && probes <= 15, `${probes} creates in 2 s with 48 copies waiting and a 200 ms backoff (one per waiting copy would be ~480)`);
  h.up.resync();
  await sleep(300);
  t.ok(h.writesOf('POST').length - before - probes <= 3, 'a resync sends no create of the waiting copies');

  // The waiting copies' objects go from the WEC: they stop waiting, the status clears.
  for (const n of names.slice(2)) h.inf(DEMO_CM_PATH).del('demo', n);
  await until(() => h.up.writer.refused.size === 0 && status()?.message === '' && status()?.selected === 2);
  t.match(status(), { objects: 2, selected: 2 });
});

t.test('quotaRefusal: kube\'s two quota refusals, nothing else', async (t) => {
  const { quotaRefusal } = await import('../../src/agent/upsync/copy-writer.js');
  const res = (status: number, body: unknown) => ({ status, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) });
  const exceeded = 'upsyncedobjects.control.kubestellar.io "x" is forbidden: exceeded quota: kubestellar-view-mailbox, requested: count/upsyncedobjects.control.kubestellar.io=1, used: count/upsyncedobjects.control.kubestellar.io=2, limited: count/upsyncedobjects.control.kubestellar.io=2';
  const unknown = 'upsyncedobjects.control.kubestellar.io "x" is forbidden: status unknown for quota: kubestellar-view-mailbox, resources: count/upsyncedobjects.control.kubestellar.io';
  const forbidden = (message: string, kind = 'upsyncedobjects') => ({ kind: 'Status', code: 403, reason: 'Forbidden', details: { name: 'x', group: 'control.kubestellar.io', kind }, message });
  t.equal(quotaRefusal(res(403, forbidden(exceeded))), exceeded);
  t.equal(quotaRefusal(res(403, forbidden(unknown))), unknown, 'not counted yet: refused too');
  t.equal(quotaRefusal(res(403, forbidden('User "x" cannot create resource "upsyncedobjects"'))), undefined, 'RBAC is not a quota');
  t.equal(quotaRefusal(res(403, forbidden(exceeded, 'configmaps'))), undefined, 'another resource\'s');
  t.equal(quotaRefusal(res(403, { ...forbidden(exceeded), reason: 'Invalid' })), undefined, 'only Forbidden');
  t.equal(quotaRefusal(res(500, forbidden(exceeded))), undefined, 'only a 403');
  t.equal(quotaRefusal(res(403, 'not json')), undefined);
  const long = quotaRefusal(res(403, forbidden(`${exceeded}${'x'.repeat(1000)}\nforged: log line`)))!;
  t.ok(long.length <= 301 && !long.includes('\n'), 'one line, at most 300 characters');
});
