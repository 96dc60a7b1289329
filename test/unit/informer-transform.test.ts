// The informer's transform (src/kube/informer.ts), over a mock upstream: listed and watched objects
// are cached as the transform makes them (managedFields dropped), and handlers see the same; the
// WorkStatus transform keeps what is read of it (of managedFields, when the status last changed),
// sharing what repeats.
import t from 'tap';
import { Informer, withoutManagedFields } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { WorkStatus } from '../../src/kube/ocm-api.js';
import { lastStatusUpdate } from '../../src/kube/objects.js';
import { slimWorkStatus } from '../../src/controllers/status/workstatus-cache.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const mf = [{ manager: 'a', operation: 'Apply', time: '2026-11-24T01:00:00Z', fieldsV1: { 'f:data': { 'f:x': {} } } }];
const cm = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv, managedFields: mf }, data: { x: name } } as KubeObject);

t.test('listed and watched objects are cached without managedFields; handlers see the cached object', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: (p) => p.startsWith('/api/v1/configmaps?') && !p.includes('watch'), method: 'GET' })
    .reply(200, { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '10' }, items: [cm('a', '5')] });
  const events = [{ type: 'ADDED', object: cm('b', '11') }, { type: 'MODIFIED', object: cm('a', '12') }];
  m.pool.intercept({ path: (p) => p.includes('watch=1'), method: 'GET' })
    .reply(200, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  const seen: KubeObject[] = [];
  const inf = new Informer(m.up, { path: '/api/v1/configmaps', transform: withoutManagedFields, onChange: (_type, o) => seen.push(o) });
  inf.start();
  t.teardown(() => inf.stop());
  await inf.synced;
  const deadline = Date.now() + 3000;
  while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  t.same(seen.map((o) => [o.metadata?.name, o.metadata?.resourceVersion]), [['a', '5'], ['b', '11'], ['a', '12']]);
  for (const o of [...seen, ...inf.list()]) t.notOk(o.metadata?.managedFields, `${o.metadata?.name}@${o.metadata?.resourceVersion}: no managedFields`);
  t.same((inf.get('ns', 'a') as KubeObject & { data: unknown }).data, { x: 'a' }, 'the rest is kept');
});

t.test('slimWorkStatus: managedFields reduced to the latest status change, the same for lastStatusUpdate', async (t) => {
  const ws = (managedFields?: unknown[]): WorkStatus => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
    metadata: { name: 'w', namespace: 'wec1', ...(managedFields ? { managedFields: managedFields as never } : {}) },
    spec: { sourceRef: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'ns', name: 'x' } } });
  const full = ws([
    { manager: 'agent', operation: 'Apply', time: '2026-11-24T01:00:00Z', fieldsV1: { 'f:spec': { 'f:sourceRef': {} } } },
    { manager: 'agent', operation: 'Apply', subresource: 'status', time: '2026-11-24T02:00:00Z', fieldsV1: { 'f:status': { 'f:phase': {}, 'f:replicas': {} } } },
    { manager: 'old', operation: 'Update', time: '2026-11-24T01:30:00Z', fieldsV1: { 'f:status': { 'f:x': {} } } },
  ]);
  const before = lastStatusUpdate(full);
  const kept = slimWorkStatus(structuredClone(full));
  t.equal(before, '2026-11-24T02:00:00Z');
  t.equal(lastStatusUpdate(kept), before, 'the same answer');
  t.same(kept.metadata.managedFields, [{ operation: 'Update', subresource: 'status', time: '2026-11-24T02:00:00Z' }], 'one small entry');
  const noStatus = slimWorkStatus(ws([{ manager: 'agent', operation: 'Apply', time: '2026-11-24T01:00:00Z', fieldsV1: { 'f:spec': {} } }]));
  t.same(noStatus.metadata.managedFields, [], 'no status change: none');
  t.equal(lastStatusUpdate(noStatus), undefined);
  t.notOk(slimWorkStatus(ws()).metadata.managedFields, 'none before, none after');
});

t.test('slimWorkStatus: what the status controller reads is kept; equal parts of two clusters\' WorkStatuses are one frozen object', async (t) => {
  const ws = (cluster: string, rv: string): WorkStatus => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
    metadata: { name: 'deployment-ns-x', namespace: cluster, resourceVersion: rv, uid: `uid-${cluster}`, labels: { 'transport.kubestellar.io/manifestwork': 'w' },
      managedFields: [{ manager: 'agent', operation: 'Update', subresource: 'status', time: '2026-11-24T02:00:00Z', fieldsV1: { 'f:status': { 'f:replicas': {} } } }] as never },
    spec: { sourceRef: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'ns', name: 'x' } },
    status: { replicas: 2, availableReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] },
    statusDetails: { lastGeneration: 3, lastGenerationIsApplied: true } });
  const a = slimWorkStatus(ws('wec1', '10'));
  const b = slimWorkStatus(ws('wec2', '11'));
  t.same(a, { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
    metadata: { name: 'deployment-ns-x', namespace: 'wec1', resourceVersion: '10', managedFields: [{ operation: 'Update', subresource: 'status', time: '2026-11-24T02:00:00Z' }] },
    spec: ws('wec1', '10').spec, status: ws('wec1', '10').status, statusDetails: { lastGeneration: 3, lastGenerationIsApplied: true } }, 'uid, labels and the managedFields details dropped');
  t.equal(lastStatusUpdate(a), '2026-11-24T02:00:00Z');
  t.equal(b.metadata.namespace, 'wec2');
  t.equal(a.status, b.status, 'one status object for both clusters');
  t.equal(a.spec, b.spec, 'one spec object');
  t.ok(Object.isFrozen(a.status) && Object.isFrozen((a.status as { conditions: object[] }).conditions[0]), 'shared parts are frozen');
  t.not(slimWorkStatus({ ...ws('wec3', '12'), status: { replicas: 3 } }).status, a.status, 'a different status is its own');
});
