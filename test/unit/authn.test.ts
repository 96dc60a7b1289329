// Authentication of ksview serve: front-proxy headers only behind a certificate the request
// header CA signed (verified by signature, alone), client-CA certificates, bearer tokens.
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import t, { type Test } from 'tap';
import { parseAuthnConfig } from '../../src/apiserver/auth/authn-config.js';
import { Authenticator, type TokenReviewer } from '../../src/apiserver/auth/authn.js';
import { StatusError } from '../../src/kube/status.js';
import type { UserInfo } from '../../src/kube/user.js';
import { createCA, issueCert, type KeyPair } from '../../src/kube/pki.js';
import { madeUpLink, signedBy } from '../fixtures/forged-certs.js';

const clientCA = await createCA('client-ca');
const frontProxyCA = await createCA('front-proxy-ca');
const frontProxy = await issueCert(frontProxyCA, { commonName: 'front-proxy-client', usages: ['client'] });
const mallory = await issueCert(frontProxyCA, { commonName: 'mallory', usages: ['client'] });
const alice = await issueCert(clientCA, { commonName: 'alice', organizations: ['dev', 'ops'], usages: ['client'] });
const bob = await issueCert(clientCA, { commonName: 'bob', organizations: ['dev'], usages: ['client'] });
// A client-CA certificate with the front proxy's CN: a user, not a front proxy.
const impostor = await issueCert(clientCA, { commonName: 'front-proxy-client', usages: ['client'] });

const data = (over: Record<string, string> = {}) => ({
  'client-ca-file': clientCA.certPem,
  'requestheader-client-ca-file': frontProxyCA.certPem,
  'requestheader-allowed-names': '["front-proxy-client"]',
  'requestheader-username-headers': '["X-Remote-User"]',
  'requestheader-group-headers': '["X-Remote-Group"]',
  'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
  ...over,
});

/** A DetailedPeerCertificate-like node for a PEM, as tls.getPeerCertificate(true) gives it. */
function peer(pem: string, issuer?: object): Record<string, unknown> {
  const x = new X509Certificate(pem);
  const subject: Record<string, string | string[]> = {};
  for (const line of x.subject.split('\n')) {
    const [k, v] = line.split('=') as [string, string];
    subject[k] = subject[k] === undefined ? v : [...[subject[k]].flat(), v];
  }
  const node: Record<string, unknown> = { raw: x.raw, subject, fingerprint256: x.fingerprint256 };
  node.issuerCertificate = issuer ?? node;
  return node;
}
const chain = (leaf: KeyPair, ca: KeyPair) => peer(leaf.certPem, peer(ca.certPem));

function request(opts: { cert?: Record<string, unknown>; authorized?: boolean; headers?: Array<[string, string]> }): IncomingMessage {
  const rawHeaders = (opts.headers ?? []).flat();
  const headers: Record<string, string> = {};
  for (const [k, v] of opts.headers ?? []) {
    const l = k.toLowerCase();
    headers[l] = headers[l] === undefined ? v : `${headers[l]}, ${v}`;
  }
  const socket = { authorized: opts.authorized ?? opts.cert !== undefined, getPeerCertificate: (_detailed?: boolean) => opts.cert ?? {} };
  return { socket, rawHeaders, headers } as unknown as IncomingMessage;
}

const noTokens: TokenReviewer = async () => undefined;
const authn = (reviewer: TokenReviewer = noTokens, d = data()) => {
  const cfg = parseAuthnConfig(d);
  return new Authenticator(() => cfg, reviewer);
};

async function rejects401(t: Test, p: Promise<UserInfo>, msg: string) {
  try {
    const u = await p;
    t.fail(`${msg}: authenticated as ${JSON.stringify(u)}`);
  } catch (e) {
    t.ok(e instanceof StatusError, `${msg}: StatusError`);
    t.equal((e as StatusError).code, 401, `${msg}: 401`);
  }
}

const remoteHeaders: Array<[string, string]> = [
  ['X-Remote-User', 'carol'],
  ['X-Remote-Group', 'team-a'],
  ['X-Remote-Group', 'system:authenticated'],
  ['X-Remote-Extra-Foo%2fbar', 'v1'],
  ['X-Remote-Extra-Foo%2fbar', 'v2'],
  ['X-Remote-Extra-Scopes', 's'],
];

t.test('a front proxy with an allowed CN asserts the user in X-Remote-* headers', async (t) => {
  const user = await authn().authenticate(request({ cert: chain(frontProxy, frontProxyCA), headers: remoteHeaders }));
  t.strictSame(user, { username: 'carol', groups: ['team-a', 'system:authenticated'], extra: { 'foo/bar': ['v1', 'v2'], scopes: ['s'] } });
});

