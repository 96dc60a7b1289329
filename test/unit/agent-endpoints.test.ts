// The agent's endpoints, answered through app.inject: only /healthz, /livez and /readyz are open;
// every other path answers 401 without a credential the delegate cluster vouches for (TokenReview),
// 403 to a user its SubjectAccessReview does not allow to get the path, and its content otherwise.
// And the pull wiring: readiness says why it is false (ITS credentials rejected, cluster not
// accepted), the worker starts only after acceptance; the push agent's /clusters is guarded too.
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import t, { type Test } from 'tap';
import { buildEndpoints } from '../../src/agent/endpoints/endpoints.js';
import { createAgentMetrics } from '../../src/agent/shared/agent-metrics.js';
import { runPullAgent, runPushAgent } from '../../src/agent/agent-process.js';
import type { ClusterWorker, PlacedResource } from '../../src/agent/shared/contract.js';
import type { RegistrationLike } from '../../src/agent/shared/worker-factory.js';
import type { RegistrationOptions } from '../../src/agent/registration/cluster-registration.js';
import { fixedClientCAs } from '../../src/kube/client-ca.js';
import { DelegatedAuth } from '../../src/kube/delegated-auth.js';
import { fakeCluster } from '../fixtures/agent/fake-cluster.js';
import { mockUpstream, requestBody, type MockUpstream } from '../fixtures/mock-upstream.js';

const TOKENREVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const SARS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/**
 * The delegate cluster: tokens `token-<user>` are that user (any other token is not
 * authenticated); `rights[user]` lists the paths the user may get.
 */
function delegate(t: Test, rights: Record<string, string[]>): MockUpstream {
  const m = mockUpstream('https://wec1.test:6443');
  t.teardown(() => m.close());
  const json = (data: unknown) => ({ statusCode: 201, data: JSON.stringify(data), responseOptions: { headers: { 'content-type': 'application/json' } } });
  m.pool.intercept({ path: TOKENREVIEWS, method: 'POST' }).reply((opts) => {
    const token = (requestBody(opts) as { spec: { token: string } }).spec.token;
    const user = /^token-(\w+)$/.exec(token)?.[1];
    return json({ kind: 'TokenReview', status: user ? { authenticated: true, user: { username: user, uid: `uid-${user}`, groups: ['system:authenticated'] } } : { authenticated: false } });
  }).persist();
  m.pool.intercept({ path: SARS, method: 'POST' }).reply((opts) => {
    const spec = (requestBody(opts) as { spec: { user: string; nonResourceAttributes: { path: string; verb: string } } }).spec;
    const allowed = spec.nonResourceAttributes.verb === 'get' && (rights[spec.user] ?? []).includes(spec.nonResourceAttributes.path);
    return json({ kind: 'SubjectAccessReview', status: { allowed } });
  }).persist();
  return m;
}

const bearer = (user: string) => ({ authorization: `Bearer token-${user}` });

const placed: PlacedResource[] = [
  { cluster: 'wec1', work: 'w1', group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'n', name: 'ok', ready: true, reason: '' },
  { cluster: 'wec1', work: 'w2', group: '', version: 'v1', kind: 'ConfigMap', namespace: 'n', name: 'bad', ready: false, reason: 'AppliedManifestFailed: conflict with kubectl' },
];

