// The HTTP app of `ksview serve` without spaces: health, the group's own discovery and resources,
// authentication and authorization at the door, the error catalogue, and /metrics.
import t from 'tap';
import { ROOT, testApp, WDS } from '../fixtures/view-app.js';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

t.test('health checks need no credentials; /readyz follows readiness', async (t) => {
  const { app, setReady, close } = await testApp();
  t.teardown(close);
  for (const url of ['/healthz', '/livez', '/readyz']) {
    const res = await app.inject({ url });
    t.equal(res.statusCode, 200, url);
    t.equal(res.body, 'ok', url);
  }
  setReady(false);
  const notReady = await app.inject({ url: '/readyz' });
  t.equal(notReady.statusCode, 503);
  t.match(notReady.body, /readyz check failed/);
});

t.test('without credentials every other path is a 401 Status, before anything else happens', async (t) => {
  const { app, upstream, close } = await testApp();
  t.teardown(close);
  for (const url of ['/apis', '/apis/view.kubestellar.io/v1alpha1', '/apis/view.kubestellar.io/v1alpha1/spaces', `${ROOT}/api/v1/namespaces/a/configmaps`, '/nope']) {
    const res = await app.inject({ url });
    t.equal(res.statusCode, 401, url);
    t.same(res.json(), UNAUTHORIZED, url);
  }
  t.same(upstream.calls(), [], 'nothing reached the WDS');
});

t.test('the group view.kubestellar.io: discovery for any user, aggregated with its exact media type', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  const headers = { 'x-test-user': 'alice' };
  const list = await app.inject({ url: '/apis', headers });
  t.equal(list.json().kind, 'APIGroupList');
  t.same(list.json().groups.map((g: { name: string }) => g.name), ['view.kubestellar.io']);

  const v2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
  const aggregated = await app.inject({ url: '/apis', headers: { ...headers, accept: `${v2},application/json` } });
  t.equal(aggregated.headers['content-type'], v2, 'the media type exactly as kube-apiserver writes it');
  t.equal(aggregated.headers.vary, 'Accept');
  t.equal(aggregated.json().kind, 'APIGroupDiscoveryList');

  const group = await app.inject({ url: '/apis/view.kubestellar.io', headers });
  t.equal(group.json().preferredVersion.groupVersion, 'view.kubestellar.io/v1alpha1');
  const resources = await app.inject({ url: '/apis/view.kubestellar.io/v1alpha1', headers });
  t.same(resources.json().resources.map((r: { name: string }) => r.name), ['spaces', 'spaces/proxy', 'bindings', 'combinedstatuses', 'upsyncedobjects']);
  const v3 = await app.inject({ url: '/openapi/v3', headers });
  t.same(Object.keys(v3.json().paths), ['apis/view.kubestellar.io/v1alpha1'], 'OpenAPI v3 lists this group only (the aggregator merges every key)');
});

t.test('spaces: the one WDS for a user the authorizer allows, 403 otherwise, 404 for another name', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  const space = await app.inject({ url: `/apis/view.kubestellar.io/v1alpha1/spaces/${WDS}`, headers: { 'x-test-user': 'admin' } });
  t.equal(space.statusCode, 200);
  t.equal(space.json().kind, 'Space');
  t.equal(space.json().status.viewPath, ROOT);
  t.equal(space.json().spec.server, 'https://wds.test:6443');

  const list = await app.inject({ url: '/apis/view.kubestellar.io/v1alpha1/spaces', headers: { 'x-test-user': 'admin' } });
  t.same(list.json().items.map((i: { metadata: { name: string } }) => i.metadata.name), [WDS]);

  const forbidden = await app.inject({ url: `/apis/view.kubestellar.io/v1alpha1/spaces/${WDS}`, headers: { 'x-test-user': 'alice' } });
  t.equal(forbidden.statusCode, 403);
  t.match(forbidden.json(), { kind: 'Status', code: 403, reason: 'Forbidden' });

  const other = await app.inject({ url: '/apis/view.kubestellar.io/v1alpha1/spaces/other', headers: { 'x-test-user': 'admin' } });
  t.equal(other.statusCode, 404);
  t.match(other.json(), { kind: 'Status', code: 404, reason: 'NotFound', details: { name: 'other', kind: 'spaces' } });
});

