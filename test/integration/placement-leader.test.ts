// Two replicas of `ksview serve` for one WDS: one Lease decides which runs the placement writes;
// when the leader dies the standby takes over within 15 s and placement goes on. The replicas use
// a WDS name of their own (lease, ManifestWork names) and no --register, so the test spaces'
// server and the other tests are not disturbed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { manifestWorkName } from '../../src/controllers/model/wrapping.js';
import { ksviewBin } from '../fixtures/ksview.js';
import { managedCluster } from '../fixtures/inventory.js';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const wds = layout.spaces.find((s) => s.role === 'wds')!;
const its = layout.spaces.find((s) => s.role === 'its')!;

/**
 * Ports for the replicas: the free ones of the spaces' first block of ten (etcd takes +0 and +1,
 * wds1's serve +5, the agents +6 and +7).
 */
const REPLICA_PORTS = [layout.etcdClientPort + 2, layout.etcdClientPort + 3, layout.etcdClientPort + 4];

function replica(t: Test, wdsName: string, port: number): ChildProcess {
  const certDir = mkdtempSync(path.join(os.tmpdir(), 'ksview-replica-'));
  const child = spawn(process.execPath, [ksviewBin, 'serve', '--wds-kubeconfig', path.join(wds.dir, 'kubeconfig'), '--its-kubeconfig', path.join(its.dir, 'kubeconfig'),
    '--wds-name', wdsName, '--port', String(port), '--cert-dir', certDir,
    // As the spaces' own serve: the policies' status (Executor) is the same whoever writes it.
    '--default-executor', 'kubestellar-view-executors/default-executor'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => { log = (log + c).slice(-4000); });
  t.teardown(() => {
    child.kill('SIGKILL');
    rmSync(certDir, { recursive: true, force: true });
  });
  (child as ChildProcess & { log: () => string }).log = () => log;
  return child;
}


const holder = (lease: string): string => {
  const r = kc('wds1', ['-n', 'kubestellar-view', 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}']);
  return r.status === 0 ? r.stdout : '';
};

t.test('two replicas: one leader writes; the standby takes over within 15 s of its death', async (t) => {
  const wdsName = uniqueName('lewds');
  const lease = `kubestellar-view-placement-${wdsName}`;
  t.teardown(() => { kc('wds1', ['-n', 'kubestellar-view', 'delete', 'lease', lease, '--ignore-not-found']); });
  const a = replica(t, wdsName, REPLICA_PORTS[0]!);
  const leaderA = await waitUntil('replica A to lead', () => holder(lease).includes(`-${a.pid}-`) || undefined, 60_000);
  t.ok(leaderA, `the Lease names replica A (pid ${a.pid})`);
  const b = replica(t, wdsName, REPLICA_PORTS[1]!);
  await waitUntil('replica B to be serving', () => {
    if (b.exitCode !== null) throw new Error(`replica B exited: ${(b as ChildProcess & { log: () => string }).log()}`);
    return (b as ChildProcess & { log: () => string }).log().includes('listening on') || undefined;
  }, 60_000);
  await new Promise((r) => setTimeout(r, 4000)); // two of B's election rounds
  t.ok(holder(lease).includes(`-${a.pid}-`), 'with B up, A still leads');

  const run = uniqueName('le');
  const ns = testNamespace(t, ['wds1'], 'le');
  managedCluster(t, run, { group: run });
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: run },
    spec: { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ namespaces: [ns], resources: ['configmaps'] }] } }));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', run, '--ignore-not-found']); });
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'before', '--from-literal=x=1']);
  /** The ConfigMap a ManifestWork of this WDS carries, once there is one. */
  const sent = (name: string) => {
    const r = kc('its1', ['-n', run, 'get', 'manifestwork', manifestWorkName(wdsName, { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name }), '-o', 'json']);
    return r.status === 0 ? (JSON.parse(r.stdout) as Record<string, any>).spec.workload.manifests[0] as Record<string, any> : undefined;
  };
  t.match(await waitUntil('the leader to write the work', () => sent('before'), 60_000), { kind: 'ConfigMap', metadata: { name: 'before', namespace: ns } },
    'the leader wrote the ManifestWork of the ConfigMap');

  const killedAt = Date.now();
  a.kill('SIGKILL');
  await waitUntil('replica B to take over', () => holder(lease).includes(`-${b.pid}-`) || undefined, 30_000);
  const takeover = (Date.now() - killedAt) / 1000;
  t.ok(takeover <= 15, `B took over ${takeover.toFixed(1)} s after A died (at most 15)`);
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'after', '--from-literal=x=1']);
  t.match(await waitUntil('the new leader to write the work', () => sent('after'), 60_000), { kind: 'ConfigMap', metadata: { name: 'after', namespace: ns } },
    'placement went on under the new leader');
});

t.test('two WDSs sending one object to one cluster: reported on the policy and as an Event, no overwrite', async (t) => {
  // A second "WDS" here is a server for the same wds1 under another name: it writes its own works.
  const other = uniqueName('otherwds');
  t.teardown(() => { kc('wds1', ['-n', 'kubestellar-view', 'delete', 'lease', `kubestellar-view-placement-${other}`, '--ignore-not-found']); });
  const replicaProcess = replica(t, other, REPLICA_PORTS[2]!);
  await waitUntil('the other WDS\'s server to lead its own Lease', () => holder(`kubestellar-view-placement-${other}`).includes(`-${replicaProcess.pid}-`) || undefined, 60_000);
  const run = uniqueName('cf');
  const ns = testNamespace(t, ['wds1'], 'cf');
  managedCluster(t, run, { group: run });
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'shared', '--from-literal=x=1']);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: run },
    spec: { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ namespaces: [ns], objectNames: ['shared'] }] } }));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', run, '--ignore-not-found']); });

  const id = { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: 'shared' };
  for (const wdsName of ['wds1', other]) {
    const w = await waitUntil(`the work of WDS ${wdsName}`, () => {
      const r = kc('its1', ['-n', run, 'get', 'manifestwork', manifestWorkName(wdsName, id), '-o', 'json']);
      return r.status === 0 ? JSON.parse(r.stdout) as Record<string, any> : undefined;
    }, 60_000);
    t.equal(w.metadata.labels['view.kubestellar.io/wds'], wdsName, `WDS ${wdsName} keeps its own ManifestWork: nothing is overwritten`);
  }
  // The Event is about the ConfigMap, in its own namespace (never in default, where it would name it to others).
  const event = await waitUntil('the WDSConflict Event of wds1\'s server', () => {
    const events = JSON.parse(kcOk('wds1', ['-n', ns, 'get', 'events', '--field-selector', 'involvedObject.name=shared,reason=WDSConflict', '-o', 'json'])) as { items: Record<string, any>[] };
    return events.items.find((e) => String(e.message).includes(`from WDS ${other}`));
  }, 60_000);
  t.match(event.message, new RegExp(`conflict: cluster ${run} also receives configmaps ${ns}/shared from WDS ${other} \\(selected by BindingPolicy ${run}\\)`));
  t.match(event.involvedObject, { kind: 'ConfigMap', namespace: ns, name: 'shared' });
  t.equal(event.type, 'Warning');
  const errors = await waitUntil('the conflict on the policy\'s status', () => {
    const p = JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', run, '-o', 'json'])) as Record<string, any>;
    return (p.status?.errors as string[] | undefined)?.find((e) => e.startsWith('conflict:'));
  }, 60_000);
  t.match(errors, /also receives configmaps .*\/shared from WDS/);
});
