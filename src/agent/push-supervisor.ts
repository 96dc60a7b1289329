// Push mode: one process beside the ITS serves every cluster the hub accepts whose mailbox
// namespace holds a Secret `<cluster>-kubeconfig` (key `kubeconfig`). The edge is less trusted than
// the center, and that Secret is the fleet's input, not the operator's:
// - Secrets are read only in the mailbox namespaces of accepted ManagedClusters: one watch of
//   ManagedClusters, and per accepted cluster a watch of its one Secret (field selector on its
//   name, which RBAC grants per mailbox: charts/kubestellar-view/files/agent/push-mailbox-rbac.yaml). A cluster no longer
//   accepted (or deleted) stops being served; a Secret anywhere else is never asked for.
// - Its kubeconfig may not run a credential plugin (exec, auth-provider) unless the operator said
//   so (--insecure-kubeconfig-exec), nor name a local file; refused, nothing of it is used, and the
//   slot's problem and the ManagedCluster's Available condition (reason KubeconfigRefused) say why.
// Per cluster (a ClusterSlot), independently of all others — no await is shared across clusters,
// so a slow or dead WEC stalls only its own slot:
// - the fleet lease (kube-system/kubestellar-fleet in the WEC) is claimed and renewed every quarter
//   of its duration; held by another fleet → no worker, and the ManagedCluster says so;
// - Registration (Lease, status; never a create: the hub admin made the cluster) runs; the
//   ClusterWorker runs only while the hub accepts the cluster and the lease is ours;
// - /readyz of the WEC is checked every health interval; the worker and the ManagedCluster hear
//   when it stops or resumes answering.
// A Secret added starts its slot, deleted stops it, changed (other kubeconfig) restarts it.
import { Informer, type ChangeType } from '../kube/informer.js';
import { KubeconfigRefused, type FleetKubeconfigPolicy } from '../kube/kubeconfig-file.js';
import type { KubeObject } from '../kube/objects.js';
import { ClusterCondition, MANAGEDCLUSTERS_PATH, type ManagedCluster } from '../kube/ocm-api.js';
import { closeUpstream, upstreamFromKubeconfigText, UpstreamError, type Upstream } from '../kube/upstream.js';
import type { ClusterWorker, PlacedResource } from './shared/contract.js';
import { claimFleetLease, DEFAULT_FLEET_LEASE_SECONDS } from './registration/fleet-lease.js';
import { errorLine, type AgentLog } from './shared/log.js';
import { Registration, reportClusterCondition, REASON_KUBECONFIG_INVALID, REASON_KUBECONFIG_REFUSED, type RegistrationOptions } from './registration/cluster-registration.js';
import { checkWec } from './registration/wec-health.js';
import type { CreateWorker, RegistrationLike } from './shared/worker-factory.js';

export const KUBECONFIG_SECRET_SUFFIX = '-kubeconfig';
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

export interface KubeconfigSecret extends KubeObject { data?: Record<string, string> }

/** Follows one cluster's kubeconfig Secret (the default: an Informer with a field selector on its name). */
export type WatchSecret = (cluster: string, onChange: (type: ChangeType, s: KubeconfigSecret) => void, onError: (err: Error) => void) => { start(): void; stop(): void };

export interface PushSupervisorOptions {
  its: Upstream;
  fleetID: string;
  /** Holder identity in fleet leases and agentID of AppliedManifestWorks. */
  agentID: string;
  hubHash: string;
  createWorker: CreateWorker;
  log: AgentLog;
  healthIntervalMs?: number;
  healthTimeoutMs?: number;
  fleetLeaseSeconds?: number;
  /** Run exec and auth-provider plugins of the Secrets' kubeconfigs (the operator's --insecure-kubeconfig-exec); refused otherwise. */
  allowCredentialPlugins?: boolean;
  /** Test seams. */
  wecFromKubeconfig?: (text: string, label: string, policy: FleetKubeconfigPolicy) => Promise<Upstream>;
  createRegistration?: (o: RegistrationOptions) => RegistrationLike;
  watchSecret?: WatchSecret;
}

