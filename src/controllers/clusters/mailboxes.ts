// Mailbox namespaces in the ITS: a ManagedCluster the hub accepts (spec.hubAcceptsClient true) gets
// the namespace named after it created if missing, as OCM's hub does, so a pull agent with least
// privilege never needs the right to create namespaces in the ITS. Namespaces are never deleted
// here (a ManagedCluster going away may be re-registered; its works and leases stay).
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import type { ManagedCluster } from '../../kube/ocm-api.js';

/** Whether the hub accepts the cluster (then its mailbox must exist). */
export const accepted = (mc: ManagedCluster): boolean => mc.spec?.hubAcceptsClient === true;

/** Creates namespace `name` in the ITS unless it exists; returns whether it created it. */
export async function ensureMailbox(its: Upstream, name: string): Promise<boolean> {
  const res = await upstreamRequest(its, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'open-cluster-management.io/cluster-name': name } } },
  });
  expectOk(res, `create mailbox namespace ${name}`, [409]);
  return res.status !== 409;
}
