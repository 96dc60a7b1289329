// The agents of the local spaces: their command lines, each with its own ITS identity (never the
// admin kubeconfig), the inventory written as the hub admin (clusters, mailboxes, Secrets, and the
// agents' shipped RBAC bound to those identities), healing and process names.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { AGENT_NODE_FLAGS, agentCommands, inventoryObjects } from '../../src/spaces/agents.js';
import { agentKubeconfigPath, ensureAgentIdentities, LOCAL_FLEET_ID, pullAgentIdentity, pushAgentIdentity } from '../../src/spaces/agent-identities.js';
import { ensureSpacePki } from '../../src/spaces/space-pki.js';
import { spacesLayout } from '../../src/spaces/layout.js';
import { healPlan } from '../../src/spaces/launcher.js';
import { parseProcessName, processNames } from '../../src/spaces/process-names.js';
import type { ProcessRecord } from '../../src/spaces/processes.js';

const layout = spacesLayout({ dir: '/state', portBase: 30000, wecs: 3 });
const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

t.test('a pull agent for wec1 with its own kubeconfigs and port', async (t) => {
  const [pull] = agentCommands(layout, '/repo/bin/ksview.js');
  t.equal(pull!.name, 'wec1/ksview-agent');
  t.same(pull!.args.slice(0, AGENT_NODE_FLAGS.length + 2), [...AGENT_NODE_FLAGS, '/repo/bin/ksview.js', 'agent'], 'node flags, then the command');
  t.ok(AGENT_NODE_FLAGS.every((f) => f.startsWith('--')), 'flags of node itself');
  t.notOk(pull!.args.includes('--push'));
  t.equal(after(pull!.args, '--cluster'), 'wec1');
  t.equal(after(pull!.args, '--its-kubeconfig'), '/state/its1/agents/agent-wec1.kubeconfig', 'its own ITS identity, not the admin\'s');
  t.equal(after(pull!.args, '--wec-kubeconfig'), '/state/wec1/kubeconfig');
  t.equal(after(pull!.args, '--port'), '30006');
  t.equal(pull!.delegate.name, 'wec1', 'its endpoints delegate to its WEC, as kubelet\'s');
  t.equal(after(pull!.args, '--tls-cert-file'), '/state/wec1/pki/ksview-agent-serving.crt', 'a serving certificate of wec1\'s CA');
  t.equal(after(pull!.args, '--tls-private-key-file'), '/state/wec1/pki/ksview-agent-serving.key');
});

t.test('one push agent beside its1 for every other WEC', async (t) => {
  const cmds = agentCommands(layout, '/repo/bin/ksview.js');
  t.equal(cmds.length, 2);
  const push = cmds[1]!;
  t.equal(push.name, 'its1/ksview-agent-push');
  t.ok(push.args.includes('--push'));
  t.equal(after(push.args, '--its-kubeconfig'), '/state/its1/agents/agent-push.kubeconfig', 'its own ITS identity, not the admin\'s');
  t.equal(after(push.args, '--fleet-id'), LOCAL_FLEET_ID);
  t.equal(after(push.args, '--port'), '30007');
  t.notOk(push.args.includes('--wec-kubeconfig'), 'WECs come from Secrets in their mailboxes');
  t.same(push.wecs, ['wec2', 'wec3']);
  t.equal(push.delegate.name, 'its1', 'its endpoints delegate to the ITS');
  t.equal(after(push.args, '--tls-cert-file'), '/state/its1/pki/ksview-agent-push-serving.crt');
  t.equal(agentCommands(spacesLayout({ dir: '/s', portBase: 30000, wecs: 1 })).length, 1, 'one WEC: no push agent');
});

t.test('inventory: every WEC accepted and labelled, a kubeconfig Secret only in pushed mailboxes', async (t) => {
  const objs = inventoryObjects(layout, (s) => `kubeconfig of ${s.name}`);
  const mcs = objs.filter((o) => o.path.includes('/managedclusters/')).map((o) => o.obj as { metadata: { name: string; labels: Record<string, string> }; spec: { hubAcceptsClient: boolean } });
  t.same(mcs.map((m) => m.metadata.name), ['wec1', 'wec2', 'wec3']);
  t.ok(mcs.every((m) => m.spec.hubAcceptsClient && m.metadata.labels['location-group'] === 'edge' && m.metadata.labels.name === m.metadata.name));
  t.ok(objs.some((o) => o.path === '/api/v1/namespaces/wec1'), 'mailbox namespaces');
  const secrets = objs.filter((o) => o.path.includes('/secrets/')).map((o) => o.obj as { metadata: { name: string; namespace: string }; stringData: { kubeconfig: string } });
  t.same(secrets.map((s) => `${s.metadata.namespace}/${s.metadata.name}`), ['wec2/wec2-kubeconfig', 'wec3/wec3-kubeconfig']);
  t.equal(secrets[0]!.stringData.kubeconfig, 'kubeconfig of wec2');
  // Order matters: a Secret's namespace exists before it.
  t.ok(objs.findIndex((o) => o.path === '/api/v1/namespaces/wec2') < objs.findIndex((o) => o.path.includes('/secrets/wec2-kubeconfig')));
});

