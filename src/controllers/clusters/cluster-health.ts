// The hub's view of each cluster's health, as OCM's hub lease controller (ocm v1.2.0,
// pkg/registration/hub/lease) decides it: a cluster the hub accepts whose Lease
// `managed-cluster-lease` (in its mailbox namespace) was last renewed 5 × spec.leaseDurationSeconds
// ago (60 s when unset) or more gets condition ManagedClusterConditionAvailable Unknown, reason
// ManagedClusterLeaseUpdateStopped. The agent sets it back when it renews. Event-driven: the
// informers over ManagedClusters and Leases queue the cluster's name, and each check queues it
// again for the moment its lease would go stale. Also creates accepted clusters' mailbox
// namespaces (./mailboxes.ts). Only the leader writes. Nothing here touches works: placement
// never selects on availability, so an unavailable cluster keeps its works.
import { Informer } from '../../kube/informer.js';
import { CLUSTER_LEASE_NAME, ClusterCondition, MANAGEDCLUSTERS_PATH, type Condition, type ManagedCluster } from '../../kube/ocm-api.js';
import type { KubeObject } from '../../kube/objects.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { runWorkers, WorkQueue } from '../../kube/work-queue.js';
import { accepted, ensureMailbox } from './mailboxes.js';

/** OCM's hub: a lease is stale after this many lease durations. */
export const LEASE_DURATION_TIMES = 5;
/** OCM's default spec.leaseDurationSeconds. */
export const DEFAULT_LEASE_DURATION_SECONDS = 60;
export const LEASE_STOPPED_REASON = 'ManagedClusterLeaseUpdateStopped';
export const LEASE_STOPPED_MESSAGE = 'Registration agent stopped updating its lease.';
const LEASES_PATH = '/apis/coordination.k8s.io/v1/leases';

export interface Lease extends KubeObject {
  spec?: { renewTime?: string; leaseDurationSeconds?: number; holderIdentity?: string };
}

/** How long after its last renewal a cluster's lease is stale. */
export function gracePeriodMs(mc: ManagedCluster): number {
  return LEASE_DURATION_TIMES * (mc.spec?.leaseDurationSeconds || DEFAULT_LEASE_DURATION_SECONDS) * 1000;
}

const hubAccepted = (mc: ManagedCluster): boolean =>
  accepted(mc) || (mc.status?.conditions ?? []).some((c) => c.type === ClusterCondition.HubAccepted);

/**
 * Checks one cluster: marks it Available=Unknown when its lease is stale (writing only when
 * `write`), and returns in how many ms to check it again (undefined: only on the next event).
 */
export async function checkLease(its: Upstream, mc: ManagedCluster, lease: Lease | undefined, now: number, write: boolean): Promise<number | undefined> {
  // A cluster never accepted, or whose agent never renewed a lease, has nothing to go stale.
  if (!hubAccepted(mc) || !lease?.spec?.renewTime) return undefined;
  const grace = gracePeriodMs(mc);
  const expiry = Date.parse(lease.spec.renewTime) + grace;
  if (now < expiry) return expiry - now;
  const conditions = mc.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === ClusterCondition.Available);
  if (write && current?.status !== 'Unknown') {
    const next: Condition = {
      type: ClusterCondition.Available, status: 'Unknown', reason: LEASE_STOPPED_REASON, message: LEASE_STOPPED_MESSAGE,
      lastTransitionTime: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    // A merge patch replaces the list: it carries every other condition as read, and the
    // resourceVersion makes a concurrent change (the agent's renewal) a conflict, retried.
    const body = {
      metadata: { resourceVersion: mc.metadata.resourceVersion },
      status: { conditions: [...conditions.filter((c) => c.type !== ClusterCondition.Available), next] },
    };
    expectOk(await upstreamRequest(its, 'PATCH', `${MANAGEDCLUSTERS_PATH}/${mc.metadata.name}/status`,
      { body, headers: { 'content-type': 'application/merge-patch+json' } }), `mark ManagedCluster ${mc.metadata.name} Available=Unknown`);
  }
  return grace;
}

export interface ClusterHealthOptions {
  its: Upstream;
  log: (m: string) => void;
  /** The clock (tests). */
  now?: () => number;
}

export class ClusterHealthController {
  readonly clusters: Informer<ManagedCluster>;
  readonly leases: Informer<Lease>;
  private queue = new WorkQueue();
  private leading = false;
  private workers: Promise<void> | undefined;
  /** Mailboxes this process created or found (not asked for again). */
  private readonly mailboxes = new Set<string>();
  private readonly now: () => number;

  constructor(private readonly options: ClusterHealthOptions) {
    this.now = options.now ?? Date.now;
    const onError = (what: string) => (err: Error) => options.log(`${what}: ${err.message}`);
    this.clusters = new Informer<ManagedCluster>(options.its, {
      path: MANAGEDCLUSTERS_PATH, onChange: (_t, mc) => this.queue.add(mc.metadata.name), onError: onError('managedclusters'),
    });
    this.leases = new Informer<Lease>(options.its, {
      path: LEASES_PATH,
      onChange: (_t, l) => { if (l.metadata?.name === CLUSTER_LEASE_NAME && l.metadata.namespace) this.queue.add(l.metadata.namespace); },
      onError: onError('leases'),
    });
  }

  async start(): Promise<void> {
    this.clusters.start();
    this.leases.start();
    await Promise.all([this.clusters.synced, this.leases.synced]);
    this.workers = runWorkers(this.queue, 2, (name) => this.sync(name), (name, err) => this.options.log(`cluster ${name}: ${(err as Error).message}`));
  }

  setLeading(leading: boolean): void {
    this.leading = leading;
    if (leading) for (const mc of this.clusters.store.list()) this.queue.add(mc.metadata.name);
  }

  async sync(name: string): Promise<void> {
    const mc = this.clusters.get('', name);
    if (!mc) return;
    if (this.leading && accepted(mc) && !this.mailboxes.has(name)) {
      if (await ensureMailbox(this.options.its, name)) this.options.log(`created mailbox namespace ${name} in the ITS`);
      this.mailboxes.add(name);
    }
    const again = await checkLease(this.options.its, mc, this.leases.get(name, CLUSTER_LEASE_NAME), this.now(), this.leading);
    if (again !== undefined) this.queue.addAfter(name, again);
  }

  async stop(): Promise<void> {
    this.clusters.stop();
    this.leases.stop();
    this.queue.shutDown();
    await this.workers;
  }
}