t.test('spaces: a watch sends the space unless the client is at its resourceVersion, and ends at timeoutSeconds', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  const headers = { 'x-test-user': 'admin' };
  const events = (body: string) => body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; object: { kind: string; metadata: { name?: string; annotations?: Record<string, string> } } });
  const url = '/apis/view.kubestellar.io/v1alpha1/spaces?timeoutSeconds=1&watch=';
  for (const truth of ['true', '1', 'T']) {
    const res = await app.inject({ url: url + truth, headers });
    t.equal(res.statusCode, 200, `watch=${truth}`);
    t.same(events(res.body).map((e) => [e.type, e.object.metadata.name]), [['ADDED', WDS]], `watch=${truth}: the one space, then the end`);
  }
  const listed = (await app.inject({ url: '/apis/view.kubestellar.io/v1alpha1/spaces', headers })).json() as { metadata: { resourceVersion: string } };
  const current = await app.inject({ url: `${url}true&resourceVersion=${listed.metadata.resourceVersion}`, headers });
  t.same(events(current.body), [], 'a watch from the list\'s resourceVersion gets nothing new');
  const old = await app.inject({ url: `${url}true&resourceVersion=1`, headers });
  t.match(events(old.body), [{ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } }], 'from a resourceVersion older than the server: 410 Expired');
  const initial = await app.inject({ url: `${url}true&resourceVersion=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, headers });
  t.equal(initial.statusCode, 422, 'sendInitialEvents: refused as the WDS refuses it (WatchList off in 1.33)');
  const notAllowed = await app.inject({ url: `${url}true`, headers: { 'x-test-user': 'alice' } });
  t.equal(notAllowed.statusCode, 403, 'watching needs the watch verb');
});

t.test('unknown paths, bad paths and oversized bodies are Status objects', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  const headers = { 'x-test-user': 'admin' };
  const unknown = await app.inject({ url: '/nope', headers });
  t.equal(unknown.statusCode, 404);
  t.match(unknown.json(), { kind: 'Status', code: 404, reason: 'NotFound' });
  // (Dot segments cannot be sent with inject, which resolves them: view-hostile.test.ts sends them.)
  const encodedSlash = await app.inject({ url: `${ROOT}/api/v1/namespaces/a%2Fb/secrets`, headers });
  t.equal(encodedSlash.statusCode, 400);
  t.match(encodedSlash.json(), { kind: 'Status', code: 400, message: /encoded separators/ });
  const tooLarge = await app.inject({ method: 'POST', url: `${ROOT}/api/v1/namespaces/a/configmaps`, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(4 * 1024 * 1024) }, payload: '{}' });
  t.equal(tooLarge.statusCode, 413);
  t.match(tooLarge.json(), { kind: 'Status', code: 413 });
});

t.test('/metrics: for users allowed the path, counting requests by scope', async (t) => {
  const { app, close } = await testApp();
  t.teardown(close);
  await app.inject({ url: '/apis', headers: { 'x-test-user': 'alice' } });
  await app.inject({ url: '/apis', headers: { 'x-test-user': 'alice' } });
  const denied = await app.inject({ url: '/metrics', headers: { 'x-test-user': 'alice' } });
  t.equal(denied.statusCode, 403);
  const metrics = await app.inject({ url: '/metrics', headers: { 'x-test-user': 'admin' } });
  t.equal(metrics.statusCode, 200);
  t.match(metrics.body, /ksview_apiserver_requests_total\{method="GET",scope="group",code="200"\} 2\n/);
  t.match(metrics.body, /ksview_apiserver_requests_total\{method="GET",scope="other",code="403"\} 1\n/);
  t.match(metrics.body, /ksview_apiserver_request_duration_seconds_count\{method="GET",scope="group"\} 2\n/);
});
