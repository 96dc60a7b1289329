// denatured.kubestellar.io objects written straight into wds1, around the view (docs/security.md
// D10): a user with rights on roles.denatured.kubestellar.io in their own namespace writes them with
// real kubectl and a client certificate, as the security review did. Such writes pass the view's
// own admission (ksview serve's webhook): forged view annotations (native metadata: generation,
// managedFields) and objects Kubernetes refuses (a ClusterRoleBinding to a Secret) are denied;
// the view's own writes still work. Objects stored anyway (the webhook taken away for a moment, as
// before it existed) break nothing: `kubectl get roles -A` and `-w` through the view answer the
// others and warn about them, and placement sends none of them but says why on the policy.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { kubectl } from '../../src/cli/kubectl.js';
import { issueCert } from '../../src/kube/pki.js';
import { renderKubeconfig } from '../../src/spaces/kubeconfig.js';
import { managedCluster } from '../fixtures/inventory.js';
import { bindingPolicy, policy, work, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, kubeconfig, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const VIEW = 'wds1-view';
const WEBHOOK = 'kubestellar-view-denatured';
const NATIVE_METADATA = 'view.kubestellar.io/native-metadata';
const FORGED = JSON.stringify({ generation: 42, managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'rbac.authorization.k8s.io/v1', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:rules': {} } }] });
const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const pki = (f: string) => readFileSync(path.join(wds.dir, 'pki', f), 'utf8');
const viewPath = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';

interface User { name: string; cert: string; key: string; run(args: string[], input?: string): ReturnType<typeof kubectl> }

/** A user with a client certificate of wds1's CA: contexts `direct` (wds1) and `view`. */
async function user(t: Test, name: string): Promise<User> {
  const pair = await issueCert({ certPem: pki('ca.crt'), keyPem: pki('ca.key') }, { commonName: name, usages: ['client'] });
  const dir = mkdtempSync(path.join(os.tmpdir(), `ksview-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'kubeconfig');
  const server = `https://127.0.0.1:${wds.apiserverPort}`;
  const entry = { caPem: pki('ca.crt'), certPem: pair.certPem, keyPem: pair.keyPem };
  writeFileSync(file, renderKubeconfig([{ name: 'view', server: server + viewPath, ...entry }, { name: 'direct', server, ...entry }]));
  return { name, cert: pair.certPem, key: pair.keyPem, run: (args, input) => kubectl(file, args, input) };
}

/** mallory: every verb on roles.denatured.kubestellar.io in `ns` only, and kubestellar-view:user. */
async function mallory(t: Test, ns: string): Promise<User> {
  const u = await user(t, uniqueName('mallory'));
  kcOk('wds1', ['-n', ns, 'create', 'role', 'denatured-roles', '--verb=*', '--resource=roles.denatured.kubestellar.io']);
  kcOk('wds1', ['-n', ns, 'create', 'rolebinding', 'mallory-denatured-roles', '--role=denatured-roles', `--user=${u.name}`]);
  kcOk('wds1', ['create', 'clusterrolebinding', `${u.name}-view`, '--clusterrole=kubestellar-view:user', `--user=${u.name}`]);
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebinding', `${u.name}-view`, '--ignore-not-found']); });
  return u;
}

const storedRole = (name: string, ns: string, annotations?: Record<string, string>, verbs = ['get'], labels?: Record<string, string>) => JSON.stringify({
  apiVersion: 'denatured.kubestellar.io/v1', kind: 'Role',
  metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) },
  rules: [{ apiGroups: [''], resources: ['configmaps'], verbs }],
});
const storedBinding = (name: string, roleRefKind: string, labels: Record<string, string>) => JSON.stringify({
  apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRoleBinding', metadata: { name, labels },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleRefKind, name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
});

t.test('direct writes go through the view\'s admission: forged metadata and invalid objects are denied, the view\'s own writes are not', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'dd');
  const m = await mallory(t, ns);
  await waitUntil('mallory may create denatured roles', () => m.run(['--context', 'direct', 'auth', 'can-i', 'create', 'roles.denatured.kubestellar.io', '-n', ns]).stdout.trim() === 'yes' || undefined, 30_000);

  const notJson = m.run(['--context', 'direct', 'create', '-f', '-'], storedRole('not-json', ns, { [NATIVE_METADATA]: 'not-json' }));
  t.not(notJson.status, 0, 'a malformed native-metadata annotation is refused');
  // kubectl words an Invalid Status with causes as `The <Kind> "<name>" is invalid: <causes>`.
  t.match(notJson.stderr, `The Role "not-json" is invalid: metadata.annotations[${NATIVE_METADATA}]: Forbidden: set only by the view ` +
    '(the native object\'s managedFields and generation, which Kubernetes computes); write the object through the view, or keep the annotation as it was or remove it');
  const forged = m.run(['--context', 'direct', 'create', '-f', '-'], storedRole('forged', ns, { [NATIVE_METADATA]: FORGED }));
  t.not(forged.status, 0, 'a forged generation and managedFields entry of kube-controller-manager are refused');
  t.match(forged.stderr, `The Role "forged" is invalid: metadata.annotations[${NATIVE_METADATA}]: Forbidden: set only by the view`);
  const empty = m.run(['--context', 'direct', 'create', '-f', '-'], storedRole('no-verbs', ns, undefined, []));
  t.not(empty.status, 0, 'a Role Kubernetes refuses is refused');
  t.match(empty.stderr, 'The Role "no-verbs" is invalid: rules[0].verbs: Required value: verbs must contain at least one value');
  t.equal(kc('wds1', ['-n', ns, 'get', 'roles.denatured.kubestellar.io', 'not-json', 'forged', 'no-verbs', '-o', 'name']).stdout, '', 'none of them is stored');

  // The view's own write stores native-metadata (the webhook would refuse that of anyone else):
  // it is not sent to the webhook. A direct write that keeps the annotation as it was is allowed;
  // one that changes it is not.
  const viaView = m.run(['--context', 'view', 'apply', '-f', '-'], JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
    metadata: { name: 'via-view', namespace: ns }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }));
  t.equal(viaView.status, 0, `mallory writes a Role through the view: ${viaView.stderr}`);
  const stored = JSON.parse(kcOk('wds1', ['-n', ns, 'get', 'roles.denatured.kubestellar.io', 'via-view', '-o', 'json'])) as Obj;
  t.ok(stored.metadata.annotations?.[NATIVE_METADATA], 'stored with the native metadata the view computed');
  t.equal(m.run(['--context', 'direct', '-n', ns, 'label', 'roles.denatured.kubestellar.io', 'via-view', 'team=a']).status, 0, 'a direct label keeps the annotation: allowed');
  const change = m.run(['--context', 'direct', '-n', ns, 'annotate', '--overwrite', 'roles.denatured.kubestellar.io', 'via-view', `${NATIVE_METADATA}=${FORGED}`]);
  t.not(change.status, 0, 'a direct change of it is refused');
  t.match(change.stderr, `The Role "via-view" is invalid: metadata.annotations[${NATIVE_METADATA}]: Forbidden: set only by the view`);
  const shown = JSON.parse(kcOk(VIEW, ['-n', ns, 'get', 'role', 'via-view', '-o', 'json', '--show-managed-fields'])) as Obj;
  t.same(shown.metadata.managedFields.map((f: Obj) => f.manager), ['kubectl-client-side-apply'], 'the view shows the managers Kubernetes computed, none forged');
  t.same(shown.metadata.labels, { team: 'a' });

  const plain = m.run(['--context', 'direct', 'create', '-f', '-'], storedRole('plain', ns));
  t.equal(plain.status, 0, `a valid direct write without the view's annotations is allowed: ${plain.stderr}`);
  t.equal(kcOk(VIEW, ['-n', ns, 'get', 'role', 'plain', '-o', 'jsonpath={.rules[0].verbs[0]}']), 'get', 'and read back through the view');

  const crb = uniqueName('dd-secret');
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebindings.denatured.kubestellar.io', crb, '--ignore-not-found']); });
  const secretRef = kc('wds1', ['create', '-f', '-'], storedBinding(crb, 'Secret', {}));
  t.not(secretRef.status, 0, 'a ClusterRoleBinding whose roleRef is a Secret is refused, even to a cluster admin');
  t.match(secretRef.stderr, `The ClusterRoleBinding "${crb}" is invalid: roleRef.kind: Unsupported value: "Secret": supported values: "ClusterRole"`);

  // The view's user extra cannot be claimed by mallory: setting it takes the right to impersonate.
  const claimed = await new Promise<number>((resolve, reject) => {
    const req = https.request(`https://127.0.0.1:${wds.apiserverPort}/apis/denatured.kubestellar.io/v1/namespaces/${ns}/roles`, {
      method: 'POST', ca: pki('ca.crt'), cert: m.cert, key: m.key,
      headers: { 'content-type': 'application/json', 'impersonate-user': m.name, 'impersonate-extra-view.kubestellar.io%2fadmitted-by': 'ksview-serve' },
    }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', reject);
    req.end(storedRole('claimed', ns, { [NATIVE_METADATA]: FORGED }));
  });
  t.equal(claimed, 403, 'impersonating with the view\'s extra is forbidden to mallory');
});

