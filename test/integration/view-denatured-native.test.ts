// Denatured kinds are indistinguishable from native ones (docs/view.md, "Denatured kinds"): every step here is made
// through the view (wds1-view, through the aggregator) and natively on wec1, and must give the
// same outcome: HTTP code, reason, field causes and message; after a successful step, the same
// object with the same managedFields. Messages are compared without what differs between two
// servers anyway (uids, resource versions, times, and which unknown fields server-side apply
// happens to name: it names one or two of them at random, natively too). Kubernetes' own code (ksview-native) is what makes them
// equal; these tests are what shows it.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { readAdminCredentials } from '../../src/spaces/space-pki.js';
import { kc, layout, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { ksview } from '../fixtures/ksview.js';
import { INVALID_OBJECTS, INVALID_UPDATES } from '../fixtures/invalid-native-objects.js';
import { comparable } from '../fixtures/native-compare.js';

const VIEW = 'wds1-view';
type Obj = Record<string, any>;
type Side = 'view' | 'native';

const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const wec = layout.spaces.find((s) => s.name === 'wec1')!;
const creds = { view: readAdminCredentials(wds.dir), native: readAdminCredentials(wec.dir) };
const roots = {
  view: `https://127.0.0.1:${wds.apiserverPort}/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy`,
  native: `https://127.0.0.1:${wec.apiserverPort}`,
};

interface Answer { status: number; text: string; body: Obj; warnings: string[] }

function raw(side: Side, method: string, path: string, body?: string, contentType = 'application/json'): Promise<Answer> {
  const c = creds[side];
  return new Promise((resolve, reject) => {
    const req = https.request(`${roots[side]}${path}`, { method, ca: c.ca, cert: c.client.certPem, key: c.client.keyPem,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': contentType, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => { text += d; });
      res.on('end', () => {
        let parsed: Obj = {};
        try { parsed = JSON.parse(text) as Obj; } catch { parsed = {}; }
        const w = res.headers.warning;
        resolve({ status: res.statusCode ?? 0, text, body: parsed, warnings: w === undefined ? [] : ([] as string[]).concat(w) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const both = async (method: string, path: string, body?: string, contentType?: string) =>
  ({ view: await raw('view', method, path, body, contentType), native: await raw('native', method, path, body, contentType) });

/**
 * A message without what differs between two servers for the same history: uids, resource
 * versions, times; and the one field server-side apply names among several unknown ones, which
 * is the first of a Go map's iteration (random natively too).
 */
const comparableText = (m: unknown): unknown => typeof m !== 'string' ? m : m
  .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>')
  .replace(/(\\?"resourceVersion\\?":\\?")\d+/g, '$1<rv>')
  .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>')
  // Go's %#v of a pointer prints its address (flowcontrol's "spec of 'exempt' must equal the fixed
  // value"): it differs between any two processes, two kube-apiservers included.
  .replace(/\)\(0x[0-9a-f]+\)/g, ')(<address>)')
  .replace(/\): (errors:(\n\s+[.\w[\]]*(__proto__|constructor|prototype): field not declared in schema)+|[.\w[\]]*(__proto__|constructor|prototype): field not declared in schema)$/,
    '): <the hostile keys>: field not declared in schema');
const comparableCauses = (causes: Obj[] | undefined) => causes?.map((c) => ({ ...c, message: comparableText(c.message), field: comparableText(c.field) }));

/** The same answer: code; for a Status its reason, message and causes; else the same object; the same warnings. */
function sameAnswer(t: Test, what: string, r: { view: Answer; native: Answer }): void {
  t.equal(r.view.status, r.native.status, `${what}: HTTP ${r.native.status} (${r.view.body.message ?? 'ok'})`);
  if (r.native.body.kind === 'Status') {
    t.equal(r.view.body.reason, r.native.body.reason, `${what}: reason ${r.native.body.reason}`);
    t.equal(comparableText(r.view.body.message), comparableText(r.native.body.message), `${what}: the native message`);
    t.same(comparableCauses(r.view.body.details?.causes), comparableCauses(r.native.body.details?.causes), `${what}: the native causes`);
  } else {
    t.same(comparable(r.view.body), comparable(r.native.body), `${what}: the native object`);
  }
  t.same(r.view.warnings, r.native.warnings, `${what}: the native warnings`);
}

/** kubectl diff output without its temporary file names, times and the servers' identities. */
const comparableDiff = (out: string) => out.split('\n')
  .filter((l) => !/^(diff -u|--- |\+\+\+ )/.test(l) && !/^[-+ ]\s*(uid|resourceVersion|creationTimestamp|time): /.test(l)).join('\n');

/** kubectl on both sides: same exit code, output and error. */
function sameKubectl(t: Test, what: string, args: string[], input?: string): void {
  const v = kc(VIEW, args, input);
  const n = kc('wec1', args, input);
  t.equal(v.status, n.status, `${what}: exit ${n.status} (${(v.stderr || v.stdout).trim().split('\n')[0]})`);
  if (args[0] === 'diff') t.equal(comparableDiff(v.stdout), comparableDiff(n.stdout), `${what}: the native diff`);
  else t.equal(v.stdout, n.stdout, `${what}: the native output`);
  t.equal(v.stderr, n.stderr, `${what}: the native error`);
}

async function sameObject(t: Test, what: string, path: string): Promise<Obj> {
  const r = await both('GET', path);
  t.equal(r.view.status, 200, `${what}: readable`);
  t.same(comparable(r.view.body), comparable(r.native.body), `${what}: the same object and managedFields`);
  return r.view.body;
}

function cleanup(t: Test, ...paths: string[]): void {
  t.teardown(async () => {
    for (const p of paths) await both('DELETE', p);
  });
}

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const LIMITRANGES = '/api/v1/namespaces/default/limitranges';
const PLCS = '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations';
const CLUSTERROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const ROLES = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles';
const ROLEBINDINGS = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings';

t.test('field ownership: apply, label, apply again gives the native managers (webhooks, LimitRange, PriorityLevelConfiguration)', async (t) => {
  const name = uniqueName('own');
  const objects: [string, string, (changed: boolean) => Obj][] = [
    ['validatingwebhookconfiguration', `${VWC}/${name}`, (changed) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name },
      webhooks: [{ name: 'a.example.com', clientConfig: { url: 'https://example.com/x' }, sideEffects: 'None', admissionReviewVersions: ['v1'],
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: [changed ? 'configmaps' : 'pods'] }] }] })],
    ['limitrange', `${LIMITRANGES}/${name}`, (changed) => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name, namespace: 'default' },
      spec: { limits: [{ type: 'Container', max: { cpu: changed ? '2' : '1' } }] } })],
    ['prioritylevelconfiguration', `${PLCS}/${name}`, (changed) => ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: changed ? 20 : 10, limitResponse: { type: 'Reject' } } } })],
  ];
  for (const [kind, path, make] of objects) {
    cleanup(t, path);
    const ns = kind === 'limitrange' ? ['-n', 'default'] : [];
    sameKubectl(t, `${kind}: apply --server-side`, ['apply', '--server-side', '--field-manager', 'mgr-one', '-f', '-'], YAML.stringify(make(false)));
    sameKubectl(t, `${kind}: label`, [...ns, 'label', kind, name, 'x=y']);
    await sameObject(t, `${kind}: after the label`, path);
    sameKubectl(t, `${kind}: apply --server-side again, changed`, ['apply', '--server-side', '--field-manager', 'mgr-one', '-f', '-'], YAML.stringify(make(true)));
    await sameObject(t, `${kind}: after the second apply`, path);
  }
});

