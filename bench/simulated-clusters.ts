// The simulated fleet of the scale benches (./fleet-scale.ts, ./upsync-scale.ts): ManagedClusters
// made in its1 with their mailbox namespaces, accepted and Available as a hub admin and a joined
// agent would leave them (no lease: the hub's lease rule leaves them so), and removed again; and
// the benches' wait on a condition, timed.
import { performance } from 'node:perf_hooks';
import { bounded, progress, type Client } from './agent-common.js';

const MANAGED_CLUSTERS = '/apis/cluster.open-cluster-management.io/v1/managedclusters';

/** Makes the clusters `names` (32 at a time), cluster i labelled `labelsOf(i)`. */
export async function makeSimulatedClusters(its: Client, names: readonly string[], labelsOf: (i: number) => Record<string, string>): Promise<void> {
  const now = new Date().toISOString();
  const cond = (type: string, reason: string) => ({ type, status: 'True', reason, message: 'simulated', lastTransitionTime: now });
  await bounded(names.length, 32, async (i) => {
    const name = names[i]!;
    await its.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await its.call('POST', MANAGED_CLUSTERS, { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster',
      metadata: { name, labels: labelsOf(i) }, spec: { hubAcceptsClient: true, leaseDurationSeconds: 3600 } });
    await its.call('PATCH', `${MANAGED_CLUSTERS}/${name}/status`, { status: { conditions: [
      cond('HubAcceptedManagedCluster', 'HubClusterAdminAccepted'), cond('ManagedClusterJoined', 'ManagedClusterJoined'),
      cond('ManagedClusterConditionAvailable', 'ManagedClusterAvailable')] } }, 'application/merge-patch+json');
  });
}

/** Deletes the clusters `names` and their namespaces (whatever is left of them). */
export async function deleteSimulatedClusters(its: Client, names: readonly string[]): Promise<void> {
  await bounded(names.length, 32, async (i) => {
    await its.call('DELETE', `${MANAGED_CLUSTERS}/${names[i]}`).catch(() => undefined);
    await its.call('DELETE', `/api/v1/namespaces/${names[i]}`).catch(() => undefined);
  });
}

/**
 * Polls `ok` every `everyMs` until true and returns when (performance.now()); throws after
 * `timeoutMs`, saying `report()`, which is also printed every 15 s meanwhile.
 */
export async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number, report?: () => string, everyMs = 50): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let told = Date.now();
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${report ? ` (${report()})` : ''}`);
    if (report && Date.now() - told > 15_000) { told = Date.now(); progress.step(`  … ${what}: ${report()}`); }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return performance.now();
}
