// Push mode: workers start and stop as <cluster>-kubeconfig Secrets come and go, a changed Secret
// restarts its worker, a WEC held by another fleet gets no worker, nothing starts before the hub
// accepts, and a WEC that stops answering flips setWecUnreachable on its worker only.
import t from 'tap';
import { fakeKube, type FakeKube } from '../fixtures/agent-fake-kube.js';
import { PushSupervisor, clusterOfSecret } from '../../src/agent/push-supervisor.js';
import type { ClusterWorker } from '../../src/agent/contract.js';
import type { RegistrationLike } from '../../src/agent/worker-factory.js';
import type { RegistrationOptions } from '../../src/agent/registration.js';

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

function setup(opts: { accepted?: boolean } = {}) {
  const its = fakeKube('https://its.test:6443');
  const wecs = new Map<string, FakeKube>();
  const workers: FakeWorker[] = [];
  const regs = new Map<string, FakeRegistration>();
  const lines: string[] = [];
  const sup = new PushSupervisor({
    its: its.up, fleetID: 'fleet-a', agentID: 'push-a', hubHash: 'h',
    log: (l) => lines.push(l),
    healthIntervalMs: 20, healthTimeoutMs: 200, fleetLeaseSeconds: 60,
    createWorker: (o) => { const w = new FakeWorker(o.cluster, o.wec.origin); workers.push(w); return w; },
    // The Secret's "kubeconfig" here is just the WEC's origin.
    wecFromKubeconfig: async (text) => {
      let k = wecs.get(text);
      if (!k) { k = fakeKube(text); k.raw.set('/readyz', { status: 200, body: 'ok' }); wecs.set(text, k); }
      return k.up;
    },
    createRegistration: (o) => { const r = new FakeRegistration(o); r.accepted = opts.accepted ?? true; regs.set(o.cluster, r); return r; },
  });
  return { its, wecs, workers, regs, lines, sup };
}

t.test('only <namespace>-kubeconfig Secrets name a cluster', async (t) => {
  t.equal(clusterOfSecret(secret('wec2', 'x') as never), 'wec2');
  t.equal(clusterOfSecret(secret('wec2', 'x', 'other-kubeconfig') as never), undefined);
});

t.test('workers come and go with the Secrets; a changed Secret restarts', async (t) => {
  const { sup, workers, wecs } = setup();
  sup.secretChanged('ADDED', secret('wec2', 'https://wec2.test:6443'));
  sup.secretChanged('ADDED', secret('wec3', 'https://wec3.test:6443'));
  await sup.settled();
  await until(() => sup.workers().length === 2, 'two workers');
  t.same(workers.map((w) => [w.cluster, w.actions[0]]), [['wec2', 'start'], ['wec3', 'start']]);
  t.match(wecs.get('https://wec2.test:6443')!.get('/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet'), { data: { fleetID: 'fleet-a', holderIdentity: 'push-a' } }, 'fleet lease claimed');
  t.equal(sup.placed().length, 2, 'placed() of every worker');

  sup.secretChanged('MODIFIED', secret('wec2', 'https://wec2.test:6443')); // same kubeconfig: nothing
  await sup.settled();
  t.equal(workers.length, 2, 'an unchanged kubeconfig restarts nothing');

  sup.secretChanged('MODIFIED', secret('wec2', 'https://wec2b.test:6443'));
  await sup.settled();
  await until(() => workers.length === 3 && workers[2]!.actions.includes('start'), 'restarted worker');
  t.same(workers[0]!.actions.slice(-1), ['stop'], 'old worker stopped');
  t.equal(workers[2]!.wecOrigin, 'https://wec2b.test:6443', 'new worker talks to the new WEC');

  sup.secretChanged('DELETED', secret('wec3', 'https://wec3.test:6443'));
  await sup.settled();
  await until(() => workers[1]!.actions.includes('stop'), 'wec3 stopped');
  t.same(sup.workers().map((w) => w.cluster), ['wec2']);
  await sup.stop();
  t.ok(workers[2]!.actions.includes('stop'), 'stop() stops every worker');
});

t.test('a WEC held by another fleet is refused, and taken once that lease expires', async (t) => {
  const { sup, workers, wecs, regs, lines } = setup();
  const wec = fakeKube('https://wec4.test:6443');
  wec.raw.set('/readyz', { status: 200, body: 'ok' });
  wecs.set('https://wec4.test:6443', wec);
  wec.put('/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet', { metadata: { name: 'kubestellar-fleet', namespace: 'kube-system' },
    data: { fleetID: 'fleet-b', holderIdentity: 'push-b', renewTime: new Date().toISOString(), leaseDurationSeconds: '60' } });
  sup.secretChanged('ADDED', secret('wec4', 'https://wec4.test:6443'));
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
  const { sup, workers, regs } = setup({ accepted: false });
  sup.secretChanged('ADDED', secret('wec5', 'https://wec5.test:6443'));
  await sup.settled();
  t.equal(workers.length, 0);
  const r = regs.get('wec5')!;
  r.accepted = true;
  r.o.onAccepted(true);
  await until(() => workers.length === 1, 'worker after acceptance');
  await sup.stop();
});

t.test('health check flips setWecUnreachable on that WEC\'s worker only', async (t) => {
  const { sup, workers, wecs, regs } = setup();
  sup.secretChanged('ADDED', secret('wec6', 'https://wec6.test:6443'));
  sup.secretChanged('ADDED', secret('wec7', 'https://wec7.test:6443'));
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
