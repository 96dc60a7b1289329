import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import t, { type Test } from 'tap';
import { parseAuthnConfig } from '../../src/apiserver/authn-config.js';
import { Authenticator, type TokenReviewer } from '../../src/apiserver/authn.js';
import { StatusError } from '../../src/kube/status.js';
import type { UserInfo } from '../../src/kube/user.js';
import { createCA, issueCert, type KeyPair } from '../../src/kube/pki.js';

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
