// Registration of one cluster with the ITS, as OCM's registration agent does it (pull and push
// alike): create the ManagedCluster if missing (pull mode only; push-served clusters are created
// and accepted by the hub admin), with only what OCM's agent sets on create — never accepting it
// ourselves (hubAcceptsClient is the hub admin's half of the double opt-in, and the ITS's admission
// policy refuses it to us), never labels, taints or lease settings (what the cluster receives is
// the hub's to say); poll it and report acceptance (`onAccepted`), so the front starts the
// ClusterWorker only then; renew the cluster Lease once accepted; and keep status current:
// ManagedClusterJoined, ManagedClusterConditionAvailable (OCM's reasons), capacity/allocatable
// summed from the WEC's Nodes, version from /version, clusterClaims from ClusterClaim objects.
// After the create, only the status subresource is ever written (the agent's RBAC grants no more),
// and only when what we compute differs.
import { CLUSTER_GROUP, ClusterCondition, MANAGEDCLUSTERS_PATH, type Condition, type ManagedCluster } from '../../kube/ocm-api.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { ClusterLeaseRenewer } from './cluster-lease.js';
import { errorLine, type AgentLog } from '../shared/log.js';
import { sumResources } from './quantity.js';

export const DEFAULT_LEASE_DURATION_SECONDS = 60;
/** ClusterClaims with this label stay in the WEC (OCM's labelCustomizedOnly). */
const SPOKE_ONLY_LABEL = 'open-cluster-management.io/spoke-only';
/** Reason of Available=False on a WEC whose kubestellar-fleet lease another fleet holds (push mode). */
export const REASON_HELD_BY_ANOTHER_FLEET = 'HeldByAnotherFleet';
/** Reason of Available=Unknown while the WEC does not answer. */
export const REASON_WEC_UNREACHABLE = 'ManagedClusterWecUnreachable';
/** Reason of Available=False on a push-served cluster whose kubeconfig Secret asks for what the agent refuses (a plugin, a local file). */
export const REASON_KUBECONFIG_REFUSED = 'KubeconfigRefused';
/** Reason of Available=False on a push-served cluster whose kubeconfig Secret cannot be used (not YAML, no context...). */
export const REASON_KUBECONFIG_INVALID = 'KubeconfigInvalid';

export interface RegistrationOptions {
  cluster: string;
  its: Upstream;
  wec: Upstream;
  log: AgentLog;
  /** Called when spec.hubAcceptsClient turns true or false. */
  onAccepted: (accepted: boolean) => void;
  /**
   * Create the ManagedCluster when missing (default true: pull mode, OCM's agent). Push mode serves
   * only clusters the hub admin created and accepted, and its RBAC has no `create`.
   */
  create?: boolean;
  /** How often the ManagedCluster is read and status refreshed (default 5 s). */
  syncMs?: number;
  now?: () => number;
}

export interface ComputedStatus {
  conditions: Condition[];
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  version?: { kubernetes?: string };
  clusterClaims?: { name: string; value: string }[];
}

/** metav1 SetStatusCondition: the transition time moves only when the status does. */
export function setCondition(list: readonly Condition[], c: Omit<Condition, 'lastTransitionTime'>, now: number): Condition[] {
  const old = list.find((x) => x.type === c.type);
  const lastTransitionTime = old && old.status === c.status ? old.lastTransitionTime : new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const next = { ...old, ...c, lastTransitionTime } as Condition;
  return old ? list.map((x) => (x === old ? next : x)) : [...list, next];
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Whether `next` says anything `cur` does not (conditions compared without their times). */
export function statusChanged(cur: ManagedCluster['status'], next: ComputedStatus): boolean {
  const strip = (cs: readonly Condition[] | undefined) => (cs ?? []).map(({ type, status, reason, message }) => ({ type, status, reason, message }))
    .sort((a, b) => a.type.localeCompare(b.type));
  return !same(strip(cur?.conditions), strip(next.conditions)) || !same(cur?.capacity, next.capacity)
    || !same(cur?.allocatable, next.allocatable) || !same(cur?.version, next.version) || !same(cur?.clusterClaims, next.clusterClaims);
}

interface NodeLike { spec?: { unschedulable?: boolean }; status?: { capacity?: Record<string, string>; allocatable?: Record<string, string> } }

/** OCM's sums: capacity of every Node; allocatable of the schedulable ones. */
export function nodeResources(nodes: readonly NodeLike[]): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  return {
    capacity: sumResources(nodes.map((n) => n.status?.capacity)),
    allocatable: sumResources(nodes.filter((n) => !n.spec?.unschedulable).map((n) => n.status?.allocatable)),
  };
}

async function getJson<T>(up: Upstream, path: string, what: string, alsoOk: number[] = []): Promise<T | undefined> {
  const res = expectOk(await upstreamRequest(up, 'GET', path), what, alsoOk);
  return res.status >= 300 ? undefined : JSON.parse(res.body.toString('utf8')) as T;
}

