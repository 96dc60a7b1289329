// Installs the CRDs of the denatured kinds in the WDS and keeps them equal to what the WDS's own
// OpenAPI says: each CRD is server-side applied (field manager ksview-serve, forced), so a run with
// an unchanged schema changes nothing and a changed schema upgrades the CRD in place, stored
// objects included (same group, names and versions). Resolves once every CRD is Established.
import { CRDS_PATH, waitForEstablished } from '../kube/crd-established.js';
import { serverSideApply, upstreamRequest, type Upstream } from '../kube/upstream.js';
import { denaturedCRDForVersions } from './crd-schema.js';
import type { DenaturedKind } from './denatured-kinds.js';

const FIELD_MANAGER = 'ksview-serve';

export interface InstallResult {
  name: string;
  /** Whether this run created or changed the CRD. */
  changed: boolean;
}

async function applyCRD(up: Upstream, crd: { metadata: { name: string } }): Promise<InstallResult> {
  const path = `${CRDS_PATH}/${crd.metadata.name}`;
  const before = await upstreamRequest(up, 'GET', path);
  const after = await serverSideApply<{ metadata?: { resourceVersion?: string } }>(up, path, crd, FIELD_MANAGER);
  const rvBefore = before.status === 200 ? (JSON.parse(before.body.toString('utf8')) as typeof after).metadata?.resourceVersion : undefined;
  return { name: crd.metadata.name, changed: rvBefore === undefined || rvBefore !== after.metadata?.resourceVersion };
}

/** Applies the CRD of every kind, then waits (up to timeoutMs) until all are Established. */
export async function installDenaturedCRDs(up: Upstream, kinds: readonly DenaturedKind[], timeoutMs = 60_000): Promise<InstallResult[]> {
  const crds = kinds.map((k) => denaturedCRDForVersions(k, k.versions) as { metadata: { name: string } });
  const results = await Promise.all(crds.map((crd) => applyCRD(up, crd)));
  await waitForEstablished(up, crds.map((c) => c.metadata.name), timeoutMs);
  return results;
}
