// Push mode: only the kubeconfig Secrets of clusters the hub accepts are followed (one per cluster,
// by name), and a cluster no longer accepted is let go; workers start and stop as those Secrets come
// and go, a changed Secret restarts its worker, a kubeconfig with a credential plugin is refused and
// the ManagedCluster told why, a WEC held by another fleet gets no worker, nothing starts before the
// hub accepts, and a WEC that stops answering flips setWecUnreachable on its worker only.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { fakeCluster, type FakeCluster } from '../fixtures/agent/fake-cluster.js';
import { PushSupervisor, clusterOfSecret, type KubeconfigSecret, type PushSupervisorOptions } from '../../src/agent/push-supervisor.js';
import type { ChangeType } from '../../src/kube/informer.js';
import type { ClusterWorker } from '../../src/agent/shared/contract.js';
import type { RegistrationLike } from '../../src/agent/shared/worker-factory.js';
import type { RegistrationOptions } from '../../src/agent/registration/cluster-registration.js';

async function until(cond: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

class FakeWorker implements ClusterWorker {
  actions: string[] = [];
  constructor(readonly cluster: string, readonly wecOrigin: string) {}
  async start() { this.actions.push('start'); }
  async stop() { this.actions.push('stop'); }
  ready() { return true; }
  setWecUnreachable(reason: string | undefined) { this.actions.push(`unreachable:${reason ?? ''}`); }
  placed() { return [{ cluster: this.cluster, work: 'w', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'n', name: 'd', ready: true, reason: '' }]; }
}

class FakeRegistration implements RegistrationLike {
  accepted = true;
  heldBy: string | undefined;
  wecUnreachable: string | undefined;
  itsError = undefined;
  constructor(readonly o: RegistrationOptions) {}
  start() { if (this.accepted) this.o.onAccepted(true); }
  async stop() {}
  isAccepted() { return this.accepted; }
  setWecUnreachable(r: string | undefined) { this.wecUnreachable = r; }
  setHeldByAnotherFleet(h: string | undefined) { this.heldBy = h; }
}

const secret = (cluster: string, kubeconfig: string, name = `${cluster}-kubeconfig`) => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: cluster }, data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
});

const managedCluster = (name: string, accepted = true) => ({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name }, spec: { hubAcceptsClient: accepted } });

function setup(opts: { accepted?: boolean; real?: boolean } = {}) {
  const its = fakeCluster('https://its.test:6443');
  const wecs = new Map<string, FakeCluster>();
  const workers: FakeWorker[] = [];
  const regs = new Map<string, FakeRegistration>();
  const lines: string[] = [];
  /** The Secret watches asked for, by cluster (what the agent would read). */
  const watched = new Map<string, { onChange: (type: ChangeType, s: KubeconfigSecret) => void; stopped: boolean }>();
  const seams: Partial<PushSupervisorOptions> = opts.real ? {} : {
    // The Secret's "kubeconfig" here is just the WEC's origin.
    wecFromKubeconfig: async (text) => {
      let k = wecs.get(text);
      if (!k) { k = fakeCluster(text); k.raw.set('/readyz', { status: 200, body: 'ok' }); wecs.set(text, k); }
      return k.up;
    },
    createRegistration: (o) => { const r = new FakeRegistration(o); r.accepted = opts.accepted ?? true; regs.set(o.cluster, r); return r; },
  };
  const sup = new PushSupervisor({
    its: its.up, fleetID: 'fleet-a', agentID: 'push-a', hubHash: 'h',
    log: (l) => lines.push(l),
    healthIntervalMs: 20, healthTimeoutMs: 200, fleetLeaseSeconds: 60,
    createWorker: (o) => { const w = new FakeWorker(o.cluster, o.wec.origin); workers.push(w); return w; },
    watchSecret: (cluster, onChange) => {
      const w = { onChange, stopped: false };
      watched.set(cluster, w);
      return { start() {}, stop() { w.stopped = true; } };
    },
    ...seams,
  });
  /** The hub accepts `name`, and its Secret arrives on the watch the agent opened for it. */
  const served = (name: string, kubeconfig: string, type: ChangeType = 'ADDED') => {
    if (!watched.has(name) || watched.get(name)!.stopped) sup.clusterChanged('ADDED', managedCluster(name) as never);
    watched.get(name)!.onChange(type, secret(name, kubeconfig));
  };
  return { its, wecs, workers, regs, lines, sup, watched, served };
}

t.test('only <namespace>-kubeconfig Secrets name a cluster', async (t) => {
  t.equal(clusterOfSecret(secret('wec2', 'x') as never), 'wec2');
  t.equal(clusterOfSecret(secret('wec2', 'x', 'other-kubeconfig') as never), undefined);
});

