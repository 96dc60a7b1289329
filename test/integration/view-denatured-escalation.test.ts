// Kubernetes' RBAC escalation rules on denatured RBAC (docs/security.md F1, F2): a table of writes
// of Roles, ClusterRoles and their bindings, each made natively on wec1 and through the view of
// wds1 by the same user holding rights of the same shape on both sides, with the same outcome
// (status code and reason; the message too where it names only the user and the rules). The user
// is impersonated by the spaces' admin (as `kubectl --as` does), so groups are system:authenticated
// on both sides. On wds1 the user holds kubestellar-view:user and kubestellar-view:denatured-editor
// (every verb on denatured.kubestellar.io but escalate and bind, as docs/view.md tells an admin to
// grant); on wec1 the native equivalent, every verb but escalate and bind on the four RBAC kinds.
// The mallory case of the issue first: a ClusterRoleBinding to cluster-admin, refused through the
// view as natively, and refused too when written straight to wds1 as a denatured object.
import { KubeConfig } from '@kubernetes/client-node';
import type https from 'node:https';
import t, { type Test } from 'tap';
import { Pool } from 'undici';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { WDS1_VIEW_PATH } from '../fixtures/wds1-clients.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Answer { status: number; body: Obj }

/** Raw HTTPS to a space as its admin, impersonating `as` when given (Impersonate-User, as kubectl --as). */
async function client(t: Test, context: string, prefix = '') {
  const k = new KubeConfig();
  k.loadFromFile(kubeconfig);
  k.setCurrentContext(context);
  const opts: https.RequestOptions = {};
  await k.applyToHTTPSOptions(opts);
  const pool = new Pool(new URL(k.getCurrentCluster()!.server).origin, { connections: 4, connect: { ca: opts.ca as string, cert: opts.cert as string, key: opts.key as string } });
  t.teardown(() => pool.close());
  return async (method: string, path: string, o: { as?: string; body?: unknown; contentType?: string } = {}): Promise<Answer> => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (o.as) headers['impersonate-user'] = o.as;
    if (o.body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
    const res = await pool.request({
      method: method as 'GET', path: prefix + path, headers,
      body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
    });
    const text = await res.body.text();
    let body: Obj = {};
    try { body = JSON.parse(text) as Obj; } catch { body = { text }; }
    return { status: res.statusCode, body };
  };
}
type Client = Awaited<ReturnType<typeof client>>;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const DENATURED = '/apis/denatured.kubestellar.io/v1';
const EDIT_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

/** The two sides of each case: wec1 natively, wds1 through its view; `direct` is wds1 itself. */
interface Sides { native: Client; view: Client; direct: Client }

async function sides(t: Test): Promise<Sides> {
  return { native: await client(t, 'wec1'), view: await client(t, 'wds1', WDS1_VIEW_PATH), direct: await client(t, 'wds1') };
}

/**
 * A user with the rights of the brief on both sides: kubestellar-view:user and
 * kubestellar-view:denatured-editor in wds1, every verb but escalate/bind on the RBAC kinds in wec1.
 */
