// Denatured kinds through the view (kubectl 1.32, context wds1-view, through the aggregator):
// RBAC, webhooks, admission policies, quotas, ServiceAccounts... are accepted and read back as
// the native kinds, do nothing to wds1 (they live there only as denatured.kubestellar.io objects),
// and every kubectl command on them gives what the same command gives on the native kind in wec1.
import { spawn } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { changePatch, SAMPLES, type Sample } from '../fixtures/denatured-samples.js';
import { readAdminCredentials } from '../../src/spaces/space-pki.js';
import { installDenaturedCRDs } from '../../src/storage/crd-installer.js';
import { discoverDenaturedKinds } from '../../src/storage/denatured-kinds.js';
import { upstreamFromKubeconfig } from '../../src/kube/upstream.js';
import { comparable as normalize } from '../fixtures/native-compare.js';
import { kc, kcAsync, kcAsyncOk, kcOk, kubeconfig, layout, sedEditor, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const VIEW = 'wds1-view';
const DENATURED = 'denatured.kubestellar.io';
type Obj = Record<string, any>;

const getJson = (space: string, args: string[]): Obj => JSON.parse(kcOk(space, [...args, '-o', 'json'])) as Obj;
const getJsonAsync = async (space: string, args: string[]): Promise<Obj> => JSON.parse(await kcAsyncOk(space, [...args, '-o', 'json'])) as Obj;

/** Names unique per run; kinds whose name has a syntax of its own get it. */
function sampleName(s: Sample, base: string): string {
  if (s.resource === 'apiservices') return `v1.${base}.example.com`;
  if (s.group === 'rbac.authorization.k8s.io') return `ksv:${base}`; // not a DNS name: stored encoded
  return base;
}

function sampleObject(s: Sample, name: string, ns: string): Obj {
  const o = s.object(name, ns) as Obj;
  if (s.resource === 'apiservices') {
    o.metadata.name = name;
    o.spec.group = name.slice('v1.'.length);
  }
  return o;
}

t.test('a bundle with RBAC, a webhook, a policy, a quota and a ServiceAccount does nothing to wds1', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'dn-bundle');
  const alice = uniqueName('alice');
  const id = uniqueName('bundle');
  const bundle: Obj[] = [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { a: '1' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${id}:everything` },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${id}-alice-admin` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: alice }] },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: `${id}-deny-configmaps` },
      webhooks: [{ name: 'deny.example.com', clientConfig: { url: 'https://127.0.0.1:1/does-not-exist' },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
        failurePolicy: 'Fail', sideEffects: 'None', admissionReviewVersions: ['v1'] }] },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: `${id}-deny-secrets` },
      spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }] },
        validations: [{ expression: 'false', message: 'no secrets' }] } },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `${id}-deny-secrets` },
      spec: { policyName: `${id}-deny-secrets`, validationActions: ['Deny'] } },
    { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-configmaps', namespace: ns }, spec: { hard: { configmaps: '0' } } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: ns } },
  ];
  t.teardown(() => {
    for (const o of bundle.filter((o) => !o.metadata.namespace)) kc(VIEW, ['delete', o.kind, o.metadata.name, '--ignore-not-found']);
  });
  const out = kcOk(VIEW, ['apply', '-f', '-'], bundle.map((o) => YAML.stringify(o)).join('---\n'));
  for (const o of bundle) t.match(out, new RegExp(`/${o.metadata.name.replace(/[.]/g, '\\.')} created`), `${o.kind} accepted`);

  // Independent reads, side by side: a kubectl process costs seconds on a loaded machine.
  const readBack = await Promise.all(bundle.map((o) => getJsonAsync(VIEW, ['get', o.kind, o.metadata.name, ...(o.metadata.namespace ? ['-n', ns] : [])])));
  for (const [i, o] of bundle.entries()) {
    const back = readBack[i]!;
    t.equal(back.apiVersion, o.apiVersion, `${o.kind} reads back with apiVersion ${o.apiVersion}`);
    t.equal(back.kind, o.kind);
    t.equal(back.metadata.name, o.metadata.name, `${o.kind} keeps its name ${o.metadata.name}`);
  }

  // wds1 itself: nothing took effect.
  t.match(kc('wds1', ['auth', 'can-i', '--as', alice, '*', '*']).stdout.trim(), /^no$/, 'alice gained no right in wds1');
  const configMap = kc('wds1', ['-n', ns, 'create', 'configmap', 'still-possible', '--from-literal=x=1']);
  t.equal(configMap.status, 0, `a ConfigMap can be created in wds1 (no webhook, no quota in effect) ${configMap.stderr.trim()}`);
  const secret = kc('wds1', ['-n', ns, 'create', 'secret', 'generic', 'still-possible', '--from-literal=x=1']);
  t.equal(secret.status, 0, `a Secret can be created in wds1 (no admission policy in effect) ${secret.stderr.trim()}`);
  const secrets = getJson('wds1', ['-n', ns, 'get', 'secrets']).items as Obj[];
  t.same(secrets.filter((s) => s.type === 'kubernetes.io/service-account-token').map((s) => s.metadata.name), [], 'no ServiceAccount token Secret appeared');
  t.equal(getJson('wds1', ['-n', ns, 'get', 'deployment', 'web']).spec.replicas, 1, 'the Deployment is a real one in wds1');
  const denatured = bundle.filter((o) => !['Deployment', 'ConfigMap'].includes(o.kind));
  const looks = await Promise.all(denatured.map(async (o) => {
    const plural = `${o.kind.toLowerCase()}${o.kind.endsWith('y') ? '' : 's'}`.replace(/ys$/, 'ies').replace(/policys$/, 'policies');
    const group = o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : '';
    const nsArgs = o.metadata.namespace ? ['-n', ns] : [];
    const [native, stored] = await Promise.all([kcAsync('wds1', ['get', `${plural}${group}`, o.metadata.name, ...nsArgs]),
      getJsonAsync('wds1', ['get', `${plural}.${DENATURED}`, ...nsArgs])]);
    return { plural, native, stored: stored.items as Obj[] };
  }));
  for (const [i, o] of denatured.entries()) {
    const { plural, native, stored } = looks[i]!;
    t.not(native.status, 0, `${o.kind} ${o.metadata.name} does not exist natively in wds1`);
    t.match(native.stderr, /NotFound/);
    t.ok(stored.some((s) => (s.metadata.annotations?.['view.kubestellar.io/native-name'] ?? s.metadata.name) === o.metadata.name),
      `${o.kind} ${o.metadata.name} exists as ${plural}.${DENATURED}`);
  }
});