t.test('switching from client-side to server-side apply: the same managers, labels and last-applied annotation', async (t) => {
  const name = uniqueName('csa');
  const path = `${CLUSTERROLES}/${name}`;
  cleanup(t, path);
  const role = (labels: Obj, verbs: string[]) => YAML.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs }] });
  sameKubectl(t, 'client-side apply', ['apply', '-f', '-'], role({ old: 'one', keep: 'one' }, ['get']));
  await sameObject(t, 'after client-side apply', path);
  sameKubectl(t, 'diff --server-side', ['diff', '--server-side', '-f', '-'], role({ keep: 'one' }, ['get', 'list']));
  sameKubectl(t, 'server-side apply of a changed configuration', ['apply', '--server-side', '-f', '-'], role({ keep: 'one' }, ['get', 'list']));
  const after = await sameObject(t, 'after server-side apply', path);
  t.notMatch(JSON.stringify(after), /denatured\.kubestellar\.io/, 'nothing of the storage shows');
  sameKubectl(t, 'diff --server-side afterwards', ['diff', '--server-side', '-f', '-'], role({ keep: 'one' }, ['get', 'list', 'watch']));
});

t.test('invalid objects are rejected as natively (dry run, every kind)', async (t) => {
  for (const c of INVALID_OBJECTS) {
    const r = await both('POST', `${c.collection}?dryRun=All`, JSON.stringify(c.object));
    t.not(r.native.status, 201, `${c.what}: natively rejected (else the case proves nothing)`);
    sameAnswer(t, c.what, r);
  }
});