async function rbacEditor(t: Test, s: Sides, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  kcOk('wds1', ['create', 'clusterrolebinding', `${name}-user`, '--clusterrole=kubestellar-view:user', `--user=${name}`]);
  kcOk('wds1', ['create', 'clusterrolebinding', `${name}-denatured`, '--clusterrole=kubestellar-view:denatured-editor', `--user=${name}`]);
  kcOk('wec1', ['create', 'clusterrole', `${name}-rbac-editor`, ...EDIT_VERBS.map((v) => `--verb=${v}`),
    '--resource=roles.rbac.authorization.k8s.io,clusterroles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,clusterrolebindings.rbac.authorization.k8s.io']);
  kcOk('wec1', ['create', 'clusterrolebinding', `${name}-rbac-editor`, `--clusterrole=${name}-rbac-editor`, `--user=${name}`]);
  t.teardown(() => {
    kc('wds1', ['delete', 'clusterrolebinding', `${name}-user`, `${name}-denatured`, '--ignore-not-found']);
    kc('wec1', ['delete', 'clusterrolebinding', `${name}-rbac-editor`, '--ignore-not-found']);
    kc('wec1', ['delete', 'clusterrole', `${name}-rbac-editor`, '--ignore-not-found']);
  });
  // The escalation check's resolver reads the WDS's RBAC from informers: wait until it has the grant.
  await waitUntil(`${name} may write denatured RBAC in wds1 and RBAC in wec1`, async () => {
    const probe = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${name}-probe` }, rules: [] };
    const [v, n] = await Promise.all([s.view('POST', `${RBAC}/clusterroles?dryRun=All`, { as: name, body: probe }), s.native('POST', `${RBAC}/clusterroles?dryRun=All`, { as: name, body: probe })]);
    return (v.status === 201 && n.status === 201) || undefined;
  }, 30_000);
  return name;
}

/**
 * Grants `verbs` on the named roles (resourceNames) of the RBAC kind `resource` on both sides:
 * denatured in wds1, native in wec1; returns once both spaces' RBAC say so, and `probe` (a dry run
 * through the view of a write the grant allows) passes.
 */
async function grant(t: Test, s: Sides, user: string, verbs: string[], resource: 'clusterroles' | 'roles', names: string[], probe: () => Promise<Answer>) {
  const id = uniqueName(`${user}-${verbs.join('-')}`).slice(0, 60);
  const role = (group: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: id },
    rules: [{ apiGroups: [group], resources: [resource], verbs, ...(names.length ? { resourceNames: names } : {}) }],
  });
  const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: id },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: id }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] };
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [role('denatured.kubestellar.io'), binding] }));
  kcOk('wec1', ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [role('rbac.authorization.k8s.io'), binding] }));
  t.teardown(() => {
    for (const space of ['wds1', 'wec1']) kc(space, ['delete', `clusterrolebinding/${id}`, `clusterrole/${id}`, '--ignore-not-found']);
  });
  // SubjectAccessReviews are asked at each write, uncached: the grant holds once RBAC has it.
  const group = (g: string) => `${resource}.${g}`;
  await waitUntil(`${user} may ${verbs.join(',')} ${resource}`, () =>
    (kc('wds1', ['auth', 'can-i', verbs[0]!, `${group('denatured.kubestellar.io')}${names[0] ? `/${names[0]}` : ''}`, '--as', user]).stdout.trim() === 'yes' &&
      kc('wec1', ['auth', 'can-i', verbs[0]!, `${group('rbac.authorization.k8s.io')}${names[0] ? `/${names[0]}` : ''}`, '--as', user]).stdout.trim() === 'yes') || undefined, 30_000);
  // ksview-native remembers a denial for a second: wait until a dry run through the view has the grant.
  await waitUntil(`the view lets ${user} ${verbs.join(',')}`, async () => (await probe()).status === 201 || undefined, 30_000);
}

/** Native rights in wds1 and wec1 alike (the rules a Role may carry without escalate). */
async function holdNatively(t: Test, user: string, ns: string, verbs: string[], resource: string, probe: () => Promise<Answer>) {
  const id = uniqueName(`${user}-holds`).slice(0, 60);
  for (const space of ['wds1', 'wec1']) {
    kcOk(space, ['-n', ns, 'create', 'role', id, ...verbs.map((v) => `--verb=${v}`), `--resource=${resource}`]);
    kcOk(space, ['-n', ns, 'create', 'rolebinding', id, `--role=${id}`, `--user=${user}`]);
  }
  t.teardown(() => { for (const space of ['wds1', 'wec1']) kc(space, ['-n', ns, 'delete', 'rolebinding', id, '--ignore-not-found']); });
  await waitUntil(`${user} holds ${verbs.join(',')} ${resource} in ${ns}`, () =>
    ['wds1', 'wec1'].every((space) => kc(space, ['-n', ns, 'auth', 'can-i', verbs[0]!, resource, '--as', user]).stdout.trim() === 'yes') || undefined, 30_000);
  // ksview-native's informers of wds1's RBAC have it too.
  await waitUntil(`the view knows ${user} holds ${resource}`, async () => (await probe()).status === 201 || undefined, 30_000);
}

/** Both sides answer alike: same code and reason (and message when `sameMessage`). */
function same(t: Test, what: string, native: Answer, view: Answer, expect: { status: number; reason?: string; message?: string | RegExp }, sameMessage = true) {
  t.equal(native.status, expect.status, `${what}: wec1 natively answers ${expect.status}${native.status !== expect.status ? ` (${JSON.stringify(native.body).slice(0, 300)})` : ''}`);
  t.equal(view.status, native.status, `${what}: the view answers as wec1 (${native.status})${view.status !== native.status ? ` (${JSON.stringify(view.body).slice(0, 300)})` : ''}`);
  if (expect.status >= 300) {
    t.equal(native.body.reason, expect.reason, `${what}: wec1's reason ${expect.reason}`);
    t.equal(view.body.reason, native.body.reason, `${what}: the view's reason is wec1's`);
    if (expect.message) t.match(native.body.message, expect.message, `${what}: wec1's message`);
    if (sameMessage) t.equal(view.body.message, native.body.message, `${what}: the view's message is wec1's, word for word`);
  }
}

const crb = (name: string, role: string, user: string, labels?: Record<string, string>) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name, ...(labels ? { labels } : {}) },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
});

