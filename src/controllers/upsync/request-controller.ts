// Keeps, in each cluster's mailbox of the ITS, the UpsyncRequests this WDS's BindingPolicies ask
// for (./desired-requests.ts): one per (policy, selected cluster), server-side applied when its
// spec differs, deleted when the clause or the cluster goes (the agent then removes the copies only
// that request selected). Keys queued are policy names, on each change of a policy's Binding (the
// placement controller's: a policy's spec, its clusters, its objects), on a change of one of our
// requests, and every resync. Only the leader writes; every replica keeps the informer, which the
// view reads (./upsynced-cache.ts: which clusters and policies have a request) and which gives each
// policy's status.upsync (the agents' counts, onStatusChange).
import { isDeepStrictEqual } from 'node:util';
import { Informer } from '../../kube/informer.js';
import type { KubeObject } from '../../kube/objects.js';
import { expectOk, serverSideApply, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import {
  UPSYNC_GROUP, UPSYNC_POLICY_LABEL, UPSYNC_REQUESTS_PATH, UPSYNC_WDS_LABEL, upsyncRequestName, upsyncRequestsPath,
  type UpsyncClusterStatus, type UpsyncRequest,
} from '../../kube/upsync-api.js';
import { labelValueErrors } from '../../kube/names.js';
import type { ServiceAccountRef } from '../../kube/service-account-ref.js';
import { runWorkers, WorkQueue } from '../../kube/work-queue.js';
import { desiredRequests, type UpsyncBinding, type UpsyncLimits, type UpsyncPolicy } from './desired-requests.js';

export const UPSYNC_FIELD_MANAGER = 'ksview-serve-upsync';
/** Every policy again, as a backstop to the events. */
const RESYNC_MS = 60_000;

/** What is read of the placement controller. */
export interface UpsyncPolicySources {
  policy(name: string): UpsyncPolicy | undefined;
  policyNames(): string[];
  binding(name: string): UpsyncBinding | undefined;
  onBindingChange(cb: (policy: string, statusOnly?: boolean) => void): () => void;
}

export interface UpsyncRequestControllerOptions {
  wdsName: string;
  its: Upstream;
  sources: UpsyncPolicySources;
  limits: UpsyncLimits;
  /**
   * The executor of policies naming none (`ksview serve --default-executor`, as placement's): its
   * rights bound what their requests upsync. Absent: the agents' own rights.
   */
  defaultExecutor?: ServiceAccountRef;
  log: (msg: string) => void;
  workers?: number;
}

const policyOf = (r: UpsyncRequest) => r.spec?.policy ?? '';

/** The longest agent message copied into a policy's status (the policy CRD's maxLength). */
export const MAX_UPSYNC_MESSAGE = 1024;
const clip = (m: string) => (m.length > MAX_UPSYNC_MESSAGE ? `${m.slice(0, MAX_UPSYNC_MESSAGE - 1)}…` : m);
/** An agent's count, when it is one (a whole number ≥ 0, at most 2^53). */
const count = (n: unknown): number | undefined => (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined);

export class UpsyncRequestController {
  readonly requests: Informer<UpsyncRequest>;
  private readonly queue = new WorkQueue();
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private done: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly listeners = new Set<(policy: string, request: UpsyncRequest) => void>();

  constructor(private readonly options: UpsyncRequestControllerOptions) {
    this.requests = new Informer<UpsyncRequest>(options.its, {
      path: UPSYNC_REQUESTS_PATH,
      labelSelector: `${UPSYNC_WDS_LABEL}=${options.wdsName}`,
      indexers: { policy: (r) => [policyOf(r)] },
      onChange: (type, r, old) => {
        const policy = policyOf(r);
        // Our own apply echoes back; a spec someone else changed (or a deletion) is set right again.
        if (type !== 'MODIFIED' || !isDeepStrictEqual(r.spec, old?.spec)) this.queue.add(policy);
        for (const cb of this.listeners) cb(policy, r);
      },
      onError: (err) => options.log(`upsync: upsyncrequests: ${err.message}`),
    });
  }

  /** Calls cb after each change of one of our requests (its status: the agent's counts). */
  onRequestChange(cb: (policy: string, request: UpsyncRequest) => void): () => void {
    this.listeners.add(cb);
    return () => { this.listeners.delete(cb); };
  }

  /** The request of (policy, cluster), as the ITS has it. */
  request(cluster: string, policy: string): UpsyncRequest | undefined {
    return this.requests.get(cluster, upsyncRequestName(this.options.wdsName, policy));
  }

  /**
   * A policy's status.upsync: each of its requests' cluster and the agent's counts, sorted by
   * cluster. What an agent wrote is bounded here (counts whole and ≥ 0, a message cut at
   * MAX_UPSYNC_MESSAGE): one agent's status must not break its policy's status write.
   */
  statusOf(policy: string): UpsyncClusterStatus[] {
    return this.requests.store.byIndex('policy', policy)
      .map((r) => {
        const st = (r.status ?? {}) as Partial<Record<keyof NonNullable<UpsyncRequest['status']>, unknown>>;
        const message = typeof st.message === 'string' ? clip(st.message) : '';
        return {
          clusterId: r.metadata.namespace, objects: count(st.objects) ?? 0,
          ...(count(st.selected) !== undefined ? { selected: count(st.selected)! } : {}),
          ...(count(st.tooLarge) ? { tooLarge: count(st.tooLarge)! } : {}),
          ...(message ? { message } : {}),
        };
      })
      .sort((a, b) => (a.clusterId < b.clusterId ? -1 : a.clusterId > b.clusterId ? 1 : 0));
  }

  async start(): Promise<void> {
    this.requests.start();
    this.unsubscribe = this.options.sources.onBindingChange((p, statusOnly) => { if (!statusOnly) this.queue.add(p); });
    await this.requests.synced;
    this.done = runWorkers(this.queue, this.options.workers ?? 4, (p) => this.reconcile(p),
      (p, err) => this.options.log(`upsync: ${p}: ${(err as Error).message}`));
    this.timer = setInterval(() => this.enqueueAll(), RESYNC_MS);
    this.enqueueAll();
  }

  setLeading(leading: boolean): void {
    this.leading = leading;
    if (leading) this.enqueueAll();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.requests.stop();
    this.queue.shutDown();
    await this.done;
  }

  private enqueueAll(): void {
    const names = new Set([...this.options.sources.policyNames(), ...this.requests.list().map(policyOf)]);
    for (const p of names) this.queue.add(p);
  }

  /** Makes the policy's requests in the ITS what it asks for. */
  async reconcile(policy: string): Promise<void> {
    if (!this.leading) return;
    const { wdsName, its } = this.options;
    const desired = desiredRequests(wdsName, this.options.sources.policy(policy), this.options.sources.binding(policy), this.options.limits, this.options.defaultExecutor);
    const name = upsyncRequestName(wdsName, policy);
    const existing = new Map(this.requests.store.byIndex('policy', policy).map((r) => [r.metadata.namespace, r]));
    const failures: string[] = [];
    for (const [cluster, spec] of desired) {
      const current = existing.get(cluster);
      if (current?.metadata.name === name && isDeepStrictEqual(current.spec, spec)) continue;
      const labels: Record<string, string> = { [UPSYNC_WDS_LABEL]: wdsName };
      if (labelValueErrors(policy).length === 0) labels[UPSYNC_POLICY_LABEL] = policy;
      const body: KubeObject = { apiVersion: `${UPSYNC_GROUP}/v1alpha1`, kind: 'UpsyncRequest', metadata: { name, namespace: cluster, labels }, spec };
      try {
        await serverSideApply(its, `${upsyncRequestsPath(cluster)}/${name}`, body, UPSYNC_FIELD_MANAGER);
      } catch (err) {
        failures.push(`${cluster}: ${(err as Error).message}`); // e.g. the mailbox not there yet
      }
    }
    for (const [cluster, r] of existing) {
      if (desired.has(cluster) && r.metadata.name === name) continue;
      try {
        expectOk(await upstreamRequest(its, 'DELETE', `${upsyncRequestsPath(cluster)}/${r.metadata.name}`), `delete upsync request ${cluster}/${r.metadata.name}`, [404]);
      } catch (err) {
        failures.push(`${cluster}: ${(err as Error).message}`);
      }
    }
    if (failures.length > 0) throw new Error(failures.join('; '));
  }
}