t.test('only the Secret of a cluster the hub accepts is followed; a cluster no longer accepted is let go', async (t) => {
  const { sup, workers, watched, served } = setup();
  t.teardown(() => sup.stop());
  sup.clusterChanged('ADDED', managedCluster('asking', false) as never);
  t.notOk(watched.has('asking'), 'a cluster not accepted: its Secret is not asked for');
  sup.secretChanged('ADDED', secret('asking', 'https://asking.test:6443'));
  sup.secretChanged('ADDED', secret('stray', 'https://stray.test:6443'));
  await sup.settled();
  t.equal(workers.length, 0, 'a Secret of a cluster not accepted, or of no cluster, serves nothing');
  t.same(sup.states(), [], 'and is not even listed');

  served('wec2', 'https://wec2.test:6443');
  await sup.settled();
  await until(() => workers.length === 1, 'a worker for the accepted cluster');
  // Another cluster's Secret delivered on wec2's watch is not wec2's.
  watched.get('wec2')!.onChange('ADDED', secret('wec9', 'https://wec9.test:6443'));
  await sup.settled();
  t.equal(workers.length, 1, 'a Secret is only ever its own mailbox\'s cluster');

  sup.clusterChanged('MODIFIED', managedCluster('wec2', false) as never);
  await sup.settled();
  t.ok(watched.get('wec2')!.stopped, 'acceptance withdrawn: its Secret is no longer followed');
  await until(() => workers[0]!.actions.includes('stop'), 'its worker stopped');
  t.same(sup.states(), []);
  served('wec2', 'https://wec2-again.test:6443');
  await sup.settled();
  await until(() => workers.length === 2, 'accepted again: served again');
  sup.clusterChanged('DELETED', managedCluster('wec2') as never);
  await sup.settled();
  await until(() => workers[1]!.actions.includes('stop'), 'deleted: stopped');
  await sup.stop();
});

t.test('the default watch asks for one Secret by name in the cluster\'s mailbox, and a 403 is said once', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  its.fail.push({ match: (p) => p.endsWith('/secrets'), status: 403 });
  const lines: string[] = [];
  const sup = new PushSupervisor({ its: its.up, fleetID: 'f', agentID: 'a', hubHash: 'h', log: (l) => lines.push(l), createWorker: () => { throw new Error('no worker'); } });
  sup.clusterChanged('ADDED', managedCluster('wec1') as never);
  await until(() => lines.length > 0, 'the 403 logged');
  await sup.stop();
  const asked = its.calls().map((c) => c.path);
  t.match(asked[0], /^\/api\/v1\/namespaces\/wec1\/secrets\?.*fieldSelector=metadata.name%3Dwec1-kubeconfig/);
  t.notOk(asked.some((p) => p.startsWith('/api/v1/secrets')), 'never Secrets cluster-wide');
  t.same(lines, ['[wec1] cannot read Secret wec1/wec1-kubeconfig (a cluster this agent may not read is not its to serve): forbidden (403)']);
});

t.test('a kubeconfig with a credential plugin is refused, the ManagedCluster says why, and nothing runs', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-push-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'ran');
  const { sup, its, workers, served } = setup({ real: true });
  t.teardown(() => sup.stop());
  its.put('/apis/cluster.open-cluster-management.io/v1/managedclusters/wec8', managedCluster('wec8') as never);
  const kubeconfig = YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'x',
    clusters: [{ name: 'c', cluster: { server: 'https://wec8.test:6443' } }],
    users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', `touch ${marker}`], interactiveMode: 'Never' } } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
  });
  served('wec8', kubeconfig);
  await sup.settled();
  t.notOk(existsSync(marker), 'the command did not run');
  t.equal(workers.length, 0, 'no worker');
  t.match(sup.states(), [{ cluster: 'wec8', problem: /user "u" has an exec credential plugin \(command "sh"\).*--insecure-kubeconfig-exec/ }]);
  const mc = its.get('/apis/cluster.open-cluster-management.io/v1/managedclusters/wec8') as any;
  t.match(mc.status.conditions, [{ type: 'ManagedClusterConditionAvailable', status: 'False', reason: 'KubeconfigRefused', message: /exec credential plugin/ }]);
  t.notOk(its.calls().some((c) => c.method === 'POST'), 'no ManagedCluster created');

  served('wec8', 'not: [yaml', 'MODIFIED');
  await sup.settled();
  t.match((its.get('/apis/cluster.open-cluster-management.io/v1/managedclusters/wec8') as any).status.conditions,
    [{ reason: 'KubeconfigInvalid', message: /is not YAML/ }], 'an unusable one says so too');
  await sup.stop();
});