t.test('invalid changes of valid objects are rejected as natively (update rules, update and status validation)', async (t) => {
  for (const c of INVALID_UPDATES) {
    const name = (c.object.metadata as Obj).name as string;
    const path = `${c.collection}/${name}`;
    cleanup(t, path);
    const created = await both('POST', c.collection, JSON.stringify(c.object));
    t.equal(created.native.status, 201, `${c.what}: the valid object is created natively`);
    sameAnswer(t, `${c.what}: create`, created);
    const r = await both('PATCH', `${path}${c.subresource ? `/${c.subresource}` : ''}`, JSON.stringify(c.patch), 'application/merge-patch+json');
    t.not(r.native.status, 200, `${c.what}: natively rejected (else the case proves nothing)`);
    sameAnswer(t, c.what, r);
    await sameObject(t, `${c.what}: unchanged`, path);
  }
});

t.test('kubectl apply --dry-run=server of the issue\'s invalid objects prints the native error', async (t) => {
  for (const c of INVALID_OBJECTS.filter((x) => x.issue)) {
    sameKubectl(t, c.what, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(c.object));
  }
});

t.test('update rules: roleRef cannot change, metadata.uid is immutable, a stale resourceVersion conflicts', async (t) => {
  const name = uniqueName('rb');
  const path = `${ROLEBINDINGS}/${name}`;
  cleanup(t, path);
  sameAnswer(t, 'create a RoleBinding', await both('POST', ROLEBINDINGS, JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' }] })));
  sameKubectl(t, 'patch roleRef', ['-n', 'default', 'patch', 'rolebinding', name, '--type=merge', '-p', '{"roleRef":{"kind":"ClusterRole","name":"view"}}']);
  sameAnswer(t, 'patch metadata.uid', await both('PATCH', path, '{"metadata":{"uid":"00000000-0000-0000-0000-000000000000"}}', 'application/merge-patch+json'));
  sameAnswer(t, 'patch with a stale resourceVersion', await both('PATCH', path, '{"metadata":{"resourceVersion":"1","labels":{"a":"b"}}}', 'application/merge-patch+json'));
  sameAnswer(t, 'patch metadata.name', await both('PATCH', path, '{"metadata":{"name":"other"}}', 'application/merge-patch+json'));
  await sameObject(t, 'after the refused writes', path);
});

t.test('__proto__, constructor and prototype keys in every write are reported as natively and change nothing', async (t) => {
  const name = uniqueName('proto');
  const path = `${ROLES}/${name}`;
  cleanup(t, path);
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };
  const hostile = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"}}';
  // The keys at the top, in metadata and in a list item.
  const withKeys = (o: Obj) => JSON.stringify(o).replace(/^\{/, `{${hostile.slice(1, -1)},`).replace('"metadata":{', `"metadata":{${hostile.slice(1, -1)},`)
    .replace('"rules":[{', `"rules":[{${hostile.slice(1, -1)},`);
  sameAnswer(t, 'POST, fieldValidation=Strict', await both('POST', `${ROLES}?fieldValidation=Strict`, withKeys(role)));
  sameAnswer(t, 'POST, fieldValidation=Warn', await both('POST', `${ROLES}?fieldValidation=Warn`, withKeys(role)));
  sameAnswer(t, 'DELETE', await both('DELETE', path));
  sameAnswer(t, 'POST, fieldValidation=Ignore', await both('POST', `${ROLES}?fieldValidation=Ignore`, withKeys(role)));
  const live = (await raw('view', 'GET', path)).body;
  const writes: [string, string, string, string][] = [
    ['PUT', path, withKeys({ ...role, metadata: { name, resourceVersion: undefined } }), 'application/json'],
    ['PATCH', path, hostile, 'application/merge-patch+json'],
    ['PATCH', path, hostile, 'application/strategic-merge-patch+json'],
    ['PATCH', path, '[{"op":"add","path":"/__proto__","value":{"polluted":"yes"}},{"op":"add","path":"/metadata/labels","value":{"constructor":"x"}}]', 'application/json-patch+json'],
    ['PATCH', `${path}?fieldManager=proto`, withKeys(role), 'application/apply-patch+yaml'],
  ];
  for (const [method, p, body, type] of writes) {
    for (const v of ['Strict', 'Warn', '']) {
      const q = v ? `${p.includes('?') ? '&' : '?'}fieldValidation=${v}` : '';
      sameAnswer(t, `${method} ${type} ${v || 'default'}`, await both(method, `${p}${q}`, body, type));
    }
  }
  const after = await sameObject(t, 'after every write', path);
  t.equal(after.metadata.uid, live.metadata.uid, 'the same object throughout');
  t.notMatch(JSON.stringify(after), /polluted/, 'no such key was stored');
  const other = await raw('view', 'GET', CLUSTERROLES);
  t.equal(other.status, 200, 'the server still answers');
  t.notMatch(other.text, /polluted/, 'and no other object shows the key');
});

t.test('serialisation: an emptied list is omitted, a nil list is null, quantities are canonical', async (t) => {
  const name = uniqueName('ser');
  cleanup(t, `${VWC}/${name}`, `${CLUSTERROLES}/${name}`, `${LIMITRANGES}/${name}`, '/api/v1/namespaces/default/resourcequotas/' + name);
  sameAnswer(t, 'create a webhook configuration', await both('POST', VWC, JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name },
    webhooks: [{ name: 'a.example.com', clientConfig: { url: 'https://example.com/x' }, sideEffects: 'None', admissionReviewVersions: ['v1'] }] })));
  sameAnswer(t, 'delete its last webhook', await both('PATCH', `${VWC}/${name}`, '[{"op":"remove","path":"/webhooks/0"}]', 'application/json-patch+json'));
  const hooks = await both('GET', `${VWC}/${name}`);
  t.equal('webhooks' in hooks.view.body, 'webhooks' in hooks.native.body, 'webhooks omitted as natively');
  sameAnswer(t, 'a ClusterRole without rules', await both('POST', CLUSTERROLES, JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name } })));
  const cr = await both('GET', `${CLUSTERROLES}/${name}`);
  t.equal(cr.view.body.rules, cr.native.body.rules, `rules: ${JSON.stringify(cr.native.body.rules)} as natively`);
  t.match(cr.view.text, /"rules":null/, 'written as null');
  sameAnswer(t, 'a LimitRange with cpu "0.5"', await both('POST', LIMITRANGES, JSON.stringify({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name },
    spec: { limits: [{ type: 'Container', max: { cpu: '0.5', memory: '1024Mi' } }] } })));
  const lr = await sameObject(t, 'the LimitRange', `${LIMITRANGES}/${name}`);
  t.equal(lr.spec.limits[0].max.cpu, '500m', 'canonical quantity');
  sameAnswer(t, 'a ResourceQuota with 1000m cpu', await both('POST', '/api/v1/namespaces/default/resourcequotas', JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name },
    spec: { hard: { cpu: '1000m', pods: '010' } } })));
  // The key order of the JSON is the native one too.
  const keys = async (side: Side) => Object.keys((await raw(side, 'GET', `${CLUSTERROLES}/${name}`)).body);
  t.same(await keys('view'), await keys('native'), 'the same key order');
});

