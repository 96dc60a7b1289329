// The fleet lease ConfigMap kube-system/kubestellar-fleet in a WEC: claimed when free, renewed when
// ours, refused while another fleet holds it, taken over once expired.
import t from 'tap';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { claimFleetLease } from '../../src/agent/registration/fleet-lease.js';

const CM = '/api/v1/namespaces/kube-system/configmaps/kubestellar-fleet';
const T0 = Date.parse('2026-01-01T00:00:00Z');

t.test('claim, renew, refuse, take over after expiry', async (t) => {
  const wec = fakeCluster('https://wec.test:6443');
  t.same(await claimFleetLease(wec.up, { fleetID: 'a', holderIdentity: 'agent-a', durationSeconds: 60, now: T0 }), { held: true, tookOver: false });
  t.match(wec.get(CM), { data: { fleetID: 'a', holderIdentity: 'agent-a', renewTime: '2026-01-01T00:00:00.000Z', leaseDurationSeconds: '60' } });

  t.same(await claimFleetLease(wec.up, { fleetID: 'a', holderIdentity: 'agent-a2', now: T0 + 10_000 }), { held: true, tookOver: false }, 'same fleet renews (even a restarted holder)');
  t.match(wec.get(CM), { data: { renewTime: '2026-01-01T00:00:10.000Z', holderIdentity: 'agent-a2' } });

  const refused = await claimFleetLease(wec.up, { fleetID: 'b', holderIdentity: 'agent-b', now: T0 + 30_000 });
  t.match(refused, { held: false, holder: { fleetID: 'a', holderIdentity: 'agent-a2' }, expiresAt: T0 + 70_000 }, 'held by fleet a: refused');
  t.match(wec.get(CM), { data: { fleetID: 'a' } }, 'refusal writes nothing');

  t.same(await claimFleetLease(wec.up, { fleetID: 'b', holderIdentity: 'agent-b', now: T0 + 70_001 }), { held: true, tookOver: true }, 'expired: taken over');
  t.match(wec.get(CM), { data: { fleetID: 'b', holderIdentity: 'agent-b' } });
  const put = wec.calls().filter((c) => c.method === 'PUT').at(-1)!;
  t.ok((put.body as any).metadata.resourceVersion, 'takeover carries the resourceVersion read (optimistic concurrency)');
});

t.test('an unreachable WEC is an error, not a claim', async (t) => {
  const wec = fakeCluster('https://wec.test:6443');
  wec.fail.push({ match: () => true, status: 'down' });
  await t.rejects(claimFleetLease(wec.up, { fleetID: 'a', holderIdentity: 'x' }));
});