async function until(cond: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('healthz, readyz, metrics, federatedresources', async (t) => {
  const metrics = createAgentMetrics();
  metrics.applies.inc({ cluster: 'wec1', outcome: 'applied' });
  let problems: string[] = ['ITS https://its rejects the kubeconfig\'s credentials (401 Unauthorized): wrong or expired'];
  const m = delegate(t, { prom: ['/metrics', '/federatedresources', '/federatedresources/notready'] });
  const app = buildEndpoints({ registry: metrics.registry, readiness: () => problems, placed: () => placed, auth: new DelegatedAuth(m.up, fixedClientCAs('')) });
  t.teardown(() => app.close());
  t.equal((await app.inject('/healthz')).statusCode, 200);
  const notReady = await app.inject('/readyz');
  t.equal(notReady.statusCode, 503);
  t.match(notReady.body, /401 Unauthorized/);
  problems = [];
  t.equal((await app.inject('/readyz')).body, 'ok');
  const get = (url: string) => app.inject({ url, headers: bearer('prom') });
  const m1 = await get('/metrics');
  t.match(m1.body, /ksview_agent_applies_total\{cluster="wec1",outcome="applied"\} 1/);
  t.same(JSON.parse((await get('/federatedresources')).body).items, placed);
  t.same(JSON.parse((await get('/federatedresources/notready')).body).items, [placed[1]]);
});

t.test('without a credential: 401 on every path but /healthz, /livez and /readyz, and the delegate is not asked', async (t) => {
  const m = delegate(t, {});
  const app = buildEndpoints({ registry: createAgentMetrics().registry, readiness: () => [], placed: () => placed, auth: new DelegatedAuth(m.up, fixedClientCAs('')) });
  t.teardown(() => app.close());
  app.get('/clusters', async () => ({ items: ['added after the others, as the push agent does'] }));
  for (const url of ['/healthz', '/livez', '/readyz']) t.equal((await app.inject(url)).statusCode, 200, `${url} is open`);
  for (const url of ['/metrics', '/federatedresources', '/federatedresources/notready', '/clusters', '/nothing-here', '/healthz/', '/metrics?x=/healthz']) {
    const res = await app.inject(url);
    t.equal(res.statusCode, 401, `${url}: 401`);
    t.same(JSON.parse(res.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }, `${url}: an Unauthorized Status`);
    t.notMatch(res.body, /wec1|ConfigMap|Deployment|ksview_agent/, `${url}: nothing of what was placed`);
  }
  const basic = await app.inject({ url: '/metrics', headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } });
  t.equal(basic.statusCode, 401, 'basic auth is no credential here');
  t.same(m.calls(), [], 'no review asked for a request without a token');
});

t.test('a token the delegate does not authenticate: 401', async (t) => {
  const m = delegate(t, {});
  const app = buildEndpoints({ registry: createAgentMetrics().registry, readiness: () => [], placed: () => placed, auth: new DelegatedAuth(m.up, fixedClientCAs('')) });
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/federatedresources', headers: { authorization: 'Bearer forged' } });
  t.equal(res.statusCode, 401);
  t.same(m.calls().map((c) => [c.path, (c.body as { spec: { token: string } }).spec.token]), [[TOKENREVIEWS, 'forged']], 'the token was reviewed by the delegate');
});

t.test('an authenticated user without the right: 403 naming the user and path; with it: 200', async (t) => {
  const m = delegate(t, { alice: ['/federatedresources'] });
  const app = buildEndpoints({ registry: createAgentMetrics().registry, readiness: () => [], placed: () => placed, auth: new DelegatedAuth(m.up, fixedClientCAs('')) });
  t.teardown(() => app.close());
  const denied = await app.inject({ url: '/metrics', headers: bearer('alice') });
  t.equal(denied.statusCode, 403);
  t.match(JSON.parse(denied.body), { kind: 'Status', reason: 'Forbidden', code: 403, message: 'forbidden: User "alice" cannot get path "/metrics"' });
  t.notMatch(denied.body, /ksview_agent/);
  const sar = m.calls().find((c) => c.path === SARS)!.body as { spec: unknown };
  t.same(sar.spec, { user: 'alice', uid: 'uid-alice', groups: ['system:authenticated'], extra: {}, nonResourceAttributes: { path: '/metrics', verb: 'get' } },
    'the SubjectAccessReview asks about the user (with uid and groups) and the non-resource path');
  const notready = await app.inject({ url: '/federatedresources/notready', headers: bearer('alice') });
  t.equal(notready.statusCode, 403, 'a right on /federatedresources is not one on /federatedresources/notready');
  const ok = await app.inject({ url: '/federatedresources', headers: bearer('alice') });
  t.equal(ok.statusCode, 200);
  t.same(JSON.parse(ok.body).items, placed);
  const posted = await app.inject({ method: 'POST', url: '/federatedresources', headers: bearer('alice') });
  t.equal(posted.statusCode, 403, 'another verb is asked as that verb (post), and denied');
  const before = m.calls().length;
  t.equal((await app.inject({ url: '/federatedresources', headers: bearer('alice') })).statusCode, 200);
  t.equal(m.calls().length, before, 'the token and the decision are cached: nothing asked again within seconds');
});

