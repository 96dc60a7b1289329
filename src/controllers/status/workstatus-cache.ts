// The WorkStatus cache's copy of a WorkStatus (an informer transform, src/kube/informer.ts): what
// the status controller and the CombinedStatuses read — namespace (the cluster), sourceRef,
// status, statusDetails, resourceVersion, and of managedFields only when the status last changed
// (./combined-status.ts lastStatusUpdate gives the same answer after it) — with the parts that
// repeat from cluster to cluster shared (../../kube/interner.ts). At 1,000 clusters the cache
// holds 100,000 WorkStatuses, and most of them report the same status as their neighbours.
// Shared parts are frozen: readers never mutate cached objects.
//
// What one cluster contributes is bounded (WorkStatusIntake): each report as ./report-bounds.ts
// says (a refused report is kept without its status and says why, in `refused`; a capped one says
// what was left out, in `capped`), and each mailbox — the namespace a cluster's agent writes in —
// to REPORT_LIMITS.mailboxReports reports (a new one past that is not cached: the informer skips it
// and logs why) and REPORT_LIMITS.mailboxBytes of statuses and specs (a report whose status would
// pass it is refused). Of a report's spec only its sourceRef's six names are kept, each no longer
// than Kubernetes allows that name (./report-bounds.ts boundSourceRef); a report naming something
// longer is not cached (the informer skips it and logs why, without the names).
import { Interner } from '../../kube/interner.js';
import type { WorkStatus } from '../../kube/ocm-api.js';
import type { Store } from '../../kube/informer.js';
import { lastStatusUpdate } from '../../kube/objects.js';
import { boundReport, boundSourceRef, REPORT_LIMITS, type ReportLimits } from './report-bounds.js';

const shared = new Interner({ entries: 50_000, bytes: 48_000_000 });

/** A WorkStatus as cached: its bounded status, and what the bounds did to it. */
export interface CachedWorkStatus extends WorkStatus {
  /** Why its status was not taken (it is absent). */
  refused?: string;
  /** What of its status was left out. */
  capped?: string;
}

/** The slim copy of a report whose spec, status and statusDetails are already bounded (or absent). */
export function slimWorkStatus(ws: WorkStatus, bounds: { refused?: string; capped?: string } = {}): CachedWorkStatus {
  const { name, namespace, resourceVersion, managedFields } = ws.metadata;
  const time = managedFields ? lastStatusUpdate(ws) : undefined;
  return {
    apiVersion: ws.apiVersion, kind: ws.kind,
    metadata: {
      name: shared.string(name), namespace: shared.string(namespace), resourceVersion,
      ...(managedFields ? { managedFields: time ? [shared.value({ operation: 'Update', subresource: 'status', time })] : [] } : {}),
    },
    spec: shared.value(ws.spec),
    ...(ws.status !== undefined ? { status: shared.value(ws.status) } : {}),
    ...(ws.statusDetails !== undefined ? { statusDetails: shared.value(ws.statusDetails) } : {}),
    ...(bounds.refused ? { refused: bounds.refused } : {}),
    ...(bounds.capped ? { capped: bounds.capped } : {}),
  } as CachedWorkStatus;
}

/** The informer transform of the WorkStatus cache, with each mailbox's totals. */
export class WorkStatusIntake {
  /** mailbox → report name → the length it counts; and each mailbox's sum. */
  private readonly mailboxes = new Map<string, Map<string, number>>();
  private readonly totals = new Map<string, number>();

  constructor(private readonly limits: ReportLimits = REPORT_LIMITS) {}

  /**
   * The copy to cache; throws (the informer skips the report) for a new report of a full mailbox,
   * and for one whose sourceRef names are longer than Kubernetes allows.
   */
  take(ws: WorkStatus): CachedWorkStatus {
    const ns = ws.metadata.namespace ?? '';
    const name = ws.metadata.name ?? '';
    const ref = boundSourceRef(ws.spec);
    if ('refused' in ref) throw new Error(`not a report of any object: ${ref.refused}`);
    const box = this.mailboxes.get(ns);
    const had = box?.get(name);
    if (had === undefined && (box?.size ?? 0) >= this.limits.mailboxReports) {
      throw new Error(`mailbox ${ns} holds ${box!.size} reports, the most kept`);
    }
    const b = boundReport(ws, this.limits);
    let refused = b.refused;
    const others = (this.totals.get(ns) ?? 0) - (had ?? 0);
    if (!refused && others + ref.bytes + b.bytes > this.limits.mailboxBytes) {
      refused = `the reports of mailbox ${ns} would be over ${this.limits.mailboxBytes} bytes`;
    }
    const kept = refused ? { ...ws, spec: ref.spec, status: undefined, statusDetails: undefined } : { ...ws, spec: ref.spec, status: b.status, statusDetails: b.statusDetails };
    const slim = slimWorkStatus(kept, { refused, capped: refused ? undefined : b.capped });
    // Keyed by the copy's shared name: 100,000 reports add a number each, not a string. Its spec
    // is kept even when its status is not, so it always counts.
    this.count(slim.metadata.namespace, slim.metadata.name, ref.bytes + (refused ? 0 : b.bytes));
    return slim;
  }

  /** A report deleted from the cache no longer counts. */
  release(ws: WorkStatus): void {
    this.count(ws.metadata.namespace ?? '', ws.metadata.name ?? '', undefined);
  }

  /** After a relist: only what the cache holds counts (a report taken but never cached, then deleted, would stay). */
  retain(store: Store<WorkStatus>): void {
    for (const [ns, box] of [...this.mailboxes]) {
      for (const name of [...box.keys()]) if (!store.get(ns, name)) this.count(ns, name, undefined);
    }
  }

  /** What a mailbox holds (for tests and logs). */
  usage(ns: string): { reports: number; bytes: number } {
    return { reports: this.mailboxes.get(ns)?.size ?? 0, bytes: this.totals.get(ns) ?? 0 };
  }

  private count(ns: string, name: string, bytes: number | undefined): void {
    let box = this.mailboxes.get(ns);
    const had = box?.get(name) ?? 0;
    if (bytes === undefined) {
      if (!box?.delete(name)) return;
    } else {
      if (!box) this.mailboxes.set(ns, box = new Map());
      box.set(name, bytes);
    }
    const total = (this.totals.get(ns) ?? 0) - had + (bytes ?? 0);
    if (box.size === 0) {
      this.mailboxes.delete(ns);
      this.totals.delete(ns);
    } else {
      this.totals.set(ns, total);
    }
  }
}
