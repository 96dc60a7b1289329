// The upgrade passthrough (src/apiserver/view/upgrade-proxy.ts) between a real TLS client and a real
// local TLS "WDS" that records every byte it receives (docs/security.md D0: request smuggling as
// the server's identity). The WDS answers a refused upgrade with 403 and keeps the connection
// alive, as kube-apiserver does: anything the proxy sent after the first request would be read
// there as a second request under the proxy's own credentials. Nothing after the first request's
// head may reach it before it answers 101; a refusal is relayed as a Status and both connections
// close; a 101 is relayed and only then the held bytes flow, both ways.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import t, { type Test } from 'tap';
import { handleUpgrades } from '../../src/apiserver/view/upgrade-proxy.js';
import { RequestLimits } from '../../src/apiserver/http/request-limits.js';
import { createCA, issueCert } from '../../src/kube/pki.js';
import type { Upstream } from '../../src/kube/upstream.js';
import { KindCategories } from '../../src/storage/kind-categories.js';
import { waitFor } from '../../src/kube/wait.js';

const ROOT = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
const ca = await createCA('test-ca');
const serving = await issueCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usages: ['server'] });

const FORBIDDEN = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'configmaps is forbidden: User "sa-user" cannot list resource "configmaps"', reason: 'Forbidden', code: 403 });

