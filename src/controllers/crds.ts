// The CRDs the placement controllers need, from manifests/crds/: control.kubestellar.io in the WDS
// (BindingPolicy, StatusCollector, CustomTransform) and the OCM kinds in the ITS (ManagedCluster,
// ManifestWork). Each is created only when absent (a real OCM hub's CRDs are never replaced), and
// waited for until Established.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { waitFor } from '../spaces/health.js';
import { repoRoot } from '../spaces/repo-root.js';
import { upstreamJson, upstreamRequest, type Upstream } from '../storage/upstream.js';

export const WDS_CRD_FILES = ['control.kubestellar.io_bindingpolicies.yaml', 'control.kubestellar.io_statuscollectors.yaml', 'control.kubestellar.io_customtransforms.yaml'];
export const ITS_CRD_FILES = ['cluster.open-cluster-management.io_managedclusters.yaml', 'work.open-cluster-management.io_manifestworks.yaml'];
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export function readCRD(file: string): { metadata: { name: string } } {
  return YAML.parse(readFileSync(path.join(repoRoot(), 'manifests', 'crds', file), 'utf8')) as { metadata: { name: string } };
}

/** Creates the CRDs of `files` that `up` lacks; returns the names created. */
export async function ensureCRDs(up: Upstream, files: readonly string[], timeoutMs = 60_000): Promise<string[]> {
  const created: string[] = [];
  for (const file of files) {
    const crd = readCRD(file);
    const name = crd.metadata.name;
    const existing = await upstreamRequest(up, 'GET', `${CRDS}/${name}`);
    if (existing.status === 200) continue;
    if (existing.status !== 404) throw new Error(`GET CRD ${name}: ${existing.status} ${existing.body.toString('utf8').slice(0, 300)}`);
    const res = await upstreamRequest(up, 'POST', CRDS, { body: crd });
    if (res.status >= 300 && res.status !== 409) throw new Error(`create CRD ${name}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    created.push(name);
  }
  for (const file of files) {
    const name = readCRD(file).metadata.name;
    const r = await waitFor(async () => {
      const s = await upstreamJson<{ status?: { conditions?: { type: string; status: string }[] } }>(up, 'GET', `${CRDS}/${name}`);
      return { ok: s.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true, detail: 'not Established yet' };
    }, timeoutMs);
    if (!r.ok) throw new Error(`CRD ${name} is not Established`);
  }
  return created;
}
