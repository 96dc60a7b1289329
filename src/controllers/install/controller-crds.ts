// The CRDs the placement controllers need, from manifests/crds/: control.kubestellar.io in the WDS
// (BindingPolicy, StatusCollector, CustomTransform) and the OCM kinds in the ITS (ManagedCluster,
// ManifestWork). Each is created when absent, labelled as ours; one that exists is updated to our
// spec only when it carries that label (a real OCM hub's or KubeStellar's CRDs are never replaced),
// so a newer kubestellar-view brings its schema along. Then each is waited for until Established.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CRDS_PATH, waitForEstablished } from '../../kube/crd-established.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { repoRoot } from '../../util/repo-root.js';

export const WDS_CRD_FILES = ['control.kubestellar.io_bindingpolicies.yaml', 'control.kubestellar.io_statuscollectors.yaml', 'control.kubestellar.io_customtransforms.yaml'];
export const ITS_CRD_FILES = ['cluster.open-cluster-management.io_managedclusters.yaml', 'work.open-cluster-management.io_manifestworks.yaml',
  // KubeStellar's WorkStatus: written by the agents into the mailbox namespaces.
  'control.kubestellar.io_workstatuses.yaml',
  // Upsync (docs/upsync.md): the requests serve writes to each cluster, the copies its agent writes back.
  'control.kubestellar.io_upsyncrequests.yaml', 'control.kubestellar.io_upsyncedobjects.yaml'];

export function readCRD(file: string): { metadata: { name: string; labels?: Record<string, string> } } {
  return YAML.parse(readFileSync(path.join(repoRoot(), 'manifests', 'crds', file), 'utf8')) as { metadata: { name: string } };
}

/** On the CRDs kubestellar-view created: it may update them. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
const MANAGED_BY = 'kubestellar-view';

interface CRD {
  metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
  spec?: unknown;
}

/** Creates the CRDs of `files` that `up` lacks and updates ours that exist; returns the names created. */
export async function ensureCRDs(up: Upstream, files: readonly string[], timeoutMs = 60_000): Promise<string[]> {
  const created: string[] = [];
  for (const file of files) {
    const crd = readCRD(file) as CRD;
    crd.metadata.labels = { ...crd.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY };
    const name = crd.metadata.name;
    const existing = await upstreamRequest(up, 'GET', `${CRDS_PATH}/${name}`);
    if (existing.status === 200) {
      const current = JSON.parse(existing.body.toString('utf8')) as CRD;
      if (current.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) continue;
      // An unchanged spec (the server's defaults aside) stores nothing new.
      const body = { ...crd, metadata: { ...current.metadata, labels: crd.metadata.labels } };
      expectOk(await upstreamRequest(up, 'PUT', `${CRDS_PATH}/${name}`, { body }), `update CRD ${name}`, [409]);
      continue;
    }
    expectOk(existing, `GET CRD ${name}`, [404]);
    expectOk(await upstreamRequest(up, 'POST', CRDS_PATH, { body: crd }), `create CRD ${name}`, [409]);
    created.push(name);
  }
  await waitForEstablished(up, files.map((f) => readCRD(f).metadata.name), timeoutMs);
  return created;
}
