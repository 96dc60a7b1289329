// CombinedStatuses over upsynced objects, without spaces: a policy whose upsync clause names a
// collector counting Pods by cluster and phase gets one CombinedStatus per (namespace, resource),
// computed in the real CEL workers from the upsynced copies; a Pod's phase change, a copy gone and
// a second namespace are reflected; labels say what it is of (no object name), and a policy naming
// no collector has none.
import t from 'tap';
import { CelPool, type CompileAnswer } from '../../src/controllers/status/cel-pool.js';
import { UPSYNC_LABEL, UpsyncCombinedStatuses, withUpsyncCombined } from '../../src/controllers/status/upsync-combined-statuses.js';
import type { UpsyncedObject } from '../../src/kube/upsync-api.js';

const pool = new CelPool();
t.teardown(() => pool.close());

const SPEC = { groupBy: [{ name: 'cluster', def: 'inventory.name' }, { name: 'phase', def: 'returned.status.phase' }], combinedFields: [{ name: 'count', type: 'COUNT' }] };

function pod(cluster: string, ns: string, name: string, phase: string, rv: string, policies = ['p1']): UpsyncedObject {
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject',
    metadata: { name: `wds1.${ns}.${name}`, namespace: cluster },
    source: { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespace: ns, name, uid: `u-${name}`, resourceVersion: rv },
    lastSeen: '2026-11-26T00:00:00Z', policies,
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: 'web' } }, status: { phase } },
  };
}

const until = async <T>(f: () => T, ok: (v: T) => boolean, ms = 10_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`not reached: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

t.test('COUNT by cluster and phase over a policy\'s upsynced Pods', async (t) => {
  const answer: CompileAnswer = await pool.compile('phases', 'phases', SPEC, 4000);
  t.same(answer.errors, []);
  let copies: UpsyncedObject[] = [pod('wec1', 'demo', 'a', 'Running', '1'), pod('wec1', 'demo', 'b', 'Pending', '1'), pod('wec2', 'demo', 'a', 'Running', '1')];
  const listeners = new Set<(type: string, obj: UpsyncedObject, old?: UpsyncedObject) => void>();
  const policies: Record<string, { metadata: { name: string; uid: string; creationTimestamp: string }; spec: { upsync: unknown[] } }> = {
    p1: { metadata: { name: 'p1', uid: 'uid-p1', creationTimestamp: '2026-11-26T00:00:00Z' }, spec: { upsync: [{ resources: ['pods'], statusCollectors: ['phases'] }] } },
    p2: { metadata: { name: 'p2', uid: 'uid-p2', creationTimestamp: '2026-11-26T00:00:00Z' }, spec: { upsync: [{ resources: ['pods'] }] } },
  };
  const up = new UpsyncCombinedStatuses({
    policy: (n) => policies[n] as never, policyNames: () => Object.keys(policies), pool, onPolicyChange: () => () => {},
    upsynced: { list: () => copies, onChange: (cb) => { listeners.add(cb); return () => listeners.delete(cb); } },
    collectors: { compile: () => answer, onCollectorChange: () => () => {}, generation: () => '1', spec: () => SPEC },
  });
  up.start();
  t.teardown(() => up.stop());
  const announced: string[] = [];
  up.onCombinedStatusChange((k) => announced.push(k));
  const name = 'upsync.pods.uid-p1';
  const rows = () => (up.combinedStatus('demo', name)?.results?.[0]?.rows ?? []).map((r) => r.columns.map((c) => c.string ?? c.float)).sort();
  t.same(await until(rows, (r) => r.length === 3), [['wec1', 'Pending', '1'], ['wec1', 'Running', '1'], ['wec2', 'Running', '1']], 'per cluster and phase');
  const cs = up.combinedStatus('demo', name)!;
  t.same(cs.metadata.labels, { 'status.kubestellar.io/api-group': '', 'status.kubestellar.io/resource': 'pods', 'status.kubestellar.io/namespace': 'demo', 'status.kubestellar.io/binding-policy': 'p1', [UPSYNC_LABEL]: 'true' });
  t.equal(cs.metadata.namespace, 'demo');
  t.same(up.combinedStatuses().map((c) => c.metadata.name), [name], 'one, and none for the policy naming no collector');

  // b turns Running; wec2's a goes; a Pod in another namespace.
  const emit = (type: string, obj: UpsyncedObject, old?: UpsyncedObject) => { for (const l of listeners) l(type, obj, old); };
  const b2 = pod('wec1', 'demo', 'b', 'Running', '2');
  const gone = copies[2]!;
  const other = pod('wec2', 'other', 'c', 'Failed', '1');
  copies = [copies[0]!, b2, other];
  emit('MODIFIED', b2, pod('wec1', 'demo', 'b', 'Pending', '1'));
  emit('DELETED', gone, gone);
  emit('ADDED', other);
  t.ok(announced.includes(`demo/${name}`) && announced.includes(`other/${name}`), 'the keys announced');
  t.same(await until(rows, (r) => r.length === 1 && r[0]![2] === '2'), [['wec1', 'Running', '2']], 'b Running, wec2\'s gone');
  const otherRows = await until(() => (up.combinedStatus('other', name)?.results?.[0]?.rows ?? []).map((r) => r.columns.map((c) => c.string ?? c.float)), (r) => r.length === 1);
  t.same(otherRows, [['wec2', 'Failed', '1']], 'a CombinedStatus per namespace');

  // Merged with the workload objects' CombinedStatuses.
  const objects = { combinedStatuses: () => [], combinedStatus: () => undefined, onCombinedStatusChange: () => () => {} };
  const merged = withUpsyncCombined(objects, up);
  t.equal(merged.combinedStatus('demo', name)?.metadata.name, name);
  t.equal(merged.combinedStatuses().length, 2);
  emit('DELETED', other, other);
  copies = copies.filter((c) => c !== other);
  t.equal(up.combinedStatus('other', name), undefined, 'its last Pod gone: no CombinedStatus there');
});
