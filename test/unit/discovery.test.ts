// Unit tests of aggregated discovery (src/kube/discovery.ts) without spaces: both documents are
// asked for as apidiscovery.k8s.io/v2, and a WDS that cannot answer fails the read.
import t from 'tap';
import { AGGREGATED_V2, aggregatedDiscoveryOf } from '../../src/kube/discovery.js';
import { aggregatedDiscovery } from '../fixtures/denatured-kinds.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

t.test('aggregatedDiscoveryOf: /api and /apis, asked for as aggregated discovery v2', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const [core, groups] = aggregatedDiscovery(['serviceaccounts', 'clusterroles']);
  m.pool.intercept({ path: '/api', method: 'GET' }).reply(200, core);
  m.pool.intercept({ path: '/apis', method: 'GET' }).reply(200, groups);

  const [gotCore, gotGroups] = await aggregatedDiscoveryOf(m.up);
  t.same(gotCore, core);
  t.same(gotGroups, groups);
  t.same(m.calls().map((c) => [c.path, c.headers.accept]).sort(), [['/api', AGGREGATED_V2], ['/apis', AGGREGATED_V2]]);
});

t.test('aggregatedDiscoveryOf: an error answer fails the read, naming the path', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path: '/api', method: 'GET' }).reply(200, { items: [] });
  m.pool.intercept({ path: '/apis', method: 'GET' }).reply(403, 'forbidden');
  await t.rejects(aggregatedDiscoveryOf(m.up), { name: 'UpstreamError', upstreamStatus: 403, message: 'GET /apis: 403 forbidden' });
});