t.test('workers come and go with the Secrets; a changed Secret restarts', async (t) => {
  const { sup, workers, wecs, served } = setup();
  served('wec2', 'https://wec2.test:6443');
  served('wec3', 'https://wec3.test:6443');
  await sup.settled();
  await until(() => sup.workers().length === 2, 'two workers');
  t.same(workers.map((w) => [w.cluster, w.actions[0]]), [['wec2', 'start'], ['wec3', 'start']]);
  t.match(wecs.get('https://wec2.test:6443')!.get('/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet'), { data: { fleetID: 'fleet-a', holderIdentity: 'push-a' } }, 'fleet lease claimed');
  t.equal(sup.placed().length, 2, 'placed() of every worker');

  served('wec2', 'https://wec2.test:6443', 'MODIFIED'); // same kubeconfig: nothing
  await sup.settled();
  t.equal(workers.length, 2, 'an unchanged kubeconfig restarts nothing');

  served('wec2', 'https://wec2b.test:6443', 'MODIFIED');
  await sup.settled();
  await until(() => workers.length === 3 && workers[2]!.actions.includes('start'), 'restarted worker');
  t.same(workers[0]!.actions.slice(-1), ['stop'], 'old worker stopped');
  t.equal(workers[2]!.wecOrigin, 'https://wec2b.test:6443', 'new worker talks to the new WEC');

  served('wec3', 'https://wec3.test:6443', 'DELETED');
  await sup.settled();
  await until(() => workers[1]!.actions.includes('stop'), 'wec3 stopped');
  t.same(sup.workers().map((w) => w.cluster), ['wec2']);
  await sup.stop();
  t.ok(workers[2]!.actions.includes('stop'), 'stop() stops every worker');
});

t.test('a WEC held by another fleet is refused, and taken once that lease expires', async (t) => {
  const { sup, workers, wecs, regs, lines, served } = setup();
  const wec = fakeCluster('https://wec4.test:6443');
  wec.raw.set('/readyz', { status: 200, body: 'ok' });
  wecs.set('https://wec4.test:6443', wec);
  wec.put('/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet', { metadata: { name: 'kubestellar-fleet', namespace: 'kube-system' },
    data: { fleetID: 'fleet-b', holderIdentity: 'push-b', renewTime: new Date().toISOString(), leaseDurationSeconds: '60' } });
  served('wec4', 'https://wec4.test:6443');
  await sup.settled();
  t.equal(workers.length, 0, 'no worker for a WEC another fleet holds');
  t.match(regs.get('wec4')!.heldBy, /fleet fleet-b/, 'the ManagedCluster is told (HeldByAnotherFleet)');
  t.match(lines.join('\n'), /refused: the WEC is held by another fleet/);
  t.match(sup.states(), [{ cluster: 'wec4', problem: /held by another fleet/ }]);

  // fleet-b's lease expires: the next claim takes it.
  const cm = wec.get('/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet')!;
  wec.put('/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet', { ...cm, data: { ...(cm as any).data, renewTime: '2020-01-01T00:00:00Z' } });
  await sup.slot('wec4')!.claim();
  await until(() => workers.length === 1, 'worker after takeover');
  t.equal(regs.get('wec4')!.heldBy, undefined, 'condition cleared');
  await sup.stop();
});

t.test('nothing starts before the hub accepts', async (t) => {
  const { sup, workers, regs, served } = setup({ accepted: false });
  served('wec5', 'https://wec5.test:6443');
  await sup.settled();
  t.equal(workers.length, 0);
  const r = regs.get('wec5')!;
  r.accepted = true;
  r.o.onAccepted(true);
  await until(() => workers.length === 1, 'worker after acceptance');
  await sup.stop();
});

t.test('health check flips setWecUnreachable on that WEC\'s worker only', async (t) => {
  const { sup, workers, wecs, regs, served } = setup();
  served('wec6', 'https://wec6.test:6443');
  served('wec7', 'https://wec7.test:6443');
  await sup.settled();
  await until(() => workers.length === 2, 'two workers');
  const [w6, w7] = [workers.find((w) => w.cluster === 'wec6')!, workers.find((w) => w.cluster === 'wec7')!];
  wecs.get('https://wec6.test:6443')!.fail.push({ match: () => true, status: 'down' });
  await until(() => w6.actions.some((a) => a.startsWith('unreachable:') && a.length > 'unreachable:'.length), 'wec6 unreachable');
  t.match(regs.get('wec6')!.wecUnreachable, /unreachable/, 'the ManagedCluster hears it (Available=Unknown)');
  t.notOk(w7.actions.some((a) => a.startsWith('unreachable')), 'wec7 unaffected');
  wecs.get('https://wec6.test:6443')!.fail.length = 0;
  await until(() => w6.actions.at(-1) === 'unreachable:', 'wec6 reachable again');
  t.equal(regs.get('wec6')!.wecUnreachable, undefined);
  await sup.stop();
});