/** Removes what a case created, on both sides (as the admin). */
function cleanup(t: Test, ...objects: string[]) {
  t.teardown(() => {
    for (const o of objects) {
      kc('wec1', ['delete', o, '--ignore-not-found']);
      kc('wds1-view', ['delete', o, '--ignore-not-found']);
    }
  });
}

t.test('the mallory case: a ClusterRoleBinding to cluster-admin is refused through the view as natively, and written directly to wds1 too', async (t) => {
  const s = await sides(t);
  const mallory = await rbacEditor(t, s, 'mallory');
  const name = `${mallory}-admin`;
  cleanup(t, `clusterrolebinding/${name}`);
  t.equal(kc('wec1', ['auth', 'can-i', '*', '*', '--as', mallory]).stdout.trim(), 'no', 'mallory may not do everything in wec1');
  const body = crb(name, 'cluster-admin', mallory, { app: 'demo-rbac' });
  const native = await s.native('POST', `${RBAC}/clusterrolebindings`, { as: mallory, body });
  const view = await s.view('POST', `${RBAC}/clusterrolebindings`, { as: mallory, body });
  same(t, 'ClusterRoleBinding to cluster-admin', native, view, {
    status: 403, reason: 'Forbidden',
    message: `clusterrolebindings.rbac.authorization.k8s.io "${name}" is forbidden: user "${mallory}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}`,
  });
  t.equal(kc('wds1', ['get', 'clusterrolebindings.denatured.kubestellar.io', name]).status, 1, 'nothing is stored in wds1');

  // The same binding as a denatured object, straight to wds1 (the denatured webhook).
  const direct = await s.direct('POST', `${DENATURED}/clusterrolebindings`, { as: mallory, body: { ...body, apiVersion: 'denatured.kubestellar.io/v1' } });
  t.equal(direct.status, 403, `written directly to wds1: refused with 403 (${JSON.stringify(direct.body).slice(0, 200)})`);
  t.equal(direct.body.reason, native.body.reason, 'with wec1\'s reason');
  t.equal(direct.body.message, `admission webhook "denatured.view.kubestellar.io" denied the request: ${native.body.message}`, 'and wec1\'s message, from the webhook');
  t.equal(kc('wds1', ['get', 'clusterrolebindings.denatured.kubestellar.io', name]).status, 1, 'nothing is stored in wds1');
});

