// CustomResourceDefinitions: the one wait until a CRD is Established (its resources are served).
import { upstreamJson, type Upstream } from './upstream.js';
import { waitFor } from './wait.js';

export const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

interface CRDStatus {
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

/** Waits (up to timeoutMs) until every CRD named is Established; throws naming the first that is not. */
export async function waitForEstablished(up: Upstream, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  for (const name of names) {
    const res = await waitFor(async () => {
      const s = await upstreamJson<CRDStatus>(up, 'GET', `${CRDS_PATH}/${name}`);
      const established = s.status?.conditions?.find((c) => c.type === 'Established');
      return { ok: established?.status === 'True', detail: established?.message ?? 'no Established condition yet' };
    }, timeoutMs);
    if (!res.ok) throw new Error(`CRD ${name} is not Established: ${res.detail}`);
  }
}
