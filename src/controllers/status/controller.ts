// The status controller of one WDS: the state the WECs report (WorkStatus objects in the ITS
// mailbox namespaces, one per applied object, written by the agents) returned into the WDS objects
// as KubeStellar's singleton and multi-WEC rules say (./returned-state.ts).
// Event-driven: its handlers only queue object keys (the placement controller's encoded keys) on
// its own WorkQueue —
// - a WorkStatus added, changed or deleted → the keys of the object its spec.sourceRef names (it is
//   found by identity and cluster, so KubeStellar's own status add-on's WorkStatuses count too);
// - an object's placement changed (policies, their modulation, their clusters) → its key;
// - a workload object changed (its own status, labels: an echo of our write costs one compare) → its key;
// — and a full pass every RESYNC_MS is only the backstop. The queue coalesces: a key queued many
// times while waiting is reconciled once, with the latest state. Reads are the informers' caches;
// only the elected leader writes, and only what differs (./status-writer.ts).
import { Informer, type ChangeType } from '../../kube/informer.js';
import { slimWorkStatus } from './workstatus-cache.js';
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import { WORKSTATUSES_PATH, type WorkStatus } from '../../kube/ocm-api.js';
import type { Upstream } from '../../kube/upstream.js';
import { runWorkers, WorkQueue } from '../../kube/work-queue.js';
import type { Placement } from '../placement/bindings.js';
import { decodeKey, encodeKey, identityKey, type ObjectKey } from '../placement/keys.js';
import type { SentObject } from '../placement/workload.js';
import { RETURNED_FROM_ANNOTATION, returnedState, returnPlan, returnRequest, statusInWdsTerms, type ReturnedState } from './returned-state.js';
import { writeReturnedState, type StoredObject } from './status-writer.js';

const RESYNC_MS = 5 * 60_000;

/** What the status controller reads of placement (the placement controller provides it). */
export interface StatusSources {
  /** The object a key names, in the native form it is sent in. */
  find(k: ObjectKey): SentObject | undefined;
  /** The object a key names as stored in the WDS, with its resource (for writes). */
  stored(k: ObjectKey): StoredObject | undefined;
  /** What reconciliation recorded of an object (by encoded key); undefined when no policy selects it. */
  placement(source: string): Placement | undefined;
  /** The keys under which an object of a native kind is queued. */
  keysFor(native: { group: string; resource: string }, namespace: string, name: string): ObjectKey[];
  /** Every object key. */
  allKeys(): ObjectKey[];
  onPlacementChange(cb: (source: string) => void): () => void;
  onObjectChange(cb: (k: ObjectKey) => void): () => void;
  /** A BindingPolicy by name (its uid names CombinedStatuses). */
  policy(name: string): (KubeObject & { metadata: { name: string; uid?: string; creationTimestamp?: string } }) | undefined;
}

export interface StatusOptions {
  wds: Upstream;
  its: Upstream;
  sources: StatusSources;
  workers?: number;
  log: (msg: string) => void;
}

const WORKSTATUS_INDEXERS = {
  /** `<cluster>|<group>|<resource>|<namespace>|<name>` of the object a WorkStatus reports. */
  identity: (ws: WorkStatus) => [identityKey(ws.metadata.namespace, ws.spec?.sourceRef ?? {})],
};

export class StatusController {
  private readonly queue = new WorkQueue();
  /** The WorkStatuses of the ITS (unit tests fill its store). */
  readonly workStatuses: Informer<WorkStatus>;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly reportListeners = new Set<(source: string) => void>();
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private workersDone: Promise<void> | undefined;

  constructor(private readonly o: StatusOptions) {
    this.workStatuses = new Informer<WorkStatus>(o.its, {
      path: WORKSTATUSES_PATH, indexers: WORKSTATUS_INDEXERS, transform: slimWorkStatus,
      onChange: (_type: ChangeType, ws) => {
        const ref = ws.spec?.sourceRef;
        if (!ref?.resource || !ref.name) return;
        for (const k of o.sources.keysFor({ group: ref.group ?? '', resource: ref.resource }, ref.namespace ?? '', ref.name)) this.enqueue(k);
      },
      onError: (err) => o.log(`status: workstatuses: ${err.message}`),
    });
  }

  /** Whether this replica writes; becoming leader looks at every object again. */
  setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) this.enqueueAll();
  }

  async start(): Promise<void> {
    this.unsubscribe.push(this.o.sources.onPlacementChange((source) => this.add(source)));
    this.unsubscribe.push(this.o.sources.onObjectChange((k) => this.enqueue(k)));
    this.workStatuses.start();
    await this.workStatuses.synced;
    if (this.stopped) return;
    this.workersDone = runWorkers(this.queue, this.o.workers ?? 4, (key) => this.reconcile(key),
      (key, err) => this.o.log(`status: ${key}: ${(err as Error).message}`));
    this.timer = setInterval(() => this.enqueueAll(), RESYNC_MS);
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const u of this.unsubscribe.splice(0)) u();
    this.workStatuses.stop();
    this.queue.shutDown();
    await this.workersDone;
  }

  /** The state an object should show now (reads caches only; undefined when it is not ours to touch). */
  desired(source: string): { target: StoredObject; want: ReturnedState } | undefined {
    const k = decodeKey(source);
    if (k?.kind !== 'object') return undefined;
    const found = this.o.sources.find(k);
    const target = this.o.sources.stored(k);
    // A twin (the same identity through the view and natively) is handled under the key that wins.
    if (!found || !target || encodeKey(found.key) !== source) return undefined;
    const objectKind = { group: found.id.group, kind: found.native.kind ?? target.res.kind };
    const req = returnRequest(this.o.sources.placement(source)?.modulations);
    const plan = returnPlan(req, objectKind);
    const reported = new Map<string, JsonObject>();
    const clusters = plan.kind === 'copy' ? [plan.cluster] : plan.kind === 'combine' ? plan.clusters : [];
    for (const c of clusters) {
      const ws = this.workStatuses.store.byIndex('identity', identityKey(c, found.id))[0];
      // A kind without a status subresource: its status is written with the object, which moves its
      // generation, which would move the works' source generation and so the mapped value again.
      const status = ws && (target.res.hasStatus ? statusInWdsTerms(ws) : ws.status);
      if (status) reported.set(c, status);
    }
    const returnedBefore = target.obj.metadata?.annotations?.[RETURNED_FROM_ANNOTATION] !== undefined;
    return { target, want: returnedState(req, plan, reported, objectKind, returnedBefore) };
  }

  private async reconcile(source: string): Promise<void> {
    if (!this.leading) return;
    const d = this.desired(source);
    if (!d) return;
    await writeReturnedState(this.o.wds, d.target, d.want);
  }

  /**
   * Hears the encoded key of every object whose reports, placement or self may have changed (the
   * same events that queue it here): the CombinedStatuses (./combined-statuses.ts) follow them.
   */
  onReportChange(cb: (source: string) => void): () => void {
    this.reportListeners.add(cb);
    return () => { this.reportListeners.delete(cb); };
  }

  private add(source: string): void {
    this.queue.add(source);
    for (const cb of this.reportListeners) cb(source);
  }

  private enqueue(k: ObjectKey): void {
    this.add(encodeKey(k));
  }

  /** The backstop pass: queued here only (nothing changed that others should hear of). */
  private enqueueAll(): void {
    for (const k of this.o.sources.allKeys()) this.queue.add(encodeKey(k));
  }
}
