// Client certificates at the agent's endpoints, over real TLS on loopback: a certificate that the
// delegate cluster's client CA issued is its CN (groups: its Os), asked about by
// SubjectAccessReview; anything else is nobody (401): another CA's certificate, one of a CA that
// only copies the real CA's name, one sent with the real CA certificate appended to its chain,
// an expired one, a serving certificate, the CA's own. Which CAs count comes from the delegate's
// kube-system/extension-apiserver-authentication (client-ca-file) or a given bundle.
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildEndpoints } from '../../src/agent/endpoints/endpoints.js';
import { createAgentMetrics } from '../../src/agent/shared/agent-metrics.js';
import { AUTHENTICATION_CONFIGMAP_PATH, fixedClientCAs, parseCABundle, publishedClientCAs } from '../../src/kube/client-ca.js';
import { DelegatedAuth, verifiedByPool } from '../../src/kube/delegated-auth.js';
import { createCA, issueCert, selfSignedServingCert, type KeyPair } from '../../src/kube/pki.js';
import { waitFor } from '../../src/kube/wait.js';
import { mockUpstream, requestBody } from '../fixtures/mock-upstream.js';

const SARS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

const clientCA = await createCA('wec1-ca');
const otherCA = await createCA('its1-ca');
// Same subject name as the real CA, another key: names alone must prove nothing.
const lookalikeCA = await createCA('wec1-ca');
const alice = await issueCert(clientCA, { commonName: 'alice', organizations: ['readers', 'team-a'], usages: ['client'] });
const bob = await issueCert(clientCA, { commonName: 'bob', usages: ['client'] });
const strangerFromOther = await issueCert(otherCA, { commonName: 'alice', usages: ['client'] });
const strangerFromLookalike = await issueCert(lookalikeCA, { commonName: 'alice', organizations: ['system:masters'], usages: ['client'] });
const servingOnly = await issueCert(clientCA, { commonName: 'alice', usages: ['server'] });

t.test('verifiedByPool: the leaf\'s own signature, validity and usage, against the pool only', async (t) => {
  const pool = parseCABundle(clientCA.certPem);
  const x = (p: KeyPair) => new X509Certificate(p.certPem);
  t.ok(verifiedByPool(x(alice), pool), 'issued by the client CA');
  t.notOk(verifiedByPool(x(strangerFromOther), pool), 'another CA');
  t.notOk(verifiedByPool(x(strangerFromLookalike), pool), 'a CA with the same name but another key');
  t.notOk(verifiedByPool(x(servingOnly), pool), 'a serving-only certificate (no client auth usage)');
  t.notOk(verifiedByPool(new X509Certificate(clientCA.certPem), pool), 'the CA itself is no client');
  t.notOk(verifiedByPool(x(alice), pool, Date.now() + 900 * 24 * 3600 * 1000), 'expired');
  t.notOk(verifiedByPool(x(alice), []), 'no pool: nobody');
  t.same(parseCABundle(`${alice.certPem}\n${clientCA.certPem}\nnot a certificate`).map((c) => c.subject), ['CN=wec1-ca'], 'only CAs enter a pool');
});

interface Answer { status: number; body: string }

function get(port: number, ca: string, path: string, client?: KeyPair, extraChain = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path, ca, ...(client ? { cert: client.certPem + extraChain, key: client.keyPem } : {}) }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString('utf8'); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