/** What the WEC says about itself: Available (OCM's /livez check), resources, version, claims. */
export async function observeWec(wec: Upstream): Promise<{ available: Omit<Condition, 'lastTransitionTime'>; rest: Omit<ComputedStatus, 'conditions'> }> {
  let code: number;
  let body = '';
  try {
    let res = await upstreamRequest(wec, 'GET', '/livez');
    if (res.status === 404 || res.status === 403) res = await upstreamRequest(wec, 'GET', '/healthz');
    code = res.status;
    body = res.body.toString('utf8').slice(0, 200);
  } catch (err) {
    return { available: { type: ClusterCondition.Available, status: 'Unknown', reason: REASON_WEC_UNREACHABLE, message: `The kube-apiserver does not answer: ${errorLine(err)}` }, rest: {} };
  }
  if (code !== 200) {
    return { available: { type: ClusterCondition.Available, status: 'False', reason: 'ManagedClusterKubeAPIServerUnavailable', message: `The kube-apiserver is not ok, status code: ${code}, ${body}` }, rest: {} };
  }
  const nodes = await getJson<{ items?: NodeLike[] }>(wec, '/api/v1/nodes', 'list nodes');
  const version = await getJson<{ gitVersion?: string }>(wec, '/version', 'get /version');
  const claims = await getJson<{ items?: { metadata?: { name?: string; labels?: Record<string, string> }; spec?: { value?: string } }[] }>(
    wec, `/apis/${CLUSTER_GROUP}/v1alpha1/clusterclaims`, 'list clusterclaims', [404]);
  const clusterClaims = (claims?.items ?? []).filter((c) => !(SPOKE_ONLY_LABEL in (c.metadata?.labels ?? {})))
    .map((c) => ({ name: c.metadata?.name ?? '', value: c.spec?.value ?? '' })).sort((a, b) => a.name.localeCompare(b.name));
  return {
    available: { type: ClusterCondition.Available, status: 'True', reason: 'ManagedClusterAvailable', message: 'Managed cluster is available' },
    rest: { ...nodeResources(nodes?.items ?? []), version: { kubernetes: version?.gitVersion ?? '' }, ...(claims ? { clusterClaims } : {}) },
  };
}

/**
 * The ManagedCluster an agent creates: what OCM's registration agent sets on create (its name; OCM
 * adds client configs and `agent.open-cluster-management.io/` annotations, which we have none of)
 * and an explicit `hubAcceptsClient: false`. No labels, taints or lease duration (the CRD defaults
 * it): those are the hub admin's, and the ITS's admission policy refuses them from a non-admin.
 */
export function registrationRequest(cluster: string): ManagedCluster {
  return { apiVersion: `${CLUSTER_GROUP}/v1`, kind: 'ManagedCluster', metadata: { name: cluster }, spec: { hubAcceptsClient: false } };
}

/**
 * Sets one condition on a ManagedCluster's status (for a push-served cluster the agent cannot
 * reach, e.g. its kubeconfig refused), writing only when it differs; a conflict is read again.
 */