/** The ksview-native process of the ksview serve of the WDS whose folder is `wdsDir` (a child of it). */
function nativeHelperPid(wdsDir: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!args[0]!.endsWith('ksview-native')) continue;
      const ppid = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))![1]!;
      const parent = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0');
      if (parent.includes('serve') && parent.includes(path.join(wdsDir, 'kubeconfig'))) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

// On wds2, whose view no other test writes denatured objects through: the test files run in
// parallel, and wds1's would answer them 503 while its helper restarts.
t.test('ksview-native killed: ksview serve starts it again, and writes work again', async (t) => {
  const wds2 = layout.spaces.find((s) => s.name === 'wds2')!;
  const first = nativeHelperPid(wds2.dir);
  t.ok(first, `wds2's serve runs ksview-native (pid ${first})`);
  process.kill(first!, 'SIGKILL');
  const name = uniqueName('again');
  t.teardown(() => { kc('wds2-view', ['delete', 'clusterrole', name, '--ignore-not-found']); });
  const body = JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [] });
  const created = await waitUntil('a write through the view to succeed again', () => {
    const r = kc('wds2-view', ['create', '-f', '-', '-o', 'json'], body);
    if (r.status !== 0) t.match(r.stderr, /ServiceUnavailable/, `meanwhile: 503 (${r.stderr.trim()})`);
    return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined;
  }, 30_000);
  t.equal(created.metadata.name, name);
  const second = nativeHelperPid(wds2.dir);
  t.ok(second && second !== first, `a new ksview-native (pid ${second})`);
});

t.test('ksview serve without ksview-native does not start: one line saying so', async (t) => {
  const certs = mkdtempSync(path.join(os.tmpdir(), 'ksview-certs-'));
  t.teardown(() => rmSync(certs, { recursive: true, force: true }));
  const r = ksview(['serve', '--wds-kubeconfig', path.join(wds.dir, 'kubeconfig'), '--port', '1', '--cert-dir', certs, '--ksview-native', '/nonexistent/ksview-native']);
  t.not(r.status, 0, 'non-zero exit');
  const lines = r.stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line: ${r.stderr.trim()}`);
  t.match(lines[0], /ksview-native is missing: \/nonexistent\/ksview-native/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});
