// Unit tests of the CRD installer (src/storage/crd-installer.ts) without spaces: the recorded
// requests show each denatured CRD server-side applied (field manager ksview-serve, forced), then
// read until Established; the results say which CRDs this run created or changed.
import t from 'tap';
import { installDenaturedCRDs } from '../../src/storage/crd-installer.js';
import { CRDS_PATH } from '../../src/kube/crd-established.js';
import { crdName, denaturedKind, establishedCRD } from '../fixtures/denatured-kinds.js';
import { mockUpstream, requestBody } from '../fixtures/mock-upstream.js';

const path = `${CRDS_PATH}/${crdName('clusterroles')}`;
const json = { headers: { 'content-type': 'application/json' } };
const isCRD = (p: string) => p.split('?')[0] === path;
/** The WDS's answer to an apply: the CRD as sent, at `resourceVersion`. */
const applied = (resourceVersion: string) => (opts: { body?: unknown }) => {
  const crd = requestBody(opts) as { metadata: Record<string, unknown> };
  return { statusCode: 200, data: { ...crd, metadata: { ...crd.metadata, resourceVersion } }, responseOptions: json };
};

t.test('a missing CRD is applied with server-side apply, then waited for until Established', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path, method: 'GET' }).reply(404, { kind: 'Status', code: 404 }, json);
  m.pool.intercept({ path: isCRD, method: 'PATCH' }).reply(applied('1'));
  // Served a moment after the apply: first without the condition, then Established.
  m.pool.intercept({ path, method: 'GET' }).reply(200, { metadata: { name: crdName('clusterroles'), resourceVersion: '1' }, status: { conditions: [] } }, json);
  m.pool.intercept({ path, method: 'GET' }).reply(200, establishedCRD(crdName('clusterroles')), json);

  const results = await installDenaturedCRDs(m.up, [denaturedKind('clusterroles')], 10_000);
  t.same(results, [{ name: crdName('clusterroles'), changed: true }]);

  const calls = m.calls();
  t.same(calls.map((c) => c.method), ['GET', 'PATCH', 'GET', 'GET'], 'read, apply, then read until Established');
  const apply = calls[1]!;
  const query = new URL(apply.path, 'https://wds.test').searchParams;
  t.equal(query.get('fieldManager'), 'ksview-serve');
  t.equal(query.get('force'), 'true');
  t.equal(apply.headers['content-type'], 'application/apply-patch+yaml');
  t.match(apply.body, {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: 'clusterroles.denatured.kubestellar.io', labels: { 'view.kubestellar.io/denatured-from': 'clusterroles.rbac.authorization.k8s.io' } },
    spec: { group: 'denatured.kubestellar.io', scope: 'Cluster', names: { kind: 'ClusterRole', plural: 'clusterroles' }, versions: [{ name: 'v1', served: true, storage: true }] },
  });
});

t.test('an apply that moves the resourceVersion is a change; one that does not is none', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path, method: 'GET' }).reply(200, establishedCRD(crdName('clusterroles'), '7'), json).persist();
  m.pool.intercept({ path: isCRD, method: 'PATCH' }).reply(applied('7'));
  m.pool.intercept({ path: isCRD, method: 'PATCH' }).reply(applied('8'));
  t.same(await installDenaturedCRDs(m.up, [denaturedKind('clusterroles')]), [{ name: crdName('clusterroles'), changed: false }], 'the same schema changes nothing');
  t.same(await installDenaturedCRDs(m.up, [denaturedKind('clusterroles')]), [{ name: crdName('clusterroles'), changed: true }], 'a new schema upgrades the CRD');
});

t.test('a CRD that never becomes Established fails the install, naming it', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path, method: 'GET' }).reply(200, {
    metadata: { name: crdName('clusterroles'), resourceVersion: '1' },
    status: { conditions: [{ type: 'Established', status: 'False', message: 'not all names are accepted' }] },
  }, json).persist();
  m.pool.intercept({ path: isCRD, method: 'PATCH' }).reply(applied('1'));
  await t.rejects(installDenaturedCRDs(m.up, [denaturedKind('clusterroles')], 300),
    { message: `CRD ${crdName('clusterroles')} is not Established: not all names are accepted` });
});

t.test('a refused apply fails the install with the WDS\'s answer', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  m.pool.intercept({ path, method: 'GET' }).reply(404, {}, json);
  m.pool.intercept({ path: isCRD, method: 'PATCH' }).reply(403, 'forbidden: User "ksview" cannot patch resource "customresourcedefinitions"');
  await t.rejects(installDenaturedCRDs(m.up, [denaturedKind('clusterroles')]),
    { name: 'UpstreamError', upstreamStatus: 403, message: `apply ${path}: 403 forbidden: User "ksview" cannot patch resource "customresourcedefinitions"` });
});
