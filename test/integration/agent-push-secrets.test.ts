// What the push agent reads and runs. Its `<cluster>-kubeconfig` Secrets are the fleet's input, not
// the operator's: one whose user runs a credential plugin is refused — the ManagedCluster's Available
// condition says why (reason KubeconfigRefused) and the command never runs — and Secrets are read
// only in the mailboxes of clusters the hub accepts (and only where the hub admin let the agent
// read them): a Secret in another namespace, or of a cluster not accepted, is never read.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { managedClusterObj } from '../fixtures/agent-identity.js';
import { condition } from '../fixtures/agent.js';
import { pushMailboxAccess, pushServedCluster } from '../fixtures/inventory.js';
import { kc, kcOk, layout, uniqueName, waitUntil } from '../fixtures/spaces.js';

const AVAILABLE = 'ManagedClusterConditionAvailable';
/** wec2's kubeconfig (served by the spaces' push agent already, so its fleet lease is ours). */
const wec2Kubeconfig = () => YAML.parse(kcOk('wec2', ['config', 'view', '--minify', '--flatten', '--context', 'wec2'])) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const pushAgentLog = () => readFileSync(path.join(layout.dir, 'logs', 'its1-ksview-agent-push.log'), 'utf8');

t.test('a kubeconfig Secret whose user runs a command is refused: the ManagedCluster says why, and the command never runs', async (t) => {
  const cluster = uniqueName('exec');
  const marker = path.join(os.tmpdir(), `ksview-exec-marker-${cluster}`);
  t.teardown(() => rmSync(marker, { force: true }));
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec' } });
  const kubeconfig = wec2Kubeconfig();
  kubeconfig.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh', args: ['-c', `touch ${marker}; echo '${credential}'`], interactiveMode: 'Never' } };
  pushServedCluster(t, cluster, YAML.stringify(kubeconfig));

  const refused = await waitUntil('the ManagedCluster to say its kubeconfig is refused', () => {
    const c = condition(managedClusterObj(cluster), AVAILABLE);
    return c?.reason === 'KubeconfigRefused' ? c : undefined;
  }, 60_000);
  t.equal(refused.status, 'False', 'Available is False');
  t.match(refused.message, /exec credential plugin \(command "\/bin\/sh"\)/, 'the message names the plugin');
  t.match(refused.message, /--insecure-kubeconfig-exec/, 'and the operator flag that would allow it');
  t.notOk(existsSync(marker), 'the command never ran');
});

t.test('kubeconfig Secrets outside the mailboxes of accepted clusters are never read', async (t) => {
  const stray = uniqueName('stray');
  const pending = uniqueName('pending');
  const served = uniqueName('served');
  const kubeconfig = YAML.stringify(wec2Kubeconfig());
  const secret = (ns: string) => YAML.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${ns}-kubeconfig`, namespace: ns }, stringData: { kubeconfig } });
  // A namespace that is no mailbox, with a Secret named like a cluster's.
  kcOk('its1', ['create', 'namespace', stray]);
  t.teardown(() => { kc('its1', ['delete', 'namespace', stray, '--wait=false', '--ignore-not-found']); kc('its1', ['delete', 'managedcluster', stray, '--ignore-not-found']); });
  kcOk('its1', ['apply', '-f', '-'], secret(stray));
  // A cluster asking to join, not accepted, whose Secret the agent was even allowed to read.
  kcOk('its1', ['create', 'namespace', pending]);
  t.teardown(() => { kc('its1', ['delete', 'namespace', pending, '--wait=false', '--ignore-not-found']); kc('its1', ['delete', 'managedcluster', pending, '--ignore-not-found']); });
  pushMailboxAccess(t, pending);
  kcOk('its1', ['apply', '-f', '-'], secret(pending));
  kcOk('its1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: pending }, spec: { hubAcceptsClient: false } }));
  // After them, an accepted cluster: once it is served, the agent has seen the others' Secrets if it ever would.
  pushServedCluster(t, served, kubeconfig);
  await waitUntil('the accepted cluster served (Joined)', () => condition(managedClusterObj(served), 'ManagedClusterJoined')?.status === 'True', 60_000);

  t.equal(kc('its1-agent-push', ['auth', 'can-i', 'get', `secret/${stray}-kubeconfig`, '-n', stray]).stdout.trim(), 'no', 'the push agent may not read the stray Secret');
  t.notOk(managedClusterObj(stray), 'no ManagedCluster registered for the stray Secret');
  t.notOk(condition(managedClusterObj(pending), 'ManagedClusterJoined'), 'the cluster not accepted is not joined');
  const log = pushAgentLog();
  t.notOk(log.includes(`[${stray}]`), 'the agent never mentions the stray Secret');
  t.notOk(log.includes(`[${pending}]`), 'nor the cluster not accepted');

  // The hub admin accepts it: now it is served.
  kcOk('its1', ['patch', 'managedcluster', pending, '--type=merge', '-p', '{"spec":{"hubAcceptsClient":true}}']);
  await waitUntil('the cluster served once accepted (Joined)', () => condition(managedClusterObj(pending), 'ManagedClusterJoined')?.status === 'True', 60_000);
  t.pass('served once accepted');
});
