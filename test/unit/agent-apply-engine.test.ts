// The apply engine over a recorded mock WEC: dependency order, each strategy's HTTP calls, an SSA
// conflict reported (never forced), bad manifests failing alone in the WEC's words, the wait for a
// CRD carried in the same work (and retryAfterMs when it never comes), OCM's work conditions.
import t from 'tap';
import { ApplyEngine } from '../../src/agent/apply/apply-engine.js';
import { RestMapper } from '../../src/agent/shared/rest-mapper.js';
import { workStatus } from '../../src/agent/status/work-conditions.js';
import type { ManifestWork } from '../../src/kube/ocm-api.js';
import { mockUpstream, requestBody } from '../fixtures/mock-upstream.js';
import { discoveryDocument, manifestWork, type ServedResource } from '../fixtures/agent/builders.js';

type Res = ServedResource;
const BASE: Res[] = [
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
  { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false },
  { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
];

/** A fake WEC: discovery of `served`, objects by path; `answer` may override a request. */
function fakeWec(opts: { served?: Res[]; objects?: Record<string, unknown>; answer?: (method: string, path: string, body: unknown) => { statusCode: number; data: object } | undefined } = {}) {
  const m = mockUpstream('https://wec.test:6443');
  const served = [...(opts.served ?? BASE)];
  const objects = new Map(Object.entries(opts.objects ?? {}));
  m.pool.intercept({ path: () => true, method: () => true }).reply((o) => {
    const path = String(o.path);
    const body = requestBody(o) as Record<string, unknown> | undefined;
    const custom = opts.answer?.(o.method, path, body);
    if (custom) return custom;
    if (path === '/api') return { statusCode: 200, data: discoveryDocument(served, true) };
    if (path === '/apis') return { statusCode: 200, data: discoveryDocument(served, false) };
    const plain = path.split('?')[0]!;
    if (o.method === 'GET') return objects.has(plain) ? { statusCode: 200, data: objects.get(plain) as object } : { statusCode: 404, data: { kind: 'Status', message: 'not found' } };
    if (o.method === 'POST') {
      const md = (body!.metadata ?? {}) as { name: string };
      objects.set(`${plain}/${md.name}`, { ...body, metadata: { ...md, uid: 'u-' + md.name, resourceVersion: '1' } });
      return { statusCode: 201, data: objects.get(`${plain}/${md.name}`) as object };
    }
    const stored = { ...body, metadata: { ...(body!.metadata as object), uid: 'u1', resourceVersion: '2' } };
    objects.set(plain, stored);
    return { statusCode: 200, data: stored };
  }).persist();
  return { ...m, served, objects };
}

const work = (manifests: Record<string, unknown>[], manifestConfigs: unknown[] = [], status?: unknown): ManifestWork =>
  manifestWork({ manifests, spec: { manifestConfigs: manifestConfigs as never }, metadata: { generation: 3 }, status: status as never });

const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } };
const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'app' }, data: { a: '1' } };
const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'app' }, spec: { replicas: 1 } };
const hook = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'h' }, webhooks: [] };
const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, rules: [] };
const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'app' }, spec: {} };

const ssa = (resource: string, extra: object = {}) => ({ resourceIdentifier: { group: '', resource, namespace: '*', name: '*' }, updateStrategy: { type: 'ServerSideApply', serverSideApply: { force: false, fieldManager: 'work-agent-kubestellar-wds1', ...extra } } });