t.test('the delegate unreachable: 401 when the token cannot be reviewed, 500 when the decision cannot be asked; no crash', async (t) => {
  const m = mockUpstream('https://wec1.test:6443');
  t.teardown(() => m.close());
  const lines: string[] = [];
  const app = buildEndpoints({ registry: createAgentMetrics().registry, readiness: () => [], placed: () => placed, auth: new DelegatedAuth(m.up, fixedClientCAs('')), log: (l) => lines.push(l) });
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/metrics', headers: bearer('alice') });
  t.equal(res.statusCode, 401);
  t.match(lines, [/^endpoints: cannot review a bearer token \(answering 401\): .*tokenreviews/]);
  t.equal((await app.inject({ url: '/federatedresources', headers: bearer('bob') })).statusCode, 401);
  t.equal(lines.length, 1, 'the same reason is said once');
  m.pool.intercept({ path: TOKENREVIEWS, method: 'POST' }).reply(201, { status: { authenticated: true, user: { username: 'alice' } } });
  const noAuthz = await app.inject({ url: '/metrics', headers: bearer('alice') });
  t.equal(noAuthz.statusCode, 500);
  t.match(JSON.parse(noAuthz.body), { reason: 'InternalError', code: 500 });
  t.match(lines[1], /cannot ask for an authorization decision \(answering 500\)/);
  t.equal((await app.inject('/healthz')).statusCode, 200, 'still serving');
});

t.test('pull agent: worker after acceptance, readiness reasons, close', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  const wec = fakeCluster('https://wec1.test:6443');
  wec.raw.set('/readyz', { status: 200, body: 'ok' });
  // The WEC vouches for any token as user "prom", allowed every path (the endpoints' own rules are tested above).
  wec.raw.set(TOKENREVIEWS, { status: 201, body: { status: { authenticated: true, user: { username: 'prom' } } } });
  wec.raw.set(SARS, { status: 201, body: { status: { allowed: true } } });
  its.raw.set('/apis/cluster.open-cluster-management.io/v1/managedclusters/wec1', { status: 200, body: {} });
  let reg: RegistrationLike & { o: RegistrationOptions; accepted: boolean } | undefined;
  const actions: string[] = [];
  const agent = await runPullAgent({
    its: its.up, itsServer: 'https://its.test:6443', wec: wec.up, cluster: 'wec1', agentID: 'a', metrics: createAgentMetrics(),
    log: () => {}, probeMs: 20,
    createWorker: (o) => ({
      cluster: o.cluster, start: async () => { actions.push('start'); }, stop: async () => { actions.push('stop'); },
      ready: () => true, setWecUnreachable: (r: string | undefined) => { actions.push(`unreachable:${r ?? ''}`); }, placed: () => placed,
    }) as ClusterWorker,
    createRegistration: (o) => (reg = {
      o, accepted: false, itsError: undefined, start() {}, async stop() {}, isAccepted() { return this.accepted; },
      setWecUnreachable() {}, setHeldByAnotherFleet() {},
    }),
  });
  t.teardown(() => agent.close());
  await until(() => !agent.readiness().some((r) => /not checked/.test(r)), 'first probes');
  t.match(agent.readiness(), [/not accepted by the hub/]);
  t.same(actions, [], 'no worker before acceptance');
  t.equal((await agent.app.inject('/federatedresources')).statusCode, 401, 'no credential: 401');
  const get = (url: string) => agent.app.inject({ url, headers: { authorization: 'Bearer any' } });
  t.same(JSON.parse((await get('/federatedresources')).body).items, []);
  t.ok(wec.calls().some((c) => c.path === TOKENREVIEWS), 'the pull agent asks its WEC who a caller is (as kubelet does)');
  t.notOk(its.calls().some((c) => c.path === TOKENREVIEWS || c.path === SARS), 'not the ITS');
  reg!.accepted = true;
  reg!.o.onAccepted(true);
  await until(() => actions.includes('start'), 'worker started');
  t.same(agent.readiness(), []);
  t.equal(JSON.parse((await get('/federatedresources/notready')).body).items.length, 1);

  wec.fail.push({ match: () => true, status: 401 });
  await until(() => agent.readiness().length > 0, 'WEC credentials rejected');
  t.match(agent.readiness(), [/WEC .*401 Unauthorized/]);
  t.equal((await agent.app.inject('/readyz')).statusCode, 503);
  await until(() => actions.some((a) => /^unreachable:.*401/.test(a)), 'worker told the WEC is unreachable');
  await agent.close();
  t.equal(actions[0], 'start');
  t.equal(actions.at(-1), 'stop');
});

