// Unit tests of the kube-apiserver connection (src/kube/upstream.ts) without spaces: what a request
// carries (the server's own credential, JSON), how errors read (UpstreamError with the status and
// the start of the answer), server-side apply, and the connection read from a kubeconfig.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import {
  expectOk, serverSideApply, upstreamFromKubeconfig, upstreamJson, upstreamRequest, UpstreamError, type UpstreamResponse,
} from '../../src/kube/upstream.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const response = (status: number, body = ''): UpstreamResponse => ({ status, headers: {}, body: Buffer.from(body) });

t.test('expectOk: 2xx and the statuses named are answers; anything else is an UpstreamError saying what was done', async (t) => {
  const ok = response(201, '{}');
  t.equal(expectOk(ok, 'create x'), ok);
  const gone = response(404);
  t.equal(expectOk(gone, 'delete x', [404]), gone, 'a 404 is fine for a delete');
  t.throws(() => expectOk(response(409, 'conflict'), 'update x', [404]),
    { name: 'UpstreamError', upstreamStatus: 409, message: 'update x: 409 conflict' });
  const long = 'y'.repeat(1000);
  try {
    expectOk(response(500, long), 'get x');
    t.fail('no error');
  } catch (err) {
    t.ok(err instanceof UpstreamError);
    t.equal((err as Error).message, `get x: 500 ${'y'.repeat(300)}`, 'the answer is cut at 300 characters');
  }
});

t.test('upstreamRequest: JSON in and out, the server\'s own credential, under the base path', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const up = { ...m.up, basePath: '/k8s', authorization: 'Bearer server-token' };
  m.pool.intercept({ path: '/k8s/api/v1/namespaces', method: 'POST' }).reply(201, { kind: 'Namespace' });

  const res = await upstreamRequest(up, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'a' } } });
  t.equal(res.status, 201);
  t.same(JSON.parse(res.body.toString('utf8')), { kind: 'Namespace' });
  const [call] = m.calls();
  t.equal(call!.path, '/k8s/api/v1/namespaces');
  t.same(call!.body, { metadata: { name: 'a' } });
  t.equal(call!.headers.accept, 'application/json');
  t.equal(call!.headers['content-type'], 'application/json');
  t.equal(call!.headers.authorization, 'Bearer server-token');
});

t.test('upstreamJson: the parsed answer, or an UpstreamError naming the request', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: '/version', method: 'GET' }).reply(200, { gitVersion: 'v1.33.13' });
  m.pool.intercept({ path: '/apis/example.com/v1', method: 'GET' }).reply(404, '404 page not found');
  t.same(await upstreamJson(m.up, 'GET', '/version'), { gitVersion: 'v1.33.13' });
  await t.rejects(upstreamJson(m.up, 'GET', '/apis/example.com/v1'),
    { name: 'UpstreamError', upstreamStatus: 404, message: 'GET /apis/example.com/v1: 404 404 page not found' });
});

t.test('serverSideApply: a forced apply under the field manager, answered with the object as stored', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const p = '/api/v1/namespaces/kube-system/configmaps/x';
  m.pool.intercept({ path: `${p}?fieldManager=ksview%20serve&force=true`, method: 'PATCH' }).reply(200, { metadata: { name: 'x', resourceVersion: '3' } });
  m.pool.intercept({ path: (q) => q.startsWith(`${p}?`), method: 'PATCH' }).reply(409, 'Apply failed with 1 conflict');

  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } };
  t.same(await serverSideApply(m.up, p, obj, 'ksview serve'), { metadata: { name: 'x', resourceVersion: '3' } });
  const [call] = m.calls();
  t.equal(call!.headers['content-type'], 'application/apply-patch+yaml');
  t.same(call!.body, obj);
  await t.rejects(serverSideApply(m.up, p, obj, 'ksview serve'), { upstreamStatus: 409, message: `apply ${p}: 409 Apply failed with 1 conflict` });
});

t.test('upstreamFromKubeconfig: origin, base path, TLS material and token of the current (or named) context', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-upstream-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(file, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'wds1',
    clusters: [
      { name: 'wds1', cluster: { server: 'https://127.0.0.1:16410/', 'certificate-authority-data': b64('CA PEM') } },
      { name: 'behind-a-proxy', cluster: { server: 'https://proxy.example.com:8443/clusters/wds2/', 'insecure-skip-tls-verify': true } },
    ],
    users: [{ name: 'admin', user: { token: 'secret-token' } }],
    contexts: [
      { name: 'wds1', context: { cluster: 'wds1', user: 'admin' } },
      { name: 'wds2', context: { cluster: 'behind-a-proxy', user: 'admin' } },
    ],
  }));

  const wds1 = await upstreamFromKubeconfig(file);
  t.teardown(() => wds1.pool.close());
  t.equal(wds1.origin, 'https://127.0.0.1:16410');
  t.equal(wds1.basePath, '');
  t.equal(wds1.authorization, 'Bearer secret-token');
  t.equal(String(wds1.tls.ca), 'CA PEM');

  const wds2 = await upstreamFromKubeconfig(file, 'wds2');
  t.teardown(() => wds2.pool.close());
  t.equal(wds2.origin, 'https://proxy.example.com:8443');
  t.equal(wds2.basePath, '/clusters/wds2');

  const empty = path.join(dir, 'empty');
  writeFileSync(empty, YAML.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [], users: [], contexts: [] }));
  await t.rejects(upstreamFromKubeconfig(empty), { name: 'UserError', message: `kubeconfig ${empty} is not a kubeconfig: it defines no contexts` });
});
