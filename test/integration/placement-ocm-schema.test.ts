// The real OCM ManifestWork CRD (open-cluster-management.io/api at test/fixtures/ocm.ts's version, from the Go module proxy)
// accepts the ManifestWorks the placement controllers write: its schema, CEL rules included, is
// checked by a real kube-apiserver (wec2, where no ManifestWork CRD exists otherwise) with
// server-side dry runs.
import t from 'tap';
import { manifestWork, stripServerFields } from '../../src/controllers/model/wrapping.js';
import { OCM_CRD_FILES, ocmApiYaml } from '../fixtures/ocm.js';
import { kc, kcOk, waitUntil } from '../fixtures/spaces.js';


t.test('the real OCM ManifestWork CRD accepts our ManifestWorks', async (t) => {
  const crd = ocmApiYaml(OCM_CRD_FILES['work.open-cluster-management.io_manifestworks.yaml']);
  t.equal(crd.metadata.name, 'manifestworks.work.open-cluster-management.io');
  const existed = kc('wec2', ['get', 'crd', crd.metadata.name]).status === 0;
  if (!existed) {
    kcOk('wec2', ['create', '-f', '-'], JSON.stringify(crd));
    t.teardown(() => { kc('wec2', ['delete', 'crd', crd.metadata.name, '--ignore-not-found', '--wait=false']); });
  }
  await waitUntil('the real CRD to be served', () => kc('wec2', ['get', 'manifestworks', '-n', 'default']).status === 0, 60_000);

  const deployment = stripServerFields({
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'web', namespace: 'demo', uid: 'u', resourceVersion: '7', labels: { app: 'nginx' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'nginx' } }, template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
    status: { replicas: 0 },
  }, { group: 'apps', resource: 'deployments' });
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };
  const works = [
    manifestWork(deployment, { wds: 'wds1', cluster: 'default', id: { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'demo', name: 'web' }, policies: ['edge', 'p'.repeat(80)], createOnly: false }),
    manifestWork(role, { wds: 'wds1', cluster: 'default', id: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', namespace: '', name: 'system:reader' }, policies: ['edge'], createOnly: true }),
  ];
  for (const w of works) {
    const withSource = { ...w, metadata: { ...(w.metadata as object), annotations: { 'view.kubestellar.io/source': 'o|apps|v1|deployments|demo|web' } } };
    const r = kc('wec2', ['apply', '--server-side', '--dry-run=server', '--field-manager=kubestellar-view-wds1', '-f', '-'], JSON.stringify(withSource));
    t.equal(r.status, 0, `accepted: ${r.stderr.trim() || r.stdout.trim()}`);
  }
  const bad = { ...works[0], spec: { ...(works[0]!.spec as object), manifestConfigs: [{ resourceIdentifier: { group: 'apps', resource: 'deployments', name: 'web', namespace: 'demo' }, updateStrategy: { type: 'ServerSideApply', serverSideApply: { fieldManager: 'not-work-agent' } } }] } };
  const refused = kc('wec2', ['apply', '--server-side', '--dry-run=server', '-f', '-'], JSON.stringify(bad));
  t.not(refused.status, 0, 'and it is a real check: a field manager without the work-agent prefix is refused');
});