t.test('X-Remote-* headers are ignored on a front-proxy certificate whose CN is not allowed', async (t) => {
  await rejects401(t, authn().authenticate(request({ cert: chain(mallory, frontProxyCA), headers: remoteHeaders })), 'mallory');
  const open = authn(noTokens, data({ 'requestheader-allowed-names': '[]' }));
  t.equal((await open.authenticate(request({ cert: chain(mallory, frontProxyCA), headers: remoteHeaders }))).username, 'carol',
    'an empty allowed-names list allows any CN of the request header CA');
});

t.test('X-Remote-* headers are ignored without a verified front-proxy certificate', async (t) => {
  await rejects401(t, authn().authenticate(request({ headers: remoteHeaders })), 'no certificate');
  await rejects401(t, authn().authenticate(request({ cert: chain(frontProxy, frontProxyCA), authorized: false, headers: remoteHeaders })),
    'certificate the TLS layer did not verify');
  const u = await authn().authenticate(request({ cert: chain(impostor, clientCA), headers: remoteHeaders }));
  t.strictSame(u, { username: 'front-proxy-client', groups: ['system:authenticated'], extra: {} },
    'a client-CA certificate with the front-proxy CN is just a user');
});

t.test('a client-CA certificate: CN is the user, O the groups', async (t) => {
  t.strictSame(await authn().authenticate(request({ cert: chain(alice, clientCA) })),
    { username: 'alice', groups: ['dev', 'ops', 'system:authenticated'], extra: {} });
  t.strictSame(await authn().authenticate(request({ cert: chain(bob, clientCA) })),
    { username: 'bob', groups: ['dev', 'system:authenticated'], extra: {} });
  await rejects401(t, authn(noTokens, data({ 'client-ca-file': '' })).authenticate(request({ cert: chain(alice, clientCA) })),
    'client CA not configured');
});

t.test('bearer tokens go to the TokenReviewer, cached per token', async (t) => {
  const calls: string[] = [];
  const reviewer: TokenReviewer = async (token) => {
    calls.push(token);
    return token === 'good-token' ? { username: 'dave', uid: 'u-d', groups: ['g'], extra: {} }
      : token === 'other-token' ? { username: 'erin', groups: [], extra: {} } : undefined;
  };
  const a = authn(reviewer);
  const req = () => request({ headers: [['Authorization', 'Bearer good-token']] });
  const want = { username: 'dave', uid: 'u-d', groups: ['g'], extra: {} };
  t.strictSame(await a.authenticate(req()), want);
  t.strictSame(await a.authenticate(req()), want);
  t.strictSame(calls, ['good-token'], 'reviewed once for two requests');
  t.equal((await a.authenticate(request({ headers: [['Authorization', 'Bearer other-token']] }))).username, 'erin',
    'another token is reviewed on its own');
  t.strictSame(calls, ['good-token', 'other-token']);
  await rejects401(t, a.authenticate(request({ headers: [['Authorization', 'Bearer unknown-token']] })), 'unknown token');
  await rejects401(t, a.authenticate(request({ headers: [['Authorization', 'Bearer ']] })), 'empty token');
  await rejects401(t, a.authenticate(request({ headers: [['Authorization', 'Basic dXNlcjpwYXNz']] })), 'basic auth');
  t.notOk(calls.includes(''), 'an empty token is not reviewed');
});

t.test('nothing at all is 401', async (t) => {
  await rejects401(t, authn().authenticate(request({})), 'anonymous');
});

// docs/security.md D1: the chain a client sends is the client's to choose. Node links it by
// names, and the TLS layer verifies it against both CA pools at once; neither may decide which
// pool signed the leaf.
const forgedLink = await madeUpLink('client-ca', 'front-proxy-ca');
/** The forged chain of the issue: a client-CA leaf, a made-up link to the front-proxy CA's name, the public front-proxy CA. */
const forged = (leaf: KeyPair) => peer(leaf.certPem, peer(forgedLink, peer(frontProxyCA.certPem)));
const asMasters: Array<[string, string]> = [['X-Remote-User', 'x'], ['X-Remote-Group', 'system:masters']];

t.test('a client-CA leaf linked by names to the front-proxy CA asserts nothing in headers', async (t) => {
  const u = await authn().authenticate(request({ cert: forged(impostor), headers: asMasters }));
  t.strictSame(u, { username: 'front-proxy-client', groups: ['system:authenticated'], extra: {} },
    'it is the client-CA user front-proxy-client, not x in system:masters');
  const open = authn(noTokens, data({ 'requestheader-allowed-names': '[]' }));
  const v = await open.authenticate(request({ cert: forged(alice), headers: asMasters }));
  t.equal(v.username, 'alice', 'with no allowed names either: any client certificate stays its own user');
  t.notOk(v.groups.includes('system:masters'));
  t.notOk(open.isKubeApiserver(request({ cert: forged(alice) })), 'and is not the kube-apiserver');
});