t.test('bind with resourceNames: a binding to view is allowed, to cluster-admin refused, as natively', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'binder');
  const toView = crb(`${user}-view`, 'view', 'alice');
  const before = [await s.native('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { as: user, body: toView }), await s.view('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { as: user, body: toView })] as const;
  same(t, 'a binding to view without bind (view holds rules in wds1 too: ClusterRole aggregation)', before[0], before[1], { status: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held/ });
  await grant(t, s, user, ['bind'], 'clusterroles', ['view'], () => s.view('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { as: user, body: toView }));
  cleanup(t, `clusterrolebinding/${user}-view`, `clusterrolebinding/${user}-admin`);
  same(t, 'a binding to view with bind on view', await s.native('POST', `${RBAC}/clusterrolebindings`, { as: user, body: toView }),
    await s.view('POST', `${RBAC}/clusterrolebindings`, { as: user, body: toView }), { status: 201 });
  const toAdmin = crb(`${user}-admin`, 'cluster-admin', 'alice');
  same(t, 'a binding to cluster-admin with bind on view only', await s.native('POST', `${RBAC}/clusterrolebindings`, { as: user, body: toAdmin }),
    await s.view('POST', `${RBAC}/clusterrolebindings`, { as: user, body: toAdmin }), { status: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held/ });
});

t.test('a Role with rules the user lacks is refused, with rules held or with escalate allowed, as natively', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'roler');
  const ns = testNamespace(t, ['wds1', 'wec1'], 'esc');
  const role = (name: string, resource: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns },
    rules: [{ apiGroups: [''], resources: [resource], verbs: ['get'] }],
  });
  const path = `${RBAC}/namespaces/${ns}/roles`;
  const lacks = role('secrets-reader', 'secrets');
  same(t, 'a Role with get secrets, not held', await s.native('POST', path, { as: user, body: lacks }), await s.view('POST', path, { as: user, body: lacks }), {
    status: 403, reason: 'Forbidden',
    message: `roles.rbac.authorization.k8s.io "secrets-reader" is forbidden: user "${user}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`,
  });
  const held = role('configmaps-reader', 'configmaps');
  await holdNatively(t, user, ns, ['get'], 'configmaps', () => s.view('POST', `${path}?dryRun=All`, { as: user, body: held }));
  same(t, 'a Role with get configmaps, held', await s.native('POST', path, { as: user, body: held }), await s.view('POST', path, { as: user, body: held }), { status: 201 });
  await grant(t, s, user, ['escalate'], 'roles', [], () => s.view('POST', `${path}?dryRun=All`, { as: user, body: lacks }));
  same(t, 'a Role with get secrets, with escalate', await s.native('POST', path, { as: user, body: lacks }), await s.view('POST', path, { as: user, body: lacks }), { status: 201 });
});

