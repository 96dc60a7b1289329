// The ITS's admission policies (manifests/its/): managedcluster-admission.yaml does what OCM's
// registration webhook does on a hub — accepting a cluster takes `update` on managedclusters/accept —
// and keeps agents to their own cluster and its status; mailbox-bounds.yaml bounds what an agent
// stores in its mailbox (its own Lease only, sizes). Each a ValidatingAdmissionPolicy and its
// binding, installed with the ITS CRDs, as they are: created when absent, replaced by ours when they
// carry our managed-by label (an unchanged spec stores nothing new), left alone when someone else's
// (an admin who applied their own version).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { repoRoot } from '../../util/repo-root.js';
import { MANAGED_BY_LABEL } from './controller-crds.js';

export const ITS_ADMISSION_FILES = ['managedcluster-admission.yaml', 'mailbox-bounds.yaml'].map((f) => path.join('manifests', 'its', f));
const ADMISSION_API = '/apis/admissionregistration.k8s.io/v1';
const COLLECTIONS: Record<string, string> = {
  ValidatingAdmissionPolicy: `${ADMISSION_API}/validatingadmissionpolicies`,
  ValidatingAdmissionPolicyBinding: `${ADMISSION_API}/validatingadmissionpolicybindings`,
};

interface AdmissionObject { kind: string; metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string }; spec?: unknown }

/** The policies and their bindings, as the manifest files hold them (each policy first: its binding names it). */
export function itsAdmissionObjects(): AdmissionObject[] {
  return ITS_ADMISSION_FILES.flatMap((f) => YAML.parseAllDocuments(readFileSync(path.join(repoRoot(), f), 'utf8')).map((d) => d.toJSON() as AdmissionObject));
}

/** Creates or updates (when ours) the policies and their bindings; returns the names created. */
export async function ensureItsAdmission(its: Upstream): Promise<string[]> {
  const created: string[] = [];
  for (const obj of itsAdmissionObjects()) {
    const collection = COLLECTIONS[obj.kind];
    if (!collection) throw new Error(`manifests/its: unexpected kind ${obj.kind}`);
    const what = `${obj.kind} ${obj.metadata.name}`;
    const existing = await upstreamRequest(its, 'GET', `${collection}/${obj.metadata.name}`);
    if (existing.status === 200) {
      const current = JSON.parse(existing.body.toString('utf8')) as AdmissionObject;
      if (current.metadata.labels?.[MANAGED_BY_LABEL] !== obj.metadata.labels?.[MANAGED_BY_LABEL]) continue;
      const body = { ...obj, metadata: { ...current.metadata, labels: obj.metadata.labels } };
      expectOk(await upstreamRequest(its, 'PUT', `${collection}/${obj.metadata.name}`, { body }), `update ${what}`, [409]);
      continue;
    }
    expectOk(existing, `GET ${what}`, [404]);
    expectOk(await upstreamRequest(its, 'POST', collection, { body: obj }), `create ${what}`, [409]);
    created.push(obj.metadata.name);
  }
  return created;
}
