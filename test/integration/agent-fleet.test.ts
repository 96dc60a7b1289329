// Push mode's fleet lease, on the local spaces: a WEC whose kube-system/kubestellar-fleet ConfigMap
// names another fleet is refused by the spaces' push agent — its ManagedCluster says so and the
// works in its mailbox are not applied — until that lease is gone, when the agent takes the WEC and
// applies them. The WEC here is wec1 reached under a cluster name of the test's own (a Secret
// `<cluster>-kubeconfig` in a new mailbox, readable by the push agent as the hub admin grants it),
// so the spaces' own clusters are untouched.
import t from 'tap';
import { FLEET_LEASE_NAME, FLEET_LEASE_NAMESPACE } from '../../src/agent/registration/fleet-lease.js';
import { REASON_HELD_BY_ANOTHER_FLEET } from '../../src/agent/registration/cluster-registration.js';
import { managedCluster, pushMailboxAccess } from '../fixtures/inventory.js';
import { kc, kcOk, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { condition, configMap, getWork, isTrue, live, writeWork } from '../fixtures/agent.js';

const FLEET_OF_SPACES = 'ksview-local-spaces';

t.test('a WEC held by another fleet is refused with a condition saying so, and taken once that lease is gone', async (t) => {
  const cluster = uniqueName('fleet');
  const cmName = uniqueName('fleet-cm');
  const otherFleet = uniqueName('other-fleet');
  // Another fleet's claim on wec1, renewed now for an hour.
  kcOk('wec1', ['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: FLEET_LEASE_NAME, namespace: FLEET_LEASE_NAMESPACE },
    data: { fleetID: otherFleet, holderIdentity: 'someone-else', renewTime: new Date().toISOString(), leaseDurationSeconds: '3600' },
  }));
  t.teardown(() => { kc('wec1', ['-n', FLEET_LEASE_NAMESPACE, 'delete', 'configmap', FLEET_LEASE_NAME, '--ignore-not-found']); });
  // Accepted by the hub, so the refusal alone is what keeps the agent from applying.
  managedCluster(t, cluster, { name: cluster });
  pushMailboxAccess(t, cluster);
  const wec1Kubeconfig = kcOk('wec1', ['config', 'view', '--minify', '--flatten', '--context', 'wec1']);
  kcOk('its1', ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${cluster}-kubeconfig`, namespace: cluster }, stringData: { kubeconfig: wec1Kubeconfig } }));
  // Teardowns run last-registered first: the work (and its finalizer) goes while the agent still serves the cluster.
  t.teardown(() => { kc('its1', ['-n', cluster, 'delete', 'secret', `${cluster}-kubeconfig`, '--ignore-not-found']); });
  writeWork(t, cluster, 'cm', [configMap('default', cmName, { a: '1' })]);

  const refused = await waitUntil('the ManagedCluster to say it is held by another fleet', () => {
    const c = condition(live('its1', ['managedcluster', cluster]), 'ManagedClusterConditionAvailable');
    return c?.reason === REASON_HELD_BY_ANOTHER_FLEET ? c : undefined;
  }, 60_000);
  t.equal(refused.status, 'False', 'Available is False');
  t.match(refused.message, otherFleet, 'the message names the fleet that holds the WEC');
  t.notOk(isTrue(getWork(cluster, 'cm'), 'Applied'), 'the work is not applied');
  t.notOk(live('wec1', ['-n', 'default', 'configmap', cmName]), 'nothing of the work is in the WEC');
  t.equal(live('wec1', ['-n', FLEET_LEASE_NAMESPACE, 'configmap', FLEET_LEASE_NAME])?.data?.fleetID, otherFleet, 'the other fleet\'s lease is left as it was');

  // The other fleet lets go: the agent takes the WEC at its next claim and applies the work.
  kcOk('wec1', ['-n', FLEET_LEASE_NAMESPACE, 'delete', 'configmap', FLEET_LEASE_NAME]);
  await waitUntil('the work applied in wec1', () => live('wec1', ['-n', 'default', 'configmap', cmName]), 60_000);
  t.equal(live('wec1', ['-n', FLEET_LEASE_NAMESPACE, 'configmap', FLEET_LEASE_NAME])?.data?.fleetID, FLEET_OF_SPACES, 'the lease now names the spaces\' fleet');
  await waitUntil('Applied on the work', () => isTrue(getWork(cluster, 'cm'), 'Applied'), 30_000);
  const available = await waitUntil('the ManagedCluster Available again', () => {
    const c = condition(live('its1', ['managedcluster', cluster]), 'ManagedClusterConditionAvailable');
    return c?.status === 'True' ? c : undefined;
  }, 60_000);
  t.not(available.reason, REASON_HELD_BY_ANOTHER_FLEET, 'no longer refused');
});
