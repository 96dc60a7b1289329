// Unit tests of the denatured registry (src/storage/denatured-registry.ts) without spaces: a sync
// against the mock upstream playing a WDS that serves some of the configured kinds. What an
// operator sees: which kinds the view serves, the CRDs applied, readiness and the logged errors.
import { FakeNativeCode } from '../fixtures/fake-native-code.js';
import t, { type Test } from 'tap';
import { DenaturedRegistry } from '../../src/storage/denatured-registry.js';
import { CRDS_PATH } from '../../src/kube/crd-established.js';
import { answerDenaturedKinds, crdName, openAPIDoc } from '../fixtures/denatured-kinds.js';
import { mockUpstream, type MockUpstream } from '../fixtures/mock-upstream.js';

const CONFIGURED = [
  { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
  { group: '', resource: 'serviceaccounts' },
  // Not served by this WDS (as MutatingAdmissionPolicy with its feature gate off).
  { group: 'admissionregistration.k8s.io', resource: 'mutatingadmissionpolicies' },
];

function setup(t: Test): { m: MockUpstream; registry: DenaturedRegistry; logged: { info: string[]; error: string[] } } {
  const m = mockUpstream();
  const logged = { info: [] as string[], error: [] as string[] };
  const registry = new DenaturedRegistry(m.up, CONFIGURED, { info: (s) => logged.info.push(s), error: (s) => logged.error.push(s) }, new FakeNativeCode());
  t.teardown(async () => {
    registry.stop();
    await m.close();
  });
  return { m, registry, logged };
}

t.test('before the first sync no kind is served and the registry is not ready', async (t) => {
  const { registry } = setup(t);
  t.equal(registry.ready, false);
  t.equal(registry.storeFor('rbac.authorization.k8s.io', 'clusterroles'), undefined);
});

t.test('a sync serves the configured kinds the WDS serves, after applying their CRDs', async (t) => {
  const { m, registry, logged } = setup(t);
  // The CRDs do not exist yet.
  for (const r of ['clusterroles', 'serviceaccounts']) m.pool.intercept({ path: `${CRDS_PATH}/${crdName(r)}`, method: 'GET' }).reply(404, {});
  answerDenaturedKinds(m.pool, ['clusterroles', 'serviceaccounts']);

  const results = await registry.sync();
  t.same(results, [{ name: crdName('clusterroles'), changed: true }, { name: crdName('serviceaccounts'), changed: true }]);
  t.equal(registry.ready, true);
  t.equal(registry.lastError, undefined);
  t.equal(registry.storeFor('rbac.authorization.k8s.io', 'clusterroles')?.kind.kind, 'ClusterRole');
  t.equal(registry.storeFor('', 'serviceaccounts')?.kind.namespaced, true);
  t.equal(registry.storeFor('admissionregistration.k8s.io', 'mutatingadmissionpolicies'), undefined, 'a kind the WDS does not serve is not served either');
  t.same(m.calls().filter((c) => c.method === 'PATCH').map((c) => c.path.split('?')[0]).sort(),
    [`${CRDS_PATH}/${crdName('clusterroles')}`, `${CRDS_PATH}/${crdName('serviceaccounts')}`]);
  t.same(logged.info, [`denatured CRDs applied: ${crdName('clusterroles')}, ${crdName('serviceaccounts')}`]);
});

t.test('a re-sync with the same schemas keeps the stores and logs nothing; a changed schema makes new ones', async (t) => {
  const { m, registry, logged } = setup(t);
  // The first sync sees a core OpenAPI document that differs from the later ones.
  const older = structuredClone(openAPIDoc(''));
  older.components!.schemas!['io.k8s.api.core.v1.ServiceAccount']!.description = 'ServiceAccount, as an older WDS described it';
  m.pool.intercept({ path: '/openapi/v3/api/v1', method: 'GET' }).reply(200, older);
  answerDenaturedKinds(m.pool, ['clusterroles', 'serviceaccounts']);

  await registry.sync();
  const first = { cr: registry.storeFor('rbac.authorization.k8s.io', 'clusterroles'), sa: registry.storeFor('', 'serviceaccounts') };
  await registry.sync();
  const second = { cr: registry.storeFor('rbac.authorization.k8s.io', 'clusterroles'), sa: registry.storeFor('', 'serviceaccounts') };
  t.not(second.sa, first.sa, 'a schema change gives new stores');
  await registry.sync();
  t.equal(registry.storeFor('', 'serviceaccounts'), second.sa, 'the same schemas keep the stores (and their compiled validators)');
  t.equal(registry.storeFor('rbac.authorization.k8s.io', 'clusterroles'), second.cr);
  t.same(logged.info, [], 'CRDs whose resourceVersion did not move are not reported as applied');
});

t.test('concurrent syncs share one run', async (t) => {
  const { m, registry } = setup(t);
  answerDenaturedKinds(m.pool, ['clusterroles']);
  await Promise.all([registry.sync(), registry.sync(), registry.sync()]);
  t.equal(m.calls().filter((c) => c.path === '/apis').length, 1, 'discovery was read once');
});

t.test('a failed sync leaves the registry not ready with the error; start() logs it and keeps going', async (t) => {
  const { m, registry, logged } = setup(t);
  m.pool.intercept({ path: '/api', method: 'GET' }).reply(503, 'the WDS is starting').persist();
  m.pool.intercept({ path: '/apis', method: 'GET' }).reply(503, 'the WDS is starting').persist();

  await t.rejects(registry.sync(), { message: 'GET /api: 503 the WDS is starting' });
  t.equal(registry.ready, false);
  t.equal(registry.lastError, 'GET /api: 503 the WDS is starting');
  t.equal(registry.storeFor('rbac.authorization.k8s.io', 'clusterroles'), undefined);

  await registry.start();
  t.same(logged.error, ['denatured kinds: GET /api: 503 the WDS is starting (retrying every 10 s)']);
});

t.test('a WDS whose OpenAPI lacks a configured kind\'s schema fails the sync, naming it', async (t) => {
  const { m, registry } = setup(t);
  m.pool.intercept({ path: '/openapi/v3/apis/rbac.authorization.k8s.io/v1', method: 'GET' }).reply(200, { openapi: '3.0.0', components: { schemas: {} } });
  answerDenaturedKinds(m.pool, ['clusterroles']);
  await t.rejects(registry.sync(), { message: 'the WDS\'s OpenAPI v3 for rbac.authorization.k8s.io/v1 has no schema for ClusterRole' });
  t.equal(registry.ready, false);
});
