// The view's front door against the real spaces (docs/security.md, "The front door of `ksview serve`"): nobody reaches the WDS as the server's
// own identity, and nobody becomes someone else.
// - defect 0: an upgrade request smuggling a second request behind it, in one write on a raw TLS
//   socket, as a ServiceAccount with no rights on the WDS — to serve's port and through the
//   aggregator: the second never runs (no SelfSubjectReview answered, no ClusterRoleBinding made);
// - defect 1: the forged front-proxy chain (a client-CA leaf named front-proxy-client, a made-up
//   link to the front-proxy CA's name, the public front-proxy CA), built with wds1's own PKI,
//   asserts no user in X-Remote-* headers;
// - defect 6: only wds1's kube-apiserver may call the admission webhook (401 without credentials,
//   403 for a user).
import https from 'node:https';
import tls from 'node:tls';
import t from 'tap';
import { ADMISSION_PATH } from '../../src/apiserver/admission/statuscollectors-webhook.js';
import { issueCert } from '../../src/kube/pki.js';
import { commonNameOf, madeUpLink, signedBy } from '../fixtures/forged-certs.js';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { httpsJson, WDS1_VIEW_PATH as viewPath, wds1Pki as pki } from '../fixtures/wds1-clients.js';

const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const servePort = layout.viewServerPort;
const serveUrl = `https://127.0.0.1:${servePort}`;

/** Writes `bytes` in one write on a raw TLS connection and returns all it reads until the server closes (or `ms` pass). */
function rawExchange(port: number, bytes: string, ms = 30_000): Promise<{ received: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    let received = '';
    const sock = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => sock.write(bytes));
    const timer = setTimeout(() => { sock.destroy(); resolve({ received, closedByServer: false }); }, ms);
    sock.on('data', (d: Buffer) => { received += d.toString('utf8'); });
    sock.on('error', () => undefined);
    sock.on('close', () => { clearTimeout(timer); resolve({ received, closedByServer: true }); });
  });
}

t.test('a request smuggled behind an upgrade never runs as the server, directly or through the aggregator', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'smuggle');
  const sa = uniqueName('nobody');
  const crb = `${sa}-smuggled`;
  kcOk('wds1', ['-n', ns, 'create', 'serviceaccount', sa]);
  // The view's ClusterRole only (spaces/proxy, for the aggregator to let it through): no right on the WDS itself.
  kcOk('wds1', ['create', 'clusterrolebinding', `${sa}-view`, '--clusterrole=kubestellar-view:user', `--serviceaccount=${ns}:${sa}`]);
  t.teardown(() => {
    kc('wds1', ['delete', 'clusterrolebinding', `${sa}-view`, crb, '--ignore-not-found']);
  });
  const token = kcOk('wds1', ['-n', ns, 'create', 'token', sa]).trim();
  const ssr = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  const binding = JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: crb },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
  });
  const sequence = (host: string) => [
    `GET ${viewPath}/api/v1/namespaces/${ns}/configmaps HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n`
      + 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    `POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${ssr.length}\r\n\r\n${ssr}`,
    `POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${binding.length}\r\n\r\n${binding}`,
  ].join('');
  // Direct access works for this token (so a refusal below is about the smuggling, not the token).
  const ok = await waitUntil('the token is accepted by serve', async () => {
    const r = await httpsJson(serveUrl + `${viewPath}/api/v1/namespaces/${ns}/configmaps`, { headers: { authorization: `Bearer ${token}` } });
    return r.status === 403 ? r : undefined;
  }, 30_000);
  t.match(ok.body.message, new RegExp(`system:serviceaccount:${ns}:${sa}`), 'the SA reaches the WDS as itself and may not list ConfigMaps');

  for (const [where, port] of [['serve\'s port', servePort], ['the aggregator', wds.apiserverPort]] as const) {
    const { received, closedByServer } = await rawExchange(port, sequence(`127.0.0.1:${port}`));
    t.match(received, /^HTTP\/1\.1 403 /, `${where}: the upgrade request is refused as the SA`);
    t.match(received, new RegExp(`system:serviceaccount:${ns}:${sa}`), `${where}: the refusal names the SA`);
    t.equal((received.match(/^HTTP\/1\.1 \d{3} /gm) ?? []).length, 1, `${where}: one answer, for the first request only`);
    t.notMatch(received, /SelfSubjectReview|kubernetes-admin|system:masters/, `${where}: no SelfSubjectReview answered as the server`);
    t.ok(closedByServer, `${where}: the connection is closed after the refusal`);
    const made = kc('wds1', ['get', 'clusterrolebinding', crb]);
    t.not(made.status, 0, `${where}: no ClusterRoleBinding was created`);
    t.match(made.stderr, /NotFound/);
  }
  const can = kc('wds1', ['auth', 'can-i', 'list', 'secrets', '-A', `--as=system:serviceaccount:${ns}:${sa}`]);
  t.equal(can.stdout.trim(), 'no', 'the SA still has no rights');
});