t.test('dependency order; ordinals stay manifest indexes; default strategy is Update (GET then POST)', async (t) => {
  const w = fakeWec();
  const eng = new ApplyEngine({ wec: w.up });
  const res = await eng.applyWork(work([hook, deploy, svc, cm, role, ns]));
  const writes = w.calls().filter((c) => c.method === 'POST').map((c) => c.path);
  t.same(writes, [
    '/api/v1/namespaces',
    '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    '/api/v1/namespaces/app/configmaps',
    '/api/v1/namespaces/app/services',
    '/apis/apps/v1/namespaces/app/deployments',
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  ]);
  t.same(res.map((r) => r.ordinal), [0, 1, 2, 3, 4, 5]);
  t.same(res[1]!.resourceMeta, { ordinal: 1, group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', name: 'd', namespace: 'app' });
  for (const r of res) {
    t.equal(r.conditions.find((c) => c.type === 'Applied')?.reason, 'AppliedManifestComplete');
    t.equal(r.owned, true);
  }
  const st = workStatus(work([hook, deploy, svc, cm, role, ns]), res, undefined);
  t.match(st.conditions, [{ type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', observedGeneration: 3 }, { type: 'Available', status: 'True', reason: 'ResourcesAvailable' }]);
  t.notOk(st.conditions!.some((c) => c.type === 'Degraded'));
  await w.close();
});

t.test('Update on an existing object: PUT with live resourceVersion, labels merged; unchanged → no write', async (t) => {
  const live = { ...cm, metadata: { ...cm.metadata, uid: 'x', resourceVersion: '7', labels: { keep: 'me' }, finalizers: ['f'] } };
  const w = fakeWec({ objects: { '/api/v1/namespaces/app/configmaps/c': live } });
  const eng = new ApplyEngine({ wec: w.up });
  await eng.applyWork(work([{ ...cm, metadata: { ...cm.metadata, labels: { mine: 'x' } } }]));
  const put = w.calls().find((c) => c.method === 'PUT')!;
  t.ok(put, 'updated with PUT');
  t.match(put.body, { metadata: { resourceVersion: '7', labels: { keep: 'me', mine: 'x' }, finalizers: ['f'] }, data: { a: '1' } });
  const w2 = fakeWec({ objects: { '/api/v1/namespaces/app/configmaps/c': { ...cm, metadata: { ...cm.metadata, resourceVersion: '7' } } } });
  await new ApplyEngine({ wec: w2.up }).applyWork(work([cm]));
  t.same(w2.calls().filter((c) => c.method !== 'GET').length, 0, 'nothing written when nothing differs');
  await w.close(); await w2.close();
});

t.test('ServerSideApply: PATCH apply-patch under the field manager, not forced; a 409 is reported on that manifest only', async (t) => {
  const w = fakeWec({
    answer: (method, path) => method === 'PATCH' && path.includes('/configmaps/c?')
      ? { statusCode: 409, data: { kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message: 'Apply failed with 1 conflict: conflict with "other-manager": .data.a' } }
      : undefined,
  });
  const eng = new ApplyEngine({ wec: w.up });
  const res = await eng.applyWork(work([cm, { ...cm, metadata: { name: 'c2', namespace: 'app' } }], [ssa('configmaps')]));
  const patches = w.calls().filter((c) => c.method === 'PATCH');
  t.equal(patches.length, 2);
  t.ok(patches.every((p) => p.path.includes('fieldManager=work-agent-kubestellar-wds1') && p.path.includes('force=false')));
  t.equal(patches[0]!.headers['content-type'], 'application/apply-patch+yaml');
  const applied = res[0]!.conditions.find((c) => c.type === 'Applied')!;
  t.equal(applied.status, 'False');
  t.equal(applied.reason, 'AppliedManifestFailed');
  t.equal(applied.message, 'Failed to apply manifest: Apply failed with 1 conflict: conflict with "other-manager": .data.a');
  t.notOk(res[0]!.retryAfterMs, 'a conflict does not pass by itself: no retryAfterMs');
  t.equal(res[1]!.conditions.find((c) => c.type === 'Applied')!.status, 'True');
  t.equal(w.calls().filter((c) => c.path.includes('force=true')).length, 0, 'never forced');
  const forced = fakeWec();
  await new ApplyEngine({ wec: forced.up }).applyWork(work([cm], [ssa('configmaps', { force: true, fieldManager: undefined })]));
  t.ok(forced.calls().some((c) => c.method === 'PATCH' && c.path.includes('fieldManager=work-agent&force=true')), 'force as given, default manager work-agent');
  await w.close(); await forced.close();
});

t.test('CreateOnly never updates; ReadOnly only reads and is not owned', async (t) => {
  const live = { ...cm, data: { a: 'theirs' }, metadata: { ...cm.metadata, resourceVersion: '1' } };
  const w = fakeWec({ objects: { '/api/v1/namespaces/app/configmaps/c': live } });
  const eng = new ApplyEngine({ wec: w.up });
  const cfg = (type: string, name: string) => ({ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'app', name }, updateStrategy: { type } });
  const res = await eng.applyWork(work([cm, { ...cm, metadata: { name: 'new', namespace: 'app' } }, { ...cm, metadata: { name: 'ro', namespace: 'app' } }],
    [cfg('CreateOnly', 'c'), cfg('CreateOnly', 'new'), cfg('ReadOnly', 'ro')]));
  t.same(w.calls().filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`), ['POST /api/v1/namespaces/app/configmaps']);
  t.match(res[0]!.live, { data: { a: 'theirs' } });
  t.equal(res[2]!.owned, false);
  t.match(res[2]!.conditions, [{ type: 'Applied', status: 'True' }, { type: 'Available', status: 'False', reason: 'ResourceNotAvailable' }]);
  await w.close();
});

t.test('bad manifests fail alone, in the WEC\'s words; an unknown strategy degrades the work', async (t) => {
  const w = fakeWec({
    answer: (method, path) => method === 'POST' && path.startsWith('/apis/apps')
      ? { statusCode: 422, data: { kind: 'Status', code: 422, message: 'Deployment.apps "d" is invalid: spec.selector: Required value' } }
      : undefined,
  });
  const eng = new ApplyEngine({ wec: w.up });
  const manifests = [
    { apiVersion: 'v1', metadata: { name: 'nokind' } },
    { apiVersion: 'example.com/v1', kind: 'Nope', metadata: { name: 'x' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'app' } },
    deploy,
    cm,
    { ...cm, metadata: { name: 'kubestellar-fleet', namespace: 'kube-system' } },
    { ...cm, metadata: { name: 'odd', namespace: 'app' } },
  ];
  const res = await eng.applyWork(work(manifests, [{ resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'app', name: 'odd' }, updateStrategy: { type: 'Replace' } }]));
  const msg = (i: number) => res[i]!.conditions.find((c) => c.type === 'Applied')!;
  t.match(msg(0).message, /Object 'Kind' is missing/);
  t.match(msg(1).message, /no matches for kind "Nope"/);
  t.ok(res[1]!.retryAfterMs, 'an unknown kind is retried (it may be installed later)');
  t.equal(msg(2).message, 'Failed to apply manifest: resource name may not be empty');
  t.equal(msg(3).message, 'Failed to apply manifest: Deployment.apps "d" is invalid: spec.selector: Required value');
  t.equal(msg(4).status, 'True', 'the good manifest still applied');
  t.match(msg(5).message, /never applied/);
  t.match(msg(6).message, /unknown update strategy Replace/);
  t.same(res[0]!.resourceMeta, { ordinal: 0, group: '', version: 'v1', kind: '', resource: '', name: 'nokind', namespace: '' });
  t.match(res[0]!.conditions.find((c) => c.type === 'Available'), { status: 'Unknown', reason: 'IncompleteResourceMeta' });
  const st = workStatus(work(manifests), res, undefined);
  t.match(st.conditions!.find((c) => c.type === 'Applied'), { status: 'False', reason: 'AppliedManifestWorkFailed' });
  t.match(st.conditions!.find((c) => c.type === 'Degraded'), { status: 'True', reason: 'UnknownUpdateStrategy' });
  t.equal(w.calls().filter((c) => c.path.includes('kubestellar-fleet')).length, 0, 'the fleet lease is never touched');
  await w.close();
});

t.test('a custom resource waits for its CRD from the same work; never served → fails with retryAfterMs', async (t) => {
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced' } };
  const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'app' } };
  const w = fakeWec();
  let posted = false;
  const w2 = fakeWec({ answer: (method, path) => { if (method === 'POST' && path.includes('customresourcedefinitions')) posted = true; return undefined; } });
  // The CRD becomes served a little after it is created, as a real kube-apiserver does.
  const orig = w2.served;
  const timer = setInterval(() => { if (posted && !orig.some((r) => r.kind === 'Widget')) orig.push({ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true }); }, 300);
  const res = await new ApplyEngine({ wec: w2.up, mapper: new RestMapper(w2.up, 100) }).applyWork(work([widget, crd]));
  clearInterval(timer);
  t.match(res[0]!.conditions.find((c) => c.type === 'Applied'), { status: 'True' });
  t.ok(w2.calls().some((c) => c.method === 'POST' && c.path === '/apis/example.com/v1/namespaces/app/widgets'));

  const started = Date.now();
  const never = await new ApplyEngine({ wec: w.up, mapper: new RestMapper(w.up, 100), crdWaitMs: 600, retryAfterMs: 1234 }).applyWork(work([widget, crd]));
  t.ok(Date.now() - started >= 500, 'waited for the CRD');
  t.match(never[0]!.conditions.find((c) => c.type === 'Applied'), { status: 'False', message: /not served/ });
  t.equal(never[0]!.retryAfterMs, 1234);
  await w.close(); await w2.close();
});
