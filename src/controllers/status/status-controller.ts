// The status controller of one WDS: the state the WECs report (WorkStatus objects in the ITS
// mailbox namespaces, one per applied object, written by the agents; or, for bundled works, each
// manifest's statusFeedback: ./reports.ts) returned into the WDS objects
// as KubeStellar's singleton and multi-WEC rules say (./returned-state.ts).
// Event-driven: its handlers only queue object keys (the placement controller's encoded keys) on
// its own WorkQueue —
// - a WorkStatus added, changed or deleted → the keys of the object its spec.sourceRef names (it is
//   found by identity and cluster, so KubeStellar's own status add-on's WorkStatuses count too);
// - the status a bundled work carries for an object changed → its key (placement's works informer);
// - an object's placement changed (policies, their modulation, their clusters) → its key;
// - a workload object changed (its own status, labels: an echo of our write costs one compare) → its key;
// — and a full pass every RESYNC_MS is only the backstop. The queue coalesces: a key queued many
// times while waiting is reconciled once, with the latest state. Reads are the informers' caches;
// only the elected leader writes, and only what differs (./status-writer.ts).
//
// One cluster's report never stops another's (the edge is less trusted than the center): what is
// cached of a report is bounded (./workstatus-cache.ts, ./report-bounds.ts: depth, size,
// conditions, per mailbox), a report that is not a valid status of its kind is not returned
// (./combine.ts invalidStatus), and a status the WDS refuses (400, 413, 422) is not written again
// until it changes. Each is said where KubeStellar users look: in the status.errors of the
// policies that send the object to that cluster (`cluster wec1 reported a status of
// deployments.apps demo/web that was refused: its status is nested more than 64 levels deep`),
// and in the log.
import { Informer, type ChangeType } from '../../kube/informer.js';
import { WorkStatusIntake, type CachedWorkStatus } from './workstatus-cache.js';
import type { JsonObject } from '../../kube/objects.js';
import { WORKSTATUSES_PATH, type WorkStatus } from '../../kube/ocm-api.js';
import { Reports } from './reports.js';
import type { Upstream } from '../../kube/upstream.js';
import { runWorkers, WorkQueue } from '../../kube/work-queue.js';
import { decodeKey, describeObject, encodeKey, identityKey, type ObjectKey } from '../model/keys.js';
import type { StatusSources, StoredObject } from '../model/sent.js';
import { invalidStatus } from './combine.js';
import { RETURNED_FROM_ANNOTATION } from '../model/marks.js';
import { returnedState, returnPlan, returnRequest, statusInWdsTerms, type ReturnedState } from './returned-state.js';
import { writeReturnedState, WriteRefused } from './status-writer.js';

const RESYNC_MS = 5 * 60_000;


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
  /** `|<group>|<resource>|<namespace>|<name>` of the object, for reports the bounds refused or capped (few). */
  bounded: (ws: CachedWorkStatus) => (ws.refused || ws.capped ? [identityKey('', ws.spec?.sourceRef ?? {})] : []),
};