/** The cluster a Secret serves, when it is a `<namespace>-kubeconfig` Secret with a kubeconfig. */
export function clusterOfSecret(s: KubeconfigSecret): string | undefined {
  const ns = s.metadata?.namespace;
  return ns && s.metadata?.name === `${ns}${KUBECONFIG_SECRET_SUFFIX}` ? ns : undefined;
}

/** The one Secret of a cluster's mailbox the push agent reads. */
export const kubeconfigSecretName = (cluster: string): string => `${cluster}${KUBECONFIG_SECRET_SUFFIX}`;

export interface SlotState {
  cluster: string;
  /** Why the slot does not run a worker ('' when it does). */
  problem: string;
  worker?: ClusterWorker;
}

class ClusterSlot {
  private wec: Upstream | undefined;
  private reg: RegistrationLike | undefined;
  worker: ClusterWorker | undefined;
  private fleetHeld = false;
  private wecProblem: string | undefined;
  problem = 'starting';
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  /** Serialises this slot's start/stop of its worker (never shared with other slots). */
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly cluster: string, readonly kubeconfig: string, private readonly fleet: PushSupervisorOptions) {}

  private log(line: string): void { this.fleet.log(`[${this.cluster}] ${line}`); }

  async start(): Promise<void> {
    const policy: FleetKubeconfigPolicy = { allowCredentialPlugins: this.fleet.allowCredentialPlugins === true };
    const label = `secret ${this.cluster}/${kubeconfigSecretName(this.cluster)}`;
    try {
      this.wec = await (this.fleet.wecFromKubeconfig ?? upstreamFromKubeconfigText)(this.kubeconfig, label, policy);
    } catch (err) {
      this.problem = errorLine(err);
      this.log(`cannot serve: ${this.problem}`);
      // The hub admin reads it where they look at clusters: Available=False with the reason.
      const reason = err instanceof KubeconfigRefused ? REASON_KUBECONFIG_REFUSED : REASON_KUBECONFIG_INVALID;
      await reportClusterCondition(this.fleet.its, this.cluster, { type: ClusterCondition.Available, status: 'False', reason, message: this.problem })
        .catch((e: unknown) => this.log(`cannot report the refused kubeconfig on the ManagedCluster: ${errorLine(e)}`));
      return;
    }
    if (this.stopped) return;
    const regOpts: RegistrationOptions = { cluster: this.cluster, its: this.fleet.its, wec: this.wec, log: this.fleet.log, create: false, onAccepted: () => this.reconcileWorker() };
    this.reg = (this.fleet.createRegistration ?? ((ro) => new Registration(ro)))(regOpts);
    const leaseMs = (this.fleet.fleetLeaseSeconds ?? DEFAULT_FLEET_LEASE_SECONDS) * 1000;
    await this.claim();
    if (this.stopped) return;
    this.reg.start();
    this.every(leaseMs / 4, () => this.claim());
    this.every(this.fleet.healthIntervalMs ?? 5000, () => this.health());
  }

  private every(ms: number, fn: () => Promise<void>): void {
    const tick = () => {
      if (this.stopped) return;
      const t = setTimeout(() => { void fn().finally(tick); }, ms);
      this.timers.push(t);
    };
    tick();
  }

  async claim(): Promise<void> {
    if (!this.wec || this.stopped) return;
    try {
      const r = await claimFleetLease(this.wec, { fleetID: this.fleet.fleetID, holderIdentity: this.fleet.agentID, durationSeconds: this.fleet.fleetLeaseSeconds });
      if (r.held) {
        if (!this.fleetHeld) this.log(r.tookOver ? 'took over the expired fleet lease of another fleet' : `holds the fleet lease (fleet ${this.fleet.fleetID})`);
        this.fleetHeld = true;
        this.reg?.setHeldByAnotherFleet(undefined);
      } else {
        const who = `fleet ${r.holder.fleetID}, holder ${r.holder.holderIdentity}, renewed ${r.holder.renewTime}`;
        if (this.fleetHeld || this.problem !== `held by another fleet (${who})`) this.log(`refused: the WEC is held by another fleet (${who})`);
        this.fleetHeld = false;
        this.problem = `held by another fleet (${who})`;
        this.reg?.setHeldByAnotherFleet(who);
      }
    } catch (err) {
      // WEC unreachable or refusing: keep the state we had; the health check reports it.
      const line = `fleet lease: ${errorLine(err)}`;
      if (!this.fleetHeld && line !== this.problem) this.log(line);
      if (!this.fleetHeld) this.problem = line;
    }
    this.reconcileWorker();
  }

  async health(): Promise<void> {
    if (!this.wec || this.stopped) return;
    const reason = await checkWec(this.wec, this.fleet.healthTimeoutMs ?? Math.min(3000, this.fleet.healthIntervalMs ?? 5000));
    if (reason === this.wecProblem) return;
    this.log(reason ? `WEC unreachable: ${reason}` : 'WEC answers again');
    this.wecProblem = reason;
    this.worker?.setWecUnreachable(reason);
    this.reg?.setWecUnreachable(reason);
  }

  /** Starts or stops the worker as acceptance and the fleet lease say. */
  reconcileWorker(): void {
    this.chain = this.chain.then(async () => {
      const want = !this.stopped && this.fleetHeld && this.reg?.isAccepted() === true;
      if (want && !this.worker) {
        const w = this.fleet.createWorker({ cluster: this.cluster, its: this.fleet.its, wec: this.wec!, hubHash: this.fleet.hubHash, agentID: this.fleet.agentID, log: this.fleet.log });
        this.worker = w;
        if (this.wecProblem) w.setWecUnreachable(this.wecProblem);
        try {
          await w.start();
          this.problem = '';
          this.log('worker started');
        } catch (err) {
          this.problem = `worker: ${errorLine(err)}`;
          this.log(`worker did not start: ${this.problem}`);
        }
      } else if (!want && this.worker) {
        const w = this.worker;
        this.worker = undefined;
        await w.stop().catch((err: unknown) => this.log(`worker stop: ${errorLine(err)}`));
        this.log('worker stopped');
      }
      if (!this.worker && this.fleetHeld) this.problem = this.reg?.isAccepted() ? this.problem : 'waiting for the hub to accept the cluster';
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.reconcileWorker();
    await this.chain;
    await this.reg?.stop();
    if (this.wec) await closeUpstream(this.wec).catch(() => undefined);
  }
}

export class PushSupervisor {
  private readonly slots = new Map<string, ClusterSlot>();
  /** Per-cluster chain of slot starts/stops: a Secret's changes are handled in order. */
  private readonly chains = new Map<string, Promise<void>>();
  private clusters: Informer<ManagedCluster> | undefined;
  /** The watch of each accepted cluster's kubeconfig Secret (by cluster). */
  private readonly secretWatches = new Map<string, { stop(): void }>();
  /** The last error reading each cluster's Secret, logged once (a 403: not this agent's to serve). */
  private readonly secretErrors = new Map<string, string>();

  constructor(private readonly fleet: PushSupervisorOptions) {}

  start(): void {
    this.clusters = new Informer<ManagedCluster>(this.fleet.its, {
      path: MANAGEDCLUSTERS_PATH,
      onChange: (type, mc) => this.clusterChanged(type, mc),
      onError: (err) => this.fleet.log(`push: watching ManagedClusters in the ITS: ${errorLine(err)}`),
    });
    this.clusters.start();
  }

  /** Reacts to one ManagedCluster event: its kubeconfig Secret is watched while the hub accepts it. */
  clusterChanged(type: ChangeType, mc: ManagedCluster): void {
    const cluster = mc.metadata?.name;
    if (!cluster) return;
    const want = type !== 'DELETED' && mc.spec?.hubAcceptsClient === true;
    const watch = this.secretWatches.get(cluster);
    if (want && !watch) {
      const w = (this.fleet.watchSecret ?? this.informerOfSecret)(cluster, (t, s) => this.secretChanged(t, s), (err) => this.secretError(cluster, err));
      this.secretWatches.set(cluster, w);
      w.start();
    } else if (!want && watch) {
      watch.stop();
      this.secretWatches.delete(cluster);
      this.secretErrors.delete(cluster);
      this.enqueue(cluster, async () => {
        const cur = this.slots.get(cluster);
        if (!cur) return;
        this.slots.delete(cluster);
        this.fleet.log(`[${cluster}] ${type === 'DELETED' ? 'ManagedCluster deleted' : 'no longer accepted by the hub'}: stopping`);
        await cur.stop();
      });
    }
  }

  private readonly informerOfSecret: WatchSecret = (cluster, onChange, onError) => new Informer<KubeconfigSecret>(this.fleet.its, {
    path: `/api/v1/namespaces/${encodeURIComponent(cluster)}/secrets`,
    fieldSelector: `metadata.name=${kubeconfigSecretName(cluster)}`,
    onChange, onError,
  });

  private secretError(cluster: string, err: Error): void {
    // A 403 is the usual case (a pull-mode cluster, or one handed to another fleet): said shortly.
    const line = err instanceof UpstreamError && err.upstreamStatus === 403 ? 'forbidden (403)' : errorLine(err);
    if (this.secretErrors.get(cluster) === line) return;
    this.secretErrors.set(cluster, line);
    this.fleet.log(`[${cluster}] cannot read Secret ${cluster}/${kubeconfigSecretName(cluster)} (a cluster this agent may not read is not its to serve): ${line}`);
  }

  /** Reacts to one Secret event of an accepted cluster's watch (tests call it directly). */
  secretChanged(type: ChangeType, s: KubeconfigSecret): void {
    const cluster = clusterOfSecret(s);
    // Only the Secret of a cluster the hub accepts, whatever a watch might deliver.
    if (!cluster || !this.secretWatches.has(cluster)) return;
    this.secretErrors.delete(cluster);
    const text = s.data?.[KUBECONFIG_SECRET_KEY] ? Buffer.from(s.data[KUBECONFIG_SECRET_KEY], 'base64').toString('utf8') : undefined;
    this.enqueue(cluster, async () => {
      if (!this.secretWatches.has(cluster)) return;
      const cur = this.slots.get(cluster);
      if (type !== 'DELETED' && text !== undefined && cur?.kubeconfig === text) return;
      if (cur) {
        this.slots.delete(cluster);
        this.fleet.log(`[${cluster}] ${type === 'DELETED' || text === undefined ? 'kubeconfig Secret gone: stopping' : 'kubeconfig Secret changed: restarting'}`);
        await cur.stop();
      }
      if (type === 'DELETED') return;
      if (text === undefined) {
        this.fleet.log(`[${cluster}] Secret ${cluster}/${kubeconfigSecretName(cluster)} has no key ${KUBECONFIG_SECRET_KEY}: not served`);
        return;
      }
      const slot = new ClusterSlot(cluster, text, this.fleet);
      this.slots.set(cluster, slot);
      this.fleet.log(`[${cluster}] kubeconfig Secret found: serving`);
      await slot.start();
    });
  }

  private enqueue(cluster: string, fn: () => Promise<void>): void {
    const next = (this.chains.get(cluster) ?? Promise.resolve()).then(fn).catch((err: unknown) => this.fleet.log(`[${cluster}] ${errorLine(err)}`));
    this.chains.set(cluster, next);
  }

  /** Resolves when every queued Secret change has been handled (tests). */
  async settled(): Promise<void> {
    let before;
    do {
      before = [...this.chains.values()];
      await Promise.all(before);
    } while (before.length !== this.chains.size || before.some((p, i) => p !== [...this.chains.values()][i]));
  }

  slot(cluster: string): ClusterSlot | undefined { return this.slots.get(cluster); }

  states(): SlotState[] {
    return [...this.slots.values()].map((s) => ({ cluster: s.cluster, problem: s.worker ? '' : s.problem, worker: s.worker }));
  }

  workers(): ClusterWorker[] {
    return [...this.slots.values()].flatMap((s) => (s.worker ? [s.worker] : []));
  }

  placed(): PlacedResource[] {
    return this.workers().flatMap((w) => w.placed());
  }

  async stop(): Promise<void> {
    this.clusters?.stop();
    for (const w of this.secretWatches.values()) w.stop();
    this.secretWatches.clear();
    const all = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(all.map((s) => s.stop()));
  }
}