t.test('a front-proxy certificate is verified by signature, validity, CA flag and usage', async (t) => {
  const intermediate = await signedBy(frontProxyCA, { commonName: 'front-proxy-intermediate', ca: true });
  const viaIntermediate = await signedBy(intermediate, { commonName: 'front-proxy-client' });
  const u = await authn().authenticate(request({ cert: peer(viaIntermediate.certPem, peer(intermediate.certPem, peer(frontProxyCA.certPem))), headers: asMasters }));
  t.equal(u.username, 'x', 'a leaf under an intermediate CA the client sent, signed by the front-proxy CA, is the front proxy');

  const notCA = await signedBy(frontProxy, { commonName: 'front-proxy-client' });
  await rejects401(t, authn().authenticate(request({ cert: peer(notCA.certPem, peer(frontProxy.certPem, peer(frontProxyCA.certPem))), headers: asMasters })),
    'a leaf signed by a front-proxy leaf (not a CA)');
  const expired = await signedBy(frontProxyCA, { commonName: 'front-proxy-client', fromDays: -30, toDays: -1 });
  await rejects401(t, authn().authenticate(request({ cert: chain(expired, frontProxyCA), headers: asMasters })), 'an expired front-proxy certificate');
  const notYet = await signedBy(frontProxyCA, { commonName: 'front-proxy-client', fromDays: 1, toDays: 30 });
  await rejects401(t, authn().authenticate(request({ cert: chain(notYet, frontProxyCA), headers: asMasters })), 'a front-proxy certificate not valid yet');
  const serverOnly = await signedBy(frontProxyCA, { commonName: 'front-proxy-client', usages: ['server'] });
  await rejects401(t, authn().authenticate(request({ cert: chain(serverOnly, frontProxyCA), headers: asMasters })), 'a serving certificate');
  const otherCA = await createCA('front-proxy-ca');
  const sameName = await signedBy(otherCA, { commonName: 'front-proxy-client' });
  await rejects401(t, authn().authenticate(request({ cert: peer(sameName.certPem, peer(frontProxyCA.certPem)), headers: asMasters })),
    'a CA with the front-proxy CA\'s name but another key signed the leaf');
});

t.test('a client-CA certificate is verified the same way', async (t) => {
  const expired = await signedBy(clientCA, { commonName: 'alice', fromDays: -30, toDays: -1 });
  await rejects401(t, authn().authenticate(request({ cert: chain(expired, clientCA) })), 'expired');
  const fake = await signedBy(await createCA('client-ca'), { commonName: 'alice' });
  await rejects401(t, authn().authenticate(request({ cert: peer(fake.certPem, peer(clientCA.certPem)) })), 'signed by another key with the client CA\'s name');
  const frontProxyUser = await authn().authenticate(request({ cert: chain(frontProxy, frontProxyCA) })).catch((e: StatusError) => e.code);
  t.equal(frontProxyUser, 401, 'a front-proxy certificate without headers is no client-CA user');
});

/** A real TLS server with the app's TLS settings and an Authenticator: what does a client with `cert` (a PEM bundle) and `headers` become? */
async function overTls(t: Test, cert: string, key: string, headers: Record<string, string>, d = data()): Promise<{ user?: UserInfo; status?: number; authorized: boolean }> {
  const serving = await issueCert(clientCA, { commonName: 'ksview', dnsNames: ['localhost'], usages: ['server'] });
  const a = authn(noTokens, d);
  const cfg = parseAuthnConfig(d);
  const server = https.createServer({ key: serving.keyPem, cert: serving.certPem, ca: cfg.caBundlePem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const authorized = (req.socket as TLSSocket).authorized;
    a.authenticate(req).then((user) => res.end(JSON.stringify({ user, authorized })),
      (err: StatusError) => res.end(JSON.stringify({ status: err.code, authorized })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, path: '/', cert, key, headers, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve(JSON.parse(body)));
    }).on('error', reject);
  });
}

t.test('over real TLS, the forged chain passes the TLS layer and still asserts nothing', async (t) => {
  const sent = impostor.certPem + forgedLink + frontProxyCA.certPem;
  const r = await overTls(t, sent, impostor.keyPem, { 'X-Remote-User': 'x', 'X-Remote-Group': 'system:masters' });
  t.ok(r.authorized, 'OpenSSL verifies the chain (against the client CA)');
  t.strictSame(r.user, { username: 'front-proxy-client', groups: ['system:authenticated'], extra: {} });
  const genuine = await overTls(t, frontProxy.certPem, frontProxy.keyPem, { 'X-Remote-User': 'x', 'X-Remote-Group': 'system:masters' });
  t.equal(genuine.user?.username, 'x', 'the genuine front-proxy certificate does assert users');
  const open = await overTls(t, alice.certPem + forgedLink + frontProxyCA.certPem, alice.keyPem,
    { 'X-Remote-User': 'x', 'X-Remote-Group': 'system:masters' }, data({ 'requestheader-allowed-names': '[]' }));
  t.equal(open.user?.username, 'alice', 'nor with an empty allowed-names list');
});