for (const s of SAMPLES) {
  t.test(`${s.kind}: kubectl through the view gives what it gives on the native kind in wec1`, async (t) => {
    const ns = testNamespace(t, ['wds1', 'wec1'], 'dn');
    const name = sampleName(s, uniqueName('dn'));
    const nsArgs = s.namespaced ? ['-n', ns] : [];
    // The view and wec1 side by side: two independent servers, and a kubectl process costs seconds on a loaded machine.
    const both = async (args: string[], input?: string, env: Record<string, string> = {}) => {
      const [view, native] = await Promise.all([kcAsync(VIEW, [...nsArgs, ...args], input, env), kcAsync('wec1', [...nsArgs, ...args], input, env)]);
      return { view, native };
    };
    const same = async (what: string, args: string[], input?: string) => {
      const r = await both(args, input);
      t.equal(r.view.status, r.native.status, `${what}: same exit code (${r.view.stderr.trim() || 'ok'})`);
      t.equal(r.view.stdout, r.native.stdout, `${what}: same output`);
      return r;
    };
    const compare = async (what: string) => {
      const [v, n] = (await Promise.all([VIEW, 'wec1'].map((c) => getJsonAsync(c, [...nsArgs, 'get', s.arg, name, '--show-managed-fields'])))).map(normalize) as [Obj, Obj];
      t.same(v, n, `${what}: the object (managedFields included) equals the native one`);
      t.equal(v.apiVersion, n.apiVersion);
      return v;
    };
    t.teardown(() => both(['delete', s.arg, name, '--ignore-not-found']));
    const obj = sampleObject(s, name, ns);
    const changed = YAML.stringify({ ...obj, metadata: { ...obj.metadata, labels: { tier: 'a' } } });

    // Client-side apply twice (the second one a strategic merge patch of the change).
    await same('apply', ['apply', '-f', '-'], YAML.stringify(obj));
    await compare('after apply');
    await same('apply again', ['apply', '-f', '-'], changed);
    t.equal((await compare('after the second apply')).metadata.labels.tier, 'a');

    // Watch (started now, checked after the label below): events carry the native apiVersion.
    const watcher = spawn('kubectl', ['--context', VIEW, ...nsArgs, 'get', s.arg, name, '-w', '-o', 'json', '--output-watch-events'],
      { env: { ...process.env, KUBECONFIG: kubeconfig } });
    t.teardown(() => { watcher.kill(); });
    let watched = '';
    watcher.stdout.setEncoding('utf8').on('data', (c: string) => { watched += c; });

    // kubectl edit, then the three client patch types.
    // Adds the label edited=yes to the object's (existing) metadata.labels.
    const editor = sedEditor(t, '0,/^  labels:$/s//  labels:\\n    edited: "yes"/');
    const { view: ev, native: en } = await both(['edit', s.arg, name], undefined, { KUBE_EDITOR: editor });
    t.equal(ev.status, 0, `edit through the view: ${ev.stderr.trim()}`);
    t.equal(ev.stdout, en.stdout, 'edit: same output');
    t.equal((await compare('after edit')).metadata.labels.edited, 'yes');
    await same('patch --type strategic', ['patch', s.arg, name, '--type', 'strategic', '-p', JSON.stringify(changePatch(s, name))]);
    t.equal(kcOk(VIEW, [...nsArgs, 'get', s.arg, name, '-o', `jsonpath=${s.change.jsonpath}`]), s.change.expect, 'the strategic patch took');
    await compare('after patch --type strategic');
    await same('patch --type merge', ['patch', s.arg, name, '--type', 'merge', '-p', '{"metadata":{"labels":{"merged":"1"}}}']);
    await compare('after patch --type merge');
    await same('patch --type json', ['patch', s.arg, name, '--type', 'json', '-p', '[{"op":"add","path":"/metadata/labels/json","value":"1"}]']);
    await compare('after patch --type json');

    // kubectl replace (an update, PUT) with the object as last read.
    const current = getJson(VIEW, [...nsArgs, 'get', s.arg, name]);
    current.metadata.annotations = { ...current.metadata.annotations, replaced: 'yes' };
    delete current.metadata.resourceVersion;
    await same('replace', ['replace', '-f', '-'], JSON.stringify({ ...current, metadata: { ...current.metadata, uid: undefined, creationTimestamp: undefined, managedFields: undefined } }));
    t.equal((await compare('after replace')).metadata.annotations.replaced, 'yes');

    // kubectl label; the watch sees it.
    await same('label', ['label', s.arg, name, 'labelled=yes']);
    await compare('after label');
    const events = await waitUntil('the watch event of the label', () => {
      const docs = watched.split(/\n(?=\{)/).filter((d) => d.trim()).map((d) => JSON.parse(d) as Obj);
      return docs.some((e) => e.object?.metadata?.labels?.labelled === 'yes') ? docs : undefined;
    }, 30_000);
    t.ok(events.every((e) => e.object.apiVersion === obj.apiVersion && e.object.kind === s.kind), `watch events carry ${obj.apiVersion} ${s.kind}`);
    t.ok(events.every((e) => e.object.metadata.name === name), 'and the native name');

    // get -o yaml is native (managedFields included), and so is the table.
    const yamlOf = (r: { stdout: string }) => normalize(YAML.parse(r.stdout) as Obj);
    const asYaml = await both(['get', s.arg, name, '-o', 'yaml', '--show-managed-fields']);
    t.same(yamlOf(asYaml.view), yamlOf(asYaml.native), 'get -o yaml: the same YAML (identities and times aside)');
    const table = await both(['get', s.arg, name]);
    const header = (out: string) => out.split('\n')[0]!.trim().split(/\s+/);
    t.same(header(table.view.stdout), header(table.native.stdout), 'kubectl get: the native columns');
    await same('delete', ['delete', s.arg, name]);
    t.match(kc(VIEW, [...nsArgs, 'get', s.arg, name]).stderr, /NotFound/, 'gone');

    // Server-side apply by two managers on a new object: a conflict naming the first, then --force-conflicts.
    const ssa = (manager: string, labels: Record<string, string>, extra: string[] = []) =>
      both(['apply', '--server-side', `--field-manager=${manager}`, ...extra, '-f', '-'], YAML.stringify({ ...obj, metadata: { ...obj.metadata, labels } }));
    const first = await ssa('first', { owner: 'first' });
    t.equal(first.view.status, 0, `server-side apply: ${first.view.stderr.trim()}`);
    t.equal(first.view.stdout, first.native.stdout, 'server-side apply: same output');
    await compare('after server-side apply');
    const conflict = await ssa('second', { owner: 'second' });
    t.not(conflict.view.status, 0, 'a second manager changing the field conflicts');
    t.match(conflict.view.stderr, /conflicts? with "first"/, 'the conflict names the manager');
    t.match(conflict.view.stderr, /\.metadata\.labels\.owner/, 'and the field');
    t.equal(conflict.view.stderr, conflict.native.stderr, 'the conflict error is the native one');
    const forced = await ssa('second', { owner: 'second' }, ['--force-conflicts']);
    t.equal(forced.view.status, 0, '--force-conflicts wins');
    t.equal((await compare('after --force-conflicts')).metadata.labels.owner, 'second');
    await same('delete after server-side apply', ['delete', s.arg, name]);
  });
}

t.test('typed kubectl commands (protobuf bodies) create denatured objects as on the native kinds', async (t) => {
  const ns = testNamespace(t, ['wds1', 'wec1'], 'dn-typed');
  const role = `ksv:${uniqueName('typed')}`;
  t.teardown(() => {
    kc(VIEW, ['delete', 'clusterrole', role, '--ignore-not-found']);
    kc('wec1', ['delete', 'clusterrole', role, '--ignore-not-found']);
  });
  const commands = [
    ['create', 'clusterrole', role, '--verb=get,list', '--resource=pods,configmaps'],
    ['-n', ns, 'create', 'serviceaccount', 'robot'],
    ['-n', ns, 'create', 'rolebinding', 'robot-view', '--clusterrole=view', `--serviceaccount=${ns}:robot`],
    ['-n', ns, 'create', 'role', 'reader', '--verb=get', '--resource=secrets'],
    ['-n', ns, 'create', 'quota', 'pods', '--hard=pods=3'],
  ];
  for (const args of commands) {
    const [view, native] = await Promise.all([kcAsync(VIEW, args), kcAsync('wec1', args)]);
    t.equal(view.status, 0, `kubectl ${args.join(' ')}: ${view.stderr.trim()}`);
    t.equal(view.stdout, native.stdout, `kubectl ${args.slice(-3).join(' ')}: the native output`);
  }
  const pairs: [string[], string][] = [[['get', 'clusterrole', role], ''], [['get', 'serviceaccount', 'robot'], ns], [['get', 'rolebinding', 'robot-view'], ns],
    [['get', 'role', 'reader'], ns], [['get', 'resourcequota', 'pods'], ns]];
  const read = await Promise.all(pairs.map(([args, namespace]) => Promise.all([VIEW, 'wec1'].map((c) =>
    getJsonAsync(c, [...(namespace ? ['-n', namespace] : []), ...args, '--show-managed-fields'])))));
  for (const [i, [args]] of pairs.entries()) {
    const [view, native] = read[i]!;
    t.same(normalize(view!), normalize(native!), `${args[1]} equals the native one, managedFields included`);
  }
});

t.test('invalid objects get 422 with field paths; nothing is stored', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'dn-invalid');
  const rb = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'no-roleref', namespace: ns },
    subjects: [{ kind: 'User', name: 'x', apiGroup: 'rbac.authorization.k8s.io' }] };
  const r1 = kc(VIEW, ['create', '-f', '-'], JSON.stringify(rb));
  t.not(r1.status, 0);
  const n1 = kc('wec1', ['create', '--dry-run=server', '-f', '-'], JSON.stringify({ ...rb, metadata: { ...rb.metadata, namespace: 'default' } }));
  t.equal(r1.stderr, n1.stderr, 'the native error');
  t.match(kc(VIEW, ['-n', ns, 'get', 'rolebinding', 'no-roleref']).stderr, /NotFound/, 'no RoleBinding was stored');
  t.same(getJson('wds1', ['-n', ns, 'get', `rolebindings.${DENATURED}`]).items, [], 'nothing in wds1 either');

  const name = uniqueName('bad-webhook');
  const hook = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name },
    webhooks: [{ name: 'bad.example.com', clientConfig: { url: 'https://127.0.0.1:1/x' }, failurePolicy: 'Sometimes', sideEffects: 'None', admissionReviewVersions: ['v1'] }] };
  const r2 = kc(VIEW, ['create', '-f', '-'], JSON.stringify(hook));
  t.not(r2.status, 0);
  t.match(r2.stderr, /The ValidatingWebhookConfiguration ".*" is invalid: webhooks\[0\]\.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"/);
  t.match(kc(VIEW, ['get', 'validatingwebhookconfiguration', name]).stderr, /NotFound/, 'no webhook configuration was stored');

  // The Status itself: 422 Invalid with one cause per field.
  const raw = kc(VIEW, ['create', '--raw', `/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, '-f', '-'], JSON.stringify(rb));
  t.not(raw.status, 0);
  t.match(raw.stderr, /422|Invalid|roleRef/);
});

t.test('bob needs RBAC on denatured.kubestellar.io, and gains nothing in wds1 with it (nor in the fleet: Kubernetes\' escalation check)', async (t) => {
  const bob = uniqueName('bob');
  const role = `${bob}:reader`;
  kcOk('wds1', ['create', 'clusterrolebinding', `${bob}-view`, '--clusterrole=kubestellar-view:user', `--user=${bob}`]);
  t.teardown(() => {
    kc('wds1', ['delete', 'clusterrolebinding', `${bob}-view`, `${bob}-denatured`, '--ignore-not-found']);
    kc(VIEW, ['delete', 'clusterrole', role, '--ignore-not-found']);
    kc(VIEW, ['delete', 'clusterrolebinding', `${bob}-admin`, '--ignore-not-found']);
  });
  // Rules bob will hold with kubestellar-view:denatured-editor (the escalation check lets him write only those).
  const clusterRole = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role }, rules: [{ apiGroups: [DENATURED], resources: ['clusterroles'], verbs: ['get'] }] };
  const createRole = () => kc(VIEW, ['--as', bob, 'create', '-f', '-'], JSON.stringify(clusterRole));
  const denied = createRole();
  t.not(denied.status, 0, 'without RBAC on denatured.kubestellar.io bob cannot create a ClusterRole through the view');
  // Kubernetes' registry (with its escalation check) runs before the WDS authorizes the store, as its validation does.
  t.match(denied.stderr, new RegExp(`Forbidden.*user "${bob}" \\(groups=\\["system:authenticated"\\]\\) is attempting to grant RBAC permissions not currently held`));

  kcOk('wds1', ['create', 'clusterrolebinding', `${bob}-denatured`, '--clusterrole=kubestellar-view:denatured-editor', `--user=${bob}`]);
  const ok = await waitUntil('bob may create the ClusterRole', () => {
    const r = createRole();
    return r.status === 0 ? r.stdout : undefined;
  }, 30_000);
  t.match(ok, /created/, 'with kubestellar-view:denatured-editor he can');
  const admin = kc(VIEW, ['--as', bob, 'create', '-f', '-'], JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${bob}-admin` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: bob }] }));
  t.match(admin.stderr, /Forbidden.*is attempting to grant RBAC permissions not currently held/, 'binding himself to cluster-admin through the view is refused, as natively');
  t.equal(kc('wds1', ['auth', 'can-i', '--as', bob, 'create', 'clusterroles']).stdout.trim(), 'no', 'bob still cannot create ClusterRoles in wds1');
  t.equal(kc('wds1', ['auth', 'can-i', '--as', bob, '*', '*']).stdout.trim(), 'no', 'nor anything else');
});

