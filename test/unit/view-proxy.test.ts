// The view under its root without spaces: what reaches the WDS for a natured kind (as the end user,
// never with the client's credentials), what never does (hidden kinds, bodies that do not parse),
// how the WDS's answers and failures come back, and discovery minus hidden kinds.
import t from 'tap';
import { ROOT, testApp } from '../fixtures/view-app.js';

const CM_PATH = '/api/v1/namespaces/team-a/configmaps/settings';
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a', resourceVersion: '42' }, data: { color: 'blue' } };

t.test('a GET of a natured kind reaches the WDS as the end user, without the client credentials', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  upstream.pool.intercept({ path: `${CM_PATH}?resourceVersion=0`, method: 'GET' })
    .reply(200, JSON.stringify(CONFIGMAP), { headers: { 'content-type': 'application/json', 'audit-id': 'a-1', connection: 'keep-alive', 'keep-alive': 'timeout=5' } });
  const res = await app.inject({
    url: `${ROOT}${CM_PATH}?resourceVersion=0`,
    headers: {
      authorization: 'Bearer the-clients-token', accept: 'application/json', 'user-agent': 'kubectl/v1.33.0',
      'impersonate-user': 'system:admin', 'x-remote-user': 'system:admin', connection: 'keep-alive, x-hop', 'x-hop': 'dropped',
    },
  });
  t.equal(res.statusCode, 200);
  t.same(res.json(), CONFIGMAP, 'the object as the WDS sent it');
  t.equal(res.headers['content-type'], 'application/json');
  t.equal(res.headers['audit-id'], 'a-1', 'the WDS\'s own headers come back');
  t.notOk(res.headers['keep-alive'], 'hop-by-hop headers of the answer do not');

  const calls = upstream.calls();
  t.equal(calls.length, 1);
  const sent = calls[0]!;
  t.equal(sent.method, 'GET');
  t.equal(sent.path, `${CM_PATH}?resourceVersion=0`, 'the path without the view root, the query as it was');
  t.match(sent.headers, {
    'impersonate-user': 'token-user', 'impersonate-uid': 'uid-7', 'impersonate-group': ['system:authenticated'],
    'impersonate-extra-scopes.example.com': ['a'], accept: 'application/json', 'user-agent': 'kubectl/v1.33.0',
  });
  t.notOk(sent.headers.authorization, 'the client\'s token is not sent on');
  t.notOk(sent.headers['x-remote-user'], 'nor the identity headers it sent');
  t.notOk(sent.headers['x-hop'], 'nor headers its Connection header names');
});

t.test('a POST body travels byte for byte, and the status code of the WDS comes back', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},  "data":{"color":"blue"}}';
  let received: unknown;
  upstream.pool.intercept({ path: '/api/v1/namespaces/team-a/configmaps', method: 'POST' }).reply((opts) => {
    received = opts.body;
    return { statusCode: 201, data: JSON.stringify(CONFIGMAP), responseOptions: { headers: { 'content-type': 'application/json' } } };
  });
  const res = await app.inject({
    method: 'POST', url: `${ROOT}/api/v1/namespaces/team-a/configmaps`, headers: { 'x-test-user': 'alice', 'content-type': 'application/json' }, payload: body,
  });
  t.equal(String(received), body, 'not re-encoded');
  t.equal(res.statusCode, 201);
  const sent = upstream.calls()[0]!;
  t.equal(sent.headers['content-length'], String(Buffer.byteLength(body)), 'its length as received');
  t.equal(sent.headers['impersonate-user'], 'alice');
  t.same(sent.headers['impersonate-group'], ['dev', 'system:authenticated']);
});

t.test('hidden kinds and groups are 404 Status objects and never reach the WDS', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  const headers = { 'x-test-user': 'alice' };
  for (const path of ['/api/v1/namespaces/a/events', '/api/v1/nodes', '/apis/coordination.k8s.io/v1/namespaces/a/leases/x',
    '/apis/control.kubestellar.io/v1alpha1/bindingpolicies', '/apis/denatured.kubestellar.io', '/apis/view.kubestellar.io/v1alpha1/spaces',
    // Percent-encoded the same: kube-apiserver decodes before routing, so the view classifies decoded too.
    '/api/v1/namespaces/a/event%73', '/apis/control%2Ekubestellar.io/v1alpha1/bindingpolicies']) {
    const res = await app.inject({ url: `${ROOT}${path}`, headers });
    t.equal(res.statusCode, 404, path);
    t.match(res.json(), { kind: 'Status', code: 404, reason: 'NotFound' }, path);
  }
  t.same(upstream.calls(), []);
});