/** A WDS on a raw TLS socket: records every byte; answers each connection's first request when `answer()` is called (or at once). */
async function fakeWds(t: Test, opts: { hold?: boolean; switchProtocols?: boolean } = {}) {
  const connections: Array<{ bytes: string }> = [];
  let release: () => void = () => undefined;
  const answerNow = new Promise<void>((resolve) => { release = resolve; });
  if (!opts.hold) release();
  const server = tls.createServer({ key: serving.keyPem, cert: serving.certPem }, (sock) => {
    const conn: { bytes: string } = { bytes: '' };
    connections.push(conn);
    let answered = false;
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => {
      conn.bytes += d.toString('latin1');
      if (answered || !conn.bytes.includes('\r\n\r\n')) return;
      answered = true;
      void answerNow.then(() => {
        if (opts.switchProtocols) {
          sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: test-protocol\r\nConnection: Upgrade\r\n\r\n');
          // After the switch: an echo of the stream.
          sock.on('data', (more: Buffer) => sock.write(`echo:${more.toString('latin1')}`));
          const early = conn.bytes.slice(conn.bytes.indexOf('\r\n\r\n') + 4);
          if (early) sock.write(`echo:${early}`);
        } else {
          // Refused, and the connection kept alive: a next request on it would be parsed and served.
          sock.write(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${FORBIDDEN.length}\r\n\r\n${FORBIDDEN}`);
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const up = { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, basePath: '', tls: { ca: ca.certPem } } as unknown as Upstream;
  return { up, connections, answer: release };
}

/** ksview serve's upgrade handling alone, on an HTTPS server of its own; every caller is sa-user. */
async function view(t: Test, up: Upstream, limits = new RequestLimits()) {
  const server = https.createServer({ key: serving.keyPem, cert: serving.certPem });
  handleUpgrades(server, {
    root: ROOT, up, cats: new KindCategories(), limits,
    authenticator: { authenticate: async () => ({ username: 'sa-user', groups: ['system:authenticated'], extra: {} }) },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return (server.address() as AddressInfo).port;
}

/** A raw TLS client: what it reads, and whether the server closed the connection. */
function client(port: number) {
  const sock = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem, servername: 'localhost' });
  const state = { received: '', closed: false };
  sock.on('data', (d: Buffer) => { state.received += d.toString('latin1'); });
  sock.on('close', () => { state.closed = true; });
  sock.on('error', () => undefined);
  return { sock, state, connected: new Promise<void>((resolve) => sock.once('secureConnect', () => resolve())) };
}

const upgradeRequest = (path: string) => `GET ${ROOT}${path} HTTP/1.1\r\nHost: view\r\nAuthorization: Bearer sa-token\r\nImpersonate-User: kubernetes-admin\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
const ssr = '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}';
const smuggled = `POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\r\nHost: wds\r\nContent-Type: application/json\r\nContent-Length: ${ssr.length}\r\n\r\n${ssr}`;
/** Waits (briefly polling) until `cond` holds; fails the test with `detail` otherwise. */
async function until(cond: () => boolean, detail: () => string, ms = 10_000): Promise<void> {
  const r = await waitFor(async () => ({ ok: cond(), detail: '' }), ms, 20);
  if (!r.ok) throw new Error(`timed out after ${ms} ms: ${detail()}`);
}

const requestLines = (bytes: string) => bytes.match(/^[A-Z]+ \S+ HTTP\/1\.1\r$/gm) ?? [];

t.test('a second request in the same write never reaches the WDS; the 403 comes back and both connections close', async (t) => {
  const wds = await fakeWds(t);
  const port = await view(t, wds.up);
  const c = client(port);
  await c.connected;
  c.sock.write(upgradeRequest('/api/v1/namespaces/ns/configmaps') + smuggled);
  await until(() => c.state.received.includes('"code":403}'), () => c.state.received);
  t.equal(wds.connections.length, 1);
  const got = wds.connections[0]!.bytes;
  t.strictSame(requestLines(got), ['GET /api/v1/namespaces/ns/configmaps HTTP/1.1\r'], 'the WDS received exactly one request');
  t.ok(got.endsWith('\r\n\r\n'), 'and nothing after its head');
  t.match(got, /\r\nimpersonate-user: sa-user\r\n/i, 'as the user');
  t.notMatch(got, /kubernetes-admin|sa-token/, 'without the client\'s own credentials or impersonation');
  t.match(c.state.received, /^HTTP\/1\.1 403 Forbidden\r\n/);
  t.equal((c.state.received.match(/^HTTP\/1\.1 /gm) ?? []).length, 1, 'the client got one answer');
  t.match(JSON.parse(c.state.received.slice(c.state.received.indexOf('\r\n\r\n') + 4)), { kind: 'Status', code: 403, reason: 'Forbidden' });
  await until(() => c.state.closed, () => 'the view keeps the client connection open');
});

t.test('a second request sent while the WDS has not answered yet never reaches it either', async (t) => {
  const wds = await fakeWds(t, { hold: true });
  const port = await view(t, wds.up);
  const c = client(port);
  await c.connected;
  c.sock.write(upgradeRequest('/api/v1/namespaces/ns/configmaps'));
  await until(() => (wds.connections[0]?.bytes ?? '').endsWith('\r\n\r\n'), () => 'the WDS has the upgrade request');
  c.sock.write(smuggled);
  // A negative: given a second to arrive, the smuggled request must not reach the WDS.
  const leaked = await waitFor(async () => ({ ok: wds.connections[0]!.bytes.includes('selfsubjectreviews'), detail: '' }), 1000, 20);
  t.notOk(leaked.ok, 'the second request did not reach the WDS while it had not answered');
  wds.answer();
  await until(() => c.state.closed, () => 'the view keeps the client connection open');
  t.strictSame(requestLines(wds.connections[0]!.bytes), ['GET /api/v1/namespaces/ns/configmaps HTTP/1.1\r']);
  t.notMatch(wds.connections[0]!.bytes, /selfsubjectreviews/);
  t.match(c.state.received, /^HTTP\/1\.1 403 /);
});

t.test('after a 101 the held bytes flow, then both ways', async (t) => {
  const wds = await fakeWds(t, { switchProtocols: true, hold: true });
  const port = await view(t, wds.up);
  const c = client(port);
  await c.connected;
  c.sock.write(`${upgradeRequest('/api/v1/namespaces/ns/pods/p/exec?command=ls')}hello`);
  await until(() => (wds.connections[0]?.bytes ?? '').includes('\r\n\r\n'), () => 'the WDS has the upgrade request');
  const early = await waitFor(async () => ({ ok: wds.connections[0]!.bytes.includes('hello'), detail: '' }), 1000, 20);
  t.notOk(early.ok, 'the stream\'s first bytes are held while the WDS has not switched');
  wds.answer();
  await until(() => c.state.received.includes('echo:hello'), () => c.state.received);
  t.match(c.state.received, /^HTTP\/1\.1 101 Switching Protocols\r\nUpgrade: test-protocol\r\nConnection: Upgrade\r\n\r\n/);
  c.sock.write('more');
  await until(() => c.state.received.includes('echo:more'), () => c.state.received);
  c.sock.end();
});

t.test('an upgrade is a long-running request of its user: past the cap, 429 with Retry-After', async (t) => {
  const wds = await fakeWds(t, { switchProtocols: true });
  const limits = new RequestLimits({ longRunningPerUser: 1, longRunningTotal: 0, inflightPerUser: 0, inflightTotal: 0 });
  const port = await view(t, wds.up, limits);
  const first = client(port);
  await first.connected;
  first.sock.write(upgradeRequest('/api/v1/namespaces/ns/pods/p/exec'));
  await until(() => first.state.received.startsWith('HTTP/1.1 101'), () => first.state.received);
  const second = client(port);
  await second.connected;
  second.sock.write(upgradeRequest('/api/v1/namespaces/ns/pods/p/exec'));
  await until(() => second.state.closed, () => second.state.received);
  t.match(second.state.received, /^HTTP\/1\.1 429 Too Many Requests\r\n/);
  t.match(second.state.received, /\r\nretry-after: 1\r\n/i);
  t.match(second.state.received, /"reason":"TooManyRequests"/);
  t.equal(wds.connections.length, 1, 'the refused one never reached the WDS');
  first.sock.destroy();
  await until(() => limits.usage('sa-user').longRunning === 0, () => 'the slot is given back when the connection closes');
  const third = client(port);
  await third.connected;
  third.sock.write(upgradeRequest('/api/v1/namespaces/ns/pods/p/exec'));
  await until(() => third.state.received.startsWith('HTTP/1.1 101'), () => third.state.received);
  third.sock.destroy();
});

t.test('an upgrade request with a body is refused before anything is sent', async (t) => {
  const wds = await fakeWds(t);
  const port = await view(t, wds.up);
  const c = client(port);
  await c.connected;
  c.sock.write(upgradeRequest('/api/v1/namespaces/ns/pods/p/exec').replace('\r\n\r\n', `\r\nContent-Length: ${smuggled.length}\r\n\r\n`) + smuggled);
  await until(() => c.state.closed, () => c.state.received);
  t.match(c.state.received, /^HTTP\/1\.1 400 /);
  t.equal(wds.connections.length, 0);
});
