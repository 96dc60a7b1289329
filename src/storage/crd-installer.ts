// Installs the CRDs of the denatured kinds in the WDS and keeps them equal to what the WDS's own
// OpenAPI says: each CRD is server-side applied (field manager ksview-serve, forced), so a run with
// an unchanged schema changes nothing and a changed schema upgrades the CRD in place, stored
// objects included (same group, names and versions). Resolves once every CRD is Established.
import { waitFor } from '../spaces/health.js';
import { denaturedCRDForVersions } from './crd-schema.js';
import type { DenaturedKind } from './denatured-kinds.js';
import { upstreamJson, upstreamRequest, type Upstream } from './upstream.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const FIELD_MANAGER = 'ksview-serve';

interface CRDStatus {
  metadata?: { generation?: number };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

export interface InstallResult {
  name: string;
  /** Whether this run created or changed the CRD. */
  changed: boolean;
}

async function applyCRD(up: Upstream, crd: { metadata: { name: string } }): Promise<InstallResult> {
  const path = `${CRDS}/${crd.metadata.name}`;
  const before = await upstreamRequest(up, 'GET', path);
  const res = await upstreamRequest(up, 'PATCH', `${path}?fieldManager=${FIELD_MANAGER}&force=true`, {
    headers: { 'content-type': 'application/apply-patch+yaml' }, body: crd,
  });
  if (res.status >= 300) throw new Error(`apply CRD ${crd.metadata.name}: ${res.status} ${res.body.toString('utf8').slice(0, 500)}`);
  const rvOf = (b: Buffer) => (JSON.parse(b.toString('utf8')) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  return { name: crd.metadata.name, changed: before.status !== 200 || rvOf(before.body) !== rvOf(res.body) };
}

/** Applies the CRD of every kind, then waits (up to timeoutMs) until all are Established. */
export async function installDenaturedCRDs(up: Upstream, kinds: readonly DenaturedKind[], timeoutMs = 60_000): Promise<InstallResult[]> {
  const crds = kinds.map((k) => denaturedCRDForVersions(k, k.versions) as { metadata: { name: string } });
  const results = await Promise.all(crds.map((crd) => applyCRD(up, crd)));
  for (const crd of crds) {
    const res = await waitFor(async () => {
      const s = await upstreamJson<CRDStatus>(up, 'GET', `${CRDS}/${crd.metadata.name}`);
      const established = s.status?.conditions?.find((c) => c.type === 'Established');
      return { ok: established?.status === 'True', detail: established?.message ?? 'no Established condition yet' };
    }, timeoutMs);
    if (!res.ok) throw new Error(`CRD ${crd.metadata.name} is not Established: ${res.detail}`);
  }
  return results;
}