t.test('inventory: the agents\' shipped RBAC, bound to their own identities', async (t) => {
  type O = { path: string; obj: any };
  const objs = inventoryObjects(layout, (s) => `kubeconfig of ${s.name}`) as O[];
  const find = (kind: string, name: string, ns?: string) => objs.find((o) => o.obj.kind === kind && o.obj.metadata.name === name && o.obj.metadata.namespace === ns);
  const pull = find('ClusterRoleBinding', 'ksview-agent:wec1')!;
  t.equal(pull.path, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/ksview-agent:wec1');
  t.same(pull.obj.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:open-cluster-management:wec1' }], 'OCM\'s per-cluster group, as shipped');
  t.ok(pullAgentIdentity('wec1').groups.includes(pull.obj.subjects[0].name), 'which the pull agent\'s certificate carries');
  const mcRules = find('ClusterRole', 'ksview-agent:wec1')!.obj.rules as any[];
  t.notOk(mcRules.some((r) => r.resources.includes('managedclusters') && r.verbs.some((v: string) => ['update', 'patch'].includes(v))), 'no update of its ManagedCluster');
  t.ok(find('Role', 'ksview-agent', 'wec1'), 'its mailbox Role');
  t.notOk(find('Role', 'ksview-agent', 'wec2'), 'pushed WECs have no pull agent Role');

  const push = find('ClusterRoleBinding', 'ksview-agent-push')!;
  t.same(push.obj.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: pushAgentIdentity().user }], 'the push agent\'s own user');
  t.notOk((find('ClusterRole', 'ksview-agent-push')!.obj.rules as any[]).some((r) => r.resources.includes('secrets')), 'no Secret cluster-wide');
  for (const wec of ['wec2', 'wec3']) {
    const role = find('Role', 'ksview-agent-push-kubeconfig', wec)!;
    t.same(role.obj.rules, [{ apiGroups: [''], resources: ['secrets'], resourceNames: [`${wec}-kubeconfig`], verbs: ['get', 'list', 'watch'] }], `${wec}: its one Secret`);
    t.same(find('RoleBinding', 'ksview-agent-push-kubeconfig', wec)!.obj.subjects, push.obj.subjects);
    t.ok(objs.indexOf(role) > objs.findIndex((o) => o.path === `/api/v1/namespaces/${wec}`), 'after its mailbox');
  }
  t.notOk(find('Role', 'ksview-agent-push-kubeconfig', 'wec1'), 'the pulled WEC\'s Secret is not the push agent\'s');
  t.notOk(JSON.stringify(objs).includes('CLUSTER_NAME'), 'every placeholder replaced');
});

t.test('each agent\'s ITS identity is a client certificate of its1\'s CA, made once', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-identities-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const l = spacesLayout({ dir, portBase: 30000, wecs: 2 });
  const its = l.spaces.find((s) => s.name === 'its1')!;
  await ensureSpacePki('its1', its.dir);
  await ensureAgentIdentities(l);
  const certOf = (file: string) => {
    const kc = YAML.parse(readFileSync(file, 'utf8'));
    return { kc, cert: new X509Certificate(Buffer.from(kc.users[0].user['client-certificate-data'], 'base64')) };
  };
  const pullFile = agentKubeconfigPath(l, pullAgentIdentity('wec1'));
  const { kc, cert } = certOf(pullFile);
  t.equal(statSync(pullFile).mode & 0o777, 0o600, 'readable by its owner only');
  t.equal(kc.clusters[0].cluster.server, 'https://127.0.0.1:30020', 'its1');
  t.equal(cert.subject, 'O=system:open-cluster-management:wec1\nO=system:open-cluster-management:managed-clusters\nCN=system:open-cluster-management:wec1:ksview-agent');
  t.ok(cert.checkIssued(new X509Certificate(readFileSync(path.join(its.dir, 'pki', 'ca.crt')))), 'issued by its1\'s CA');
  t.equal(certOf(agentKubeconfigPath(l, pushAgentIdentity())).cert.subject, `CN=${pushAgentIdentity().user}`);
  await ensureAgentIdentities(l);
  t.equal(certOf(pullFile).cert.serialNumber, cert.serialNumber, 'up again reuses it');
});

t.test('healing: dead recorded processes are started again, live ones reused', async (t) => {
  const rec = (name: string, pid: number): ProcessRecord => ({ name, pid, binary: '/b', log: '/l' });
  const recorded = [rec('etcd', 1), rec('its1/kube-apiserver', 2), rec('wds1/kube-apiserver', 3), rec('wec1/ksview-agent', 4)];
  const dead = new Set([2, 4]);
  const plan = healPlan(recorded, (r) => !dead.has(r.pid));
  t.same(plan.reuse.map((r) => r.name), ['etcd', 'wds1/kube-apiserver']);
  t.same(plan.restart, ['its1/kube-apiserver', 'wec1/ksview-agent']);
  t.same(healPlan(recorded, () => true).restart, [], 'all alive: nothing to restart (idempotent up)');
});

t.test('spaces stop names: every process, and one clear line for an unknown one', async (t) => {
  const names = processNames(spacesLayout({ dir: '/s', portBase: 30000, wecs: 2 }));
  for (const n of ['etcd', 'its1/kube-apiserver', 'wec1/kwok', 'wec2/kube-scheduler', 'wds1/ksview-serve', 'wec1/ksview-agent', 'its1/ksview-agent-push']) {
    t.equal(parseProcessName(n, names), n);
  }
  t.notOk(names.includes('wds1/kube-scheduler'), 'no scheduler in a WDS');
  t.throws(() => parseProcessName('its1/kube-scheduler', names), /^no process 'its1\/kube-scheduler' in these spaces; one of: etcd, /);
  t.throws(() => parseProcessName('its1', names), { name: 'UserError' });
  const two = processNames(spacesLayout({ dir: '/s', portBase: 30000, wecs: 2, wdss: 2 }));
  for (const n of ['wds2/kube-apiserver', 'wds2/kube-controller-manager', 'wds2/ksview-serve']) t.ok(two.includes(n), `--wdss 2: ${n}`);
  t.ok(two.indexOf('wds1/ksview-serve') < two.indexOf('wds2/ksview-serve'), 'wds1\'s serve first');
});