t.test('the forged front-proxy chain, built with wds1\'s own PKI, asserts no user', async (t) => {
  const clientCA = { certPem: pki('ca.crt'), keyPem: pki('ca.key') };
  const frontProxyCA = pki('front-proxy-ca.crt');
  // A leaf the client CA signed, named like the front proxy; a made-up link from the client CA's
  // name to the front-proxy CA's (not a CA, its own signature); the public front-proxy CA.
  const leaf = await signedBy(clientCA, { commonName: 'front-proxy-client' });
  const link = await madeUpLink(commonNameOf(clientCA.certPem), commonNameOf(frontProxyCA));
  const review = await httpsJson(serveUrl + `${viewPath}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
    method: 'POST', cert: leaf.certPem + link + frontProxyCA, key: leaf.keyPem,
    headers: { 'content-type': 'application/json', 'X-Remote-User': 'x', 'X-Remote-Group': 'system:masters' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
  });
  t.equal(review.status, 201, 'the request is served, as the certificate\'s own user');
  t.equal(review.body.status?.userInfo?.username, 'front-proxy-client', 'the client-CA user, not x');
  t.notOk((review.body.status?.userInfo?.groups ?? []).includes('system:masters'), 'and not in system:masters');
  // The genuine front proxy is the kube-apiserver: the same request through the aggregator is x as RBAC allows (here: admin).
  const genuine = JSON.parse(kcOk('wds1-view', ['auth', 'whoami', '-o', 'json']));
  t.equal(genuine.status.userInfo.username, 'kubernetes-admin', 'through the aggregator the front proxy asserts the real user');
});

t.test('only wds1\'s kube-apiserver may call the admission webhook', async (t) => {
  const review = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: { uid: 'u-1', operation: 'CREATE', object: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'c' }, spec: { select: [{ name: 'a', def: '((' }] } } },
  });
  const post = (extra: https.RequestOptions = {}) => httpsJson(serveUrl + ADMISSION_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: review, ...extra });
  const anonymous = await post();
  t.equal(anonymous.status, 401);
  t.match(anonymous.body, { kind: 'Status', reason: 'Unauthorized', code: 401 });
  const user = await issueCert({ certPem: pki('ca.crt'), keyPem: pki('ca.key') }, { commonName: uniqueName('mallory'), usages: ['client'] });
  const asUser = await post({ cert: user.certPem, key: user.keyPem });
  t.equal(asUser.status, 403);
  t.match(asUser.body, { kind: 'Status', reason: 'Forbidden', message: /cannot call the admission webhooks/ });
  const apiserver = await post({ cert: pki('front-proxy-client.crt'), key: pki('front-proxy-client.key') });
  t.equal(apiserver.status, 200, 'the kube-apiserver\'s front-proxy certificate (what it presents to webhooks) is answered');
  t.match(apiserver.body, { kind: 'AdmissionReview', response: { uid: 'u-1', allowed: false } });
});
