// The edge is less trusted than the center, in the ITS: an agent identity holding exactly the
// shipped RBAC (charts/kubestellar-view/files/agent/its-rbac.yaml) cannot accept its own ManagedCluster, register another
// cluster or one pre-labelled into placements, relabel it or change its spec afterwards, nor read
// another cluster's mailbox; it writes its status. Where a hub grants agents more (OCM's own
// per-cluster role grants update), the ITS's admission policy (manifests/its/managedcluster-admission.yaml,
// installed by serve) still refuses acceptance without the accept right, and relabelling. The
// spaces' own agents run with identities of their own, bound by those manifests.
import t from 'tap';
import YAML from 'yaml';
import { kc, kcOk, uniqueName } from '../fixtures/spaces.js';
import { managedClusterObj, managedClusterYaml, shippedAgent } from '../fixtures/agent-identity.js';

const refused = (r: { status: number; stderr: string }) => (r.status !== 0 ? r.stderr : undefined);

t.test('an agent identity with the shipped RBAC cannot accept itself, register another cluster or pre-label itself; the hub admin accepts', async (t) => {
  const c = uniqueName('join');
  const agent = shippedAgent(t, c);
  t.teardown(() => { kc('its1', ['delete', 'managedcluster', `${c}-other`, '--ignore-not-found']); });

  const accepted = kc('its1', [...agent.as, 'create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: true }));
  t.match(refused(accepted), /HubAcceptsClient/, 'created accepted: refused, naming the field');
  t.notOk(managedClusterObj(c), 'no ManagedCluster was made');

  const labelled = kc('its1', [...agent.as, 'create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: false }, { tier: 'restricted' }));
  t.match(refused(labelled), /only as a request to join/, 'created with labels (what placement selects on): refused');
  const leased = kc('its1', [...agent.as, 'create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: false, leaseDurationSeconds: 86400 }));
  t.match(refused(leased), /only as a request to join/, 'created with its own lease duration: refused');
  const other = kc('its1', [...agent.as, 'create', '-f', '-'], managedClusterYaml(`${c}-other`, { hubAcceptsClient: false }));
  t.match(refused(other), /may register only its own cluster/, 'another cluster\'s name: refused');
  // Every agent is in group system:open-cluster-management:managed-clusters: it names no cluster.
  t.teardown(() => { kc('its1', ['delete', 'managedcluster', 'managed-clusters', '--ignore-not-found']); });
  const common = kc('its1', [...agent.as, 'create', '-f', '-'], managedClusterYaml('managed-clusters', { hubAcceptsClient: false }));
  t.match(refused(common), /may register only its own cluster/, 'a cluster named managed-clusters, the group every agent holds: refused');
  t.notOk(managedClusterObj('managed-clusters'), 'none was made');

  kcOk('its1', [...agent.as, 'create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: false }));
  t.equal(managedClusterObj(c)?.spec?.hubAcceptsClient, false, 'a request to join is created, not accepted');
  const self = kc('its1', [...agent.as, 'patch', 'managedcluster', c, '--type=merge', '-p', '{"spec":{"hubAcceptsClient":true}}']);
  t.ok(refused(self), 'accepting itself afterwards: refused');
  t.equal(managedClusterObj(c)?.spec?.hubAcceptsClient, false, 'still not accepted');

  kcOk('its1', ['patch', 'managedcluster', c, '--type=merge', '-p', '{"spec":{"hubAcceptsClient":true}}']);
  t.equal(managedClusterObj(c)?.spec?.hubAcceptsClient, true, 'the hub admin accepts it');
});

t.test('a cluster may join with the ManagedClusterSet label an OCM hub adds only where it may join that set (OCM\'s rule)', async (t) => {
  const c = uniqueName('clusterset');
  const agent = shippedAgent(t, c);
  const inSet = managedClusterYaml(c, { hubAcceptsClient: false }, { 'cluster.open-cluster-management.io/clusterset': 'default' });
  t.match(refused(kc('its1', [...agent.as, 'create', '-f', '-'], inSet)), /only as a request to join/, 'without the join right: refused');
  const role = `ksview-test-join:${c}`;
  const group = agent.as[agent.as.indexOf('--as-group') + 1] ?? agent.user;
  // (As YAML: kubectl create clusterrole refuses a resource the ITS does not serve, and ManagedClusterSets are OCM's.)
  kcOk('its1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role },
    rules: [{ apiGroups: ['cluster.open-cluster-management.io'], resources: ['managedclustersets/join'], resourceNames: ['default'], verbs: ['create'] }] }));
  kcOk('its1', ['create', 'clusterrolebinding', role, `--clusterrole=${role}`, agent.as.includes('--as-group') ? `--group=${group}` : `--user=${group}`]);
  t.teardown(() => { kc('its1', ['delete', 'clusterrolebinding,clusterrole', role, '--ignore-not-found']); });
  kcOk('its1', [...agent.as, 'create', '-f', '-'], inSet);
  t.equal(managedClusterObj(c)?.metadata?.labels?.['cluster.open-cluster-management.io/clusterset'], 'default', 'with it (as OCM\'s bootstrap identity has): created in the set');
});

t.test('with the shipped RBAC an agent cannot relabel its ManagedCluster, change its spec or read another mailbox; it writes its status', async (t) => {
  const c = uniqueName('relabel');
  const agent = shippedAgent(t, c);
  kcOk('its1', ['create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: true }, { name: c }));

  const label = kc('its1', [...agent.as, 'label', 'managedcluster', c, 'tier=restricted']);
  t.ok(refused(label), `relabelling refused: ${label.stderr.trim()}`);
  t.same(managedClusterObj(c)?.metadata?.labels, { name: c }, 'labels as the hub admin set them');
  const spec = kc('its1', [...agent.as, 'patch', 'managedcluster', c, '--type=merge', '-p', '{"spec":{"leaseDurationSeconds":86400}}']);
  t.ok(refused(spec), `spec change refused: ${spec.stderr.trim()}`);
  t.equal(managedClusterObj(c)?.spec?.leaseDurationSeconds, 60, 'lease duration unchanged');

  // (kubectl patch --subresource=status would GET the status first, which the agent never needs.)
  t.equal(kc('its1', [...agent.as, 'auth', 'can-i', 'patch', `managedclusters/${c}`, '--subresource=status']).stdout.trim(), 'yes', 'its status is its to write');
  t.equal(kc('its1', [...agent.as, 'auth', 'can-i', 'patch', 'managedclusters/wec2', '--subresource=status']).stdout.trim(), 'no', 'not another cluster\'s');

  for (const [what, args] of [['works of wec2', ['-n', 'wec2', 'get', 'manifestworks']], ['Secrets of its own mailbox', ['-n', c, 'get', 'secrets']],
    ['Secrets of wec2', ['-n', 'wec2', 'get', 'secrets']], ['wec2\'s ManagedCluster', ['get', 'managedcluster', 'wec2']]] as const) {
    const r = kc('its1', [...agent.as, ...args]);
    t.match(refused(r), /forbidden/i, `${what}: forbidden`);
  }
});

t.test('where a hub grants agents update (as OCM\'s per-cluster role does), admission still refuses relabelling, spec changes and acceptance without the accept right', async (t) => {
  const c = uniqueName('granted');
  const agent = shippedAgent(t, c);
  kcOk('its1', ['create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: false }, { name: c }));
  const role = `ksview-test-update:${c}`;
  const bystander = `${c}-bystander`;
  const group = agent.as[agent.as.indexOf('--as-group') + 1] ?? agent.user;
  kcOk('its1', ['create', 'clusterrole', role, '--verb=get,update,patch', '--resource=managedclusters.cluster.open-cluster-management.io', `--resource-name=${c}`]);
  kcOk('its1', ['create', 'clusterrolebinding', role, `--clusterrole=${role}`, agent.as.includes('--as-group') ? `--group=${group}` : `--user=${group}`, `--user=${bystander}`]);
  t.teardown(() => { kc('its1', ['delete', 'clusterrolebinding,clusterrole', role, '--ignore-not-found']); });

  const label = kc('its1', [...agent.as, 'label', 'managedcluster', c, 'tier=restricted']);
  t.match(refused(label), /may not change the labels/, 'an agent relabelling itself: refused by admission');
  const spec = kc('its1', [...agent.as, 'patch', 'managedcluster', c, '--type=merge', '-p', '{"spec":{"leaseDurationSeconds":86400}}']);
  t.match(refused(spec), /may not change the labels, annotations or spec/, 'an agent changing its spec: refused by admission');
  const accept = kc('its1', [...agent.as, 'patch', 'managedcluster', c, '--type=merge', '-p', '{"spec":{"hubAcceptsClient":true}}']);
  t.match(refused(accept), /HubAcceptsClient/, 'an agent accepting itself: refused by admission');
  const other = kc('its1', ['--as', bystander, 'patch', 'managedcluster', c, '--type=merge', '-p', '{"spec":{"hubAcceptsClient":true}}']);
  t.match(refused(other), /HubAcceptsClient/, 'anyone else with update but not the accept right: refused (OCM\'s rule)');
  kcOk('its1', ['--as', bystander, 'label', 'managedcluster', c, 'owner=bystander']);
  t.equal(managedClusterObj(c)?.metadata?.labels?.owner, 'bystander', 'a user the hub lets edit clusters still labels them');
  t.equal(managedClusterObj(c)?.spec?.hubAcceptsClient, false, 'not accepted');
  t.notOk(managedClusterObj(c)?.metadata?.labels?.tier, 'not relabelled');
});

t.test('the spaces\' agents run as identities of their own: the wec1 agent cannot relabel wec1; the push agent reads only the Secrets it is granted', async (t) => {
  const whoami = YAML.parse(kcOk('its1-agent-wec1', ['auth', 'whoami', '-o', 'yaml'])) as { status: { userInfo: { username: string; groups: string[] } } };
  t.equal(whoami.status.userInfo.username, 'system:open-cluster-management:wec1:ksview-agent', 'OCM\'s name for the agent of wec1');
  t.ok(whoami.status.userInfo.groups.includes('system:open-cluster-management:wec1'), 'in the group the shipped RBAC binds');
  const label = kc('its1-agent-wec1', ['label', 'managedcluster', 'wec1', 'tier=restricted']);
  t.ok(refused(label), 'the wec1 agent cannot relabel wec1');
  t.notOk(managedClusterObj('wec1')?.metadata?.labels?.tier);
  t.match(refused(kc('its1-agent-wec1', ['-n', 'wec2', 'get', 'manifestworks'])), /forbidden/i, 'nor read wec2\'s mailbox');

  const can = (args: string[]) => kc('its1-agent-push', ['auth', 'can-i', ...args]).stdout.trim();
  t.equal(can(['get', 'secret/wec2-kubeconfig', '-n', 'wec2']), 'yes', 'the push agent reads the Secret of the cluster it serves');
  t.equal(can(['list', 'secrets', '-A']), 'no', 'no Secret cluster-wide');
  t.equal(can(['get', 'secret/wec1-kubeconfig', '-n', 'wec1']), 'no', 'none in a mailbox it was not given');
  t.equal(can(['get', 'secret/other', '-n', 'wec2']), 'no', 'no other Secret of that mailbox');
  t.equal(can(['create', 'managedclusters']), 'no', 'it creates no ManagedCluster');
  t.equal(can(['patch', 'managedclusters']), 'no', 'nor relabels one');
});
