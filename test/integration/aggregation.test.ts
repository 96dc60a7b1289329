// The aggregation layer of the local spaces works end to end: a tiny API server (fastify, TLS)
// registered as an APIService behind an ExternalName Service that points at localhost answers
// through wds1's kube-apiserver, to kubectl, with the user passed in X-Remote-User by the
// front proxy. The APIService becomes Available=True.
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { createCA, issueCert } from '../../src/kube/pki.js';
import { kc, kcAsync, kcAsyncOk, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

t.test('an APIService served through an ExternalName Service to localhost is Available and answers kubectl', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'agg');
  const group = `${uniqueName('tiny')}.test.kubestellar.io`;
  const serviceName = 'tiny-api';
  const ca = await createCA('tiny-api-ca');
  const serving = await issueCert(ca, {
    commonName: serviceName,
    dnsNames: [`${serviceName}.${ns}.svc`, 'localhost'],
    usages: ['server'],
  });

  const seen: Array<{ user?: string; clientCN?: string }> = [];
  const app = Fastify({ https: { key: serving.keyPem, cert: serving.certPem, requestCert: true, rejectUnauthorized: false } });
  app.get(`/apis/${group}/v1`, async () => ({
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1`,
    resources: [{ name: 'greetings', singularName: 'greeting', namespaced: false, kind: 'Greeting', verbs: ['get', 'list'] }],
  }));
  app.get(`/apis/${group}/v1/greetings`, async (req) => {
    const peer = (req.raw.socket as TLSSocket).getPeerCertificate();
    const user = req.headers['x-remote-user'];
    seen.push({ user: typeof user === 'string' ? user : undefined, clientCN: String(peer?.subject?.CN ?? '') });
    return {
      kind: 'GreetingList', apiVersion: `${group}/v1`, metadata: {},
      items: [{ kind: 'Greeting', apiVersion: `${group}/v1`, metadata: { name: 'hello' }, spec: { from: 'tiny-api' } }],
    };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const port = (app.server.address() as AddressInfo).port;

  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: serviceName, namespace: ns },
    spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port, protocol: 'TCP' }] },
  }));
  const apiServiceName = `v1.${group}`;
  kcOk('wds1', ['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService',
    metadata: { name: apiServiceName },
    spec: {
      group, version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15,
      service: { name: serviceName, namespace: ns, port },
      caBundle: Buffer.from(ca.certPem).toString('base64'),
    },
  }));
  t.teardown(() => { kc('wds1', ['delete', 'apiservice', apiServiceName, '--ignore-not-found']); });

  // kubectl runs asynchronously from here on: the tiny server lives in this process and must answer.
  const available = await waitUntil('APIService Available=True', async () => {
    const out = await kcAsyncOk('wds1', ['get', 'apiservice', apiServiceName, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']);
    return out === 'True' ? out : undefined;
  }, 90_000);
  t.equal(available, 'True', 'APIService is Available');

  const list = JSON.parse(await kcAsyncOk('wds1', ['get', '--raw', `/apis/${group}/v1/greetings`])) as { items: Array<{ metadata: { name: string } }> };
  t.same(list.items.map((i) => i.metadata.name), ['hello'], 'kubectl get --raw answers through the aggregator');
  const names = await waitUntil('kubectl get greetings via discovery', async () => {
    const r = await kcAsync('wds1', ['get', `greetings.${group}`, '-o', 'jsonpath={.items[*].metadata.name}']);
    return r.status === 0 ? r.stdout : undefined;
  }, 60_000);
  t.equal(names, 'hello', 'kubectl get by resource name works (discovery sees the group)');
  t.ok(seen.length >= 1, 'the tiny server was called');
  t.equal(seen[0]?.user, 'kubernetes-admin', 'X-Remote-User carries the kubectl user');
  t.equal(seen[0]?.clientCN, 'front-proxy-client', 'kube-apiserver presents its front-proxy client cert');
});