t.test('an aggregated ClusterRole needs cluster-admin\'s rights (or escalate), as natively', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'aggregator');
  const name = `${user}-agg`;
  cleanup(t, `clusterrole/${name}`);
  const aggregated = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }] }, rules: [] };
  same(t, 'an aggregated ClusterRole, no escalate', await s.native('POST', `${RBAC}/clusterroles`, { as: user, body: aggregated }),
    await s.view('POST', `${RBAC}/clusterroles`, { as: user, body: aggregated }), {
      status: 403, reason: 'Forbidden', message: `clusterroles.rbac.authorization.k8s.io "${name}" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
    });
  await grant(t, s, user, ['escalate'], 'clusterroles', [], () => s.view('POST', `${RBAC}/clusterroles?dryRun=All`, { as: user, body: aggregated }));
  same(t, 'an aggregated ClusterRole, with escalate', await s.native('POST', `${RBAC}/clusterroles`, { as: user, body: aggregated }),
    await s.view('POST', `${RBAC}/clusterroles`, { as: user, body: aggregated }), { status: 201 });
});

t.test('patches (json, merge, strategic) and apply that add rules are refused; a metadata-only update of a stored binding passes; relabelling one is checked', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'patcher');
  const ns = testNamespace(t, ['wds1', 'wec1'], 'escp');
  // Stored by the admin: a Role with no rule the user lacks, and a ClusterRoleBinding to cluster-admin.
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', namespace: ns }, rules: [] as Obj[] };
  const binding = crb(`${user}-stored`, 'cluster-admin', 'alice');
  cleanup(t, `clusterrolebinding/${binding.metadata.name}`);
  for (const c of [s.native, s.view]) {
    t.equal((await c('POST', `${RBAC}/namespaces/${ns}/roles`, { body: role })).status, 201, 'the admin stores a Role');
    t.equal((await c('POST', `${RBAC}/clusterrolebindings`, { body: binding })).status, 201, 'the admin stores a ClusterRoleBinding to cluster-admin');
  }
  const rule = { apiGroups: [''], resources: ['secrets'], verbs: ['list'] };
  const rolePath = `${RBAC}/namespaces/${ns}/roles/r`;
  const cases: Array<[string, string, unknown]> = [
    ['a JSON patch', 'application/json-patch+json', [{ op: 'add', path: '/rules', value: [rule] }]],
    ['a merge patch', 'application/merge-patch+json', { rules: [rule] }],
    ['a strategic merge patch', 'application/strategic-merge-patch+json', { rules: [rule] }],
    ['a server-side apply', 'application/apply-patch+yaml', { ...role, rules: [rule] }],
  ];
  for (const [what, contentType, body] of cases) {
    const q = contentType.includes('apply') ? '?fieldManager=patcher&force=true' : '';
    same(t, `${what} adding list secrets`, await s.native('PATCH', rolePath + q, { as: user, body, contentType }), await s.view('PATCH', rolePath + q, { as: user, body, contentType }), {
      status: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["list"\]\}/,
    });
  }
  const bindingPath = `${RBAC}/clusterrolebindings/${binding.metadata.name}`;
  const finalizer = { metadata: { finalizers: ['example.com/hold'] } };
  same(t, 'a metadata-only update (a finalizer) of a stored binding to cluster-admin', await s.native('PATCH', bindingPath, { as: user, body: finalizer, contentType: 'application/merge-patch+json' }),
    await s.view('PATCH', bindingPath, { as: user, body: finalizer, contentType: 'application/merge-patch+json' }), { status: 200 });
  const release = { metadata: { finalizers: null } };
  for (const c of [s.native, s.view]) t.equal((await c('PATCH', bindingPath, { as: user, body: release, contentType: 'application/merge-patch+json' })).status, 200, 'and its release');
  const relabel = { metadata: { labels: { app: 'demo-rbac' } } };
  same(t, 'relabelling a stored binding to cluster-admin (its labels decide where it goes)', await s.native('PATCH', bindingPath, { as: user, body: relabel, contentType: 'application/merge-patch+json' }),
    await s.view('PATCH', bindingPath, { as: user, body: relabel, contentType: 'application/merge-patch+json' }), { status: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held/ });
  const direct = await s.direct('PATCH', `${DENATURED}/clusterrolebindings/${binding.metadata.name}`, { as: user, body: relabel, contentType: 'application/merge-patch+json' });
  t.equal(direct.status, 403, `relabelling it directly in wds1 is refused too (${String(direct.body.message).slice(0, 200)})`);
  t.match(direct.body.message, /is attempting to grant RBAC permissions not currently held/);
});

t.test('system:masters binds anything, as natively; a binding to a role that exists nowhere is NotFound, as natively', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'nowhere');
  const missing = crb(`${user}-missing`, `${user}-no-such-role`, 'alice');
  same(t, 'a binding to a ClusterRole that exists nowhere', await s.native('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { as: user, body: missing }),
    await s.view('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { as: user, body: missing }), { status: 404, reason: 'NotFound' });
  const admin = crb(`${user}-by-admin`, 'cluster-admin', 'alice');
  same(t, 'the admin (system:masters) binds cluster-admin', await s.native('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { body: admin }),
    await s.view('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { body: admin }), { status: 201 });
});

t.test('a binding to a denatured ClusterRole is weighed by that role\'s rules (with the WDS\'s native role of the same name)', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'fleetrole');
  const role = `${user}-fleet-admin`;
  cleanup(t, `clusterrole/${role}`, `clusterrolebinding/${role}`);
  // The admin writes the role for the fleet (denatured in wds1, native in wec1): it exists nowhere natively in wds1.
  const body = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] };
  for (const c of [s.native, s.view]) t.equal((await c('POST', `${RBAC}/clusterroles`, { body })).status, 201, 'the admin writes a ClusterRole granting everything');
  const b = crb(role, role, user);
  same(t, 'a binding to it by the user', await s.native('POST', `${RBAC}/clusterrolebindings`, { as: user, body: b }), await s.view('POST', `${RBAC}/clusterrolebindings`, { as: user, body: b }), {
    status: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/,
  });
});

t.test('wds1\'s built-in admin, edit and view hold the rules wec1\'s hold (ClusterRole aggregation runs in the WDS)', async (t) => {
  const rules = (space: string, role: string) => JSON.stringify((JSON.parse(kcOk(space, ['get', 'clusterrole', role, '-o', 'json'])) as Obj).rules ?? []);
  for (const role of ['admin', 'edit', 'view']) {
    const wec = await waitUntil(`wec1's ${role} aggregated`, () => { const r = rules('wec1', role); return r !== '[]' ? r : undefined; }, 60_000);
    const wds = await waitUntil(`wds1's ${role} as wec1's`, () => { const r = rules('wds1', role); return r === wec ? r : undefined; }, 60_000);
    t.equal(wds, wec, `${role}: ${(JSON.parse(wec) as unknown[]).length} rules in both`);
  }
});

