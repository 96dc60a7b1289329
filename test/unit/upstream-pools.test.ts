// Unit test of which connection pool of an Upstream (src/kube/upstream.ts) a request takes: what an
// end user asks for (impersonated) on the users' pool, the server's own calls (its reviews, its
// controllers' reads and writes) on a pool users cannot fill. Recorded with the mock upstream.
import t from 'tap';
import { upstreamJson, upstreamRequest } from '../../src/kube/upstream.js';
import { Authorizer } from '../../src/apiserver/auth/authz.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

t.test('impersonated requests go on the users\' pool; the server\'s own (reviews, controllers) on its own', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: '/api/v1/namespaces', method: 'GET' }).reply(200, { items: [] }).times(3);
  m.pool.intercept({ path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', method: 'POST' }).reply(201, { status: { allowed: true } });

  await upstreamRequest(m.up, 'GET', '/api/v1/namespaces', { headers: { 'Impersonate-User': 'alice' } });
  await upstreamRequest(m.up, 'GET', '/api/v1/namespaces', { headers: { 'impersonate-user': 'bob', 'impersonate-group': 'g' } });
  await upstreamJson(m.up, 'GET', '/api/v1/namespaces');
  const decision = await new Authorizer(m.up).decide({ username: 'alice', groups: ['system:authenticated'], extra: {} },
    { resource: { verb: 'get', group: '', resource: 'namespaces' } });
  t.equal(decision.allowed, true, 'the review was answered');

  t.same(m.calls().map((c) => [c.method, c.path, c.via]), [
    ['GET', '/api/v1/namespaces', 'pool'],
    ['GET', '/api/v1/namespaces', 'pool'],
    ['GET', '/api/v1/namespaces', 'ownPool'],
    ['POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', 'ownPool'],
  ]);
});
