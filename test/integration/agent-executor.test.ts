// The executor of a work, the WEC side (docs/agent.md, "Executors"), tried as an OCM user would: a ManifestWork
// written by hand into a WEC's mailbox of its1, naming as executor a ServiceAccount of that WEC that
// may write only in its own namespace (`edit` bound there), carrying a Deployment and a ConfigMap in
// that namespace and a ClusterRoleBinding making mallory cluster-admin. The agents `ksview spaces
// up` runs (wec1's pull agent, and the push agent for wec2) apply it as that ServiceAccount: the
// namespaced objects land, the binding is refused with the WEC's own Forbidden words on its
// manifest condition (exactly what the WEC answers the same request made natively by that
// ServiceAccount), mallory gains nothing, and deleting the work removes what it applied. The shipped RBAC (chart file agent/pull-rbac.yaml) lets the agent impersonate
// ServiceAccounts and nothing more.
import t from 'tap';
import YAML from 'yaml';
import { readFileSync } from 'node:fs';
import { kc, kcOk, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { configMap, deployment, getWork, live, manifestStatus, writeWork, type Obj } from '../fixtures/agent.js';
import { FIELD_MANAGER, malloryAdmin, ssaConfigs, teamExecutor } from '../fixtures/executor.js';
import { chartFile } from '../../src/util/chart-files.js';


const manifestCond = (m: Obj | undefined, type: string): Obj | undefined => (m?.conditions as Obj[] | undefined)?.find((c) => c.type === type);

// wec1 is served by its pull agent, wec2 by the push agent beside its1: the same engine, both fronts.
for (const [CLUSTER, mode] of [['wec1', 'pull'], ['wec2', 'push']] as const) {
  t.test(`${mode} (${CLUSTER}): a work with an executor allowed only in its namespace: the Deployment applied, the ClusterRoleBinding refused in the WEC's words, the rest applied`, async (t) => {
    const { ns, sa, user } = teamExecutor(t, CLUSTER);
    const crbName = uniqueName('mallory-admin');
    t.teardown(() => { kc(CLUSTER, ['delete', 'clusterrolebinding', crbName, '--ignore-not-found']); });
    t.equal(kc(CLUSTER, ['auth', 'can-i', '*', '*', '--as', 'mallory']).stdout.trim(), 'no', `mallory holds nothing in ${CLUSTER}`);

    // What the WEC answers the same binding written natively by the executor.
    const native = kc(CLUSTER, ['apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, '--as', user, '-f', '-'], JSON.stringify(malloryAdmin(crbName)));
    t.not(native.status, 0, `natively, ${CLUSTER} refuses the executor the binding`);
    const nativeWords = native.stderr.trim().replace(/^Error from server \(Forbidden\): (error when creating "STDIN": )?/, '');
    t.match(nativeWords, `is forbidden: User "${user}" cannot patch resource "clusterrolebindings"`, `${CLUSTER}'s Forbidden words`);

    const work = uniqueName('mw-exec');
    const manifests = [malloryAdmin(crbName), deployment(ns, 'web'), configMap(ns, 'settings', { color: 'blue' })];
    writeWork(t, CLUSTER, work, manifests, {
      executor: { subject: { type: 'ServiceAccount', serviceAccount: { namespace: ns, name: sa } } },
      manifestConfigs: ssaConfigs(manifests),
    });

    await waitUntil(`the Deployment and the ConfigMap in ${CLUSTER}`, () => live(CLUSTER, ['-n', ns, 'deployment', 'web']) && live(CLUSTER, ['-n', ns, 'configmap', 'settings']), 90_000);
    const deploy = live(CLUSTER, ['-n', ns, 'deployment', 'web', '--show-managed-fields'])!;
    t.ok((deploy.metadata.managedFields as Obj[]).some((f) => f.manager === FIELD_MANAGER && f.operation === 'Apply'), 'applied server-side under the WDS\'s field manager');

    const refused = await waitUntil('the ClusterRoleBinding\'s manifest condition Applied=False', () => {
      const m = manifestStatus(getWork(CLUSTER, work), 'ClusterRoleBinding', crbName);
      return manifestCond(m, 'Applied')?.status === 'False' ? m : undefined;
    }, 90_000);
    const applied = manifestCond(refused, 'Applied')!;
    t.equal(applied.reason, 'AppliedManifestFailed');
    t.equal(applied.message, `Failed to apply manifest: ${nativeWords}`, `the manifest condition carries ${CLUSTER}'s own Forbidden message`);
    t.notOk(live(CLUSTER, ['clusterrolebinding', crbName]), `no ClusterRoleBinding in ${CLUSTER}`);
    t.equal(kc(CLUSTER, ['auth', 'can-i', '*', '*', '--as', 'mallory']).stdout.trim(), 'no', `mallory still holds nothing in ${CLUSTER}`);

    const w = await waitUntil('the namespaced manifests Applied=True', () => {
      const got = getWork(CLUSTER, work);
      return ['Deployment/web', 'ConfigMap/settings'].every((k) => manifestCond(manifestStatus(got, k.split('/')[0]!, k.split('/')[1]!), 'Applied')?.status === 'True') ? got : undefined;
    }, 90_000);
    t.equal((w.status.conditions as Obj[]).find((c) => c.type === 'Applied')?.status, 'False', 'the work as a whole is not Applied (one manifest failed), as OCM reports it');

    kcOk('its1', ['-n', CLUSTER, 'delete', 'manifestwork', work, '--wait=false']);
    await waitUntil(`what the work applied is gone from ${CLUSTER}`, () => !live(CLUSTER, ['-n', ns, 'deployment', 'web']) && !live(CLUSTER, ['-n', ns, 'configmap', 'settings']), 90_000);
    await waitUntil('the work gone (its finalizer released)', () => !getWork(CLUSTER, work), 60_000);
    t.pass('deleted with the work');
  });
}

t.test('a work without executor keeps the agent\'s rights (the behaviour before executors)', async (t) => {
  const ns = uniqueName('noexec');
  t.teardown(() => { kc('wec1', ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']); });
  const crbName = uniqueName('noexec-view');
  t.teardown(() => { kc('wec1', ['delete', 'clusterrolebinding', crbName, '--ignore-not-found']); });
  const binding = { ...malloryAdmin(crbName), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${ns}-reader` }] };
  const work = uniqueName('mw-noexec');
  writeWork(t, 'wec1', work, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, binding]);
  await waitUntil('the ClusterRoleBinding applied with the agent\'s rights', () => live('wec1', ['clusterrolebinding', crbName]), 90_000);
  t.pass('applied');
});

t.test('the shipped WEC RBAC lets the agent impersonate ServiceAccounts, and no user or group', async (t) => {
  const docs = YAML.parseAllDocuments(readFileSync(chartFile('agent/pull-rbac.yaml'), 'utf8')).map((d) => d.toJSON() as Obj);
  const objs = docs.filter((o) => o && o.metadata?.name === 'ksview-agent:executors');
  t.same(objs.map((o) => o.kind).sort(), ['ClusterRole', 'ClusterRoleBinding']);
  const sa = 'system:serviceaccount:ksview-agent:ksview-agent';
  kcOk('wec1', ['apply', '-f', '-'], objs.map((o) => YAML.stringify(o)).join('---\n'));
  t.teardown(() => { for (const o of objs) kc('wec1', ['delete', o.kind.toLowerCase(), o.metadata.name, '--ignore-not-found']); });
  const can = (args: string[]) => kc('wec1', ['auth', 'can-i', ...args, '--as', sa]).stdout.trim();
  t.equal(can(['impersonate', 'serviceaccounts/deployer', '-n', 'team-a']), 'yes', 'impersonate a ServiceAccount');
  t.equal(can(['impersonate', 'users/admin']), 'no', 'no user');
  t.equal(can(['impersonate', 'groups/system:masters']), 'no', 'no group');
  t.equal(can(['impersonate', 'userextras/scopes']), 'no', 'no extra');
});