// The raw API through the aggregator, as the wds1 admin: verbs and parameters kubectl seldom sends.
const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const admin = readAdminCredentials(wds.dir);
const VIEW_ROOT = `https://127.0.0.1:${wds.apiserverPort}/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy`;
const CLUSTERROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

function api(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: Obj; headers: Record<string, unknown> }> {
  // A DELETE body needs its length: Node sends no chunked framing for DELETE.
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(`${VIEW_ROOT}${path}`, { method, ca: admin.ca, cert: admin.client.certPem, key: admin.client.keyPem,
      headers: payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => { data += c; });
      res.on('end', () => {
        let parsed: Obj = {};
        try { parsed = JSON.parse(data) as Obj; } catch { parsed = { text: data }; }
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const role = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules: [] });

t.test('raw API: 422 Status, generateName, dryRun, selectors, pagination, preconditions, deletecollection', async (t) => {
  const set = uniqueName('set');
  t.teardown(async () => { await api('DELETE', `${CLUSTERROLES}?labelSelector=set%3D${set}`); });

  const invalid = await api('POST', CLUSTERROLES, { ...role(`${set}:bad`), rules: [{ apiGroups: [''], resources: ['pods'], verbs: [] }] });
  t.equal(invalid.status, 422, 'an invalid ClusterRole is 422');
  t.equal(invalid.body.kind, 'Status');
  t.equal(invalid.body.reason, 'Invalid');
  t.match(invalid.body.details, { name: `${set}:bad`, group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' });
  t.ok((invalid.body.details.causes as Obj[]).some((c) => c.field === 'rules[0].verbs' && c.reason === 'FieldValueRequired'), 'the cause names rules[0].verbs');

  const dry = await api('POST', `${CLUSTERROLES}?dryRun=All`, role(`${set}:dry`, { set }));
  t.equal(dry.status, 201, 'dryRun=All create answers 201');
  t.equal(dry.body.metadata.name, `${set}:dry`);
  t.equal((await api('GET', `${CLUSTERROLES}/${set}:dry`)).status, 404, 'and stores nothing');

  const generated = await api('POST', CLUSTERROLES, { ...role('', { set }), metadata: { generateName: `${set}-`, labels: { set } } });
  t.equal(generated.status, 201, 'generateName create');
  t.match(generated.body.metadata.name, new RegExp(`^${set}-[a-z0-9]{5}$`));
  const yamlBody = `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: "${set}:yaml"\n  labels: {set: ${set}, page: "1"}\nrules: []\n`;
  t.equal((await api('POST', CLUSTERROLES, yamlBody, 'application/yaml')).status, 201, 'a YAML body');
  for (const n of ['a', 'b', 'c']) t.equal((await api('POST', CLUSTERROLES, role(`${set}:${n}`, { set, page: '1' }))).status, 201);

  const page1 = await api('GET', `${CLUSTERROLES}?labelSelector=page%3D1,set%3D${set}&limit=2`);
  t.equal(page1.body.apiVersion, 'rbac.authorization.k8s.io/v1');
  t.equal(page1.body.kind, 'ClusterRoleList');
  t.equal(page1.body.items.length, 2, 'limit=2');
  t.ok(page1.body.metadata.continue, 'a continue token');
  const page2 = await api('GET', `${CLUSTERROLES}?labelSelector=page%3D1,set%3D${set}&limit=2&continue=${encodeURIComponent(page1.body.metadata.continue)}`);
  const names = [...page1.body.items, ...page2.body.items].map((i: Obj) => i.metadata.name).sort();
  t.same(names, [`${set}:a`, `${set}:b`, `${set}:c`, `${set}:yaml`], 'both pages together: every match, native names');
  const byName = await api('GET', `${CLUSTERROLES}?fieldSelector=metadata.name%3D${encodeURIComponent(`${set}:b`)}`);
  t.same(byName.body.items.map((i: Obj) => i.metadata.name), [`${set}:b`], 'a field selector on the native name');

  const b = await api('GET', `${CLUSTERROLES}/${set}:b`);
  const wrongUid = await api('DELETE', `${CLUSTERROLES}/${set}:b`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: '00000000-0000-0000-0000-000000000000' } });
  t.equal(wrongUid.status, 409, 'a uid precondition that does not hold is 409');
  t.match(wrongUid.body.message, new RegExp(`"${set}:b": the UID in the precondition \\(00000000-0000-0000-0000-000000000000\\) does not match the UID in record \\(${b.body.metadata.uid}\\)`));
  t.notMatch(wrongUid.body.message, /denatured/, 'in native words');
  const deleted = await api('DELETE', `${CLUSTERROLES}/${set}:b`, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: b.body.metadata.uid } });
  t.equal(deleted.status, 200);
  t.same({ kind: deleted.body.kind, status: deleted.body.status, name: deleted.body.details?.name, group: deleted.body.details?.group },
    { kind: 'Status', status: 'Success', name: `${set}:b`, group: 'rbac.authorization.k8s.io' }, 'a native Success Status');
  const missing = await api('DELETE', `${CLUSTERROLES}/${set}:b`);
  t.equal(missing.status, 404);
  t.equal(missing.body.message, `clusterroles.rbac.authorization.k8s.io "${set}:b" not found`, 'NotFound in native words');

  const collection = await api('DELETE', `${CLUSTERROLES}?labelSelector=set%3D${set}`);
  t.equal(collection.status, 200, 'deletecollection');
  t.equal(collection.body.kind, 'ClusterRoleList');
  t.equal((await api('GET', `${CLUSTERROLES}?labelSelector=set%3D${set}`)).body.items.length, 0, 'nothing left');

  const protobuf = await api('POST', CLUSTERROLES, 'k8s\u0000garbage', 'application/vnd.kubernetes.protobuf');
  t.equal(protobuf.status, 400, 'a protobuf body that does not decode is 400');
  t.match(protobuf.body.message, /the object provided is unrecognized \(must be of type ClusterRole\)/, 'kube-apiserver\'s own message');
  const cbor = await api('POST', CLUSTERROLES, 'x', 'application/cbor');
  t.equal(cbor.status, 415, 'an unknown media type is 415');
});

