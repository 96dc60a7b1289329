// The agent's endpoints, answered through app.inject; and the pull wiring: readiness says why it is
// false (ITS credentials rejected, cluster not accepted), the worker starts only after acceptance.
import t from 'tap';
import { buildEndpoints } from '../../src/agent/endpoints.js';
import { createAgentMetrics } from '../../src/agent/metrics.js';
import { runPullAgent } from '../../src/agent/agent.js';
import type { ClusterWorker, PlacedResource } from '../../src/agent/contract.js';
import type { RegistrationLike } from '../../src/agent/worker-factory.js';
import type { RegistrationOptions } from '../../src/agent/registration.js';
import { fakeKube } from '../fixtures/agent-fake-kube.js';

const placed: PlacedResource[] = [
  { cluster: 'wec1', work: 'w1', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'n', name: 'ok', ready: true, reason: '' },
  { cluster: 'wec1', work: 'w2', group: '', version: 'v1', kind: 'ConfigMap', namespace: 'n', name: 'bad', ready: false, reason: 'AppliedManifestFailed: conflict with kubectl' },
];

async function until(cond: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('healthz, readyz, metrics, federatedresources', async (t) => {
  const metrics = createAgentMetrics();
  metrics.applies.inc({ cluster: 'wec1', outcome: 'applied' });
  let problems: string[] = ['ITS https://its rejects the kubeconfig\'s credentials (401 Unauthorized): wrong or expired'];
  const app = buildEndpoints({ registry: metrics.registry, readiness: () => problems, placed: () => placed });
  t.teardown(() => app.close());
  t.equal((await app.inject('/healthz')).statusCode, 200);
  const notReady = await app.inject('/readyz');
  t.equal(notReady.statusCode, 503);
  t.match(notReady.body, /401 Unauthorized/);
  problems = [];
  t.equal((await app.inject('/readyz')).body, 'ok');
  const m = await app.inject('/metrics');
  t.match(m.body, /ksview_agent_applies_total\{cluster="wec1",outcome="applied"\} 1/);
  t.same(JSON.parse((await app.inject('/federatedresources')).body).items, placed);
  t.same(JSON.parse((await app.inject('/federatedresources/notready')).body).items, [placed[1]]);
});

t.test('pull agent: worker after acceptance, readiness reasons, close', async (t) => {
  const its = fakeKube('https://its.test:6443');
  const wec = fakeKube('https://wec1.test:6443');
  wec.raw.set('/readyz', { status: 200, body: 'ok' });
  its.raw.set('/apis/cluster.open-cluster-management.io/v1/managedclusters/wec1', { status: 200, body: {} });
  let reg: RegistrationLike & { o: RegistrationOptions; accepted: boolean } | undefined;
  const actions: string[] = [];
  const agent = await runPullAgent({
    its: its.up, itsServer: 'https://its.test:6443', wec: wec.up, cluster: 'wec1', agentID: 'a', metrics: createAgentMetrics(),
    log: () => {}, probeMs: 20,
    createWorker: (o) => ({
      cluster: o.cluster, start: async () => { actions.push('start'); }, stop: async () => { actions.push('stop'); },
      ready: () => true, setWecUnreachable: (r: string | undefined) => { actions.push(`unreachable:${r ?? ''}`); }, placed: () => placed,
    }) as ClusterWorker,
    createRegistration: (o) => (reg = {
      o, accepted: false, itsError: undefined, start() {}, async stop() {}, isAccepted() { return this.accepted; },
      setWecUnreachable() {}, setHeldByAnotherFleet() {},
    }),
  });
  t.teardown(() => agent.close());
  await until(() => !agent.readiness().some((r) => /not checked/.test(r)), 'first probes');
  t.match(agent.readiness(), [/not accepted by the hub/]);
  t.same(actions, [], 'no worker before acceptance');
  t.same(JSON.parse((await agent.app.inject('/federatedresources')).body).items, []);
  reg!.accepted = true;
  reg!.o.onAccepted(true);
  await until(() => actions.includes('start'), 'worker started');
  t.same(agent.readiness(), []);
  t.equal(JSON.parse((await agent.app.inject('/federatedresources/notready')).body).items.length, 1);

  wec.fail.push({ match: () => true, status: 401 });
  await until(() => agent.readiness().length > 0, 'WEC credentials rejected');
  t.match(agent.readiness(), [/WEC .*401 Unauthorized/]);
  t.equal((await agent.app.inject('/readyz')).statusCode, 503);
  await until(() => actions.some((a) => /^unreachable:.*401/.test(a)), 'worker told the WEC is unreachable');
  await agent.close();
  t.equal(actions[0], 'start');
  t.equal(actions.at(-1), 'stop');
});
