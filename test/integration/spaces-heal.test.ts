// Spaces that heal: a component of running spaces dies (its1's kube-apiserver killed, or stopped
// with `ksview spaces stop`), and `ksview spaces up` starts it again on its data, leaving the live
// processes alone; a component an older version started with other flags (etcd on plain HTTP,
// without client certificates) is restarted with the current ones, on its data. Own folder and
// ports (no WEC, so quick), apart from the suite's shared spaces.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ksview } from '../fixtures/ksview.js';
import { alive, ownSpaces } from '../fixtures/own-spaces.js';
import { waitFor } from '../../src/kube/wait.js';
import { etcdArgs } from '../../src/spaces/components.js';
import { spacesLayout } from '../../src/spaces/layout.js';
import { startDetached } from '../../src/spaces/processes.js';
import { readState, writeState } from '../../src/spaces/state.js';

t.test('its1 kube-apiserver killed: up restarts only it, with its data; spaces stop stops one cleanly', async (t) => {
  const base = process.env.KSVIEW_HEAL_PORT_BASE ?? '18500';
  const { dir, flags, state } = ownSpaces(t, 'heal', base, 0);
  const pidOf = (name: string) => state().processes.find((p) => p.name === name)?.pid;
  const kubectl = (args: string[]) => spawnSync('kubectl', ['--kubeconfig', path.join(dir, 'its1', 'kubeconfig'), ...args], { encoding: 'utf8' });

  const first = ksview(['spaces', 'up', ...flags]);
  t.equal(first.status, 0, `first up succeeds: ${first.stderr.trim().split('\n').pop()}`);
  t.ok(pidOf('wds1/ksview-serve'), 'up runs ksview serve for wds1');
  t.equal(kubectl(['create', 'configmap', 'survivor', '--from-literal=k=v']).status, 0, 'data written in its1');

  const before = new Map(state().processes.map((p) => [p.name, p.pid]));
  const victim = before.get('its1/kube-apiserver')!;
  process.kill(victim, 'SIGKILL');
  const gone = await waitFor(async () => ({ ok: !alive(victim), detail: 'still alive' }), 10_000, 50);
  t.ok(gone.ok, 'its1 kube-apiserver is dead');
  const down = ksview(['spaces', 'status', '--dir', dir]);
  t.equal(down.status, 1, 'status says something is wrong');
  t.match(down.stdout, /^its1\s.*kube-apiserver: not running/m);

  const healed = ksview(['spaces', 'up', ...flags]);
  t.equal(healed.status, 0, `up heals: ${healed.stderr.trim().split('\n').pop()}`);
  t.match(healed.stderr, /started its1\/kube-apiserver/);
  const after = new Map(state().processes.map((p) => [p.name, p.pid]));
  t.not(after.get('its1/kube-apiserver'), victim, 'a new its1 kube-apiserver');
  for (const [name, pid] of before) if (name !== 'its1/kube-apiserver') t.equal(after.get(name), pid, `${name} kept`);
  t.equal(kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}']).stdout, 'v', 'its1 data kept');
  t.equal(ksview(['spaces', 'status', '--dir', dir]).status, 0, 'status healthy again');

  const stop = ksview(['spaces', 'stop', 'its1/kube-apiserver', '--dir', dir]);
  t.equal(stop.status, 0, 'spaces stop succeeds');
  t.notOk(alive(after.get('its1/kube-apiserver')!), 'the stopped process is gone');
  const bad = ksview(['spaces', 'stop', 'its1/nope', '--dir', dir]);
  t.equal(bad.status, 1, 'an unknown name fails');
  t.equal(bad.stderr.trim().split('\n').length, 1, 'with one line');
  t.match(bad.stderr, /no process 'its1\/nope'/);
  const again = ksview(['spaces', 'up', ...flags]);
  t.equal(again.status, 0, `up after stop: ${again.stderr.trim().split('\n').pop()}`);
  t.equal(kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}']).stdout, 'v', 'data kept after stop too');
  const idle = ksview(['spaces', 'up', ...flags]);
  t.notMatch(idle.stderr, /started /, 'a further up starts nothing');

  // etcd as an older version ran it: plain HTTP, no client certificate asked (any local user read
  // the spaces' Secrets). The state records it as that version's `up` did.
  const plainHealth = () => spawnSync('curl', ['-s', '-m', '5', `http://127.0.0.1:${base}/health`], { encoding: 'utf8' });
  t.equal(ksview(['spaces', 'stop', 'etcd', '--dir', dir]).status, 0, 'etcd stopped');
  const recorded = readState(path.join(dir, 'state.json'))!;
  const etcdRec = recorded.processes.find((p) => p.name === 'etcd')!;
  const oldArgs = etcdArgs(spacesLayout({ dir, portBase: Number(base), wecs: 0 }))
    .filter((a) => !/^--(peer-)?(cert-file|key-file|client-cert-auth|trusted-ca-file)=/.test(a)).map((a) => a.replaceAll('https://', 'http://'));
  const old = startDetached('etcd', etcdRec.binary, oldArgs, etcdRec.log);
  writeState(path.join(dir, 'state.json'), { ...recorded, processes: recorded.processes.map((p) => (p.name === 'etcd' ? old : p)) });
  const open = await waitFor(async () => ({ ok: /"health":"true"/.test(plainHealth().stdout), detail: 'no answer' }), 30_000, 200);
  t.ok(open.ok, 'the old etcd answers anyone on plain HTTP');
  const upgraded = ksview(['spaces', 'up', ...flags]);
  t.equal(upgraded.status, 0, `up on the old etcd succeeds: ${upgraded.stderr.trim().split('\n').pop()}`);
  t.match(upgraded.stderr, /etcd runs with other flags than this version starts it with: restarting it, on its data/, 'says why it restarts etcd');
  t.not(pidOf('etcd'), old.pid, 'a new etcd');
  t.notOk(alive(old.pid), 'the old one is gone');
  t.not(plainHealth().status, 0, 'plain HTTP is refused now');
  t.equal(kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}']).stdout, 'v', 'data kept across the restart with TLS');
  t.equal(ksview(['spaces', 'status', '--dir', dir]).status, 0, 'status healthy');
});
