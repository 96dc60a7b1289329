// Graceful shutdown (src/apiserver/graceful-shutdown.ts, `ksview serve --shutdown-delay-duration`): readiness
// off at once while everything else is still served; then draining a real HTTP server on loopback:
// requests in flight finish, watches end with their last chunk, no new connection is accepted,
// and what outlives the grace period is cut. And the Lease released at once (leader-election.ts).
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GracefulShutdown, markLongRunning } from '../../src/apiserver/graceful-shutdown.js';
import { LeaderElector } from '../../src/kube/leader-election.js';
import { testApp } from '../fixtures/view-app.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

t.test('shutting down: /readyz answers 503 at once, saying why; everything else is still served', async (t) => {
  let shutting = false;
  const { app, close } = await testApp({ shuttingDown: () => shutting });
  t.teardown(close);
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
  shutting = true;
  const res = await app.inject({ url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.match(res.body, /shutting down/);
  t.equal((await app.inject({ url: '/livez' })).statusCode, 200, 'alive: the kubelet must not restart it');
  t.equal((await app.inject({ url: '/apis', headers: { 'x-test-user': 'alice' } })).statusCode, 200, 'requests are still served during the delay');
});

interface Served { server: http.Server; gate: GracefulShutdown; port: number; received: string[] }

async function serveLoopback(): Promise<Served> {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    received.push(req.url ?? '');
    if (req.url === '/slow') {
      setTimeout(() => res.end('done'), 400);
    } else if (req.url === '/watch') {
      markLongRunning(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      let n = 0;
      const timer = setInterval(() => res.write(`{"type":"ADDED","n":${n++}}\n`), 20);
      res.on('close', () => clearInterval(timer));
    } else if (req.url === '/hang') {
      // never answers
    } else {
      res.end('ok');
    }
  });
  const gate = new GracefulShutdown(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, gate, port: (server.address() as AddressInfo).port, received };
}

function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: string; complete: boolean; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, body, complete: res.complete, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const waitFor = async (cond: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

t.test('drain: in-flight requests finish, watches end cleanly, new connections are refused', async (t) => {
  const s = await serveLoopback();
  const agent = new http.Agent({ keepAlive: true });
  t.teardown(() => { agent.destroy(); s.server.closeAllConnections(); s.server.close(); });
  // A keep-alive connection that goes idle before the drain.
  t.equal((await get(s.port, '/quick', agent)).body, 'ok');
  const watch = get(s.port, '/watch');
  const slow = get(s.port, '/slow', agent);
  await waitFor(() => s.received.includes('/slow') && s.received.includes('/watch'));
  await new Promise((r) => setTimeout(r, 60)); // a few events on the watch
  const started = Date.now();
  const drained = s.gate.drain(5000);
  t.equal(s.gate.shuttingDown, true);

  const w = await watch;
  t.equal(w.status, 200);
  t.ok(w.complete, 'the watch ended with its last chunk (a clean end, not a cut connection)');
  const lines = w.body.split('\n').filter(Boolean);
  t.ok(lines.length >= 1 && lines.every((l) => JSON.parse(l).type === 'ADDED'), 'every event whole');

  const sl = await slow;
  t.same([sl.status, sl.body, sl.complete], [200, 'done', true], 'the request in flight got its whole answer');
  t.ok(Date.now() - started >= 300, 'draining waited for it');
  t.same(await drained, { cut: 0 }, 'nothing had to be cut');
  t.equal(s.gate.inFlight, 0);
  await t.rejects(get(s.port, '/quick'), { code: 'ECONNREFUSED' }, 'the listener is closed');
});

t.test('drain is bounded: a request still unanswered after the grace period is cut', async (t) => {
  const s = await serveLoopback();
  t.teardown(() => { s.server.closeAllConnections(); s.server.close(); });
  const hang = get(s.port, '/hang');
  await waitFor(() => s.received.includes('/hang'));
  const started = Date.now();
  t.same(await s.gate.drain(300), { cut: 1 });
  const took = Date.now() - started;
  t.ok(took >= 300 && took < 2000, `waited the grace period (${took} ms)`);
  await t.rejects(hang, { code: 'ECONNRESET' }, 'the client sees the connection closed');
});

t.test('leadership: stopping a leader releases the Lease at once (holder cleared)', async (t) => {
  const wds = mockUpstream();
  t.teardown(() => wds.close());
  const path = '/apis/coordination.k8s.io/v1/namespaces/kubestellar-view/leases/kubestellar-view-placement-wds1';
  wds.pool.intercept({ path, method: 'GET' }).reply(404, {});
  wds.pool.intercept({ path: '/apis/coordination.k8s.io/v1/namespaces/kubestellar-view/leases', method: 'POST' }).reply(201, {});
  const events: string[] = [];
  const elector = new LeaderElector(wds.up, {
    namespace: 'kubestellar-view', name: 'kubestellar-view-placement-wds1', retryMs: 60_000,
    onStartedLeading: () => events.push('started'), onStoppedLeading: () => events.push('stopped'),
  });
  elector.start();
  await waitFor(() => elector.isLeader);
  const held = { metadata: { name: 'kubestellar-view-placement-wds1', namespace: 'kubestellar-view', resourceVersion: '7' },
    spec: { holderIdentity: elector.identity, leaseDurationSeconds: 10, leaseTransitions: 0 } };
  wds.pool.intercept({ path, method: 'GET' }).reply(200, held);
  wds.pool.intercept({ path, method: 'PUT' }).reply(200, {});
  await elector.stop();
  t.same(events, ['started', 'stopped'], 'the leader\'s work stopped before the release');
  const put = wds.calls().find((c) => c.method === 'PUT');
  t.match(put?.body, { metadata: { resourceVersion: '7' }, spec: { holderIdentity: '', leaseDurationSeconds: 1 } },
    'no holder: a standby takes over on its next try, without waiting for the Lease to expire');
});

t.test('leadership: a Lease won while stopping is released too', async (t) => {
  const wds = mockUpstream();
  t.teardown(() => wds.close());
  const path = '/apis/coordination.k8s.io/v1/namespaces/kubestellar-view/leases/l';
  let answerCreate!: () => void;
  const createAnswered = new Promise<void>((r) => { answerCreate = r; });
  wds.pool.intercept({ path, method: 'GET' }).reply(404, {});
  wds.pool.intercept({ path: '/apis/coordination.k8s.io/v1/namespaces/kubestellar-view/leases', method: 'POST' })
    .reply(201, {}).delay(200);
  const elector = new LeaderElector(wds.up, { namespace: 'kubestellar-view', name: 'l', retryMs: 60_000, onStartedLeading: () => answerCreate(), onStoppedLeading: () => undefined });
  elector.start();
  await waitFor(() => wds.calls().some((c) => c.method === 'POST'));
  wds.pool.intercept({ path, method: 'GET' }).reply(200, { metadata: { name: 'l', namespace: 'kubestellar-view' }, spec: { holderIdentity: elector.identity } });
  wds.pool.intercept({ path, method: 'PUT' }).reply(200, {});
  await elector.stop();
  await createAnswered;
  t.equal(elector.isLeader, false);
  t.match(wds.calls().find((c) => c.method === 'PUT')?.body, { spec: { holderIdentity: '' } }, 'the Lease it won as it stopped is not kept');
});