export async function reportClusterCondition(its: Upstream, cluster: string, c: Omit<Condition, 'lastTransitionTime'>, now = Date.now()): Promise<void> {
  const path = `${MANAGEDCLUSTERS_PATH}/${cluster}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const mc = await getJson<ManagedCluster>(its, path, `get managedcluster ${cluster}`);
    const cur = mc?.status?.conditions ?? [];
    const old = cur.find((x) => x.type === c.type);
    if (!mc || (old && old.status === c.status && old.reason === c.reason && old.message === c.message)) return;
    const res = await upstreamRequest(its, 'PATCH', `${path}/status`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { resourceVersion: mc.metadata.resourceVersion }, status: { conditions: setCondition(cur, c, now) } },
    });
    if (res.status !== 409) { expectOk(res, `update managedcluster ${cluster} status`); return; }
  }
}

export class Registration {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private accepted = false;
  private wecUnreachable: string | undefined;
  private heldBy: string | undefined;
  private leaseSeconds = DEFAULT_LEASE_DURATION_SECONDS;
  private readonly lease: ClusterLeaseRenewer;
  private running: Promise<void> | undefined;
  /** The last ITS error (unreachable, 401/403), '' when the last sync reached it. */
  itsError: string | undefined = 'not yet synced';

  constructor(private readonly registration: RegistrationOptions) {
    this.lease = new ClusterLeaseRenewer({ its: registration.its, cluster: registration.cluster, durationSeconds: () => this.leaseSeconds, log: registration.log });
  }

  get path(): string { return `${MANAGEDCLUSTERS_PATH}/${this.registration.cluster}`; }
  isAccepted(): boolean { return this.accepted; }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.lease.stop();
    await this.running;
  }

  /** Push mode's health check: while set, Available is Unknown with this message. */
  setWecUnreachable(reason: string | undefined): void {
    if (reason === this.wecUnreachable) return;
    this.wecUnreachable = reason;
    this.kick();
  }

  /** Push mode's fleet lease: while set (the other fleet's description), Available is False, HeldByAnotherFleet. */
  setHeldByAnotherFleet(holder: string | undefined): void {
    if (holder === this.heldBy) return;
    this.heldBy = holder;
    this.kick();
  }

  /** Runs one sync now (and re-arms the timer); syncs never overlap. */
  kick(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const prev = this.running ?? Promise.resolve();
    this.running = prev.then(() => this.syncOnce()).finally(() => {
      if (!this.stopped) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.kick(), this.registration.syncMs ?? 5000);
      }
    });
  }

  /** One pass; never throws (an ITS error is logged once and kept in itsError). */
  async syncOnce(): Promise<void> {
    try {
      const mc = await this.ensure();
      this.leaseSeconds = mc.spec?.leaseDurationSeconds || DEFAULT_LEASE_DURATION_SECONDS;
      const accepted = mc.spec?.hubAcceptsClient === true;
      if (accepted !== this.accepted) {
        this.accepted = accepted;
        this.registration.log(`[${this.registration.cluster}] ${accepted ? 'accepted by the hub (spec.hubAcceptsClient)' : 'waiting for the hub to accept this cluster (spec.hubAcceptsClient)'}`);
        if (accepted) this.lease.start(); else this.lease.stop();
        this.registration.onAccepted(accepted);
      } else if (!accepted && this.itsError === 'not yet synced') {
        this.registration.log(`[${this.registration.cluster}] waiting for the hub to accept this cluster (spec.hubAcceptsClient)`);
      }
      if (this.itsError) this.registration.log(`[${this.registration.cluster}] ITS reachable`);
      this.itsError = undefined;
      // OCM leaves status alone until the hub accepts; a refusal by fleet is said regardless.
      if (accepted || this.heldBy) await this.writeStatus(mc, accepted);
    } catch (err) {
      const line = errorLine(err);
      if (line !== this.itsError) this.registration.log(`[${this.registration.cluster}] registration: ${line}`);
      this.itsError = line;
    }
  }

  private async ensure(): Promise<ManagedCluster> {
    const got = await getJson<ManagedCluster>(this.registration.its, this.path, `get managedcluster ${this.registration.cluster}`, [404]);
    if (got) return got;
    if (this.registration.create === false) throw new Error(`ManagedCluster ${this.registration.cluster} not found: the hub admin creates and accepts the clusters a push agent serves`);
    const res = await upstreamRequest(this.registration.its, 'POST', MANAGEDCLUSTERS_PATH, { body: registrationRequest(this.registration.cluster) });
    if (res.status === 409) return (await getJson<ManagedCluster>(this.registration.its, this.path, `get managedcluster ${this.registration.cluster}`))!;
    this.registration.log(`[${this.registration.cluster}] created ManagedCluster ${this.registration.cluster}`);
    return JSON.parse(expectOk(res, `create managedcluster ${this.registration.cluster}`).body.toString('utf8')) as ManagedCluster;
  }

  /** The status we would write now, from the ManagedCluster and what the WEC says. */
  async compute(mc: ManagedCluster, accepted: boolean): Promise<ComputedStatus> {
    const now = this.registration.now?.() ?? Date.now();
    let conditions = mc.status?.conditions ?? [];
    let available: Omit<Condition, 'lastTransitionTime'>;
    let rest: Omit<ComputedStatus, 'conditions'> = {};
    if (this.heldBy) {
      available = { type: ClusterCondition.Available, status: 'False', reason: REASON_HELD_BY_ANOTHER_FLEET,
        message: `The WEC is held by another fleet (${this.heldBy}); this agent applies nothing to it` };
    } else if (this.wecUnreachable) {
      available = { type: ClusterCondition.Available, status: 'Unknown', reason: REASON_WEC_UNREACHABLE, message: this.wecUnreachable };
    } else {
      ({ available, rest } = await observeWec(this.registration.wec));
    }
    if (accepted) conditions = setCondition(conditions, { type: ClusterCondition.Joined, status: 'True', reason: 'ManagedClusterJoined', message: 'Managed cluster joined' }, now);
    conditions = setCondition(conditions, available, now);
    // Like OCM, resources not measured this time keep their last values; capacity keys others set stay.
    return {
      conditions,
      capacity: rest.capacity ? { ...mc.status?.capacity, ...rest.capacity } : mc.status?.capacity,
      allocatable: rest.allocatable ?? mc.status?.allocatable,
      version: rest.version ?? mc.status?.version,
      clusterClaims: rest.clusterClaims ?? mc.status?.clusterClaims,
    };
  }

  private async writeStatus(mc: ManagedCluster, accepted: boolean): Promise<void> {
    const next = await this.compute(mc, accepted);
    if (!statusChanged(mc.status, next)) return;
    const status = Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined));
    const res = await upstreamRequest(this.registration.its, 'PATCH', `${this.path}/status`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { resourceVersion: mc.metadata.resourceVersion }, status },
    });
    if (res.status === 409) return; // changed meanwhile: the next sync reads it again
    expectOk(res, `update managedcluster ${this.registration.cluster} status`);
  }
}