t.test('raw API: watches are native; sendInitialEvents gets the answer the WDS gives its native kinds', async (t) => {
  const set = uniqueName('watch');
  t.teardown(async () => { await api('DELETE', `${CLUSTERROLES}?labelSelector=set%3D${set}`); });
  t.equal((await api('POST', CLUSTERROLES, role(`${set}:before`, { set }))).status, 201);
  const listed = await api('GET', `${CLUSTERROLES}?labelSelector=set%3D${set}`);
  const events: Obj[] = [];
  const req = https.request(`${VIEW_ROOT}${CLUSTERROLES}?watch=1&allowWatchBookmarks=true&labelSelector=set%3D${set}&resourceVersion=${listed.body.metadata.resourceVersion}`,
    { ca: admin.ca, cert: admin.client.certPem, key: admin.client.keyPem }, (res) => {
      let buf = '';
      res.setEncoding('utf8').on('data', (c: string) => {
        buf += c;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buf.slice(0, nl)) as Obj);
          buf = buf.slice(nl + 1);
        }
      });
    });
  req.end();
  t.teardown(() => { req.destroy(); });
  t.equal((await api('POST', CLUSTERROLES, role(`${set}:after`, { set }))).status, 201);
  const added = await waitUntil('the event of the new ClusterRole', () => events.find((e) => e.type === 'ADDED' && e.object.metadata.name === `${set}:after`), 30_000);
  t.equal(added.object.apiVersion, 'rbac.authorization.k8s.io/v1');
  t.equal(added.object.kind, 'ClusterRole');
  t.notOk(events.some((e) => e.object.metadata?.name === `${set}:before`), 'from the resourceVersion on: no replay of older objects');
  t.notOk(JSON.stringify(events).includes('denatured.kubestellar.io'), 'no event mentions the stored form');

  // The local WDS (kube-apiserver 1.33, WatchList off by default, Debian's etcd 3.4.23 without
  // RequestWatchProgress) refuses watch lists; through the view the answer is the one it gives for
  // a native kind, in native words.
  const query = `?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=set%3D${set}`;
  const viaView = await api('GET', `${CLUSTERROLES}${query}`);
  const direct = kc('wds1', ['get', '--raw', `/apis/rbac.authorization.k8s.io/v1/clusterroles${query}`]);
  t.equal(viaView.status, 422, `the view: ${JSON.stringify(viaView.body).slice(0, 200)}`);
  const reason = direct.stderr.trim().replace(/^.* is invalid: /, '');
  t.ok(reason.length > 0 && String(viaView.body.message).endsWith(`is invalid: ${reason}`), `the same reason as for the native kind: ${reason}`);
  t.notMatch(viaView.body.message, /denatured/);
});

