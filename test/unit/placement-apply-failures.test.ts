// Which manifests a cluster did not apply, read from a ManifestWork's status, and which changes of
// one of our works queue its object: agents' status writes only when what failed changed.
import t from 'tap';
import { applyFailures, statusOnlyChange, workChangeConcernsObject } from '../../src/controllers/placement/apply-failures.js';
import type { ManifestWork } from '../../src/controllers/model/wrapping.js';
import type { Condition } from '../../src/kube/ocm-api.js';

const cond = (type: string, status: Condition['status'], message = ''): Condition =>
  ({ type, status, reason: type, message, lastTransitionTime: '2026-01-01T00:00:00Z' });

function work(rv: string, conditions: Condition[] | undefined, feedback = 1, extra: Partial<ManifestWork['metadata']> = {}): ManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork',
    metadata: { name: 'wds1-abc', namespace: 'wec1', generation: 1, resourceVersion: rv, labels: { 'view.kubestellar.io/wds': 'wds1' }, ...extra },
    spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'same', namespace: 'ns' }, data: { a: '2' } }] } },
    ...(conditions ? { status: { resourceStatus: { manifests: [{
      resourceMeta: { ordinal: 0, group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespace: 'ns', name: 'same' },
      conditions, statusFeedback: { values: [{ name: 'n', fieldValue: { type: 'Integer', integer: feedback } }] },
    }] } } } : {}),
  };
}

const CONFLICT = 'Failed to apply manifest: Apply failed with 1 conflict: conflict with "work-agent-kubestellar-wds1": .data.a';

t.test('the manifests whose Applied condition is False, with the agent\'s message', async (t) => {
  t.same(applyFailures(work('1', [cond('Applied', 'False', CONFLICT), cond('Available', 'True')])), [{ manifest: 'ConfigMap ns/same', message: CONFLICT }]);
  t.same(applyFailures(work('1', [cond('Applied', 'True'), cond('Available', 'True')])), [], 'applied');
  t.same(applyFailures(work('1', undefined)), [], 'no status yet');
  t.same(applyFailures(undefined), [], 'no work');
});

t.test('what queues the object of one of our works', async (t) => {
  const failed = work('2', [cond('Applied', 'False', CONFLICT)]);
  const applied = work('3', [cond('Applied', 'True')]);
  t.ok(workChangeConcernsObject('DELETED', failed, undefined, false), 'a deletion, always');
  t.ok(workChangeConcernsObject('ADDED', failed, undefined, false), 'a work found (first list, or made by someone else)');
  t.notOk(workChangeConcernsObject('MODIFIED', applied, failed, true), 'never the echo of our own write');
  t.ok(workChangeConcernsObject('MODIFIED', failed, work('1', undefined), false), 'an agent reporting a failure');
  t.ok(workChangeConcernsObject('MODIFIED', applied, failed, false), 'an agent reporting the failure is over');
  t.notOk(workChangeConcernsObject('MODIFIED', work('4', [cond('Applied', 'True')], 2), applied, false), 'feedback ticking: nothing to do');
  t.notOk(workChangeConcernsObject('MODIFIED', work('4', [cond('Applied', 'False', CONFLICT), cond('Available', 'True')]), failed, false),
    'the same failure, other conditions changing: nothing to do');
  const edited = work('5', [cond('Applied', 'True')], 1, { generation: 2 });
  t.ok(workChangeConcernsObject('MODIFIED', edited, applied, false), 'someone else changed its spec: the object writes it back');
  t.notOk(statusOnlyChange(applied, work('6', [cond('Applied', 'True')], 1, { labels: {} })), 'a label change is not status-only');
  t.notOk(statusOnlyChange(applied, work('6', [cond('Applied', 'True')], 1, { deletionTimestamp: '2026-01-01T00:00:00Z' })), 'nor a deletion starting');
});