t.test('objects stored around the admission break no read of their kind and are never placed', async (t) => {
  const run = uniqueName('dd');
  const ns = testNamespace(t, ['wds1'], 'dd');
  const m = await mallory(t, ns);
  const label = { app: run };
  managedCluster(t, run, { 'location-group': run });
  const good = uniqueName('dd-good');
  const bad = uniqueName('dd-bad');
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebindings.denatured.kubestellar.io', good, bad, '--ignore-not-found']); });
  await waitUntil('mallory may create denatured roles', () => m.run(['--context', 'direct', 'auth', 'can-i', 'create', 'roles.denatured.kubestellar.io', '-n', ns]).stdout.trim() === 'yes' || undefined, 30_000);
  kcOk(VIEW, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'fine', namespace: ns }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }));
  kcOk('wds1', ['create', '-f', '-'], storedBinding(good, 'ClusterRole', label));

  // Stored as before the webhook existed: its configuration is taken away for a moment.
  const webhook = JSON.parse(kcOk('wds1', ['get', 'validatingwebhookconfiguration', WEBHOOK, '-o', 'json'])) as Obj;
  const restore = () => {
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, managedFields: _mf, generation: _g, ...metadata } = webhook.metadata as Obj;
    if (kc('wds1', ['get', 'validatingwebhookconfiguration', WEBHOOK]).status !== 0) kcOk('wds1', ['create', '-f', '-'], JSON.stringify({ ...webhook, metadata }));
  };
  t.teardown(restore);
  kcOk('wds1', ['delete', 'validatingwebhookconfiguration', WEBHOOK]);
  await waitUntil('a malformed Role stored without the webhook', () =>
    m.run(['--context', 'direct', 'create', '-f', '-'], storedRole('broken', ns, { [NATIVE_METADATA]: 'not-json' }, ['get'], label)).status === 0 || undefined, 30_000, 300);
  // Well-formed for the view, not for Kubernetes' decoder: a managedFields time that is no time.
  m.run(['--context', 'direct', 'create', '-f', '-'], storedRole('undecodable', ns, { [NATIVE_METADATA]: JSON.stringify({ managedFields: [{ manager: 'x', operation: 'Update', time: 'yesterday' }] }) }));
  kcOk('wds1', ['create', '-f', '-'], storedBinding(bad, 'Secret', label));
  restore();

  const brokenWarning = `Warning: roles.rbac.authorization.k8s.io "broken" in namespace "${ns}" cannot be read: annotation ${NATIVE_METADATA} is not JSON`;
  const all = kc(VIEW, ['get', 'roles', '-A']);
  t.equal(all.status, 0, `kubectl get roles -A through the view answers: ${all.stderr}`);
  t.match(all.stdout, new RegExp(`^${ns}\\s+fine\\s`, 'm'), 'the readable Roles are listed');
  t.notMatch(all.stdout, /\sbroken\s|\sundecodable\s/, 'the unreadable ones are not');
  t.match(all.stderr, brokenWarning, 'and each is named in a warning');
  t.match(all.stderr, `Warning: roles.rbac.authorization.k8s.io "undecodable" in namespace "${ns}" cannot be read: Kubernetes cannot decode it:`);
  const mine = m.run(['--context', 'view', '-n', ns, 'get', 'roles', '-o', 'name']);
  t.equal(mine.status, 0, 'as mallory too');
  t.same(mine.stdout.trim().split('\n'), ['role.rbac.authorization.k8s.io/fine']);
  const one = kc(VIEW, ['-n', ns, 'get', 'role', 'broken']);
  t.not(one.status, 0, 'a get of it is an error naming it and why');
  t.match(one.stderr, `Error from server (InternalError): Internal error occurred: roles.rbac.authorization.k8s.io "broken" in namespace "${ns}" cannot be read: annotation ${NATIVE_METADATA} is not JSON (stored in the WDS as roles.denatured.kubestellar.io "broken", written there around the view)`);

  // A watch lives on through an event of it, and shows what comes after.
  const w = spawn('kubectl', ['--kubeconfig', kubeconfig, '--context', VIEW, '-n', ns, 'get', 'roles', '-w', '-o', 'name'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => { w.kill(); });
  let out = '';
  let err = '';
  w.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  w.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  await waitUntil('the watch lists the readable Role', () => out.includes('role.rbac.authorization.k8s.io/fine') || undefined, 30_000);
  // A change of finalizers alone (labels of RBAC kinds are checked, and this one cannot be read).
  kcOk('wds1', ['-n', ns, 'patch', 'roles.denatured.kubestellar.io', 'broken', '--type=merge', '-p', '{"metadata":{"finalizers":["example.com/touched"]}}']);
  kcOk('wds1', ['-n', ns, 'patch', 'roles.denatured.kubestellar.io', 'broken', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  kcOk(VIEW, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'after', namespace: ns }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] }));
  await waitUntil('the watch shows the Role written after the unreadable one changed', () => out.includes('role.rbac.authorization.k8s.io/after') || undefined, 30_000);
  t.equal(w.exitCode, null, 'the watch is still running');
  t.notMatch(out, /broken|undecodable/, 'the unreadable ones never appear in it');
  t.match(err, brokenWarning, 'its list part warned about them');

  // Placement: the policy selects the valid binding, the invalid one and the unreadable Role.
  const policyName = `${run}-p`;
  bindingPolicy(t, policyName, { clusterSelectors: [{ matchLabels: { 'location-group': run } }], downsync: [{ objectSelectors: [{ matchLabels: label }] }] });
  const crbId = (name: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', namespace: '', name });
  await waitUntil('the valid ClusterRoleBinding in the cluster\'s mailbox', () => work(run, crbId(good)), 60_000);
  const errors = await waitUntil('the policy naming what it does not send', () => {
    const e = (policy(policyName)?.status?.errors ?? []) as string[];
    return e.length >= 2 ? e : undefined;
  }, 60_000);
  t.same(errors, [
    `clusterrolebindings.rbac.authorization.k8s.io ${bad} is not sent: ClusterRoleBinding.rbac.authorization.k8s.io "${bad}" is invalid: roleRef.kind: Unsupported value: "Secret": supported values: "ClusterRole"`,
    `roles.rbac.authorization.k8s.io ${ns}/broken is not sent: its stored form cannot be read: annotation ${NATIVE_METADATA} is not JSON (written around the view)`,
  ], 'each named, with Kubernetes\' words');
  t.notOk(work(run, crbId(bad)), 'the invalid ClusterRoleBinding is in no ManifestWork');
  t.notOk(work(run, { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', namespace: ns, name: 'broken' }), 'nor the unreadable Role');
  const crbs = JSON.parse(kcOk('its1', ['-n', run, 'get', 'manifestworks', '-o', 'json'])).items.flatMap((mw: Obj) => mw.spec.workload.manifests) as Obj[];
  t.notOk(crbs.some((o) => o.roleRef?.kind === 'Secret'), 'no manifest in the mailbox has roleRef.kind Secret');

  // Through the view, the unreadable object can still be deleted.
  const del = kc(VIEW, ['-n', ns, 'delete', 'role', 'broken']);
  t.equal(del.status, 0, `deleted through the view: ${del.stderr}`);
  t.equal(kc('wds1', ['-n', ns, 'get', 'roles.denatured.kubestellar.io', 'broken']).status, 1, 'gone from the WDS');
  t.notMatch(kc(VIEW, ['get', 'roles', '-A']).stderr, `"broken" in namespace "${ns}"`, 'and no longer warned about');
});