t.test('the CRDs follow the WDS\'s schema: one changed by hand is put back in place, objects kept', async (t) => {
  const name = `ksv:${uniqueName('crd')}`;
  kcOk(VIEW, ['create', '-f', '-'], JSON.stringify(role(name)));
  t.teardown(() => { kc(VIEW, ['delete', 'clusterrole', name, '--ignore-not-found']); });
  const crd = 'customresourcedefinitions.apiextensions.k8s.io/clusterroles.denatured.kubestellar.io';
  const before = getJson('wds1', ['get', crd]);
  // An older schema, as after a WDS upgrade: no `aggregationRule`.
  kcOk('wds1', ['patch', crd, '--type', 'json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/versions/0/schema/openAPIV3Schema/properties/aggregationRule' }])]);
  t.notOk(getJson('wds1', ['get', crd]).spec.versions[0].schema.openAPIV3Schema.properties.aggregationRule, 'the CRD was changed');

  const up = await upstreamFromKubeconfig(path.join(wds.dir, 'kubeconfig'));
  t.teardown(() => up.pool.close());
  const kinds = await discoverDenaturedKinds(up, [{ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }]);
  const results = await installDenaturedCRDs(up, kinds);
  t.same(results, [{ name: 'clusterroles.denatured.kubestellar.io', changed: true }], 'the installer upgrades it');
  const after = getJson('wds1', ['get', crd]);
  t.same(after.spec.versions, before.spec.versions, 'back to the schema of the WDS');
  t.equal(after.metadata.uid, before.metadata.uid, 'in place: the same CRD');
  t.equal(getJson(VIEW, ['get', 'clusterrole', name]).metadata.name, name, 'the stored ClusterRole is still there');
  t.same(await installDenaturedCRDs(up, kinds), [{ name: 'clusterroles.denatured.kubestellar.io', changed: false }], 'a second run changes nothing');
});