/** What returning one object's status found wrong: policy → messages. */
type StatusErrors = Map<string, string[]>;

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
  /** What is taken from each report, and each mailbox's totals (the informer's transform). */
  readonly intake = new WorkStatusIntake();
  /** Each cluster's report of an object: its work's feedback or its WorkStatus. */
  readonly reports: Reports;
  /** source → the state the WDS refused to store (JSON), not written again while unchanged, and why. */
  private readonly refused = new Map<string, { want: string; message: string }>();
  /** The sources whose status errors are recorded (the others need no call to clear). */
  private readonly withErrors = new Set<string>();

  constructor(private readonly options: StatusOptions) {
    this.workStatuses = new Informer<WorkStatus>(options.its, {
      path: WORKSTATUSES_PATH, indexers: WORKSTATUS_INDEXERS, transform: (ws) => this.intake.take(ws),
      onChange: (type: ChangeType, ws: CachedWorkStatus, old?: CachedWorkStatus) => {
        if (type === 'DELETED') this.intake.release(ws);
        else if ((ws.refused || ws.capped) && (ws.refused !== old?.refused || ws.capped !== old?.capped)) {
          options.log(`status: workstatus ${ws.metadata.namespace}/${ws.metadata.name}: the report of ${describeObject(ws.spec?.sourceRef ?? {})} was ${ws.refused ? `refused: ${ws.refused}` : `capped: ${ws.capped}`}`);
        }
        const ref = ws.spec?.sourceRef;
        if (!ref?.resource || !ref.name) return;
        for (const k of options.sources.keysFor({ group: ref.group ?? '', resource: ref.resource }, ref.namespace ?? '', ref.name)) this.enqueue(k);
      },
      onRelisted: () => this.intake.retain(this.workStatuses.store),
      onError: (err) => options.log(`status: workstatuses: ${err.message}`),
    });
    this.reports = new Reports(this.workStatuses.store, (cluster, id) => options.sources.bundleCarrying?.(cluster, id));
  }

  /** Whether this replica writes; becoming leader looks at every object again. */
  setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) this.enqueueAll();
  }

  async start(): Promise<void> {
    this.unsubscribe.push(this.options.sources.onPlacementChange((source) => this.add(source)));
    this.unsubscribe.push(this.options.sources.onObjectChange((k) => this.enqueue(k)));
    if (this.options.sources.onWorkReport) this.unsubscribe.push(this.options.sources.onWorkReport((source) => this.add(source)));
    this.workStatuses.start();
    await this.workStatuses.synced;
    if (this.stopped) return;
    this.workersDone = runWorkers(this.queue, this.options.workers ?? 4, (key) => this.reconcile(key),
      (key, err) => this.options.log(`status: ${key}: ${(err as Error).message}`));
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

  /**
   * The state an object should show now (reads caches only; undefined when it is not ours to
   * touch), and what is wrong with its clusters' reports, per policy sending it there.
   */
  desired(source: string): { target: StoredObject; want: ReturnedState; errors: StatusErrors; what: string } | undefined {
    const k = decodeKey(source);
    if (k?.kind !== 'object') return undefined;
    const found = this.options.sources.find(k);
    const target = this.options.sources.stored(k);
    // A twin (the same identity through the view and natively) is handled under the key that wins.
    if (!found || !target || encodeKey(found.key) !== source) return undefined;
    const objectKind = { group: found.id.group, kind: found.native.kind ?? target.res.kind };
    const modulations = this.options.sources.placement(source)?.modulations;
    const req = returnRequest(modulations);
    const plan = returnPlan(req, objectKind);
    const errors: StatusErrors = new Map();
    const what = describeObject(found.id);
    const tell = (cluster: string, message: string) => {
      for (const [policy, m] of Object.entries(modulations ?? {})) {
        if (m.clusters.includes(cluster)) errors.set(policy, [...(errors.get(policy) ?? []), `cluster ${cluster} reported a status of ${what} that ${message}`]);
      }
    };
    for (const ws of this.workStatuses.store.byIndex('bounded', identityKey('', found.id)) as CachedWorkStatus[]) {
      tell(ws.metadata.namespace, ws.refused ? `was refused: ${ws.refused}` : `was capped: ${ws.capped}`);
    }
    const reported = new Map<string, JsonObject>();
    const clusters = plan.kind === 'copy' ? [plan.cluster] : plan.kind === 'combine' ? plan.clusters : [];
    for (const c of clusters) {
      const ws = this.reports.of(c, found.id);
      // A WorkStatus refused or capped is told above, from the index; one from a work, here.
      if (ws?.carrier && (ws.refused || ws.capped)) tell(c, ws.refused ? `was refused: ${ws.refused}` : `was capped: ${ws.capped}`);
      // A kind without a status subresource: its status is written with the object, which moves its
      // generation, which would move the works' source generation and so the mapped value again.
      const status = ws && (target.res.hasStatus ? statusInWdsTerms(ws) : ws.status);
      if (!status) continue;
      const invalid = invalidStatus(objectKind, status);
      if (invalid) tell(c, `is not returned: it is not a valid ${objectKind.kind} status: ${invalid}`);
      else reported.set(c, status);
    }
    const returnedBefore = target.obj.metadata?.annotations?.[RETURNED_FROM_ANNOTATION] !== undefined;
    return { target, want: returnedState(req, plan, reported, objectKind, returnedBefore), errors, what };
  }

  private async reconcile(source: string): Promise<void> {
    const d = this.desired(source);
    const errors: StatusErrors = d?.errors ?? new Map();
    if (d && this.leading) {
      const want = JSON.stringify(d.want);
      const refused = this.refused.get(source);
      if (refused?.want !== want) {
        this.refused.delete(source);
        try {
          await writeReturnedState(this.options.wds, d.target, d.want);
        } catch (err) {
          if (!(err instanceof WriteRefused)) throw err;
          // The same content would be refused again: it waits for a change, and is reported.
          this.refused.set(source, { want, message: err.message });
          this.options.log(`status: ${source}: the WDS refused the status returned from ${d.want.returnedFrom ?? 'no cluster'}: ${err.message}`);
        }
      }
    }
    if (!d) this.refused.delete(source);
    const refusal = d && this.refused.get(source);
    if (refusal) {
      const m = this.options.sources.placement(source)?.modulations ?? {};
      const message = `the WDS refused the status of ${d.what} returned from ${d.want.returnedFrom ?? 'no cluster'}: ${refusal.message}`;
      for (const [policy, p] of Object.entries(m)) {
        if (p.wantSingletonReportedState || p.wantMultiWECReportedState) errors.set(policy, [...(errors.get(policy) ?? []), message]);
      }
    }
    this.recordErrors(source, errors);
  }

  /** Hands an object's status errors to the policies' status (a call only when there are or were some). */
  private recordErrors(source: string, errors: StatusErrors): void {
    if (errors.size === 0 && !this.withErrors.has(source)) return;
    if (errors.size > 0) this.withErrors.add(source);
    else this.withErrors.delete(source);
    this.options.sources.recordStatusErrors?.(source, errors);
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
    for (const k of this.options.sources.allKeys()) this.queue.add(encodeKey(k));
  }
}
