import t from 'tap';
import { desiredOwners, ownedByTheWork } from '../../src/agent/apply/garbage-collector.js';
import { isProtected } from '../../src/agent/apply/manifest-order.js';
import { untracked } from '../../src/agent/apply/applied-works.js';
import { AppliedWatcher, classify } from '../../src/agent/status/applied-watcher.js';
import type { ChangeType } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { Upstream } from '../../src/kube/upstream.js';

const nsRef = { group: '', resource: 'namespaces', namespace: '', name: 'app' };
const cmRef = { group: '', resource: 'configmaps', namespace: 'app', name: 'a' };

t.test('ownedByTheWork follows OCM: default and Foreground own, Orphan does not, SelectivelyOrphan by rule', async (t) => {
  t.ok(ownedByTheWork(cmRef, undefined));
  t.ok(ownedByTheWork(cmRef, { propagationPolicy: 'Foreground' }));
  t.notOk(ownedByTheWork(cmRef, { propagationPolicy: 'Orphan' }));
  const sel = { propagationPolicy: 'SelectivelyOrphan' as const, selectivelyOrphans: { orphaningRules: [nsRef] } };
  t.notOk(ownedByTheWork(nsRef, sel), 'the Namespace matched by a rule is orphaned');
  t.ok(ownedByTheWork(cmRef, sel), 'the rest is owned');
  t.ok(ownedByTheWork(nsRef, { propagationPolicy: 'SelectivelyOrphan' }), 'no rules: everything owned');
});

t.test('desiredOwners adds or removes only our reference, and says nothing when right', async (t) => {
  const owner = { apiVersion: 'work.open-cluster-management.io/v1', kind: 'AppliedManifestWork', name: 'h-w', uid: 'u1' };
  const other = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'x' };
  const live: KubeObject = { metadata: { ownerReferences: [other] } };
  t.same(desiredOwners(live, owner, true), [other, owner]);
  t.equal(desiredOwners(live, owner, false), undefined);
  t.same(desiredOwners({ metadata: { ownerReferences: [other, owner] } }, owner, false), [other]);
  t.equal(desiredOwners({ metadata: { ownerReferences: [owner] } }, owner, true), undefined);
});

t.test('protected Namespaces', async (t) => {
  for (const n of ['kube-system', 'kube-public', 'kube-node-lease', 'default']) t.ok(isProtected({ ...nsRef, name: n }), n);
  t.notOk(isProtected(nsRef));
  t.notOk(isProtected({ ...cmRef, namespace: 'kube-system' }), 'objects in them are not protected by this rule');
});

t.test('untracked: what a work no longer applies, by identity (version aside)', async (t) => {
  const a = { ...cmRef, version: 'v1', uid: '1' };
  const b = { ...cmRef, name: 'b', version: 'v1', uid: '2' };
  t.same(untracked([a, b], [{ ...a, version: 'v2', uid: '9' }]), [b]);
});

t.test('classify: drift vs status', async (t) => {
  const base: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '1' }, data: { x: '1' }, status: { s: 1 } };
  const ev = (type: ChangeType, obj: KubeObject, old?: KubeObject) => classify({ type, obj, old });
  t.equal(ev('MODIFIED', { ...base, metadata: { ...base.metadata, resourceVersion: '2' }, status: { s: 2 } }, base), 'status');
  t.equal(ev('MODIFIED', { ...base, data: { x: '2' } }, base), 'drift');
  t.equal(ev('MODIFIED', { ...base, metadata: { ...base.metadata, labels: { l: 'v' } } }, base), 'drift');
  t.equal(ev('DELETED', base), 'drift', 'a deletion is re-created');
});

t.test('AppliedWatcher: one informer per GVR in use, stopped when unused; events carry the works', async (t) => {
  const started: string[] = [];
  const stopped: string[] = [];
  const emit = new Map<string, (type: ChangeType, obj: KubeObject, old?: KubeObject) => void>();
  const events: { works: { work: string; ordinal: number }[]; gvr: string }[] = [];
  const w = new AppliedWatcher({} as Upstream, (e) => events.push({ works: e.works, gvr: e.gvr }), (path, onChange) => {
    emit.set(path, onChange);
    return { hasSynced: true, start: () => started.push(path), stop: () => stopped.push(path) };
  });
  w.setWork('w1', [{ group: '', version: 'v1', resource: 'configmaps', namespace: 'app', name: 'a', ordinal: 1 }]);
  w.setWork('w2', [{ group: '', version: 'v1', resource: 'configmaps', namespace: 'app', name: 'a', ordinal: 0 },
    { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'app', name: 'd', ordinal: 1 }]);
  t.same(started, ['/api/v1/configmaps', '/apis/apps/v1/deployments'], 'one cluster-wide informer per GVR');
  emit.get('/api/v1/configmaps')!('MODIFIED', { metadata: { namespace: 'app', name: 'a' } });
  emit.get('/api/v1/configmaps')!('MODIFIED', { metadata: { namespace: 'app', name: 'other' } });
  t.same(events, [{ works: [{ work: 'w1', ordinal: 1 }, { work: 'w2', ordinal: 0 }], gvr: '/v1/configmaps' }], 'only applied objects, to every work holding them');
  w.removeWork('w2');
  t.same(stopped, ['/apis/apps/v1/deployments'], 'the Deployment informer stops with its last work');
  w.removeWork('w1');
  t.same(stopped, ['/apis/apps/v1/deployments', '/api/v1/configmaps']);
  t.ok(w.synced());
});