t.test('a body that does not parse is a 400 Status and never reaches the WDS', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  const url = `${ROOT}/api/v1/namespaces/a/configmaps`;
  const json = await app.inject({ method: 'POST', url, headers: { 'x-test-user': 'alice', 'content-type': 'application/json' }, payload: '{"metadata":' });
  t.equal(json.statusCode, 400);
  t.match(json.json(), { kind: 'Status', code: 400, reason: 'BadRequest', message: /not valid JSON/ });
  const yaml = await app.inject({ method: 'PATCH', url: `${url}/x`, headers: { 'x-test-user': 'alice', 'content-type': 'application/apply-patch+yaml' }, payload: 'a: [' });
  t.equal(yaml.statusCode, 400);
  t.match(yaml.json(), { kind: 'Status', code: 400, message: /not valid YAML/ });
  t.same(upstream.calls(), []);
});

t.test('the WDS\'s errors: JSON Status objects pass as they are, plain text becomes a Status', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  const notFound = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'configmaps "settings" not found', reason: 'NotFound', details: { name: 'settings', kind: 'configmaps' }, code: 404 };
  upstream.pool.intercept({ path: CM_PATH, method: 'GET' }).reply(404, JSON.stringify(notFound), { headers: { 'content-type': 'application/json' } });
  upstream.pool.intercept({ path: '/apis/no.such.group/v1/things', method: 'GET' }).reply(404, '404 page not found\n', { headers: { 'content-type': 'text/plain; charset=utf-8' } });
  const headers = { 'x-test-user': 'alice' };

  const json = await app.inject({ url: `${ROOT}${CM_PATH}`, headers });
  t.equal(json.statusCode, 404);
  t.same(json.json(), notFound);

  const text = await app.inject({ url: `${ROOT}/apis/no.such.group/v1/things`, headers });
  t.equal(text.statusCode, 404);
  t.match(text.headers['content-type'], /^application\/json/);
  t.same(text.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: '404 page not found', reason: 'NotFound', code: 404 });
});

t.test('a WDS that does not answer is a 503 Status', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  upstream.pool.intercept({ path: CM_PATH, method: 'GET' }).replyWithError(new Error('connect ECONNREFUSED 127.0.0.1:6443'));
  const res = await app.inject({ url: `${ROOT}${CM_PATH}`, headers: { 'x-test-user': 'alice' } });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: /the WDS did not answer: connect ECONNREFUSED/ });
});

t.test('denatured kinds are not passed through: before their first sync they are 503', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  const res = await app.inject({ url: `${ROOT}/apis/rbac.authorization.k8s.io/v1/clusterroles`, headers: { 'x-test-user': 'alice' } });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { kind: 'Status', code: 503, message: /denatured kinds are not ready yet/ });
  t.same(upstream.calls(), []);
});

t.test('discovery of the view: asked of the WDS as the user in JSON, hidden kinds removed', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  const resource = (name: string, kind: string, namespaced = true) => ({ name, singularName: '', namespaced, kind, verbs: ['get', 'list'] });
  upstream.pool.intercept({ path: '/api/v1', method: 'GET' }).reply(200, JSON.stringify({
    kind: 'APIResourceList', groupVersion: 'v1',
    resources: [resource('configmaps', 'ConfigMap'), resource('events', 'Event'), resource('nodes', 'Node', false), resource('pods', 'Pod'), resource('pods/log', 'Pod')],
  }), { headers: { 'content-type': 'application/json' } });
  const res = await app.inject({ url: `${ROOT}/api/v1`, headers: { 'x-test-user': 'alice', accept: 'application/vnd.kubernetes.protobuf, application/json' } });
  t.equal(res.statusCode, 200);
  t.same(res.json().resources.map((r: { name: string }) => r.name), ['configmaps', 'pods', 'pods/log']);
  const sent = upstream.calls()[0]!;
  t.equal(sent.headers.accept, 'application/json', 'JSON only: this server rewrites the answer');
  t.equal(sent.headers['impersonate-user'], 'alice');
});
