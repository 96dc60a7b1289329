// Discovery and OpenAPI of the view are filtered however their path is spelled (docs/security.md
// D11): kube-apiserver answers /api/v1/, //api/v1, /api//v1 and /api/%76%31 as /api/v1, so the
// view must too, never handing the WDS's unfiltered answer (events, nodes, leases...) through its
// catch-all passthrough. The WDS here answers every spelling of a discovery path with the full,
// unfiltered document, as a real one would.
import t, { type Test } from 'tap';
import { canonicalViewUrl } from '../../src/apiserver/groups/view-paths.js';
import { ROOT, testApp } from '../fixtures/view-app.js';

const resource = (name: string, kind: string, namespaced = true) => ({ name, singularName: '', namespaced, kind, verbs: ['get', 'list', 'watch'] });
const DOCS: Record<string, object> = {
  '/api/v1': { kind: 'APIResourceList', groupVersion: 'v1', resources: [resource('configmaps', 'ConfigMap'), resource('events', 'Event'), resource('nodes', 'Node', false), resource('componentstatuses', 'ComponentStatus', false)] },
  '/apis/coordination.k8s.io/v1': { kind: 'APIResourceList', groupVersion: 'coordination.k8s.io/v1', resources: [resource('leases', 'Lease')] },
  '/apis/apps/v1': { kind: 'APIResourceList', groupVersion: 'apps/v1', resources: [resource('deployments', 'Deployment'), resource('controllerrevisions', 'ControllerRevision')] },
  '/openapi/v3/apis/coordination.k8s.io/v1': { openapi: '3.0.0', paths: { '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases': { get: {} } }, components: { schemas: {} } },
};
/** The path as kube-apiserver resolves it: decoded segments, no empty ones. */
const resolved = (p: string) => `/${p.split('?')[0]!.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s)).join('/')}`;
const HIDDEN = /"(events|nodes|componentstatuses|leases|controllerrevisions)"|\/leases/;

async function app(t: Test) {
  const a = await testApp();
  t.teardown(a.close);
  a.upstream.pool.intercept({ path: () => true, method: 'GET' }).reply((opts) => {
    const doc = DOCS[resolved(String(opts.path))];
    return doc
      ? { statusCode: 200, data: JSON.stringify(doc), responseOptions: { headers: { 'content-type': 'application/json' } } }
      : { statusCode: 404, data: '404 page not found\n', responseOptions: { headers: { 'content-type': 'text/plain' } } };
  }).persist();
  const get = async (path: string) => {
    const res = await a.app.inject({ url: `${ROOT}${path}`, headers: { 'x-test-user': 'alice', accept: 'application/json' } });
    return { status: res.statusCode, body: res.body };
  };
  return { ...a, get };
}

t.test('every spelling of a group version\'s discovery is the filtered one', async (t) => {
  const { get, upstream } = await app(t);
  const canonical = await get('/api/v1');
  t.equal(canonical.status, 200);
  t.notMatch(canonical.body, HIDDEN);
  for (const spelling of ['/api/v1/', '//api/v1', '/api//v1', '/api/v1//', '/api/%76%31', '/api/v1/?timeout=32s', '/%61pi/v1']) {
    const res = await get(spelling);
    t.notMatch(res.body, HIDDEN, `${spelling}: no hidden kind`);
    t.strictSame(res, canonical, `${spelling}: the same answer as /api/v1`);
  }
  const apps = await get('/apis/apps/v1/');
  t.match(apps.body, /deployments/);
  t.notMatch(apps.body, HIDDEN, '/apis/apps/v1/: controllerrevisions stay hidden');
  for (const spelling of ['/apis/coordination.k8s.io/v1/', '/apis//coordination.k8s.io/v1', '/apis/coordination.k8s.io//v1/']) {
    const res = await get(spelling);
    t.equal(res.status, 404, `${spelling}: a group version with only hidden kinds is not found`);
    t.notMatch(res.body, HIDDEN, `${spelling}: no leases`);
  }
  const asked = upstream.calls().map((c) => c.path);
  t.ok(asked.every((p) => !p.includes('//') && !/\/(\?|$)/.test(p) && !p.includes('%')), `the WDS is only asked canonical paths: ${asked.join(' ')}`);
});

t.test('OpenAPI v3 of a group version, with a trailing slash, is filtered too', async (t) => {
  const { get } = await app(t);
  for (const spelling of ['/openapi/v3/apis/coordination.k8s.io/v1', '/openapi/v3/apis/coordination.k8s.io/v1/', '/openapi//v3/apis/coordination.k8s.io/v1']) {
    t.notMatch((await get(spelling)).body, HIDDEN, `${spelling}: no lease paths`);
  }
});

t.test('the view root spelled with escapes is the root', async (t) => {
  const { app: a, upstream } = await app(t);
  const res = await a.inject({ url: `${ROOT.replace(/proxy$/, 'pro%78y')}/api/v1/`, headers: { 'x-test-user': 'alice', accept: 'application/json' } });
  t.equal(res.statusCode, 200);
  t.notMatch(res.body, HIDDEN);
  t.ok(upstream.calls().every((c) => c.path === '/api/v1'));
});

t.test('canonical spelling: discovery paths lose empty segments and escapes; resource paths keep theirs', async (t) => {
  t.equal(canonicalViewUrl(`${ROOT}/api/v1`, ROOT), `${ROOT}/api/v1`);
  t.equal(canonicalViewUrl(`${ROOT}/api/v1/?timeout=1s`, ROOT), `${ROOT}/api/v1?timeout=1s`);
  t.equal(canonicalViewUrl(`${ROOT}//apis//apps/`, ROOT), `${ROOT}/apis/apps`);
  t.equal(canonicalViewUrl(`${ROOT}/`, ROOT), `${ROOT}/`);
  t.equal(canonicalViewUrl(`${ROOT}/api/v1/namespaces/a/pods/p/proxy/`, ROOT), `${ROOT}/api/v1/namespaces/a/pods/p/proxy/`, 'a proxy subresource keeps its trailing slash');
  t.equal(canonicalViewUrl(`${ROOT.replace('spaces', 'sp%61ces')}/api/v1/namespaces/a/configmaps`, ROOT), `${ROOT}/api/v1/namespaces/a/configmaps`);
  t.equal(canonicalViewUrl('/apis/view.kubestellar.io/v1alpha1/spaces', ROOT), '/apis/view.kubestellar.io/v1alpha1/spaces', 'outside the root: as it is');
  t.equal(canonicalViewUrl(`${ROOT}x/api/v1/`, ROOT), `${ROOT}x/api/v1/`, 'a longer name is not the root');
});