t.test('push agent: /clusters and the others are guarded by the ITS\'s reviews', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  its.lists.add('/apis/cluster.open-cluster-management.io/v1/managedclusters');
  its.lists.add('/api/v1/secrets');
  // fakeKube answers `raw` paths as set at the time of each request.
  const vouch = (username: string) => its.raw.set(TOKENREVIEWS, { status: 201, body: { status: { authenticated: true, user: { username } } } });
  const decide = (allowed: boolean) => its.raw.set(SARS, { status: 201, body: { status: { allowed } } });
  const agent = await runPushAgent({
    its: its.up, itsServer: 'https://its.test:6443', fleetID: 'f', agentID: 'a', metrics: createAgentMetrics(), log: () => {}, probeMs: 1000,
    createWorker: () => { throw new Error('no cluster to serve'); },
  });
  t.teardown(() => agent.close());
  t.equal((await agent.app.inject('/clusters')).statusCode, 401, 'no credential: 401');
  vouch('denied');
  decide(false);
  t.equal((await agent.app.inject({ url: '/clusters', headers: { authorization: 'Bearer t1' } })).statusCode, 403, 'not allowed: 403');
  vouch('viewer');
  decide(true);
  const ok = await agent.app.inject({ url: '/clusters', headers: { authorization: 'Bearer t2' } });
  t.equal(ok.statusCode, 200, 'allowed: 200');
  t.same(JSON.parse(ok.body), { items: [] });
});

t.test('listening with no certificate given: HTTPS with a self-signed one for loopback; never plain HTTP', async (t) => {
  const its = fakeCluster('https://its.test:6443');
  its.lists.add('/apis/cluster.open-cluster-management.io/v1/managedclusters');
  const agent = await runPushAgent({
    its: its.up, itsServer: 'https://its.test:6443', fleetID: 'f', agentID: 'a', metrics: createAgentMetrics(), log: () => {}, probeMs: 1000,
    createWorker: () => { throw new Error('no cluster to serve'); }, port: 0,
  });
  t.teardown(() => agent.close());
  t.match(agent.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const { status, cert } = await new Promise<{ status: number; cert: Buffer }>((resolve, reject) => {
    https.get(`${agent.url}/healthz`, { rejectUnauthorized: false }, (res) => {
      const raw = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().raw;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cert: raw }));
    }).on('error', reject);
  });
  t.equal(status, 200);
  const x = new X509Certificate(cert);
  t.equal(x.checkIP('127.0.0.1'), '127.0.0.1', 'for 127.0.0.1');
  t.equal(x.checkHost('localhost'), 'localhost', 'and localhost');
  t.notOk(x.ca, 'a serving certificate, not its CA');
  const plain = await fetch(agent.url.replace('https:', 'http:') + '/healthz').then((r) => r.status, (err: Error) => err.message);
  t.not(plain, 200, 'plain HTTP gets no answer');
});