t.test('over TLS: the client CA\'s certificates are their CN and Os, asked about by SubjectAccessReview; all others 401', async (t) => {
  const m = mockUpstream('https://wec1.test:6443');
  t.teardown(() => m.close());
  const asked: Array<{ user: string; groups: string[] }> = [];
  m.pool.intercept({ path: SARS, method: 'POST' }).reply((opts) => {
    const spec = (requestBody(opts) as { spec: { user: string; groups: string[]; nonResourceAttributes: { path: string } } }).spec;
    asked.push({ user: spec.user, groups: spec.groups });
    return { statusCode: 201, data: JSON.stringify({ status: { allowed: spec.user === 'alice' && spec.groups.includes('readers') } }) };
  }).persist();
  const serving = await selfSignedServingCert('agent', ['localhost'], ['127.0.0.1']);
  const app = buildEndpoints({ registry: createAgentMetrics().registry, readiness: () => [], placed: () => [],
    auth: new DelegatedAuth(m.up, fixedClientCAs(clientCA.certPem)), https: serving });
  t.teardown(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const ca = serving.caPem;

  t.equal((await get(port, ca, '/healthz')).status, 200, 'open paths need no certificate');
  t.equal((await get(port, ca, '/federatedresources')).status, 401, 'no certificate: 401');
  const ok = await get(port, ca, '/federatedresources', alice);
  t.equal(ok.status, 200, 'alice (client CA, group readers): 200');
  t.same(JSON.parse(ok.body), { items: [] });
  t.same(asked[0], { user: 'alice', groups: ['readers', 'team-a', 'system:authenticated'] }, 'CN is the user, Os the groups');
  const bobs = await get(port, ca, '/federatedresources', bob);
  t.equal(bobs.status, 403, 'bob (client CA, no right): 403');
  t.match(JSON.parse(bobs.body), { reason: 'Forbidden', message: 'forbidden: User "bob" cannot get path "/federatedresources"' });
  const before = asked.length;
  for (const [what, cert, chain] of [
    ['another CA\'s certificate', strangerFromOther, ''],
    ['a look-alike CA\'s certificate (system:masters)', strangerFromLookalike, ''],
    ['a look-alike CA\'s certificate with the real CA appended to its chain', strangerFromLookalike, clientCA.certPem],
    ['another CA\'s certificate with the real CA appended', strangerFromOther, clientCA.certPem],
    ['a serving certificate of the client CA', servingOnly, ''],
  ] as Array<[string, KeyPair, string]>) {
    const res = await get(port, ca, '/federatedresources', cert, chain);
    t.equal(res.status, 401, `${what}: 401`);
  }
  t.equal(asked.length, before, 'none of them reached the authorizer');
});

t.test('the client CAs come from the delegate\'s extension-apiserver-authentication ConfigMap; a failed read keeps the last', async (t) => {
  const m = mockUpstream('https://wec1.test:6443');
  t.teardown(() => m.close());
  const lines: string[] = [];
  m.pool.intercept({ path: AUTHENTICATION_CONFIGMAP_PATH, method: 'GET' }).reply(403, { kind: 'Status', code: 403, reason: 'Forbidden' });
  m.pool.intercept({ path: AUTHENTICATION_CONFIGMAP_PATH, method: 'GET' }).reply(200, { data: { 'client-ca-file': clientCA.certPem, 'requestheader-client-ca-file': otherCA.certPem } });
  m.pool.intercept({ path: AUTHENTICATION_CONFIGMAP_PATH, method: 'GET' }).reply(500, 'down').persist();
  const src = publishedClientCAs(m.up, (l) => lines.push(l), 20);
  t.teardown(() => src.stop());
  const first = await waitFor(async () => ({ ok: lines.length >= 1, detail: '' }), 5000, 5);
  t.ok(first.ok);
  t.match(lines[0], /cannot read kube-system\/extension-apiserver-authentication .*403.*none accepted/, 'no rights: said, and no CA trusted');
  const read = await waitFor(async () => ({ ok: src.current().length === 1, detail: '' }), 5000, 5);
  t.ok(read.ok, 'then read');
  t.same(src.current().map((c) => c.subject), ['CN=wec1-ca'], 'the client CA only, never the request-header CA');
  const failed = await waitFor(async () => ({ ok: lines.some((l) => /keeping the last client CAs/.test(l)), detail: '' }), 5000, 5);
  t.ok(failed.ok, 'a failed re-read is said once');
  t.equal(src.current().length, 1, 'and the last CAs are kept');
});
