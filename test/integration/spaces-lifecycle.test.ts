// `ksview spaces up` is idempotent and `down` leaves no process behind: run on a set of spaces of
// its own (own folder and ports), apart from the suite's shared spaces.
import { existsSync } from 'node:fs';
import t from 'tap';
import { ksview } from '../fixtures/ksview.js';
import { alive, ownSpaces } from '../fixtures/own-spaces.js';

t.test('up twice reuses the same processes; status is healthy; down stops them all and removes state', async (t) => {
  const { dir, flags, state } = ownSpaces(t, 'lifecycle', process.env.KSVIEW_LIFECYCLE_PORT_BASE ?? '18400', 1);

  const first = ksview(['spaces', 'up', ...flags]);
  t.equal(first.status, 0, `first up succeeds: ${first.stderr.trim().split('\n').pop()}`);
  const state1 = state();
  const names = state1.processes.map((p) => p.name).sort();
  // The whole local system: the spaces' components, ksview serve for wds1 and the pull agent of wec1.
  const expected = ['etcd', 'its1/kube-apiserver', 'its1/kube-controller-manager', 'wds1/kube-apiserver',
    'wds1/kube-controller-manager', 'wds1/ksview-serve', 'wec1/kube-apiserver', 'wec1/kube-controller-manager',
    'wec1/kube-scheduler', 'wec1/ksview-agent', 'wec1/kwok'].filter((n) => process.env.KSVIEW_SPACES_NO_AGENTS !== '1' || !n.endsWith('/ksview-agent')).sort();
  t.same(names, expected, 'one process per component');
  t.ok(state1.processes.every((p) => alive(p.pid)), 'all processes alive');

  const second = ksview(['spaces', 'up', ...flags]);
  t.equal(second.status, 0, 'second up succeeds');
  t.notMatch(second.stderr, /started /, 'second up starts nothing');
  const state2 = state();
  t.same(state2.processes.map((p) => p.pid).sort(), state1.processes.map((p) => p.pid).sort(), 'same pids');

  const status = ksview(['spaces', 'status', '--dir', dir]);
  t.equal(status.status, 0, 'status exits 0 when healthy');
  for (const s of ['wds1', 'its1', 'wec1']) t.match(status.stdout, new RegExp(`^${s}\\s+\\w+\\s+https://127\\.0\\.0\\.1:\\d+\\s+ok`, 'm'));

  // A second WDS on the running spaces: only its own processes start; nothing else moves.
  const third = ksview(['spaces', 'up', ...flags, '--wdss', '2']);
  t.equal(third.status, 0, `up --wdss 2 on running spaces succeeds: ${third.stderr.trim().split('\n').pop()}`);
  const state3 = state();
  const added = ['wds2/kube-apiserver', 'wds2/kube-controller-manager', 'wds2/ksview-serve'];
  t.same(state3.processes.map((p) => p.name).sort(), [...expected, ...added].sort(), 'wds2\'s kube-apiserver, controller-manager and serve are added');
  t.equal(state3.wdss, 2, 'the number of WDSs is kept in the state');
  t.same(state3.processes.filter((p) => !added.includes(p.name)).map((p) => p.pid).sort(), state1.processes.map((p) => p.pid).sort(), 'every other process kept');
  const status3 = ksview(['spaces', 'status', '--dir', dir]);
  t.match(status3.stdout, /^wds2\s+wds\s+https:\/\/127\.0\.0\.1:\d+\s+ok \(.*ksview-serve\)/m, 'status shows wds2 healthy, with its serve');
  t.match(ksview(['kubeconfig', '--dir', dir, '--view']).stdout, /name: wds2-view/, 'kubeconfig --view has wds2-view');
  const fewer = ksview(['spaces', 'up', ...flags]);
  t.not(fewer.status, 0, 'fewer WDSs than running is refused');
  t.match(fewer.stderr, /already run with .* --wdss 2; run 'ksview spaces down' first/);

  const down = ksview(['spaces', 'down', '--dir', dir]);
  t.equal(down.status, 0, 'down succeeds');
  t.match(down.stdout, new RegExp(`stopped ${expected.length + added.length} processes`));
  const left = state3.processes.filter((p) => alive(p.pid));
  t.same(left, [], 'no process left behind');
  t.notOk(existsSync(dir), 'state folder removed');

  const after = ksview(['spaces', 'status', '--dir', dir]);
  t.equal(after.status, 1, 'status after down exits 1');
  t.equal(after.stderr.trim().split('\n').length, 1, 'with one line');
  const again = ksview(['spaces', 'down', '--dir', dir]);
  t.equal(again.status, 0, 'down again is harmless');
});
