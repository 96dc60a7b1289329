// The Lease `managed-cluster-lease` (coordination.k8s.io/v1) in the cluster's mailbox namespace of
// the ITS: renewed while the agent lives, so the hub side can tell a silent agent (OCM marks the
// cluster Available=Unknown after 5 lease durations). OCM's agent renews every lease duration; we
// renew every quarter of it, so one lost renewal never looks like a dead agent. Created when
// missing (OCM's hub creates it; our hub side does not). Errors are logged and retried next tick.
import { CLUSTER_LEASE_NAME } from '../../kube/ocm-api.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { errorLine, type AgentLog } from '../shared/log.js';

/** Lease requests pass any limiter on the upstream: a renewal late behind a burst of writes loses the lease. */
const LEASE = { unlimited: true } as const;

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export const leasePath = (cluster: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${cluster}/leases/${CLUSTER_LEASE_NAME}`;

/** One renewal: GET then PUT with a fresh renewTime (optimistic concurrency), or create. */
export async function renewClusterLease(its: Upstream, cluster: string, durationSeconds: number, now = Date.now()): Promise<void> {
  const path = leasePath(cluster);
  const got = await upstreamRequest(its, 'GET', path, LEASE);
  if (got.status === 404) {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: { name: CLUSTER_LEASE_NAME, namespace: cluster },
      spec: { leaseDurationSeconds: durationSeconds, renewTime: microTime(now) },
    };
    expectOk(await upstreamRequest(its, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${cluster}/leases`, { ...LEASE, body: lease }), `create lease ${cluster}/${CLUSTER_LEASE_NAME}`);
    return;
  }
  const lease = JSON.parse(expectOk(got, `get lease ${cluster}/${CLUSTER_LEASE_NAME}`).body.toString('utf8')) as { spec?: Record<string, unknown> };
  lease.spec = { ...lease.spec, leaseDurationSeconds: durationSeconds, renewTime: microTime(now) };
  expectOk(await upstreamRequest(its, 'PUT', path, { ...LEASE, body: lease }), `renew lease ${cluster}/${CLUSTER_LEASE_NAME}`);
}

/** Renews on a timer until stopped; the duration is read on each tick (it follows spec.leaseDurationSeconds). */
export class ClusterLeaseRenewer {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  lastError: string | undefined;

  constructor(private readonly lease: { its: Upstream; cluster: string; durationSeconds: () => number; log: AgentLog; onError?: () => void }) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    const seconds = this.lease.durationSeconds();
    try {
      await renewClusterLease(this.lease.its, this.lease.cluster, seconds);
      if (this.lastError) this.lease.log(`[${this.lease.cluster}] cluster lease renewed again`);
      this.lastError = undefined;
    } catch (err) {
      const line = errorLine(err);
      if (line !== this.lastError) this.lease.log(`[${this.lease.cluster}] cannot renew cluster lease: ${line}`);
      this.lastError = line;
      this.lease.onError?.();
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), (seconds * 1000) / 4);
  }
}