t.test('a binding to a denatured aggregated ClusterRole is weighed by the rules of the denatured roles its selector matches (aggregation runs in the WECs)', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'gather');
  const gatherer = `${user}-gatherer`;
  const big = `${user}-big`;
  const label = `${user}.example.com/gather`;
  cleanup(t, `clusterrole/${gatherer}`, `clusterrole/${big}`);
  // The admin writes, through the view, an aggregated ClusterRole (no rules of its own: nothing
  // aggregates denatured roles in the WDS) and a ClusterRole its selector matches.
  const items = [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: gatherer }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] }, rules: [] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: big, labels: { [label]: 'true' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] },
  ];
  for (const body of items) t.equal((await s.view('POST', `${RBAC}/clusterroles`, { body })).status, 201, `the admin writes ${body.metadata.name}`);
  const b = crb(gatherer, gatherer, user);
  // ksview-native lists the matching roles from its informer: wait until it has the new one.
  const refused = await waitUntil('the view refuses the binding to the aggregated role', async () => {
    const a = await s.view('POST', `${RBAC}/clusterrolebindings?dryRun=All`, { as: user, body: b });
    return a.status === 403 ? a : undefined;
  }, 30_000);
  t.equal(refused.body.reason, 'Forbidden', 'Forbidden');
  t.match(refused.body.message, /is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/, 'in kube\'s words, naming the aggregated rule');
});

t.test('a denatured ClusterRole named like a native one (cluster-admin) is weighed by the native role\'s rules: labelling it into view is refused', async (t) => {
  const s = await sides(t);
  const user = await rbacEditor(t, s, 'samename');
  const body = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cluster-admin', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [] };
  // A dry run: on a view without the check it would otherwise store it.
  const a = await s.view('POST', `${RBAC}/clusterroles?dryRun=All`, { as: user, body });
  t.equal(a.status, 403, `refused with 403 (${JSON.stringify(a.body).slice(0, 200)})`);
  t.equal(a.body.reason, 'Forbidden', 'Forbidden');
  t.match(a.body.message, /^clusterroles\.rbac\.authorization\.k8s\.io "cluster-admin" is forbidden: user ".*" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/, 'in kube\'s words, naming cluster-admin\'s rules');
});
