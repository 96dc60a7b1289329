// Where the status controller and the CombinedStatuses find what a cluster reports of an object:
// in the bundled work that carries it there, when the agent wrote its status into that work's
// statusFeedback (../../kube/status-in-work.ts, our agent in bundled mode), otherwise in its
// WorkStatus (our agent for a work of one object, or a status too big for the work; KubeStellar's
// status add-on always). The work's report wins: a WorkStatus left from before the object moved
// into a bundle is then not read.
// A report from a work is bounded as a WorkStatus is (./report-bounds.ts boundReport). Readers ask
// for every (object, cluster) — 100,000 at 1,000 clusters — so a work's reports are made once per
// cached copy of it, and a status decoded once per distinct feedback (the works' cache shares equal
// ones between clusters). Its resourceVersion names that feedback: a CombinedStatus row is
// evaluated again when the object's status changed, not when a neighbour's in the same work did.
import type { Store } from '../../kube/informer.js';
import { lastStatusUpdate } from '../../kube/objects.js';
import type { ManifestWork, WorkStatus } from '../../kube/ocm-api.js';
import { statusFromValues } from '../../kube/status-in-work.js';
import { identityKey } from '../model/keys.js';
import { statusEntry } from '../model/work-entries.js';
import type { ObjectIdentity } from '../model/wrapping.js';
import { boundReport, type BoundedReport } from './report-bounds.js';
import type { CachedWorkStatus } from './workstatus-cache.js';

/** A cluster's report of an object, as read: a WorkStatus's cached copy, or one made of its work's feedback. */
export interface Report extends CachedWorkStatus {
  /** Set when the report came from this work (its name), not from a WorkStatus. */
  carrier?: string;
}

type Decoded = { id: number; invalid?: string; bounded?: BoundedReport };

export class Reports {
  /** Decoded and bounded, per (shared) feedback values; undefined: not a status of ours. */
  private readonly decoded = new WeakMap<object, Decoded | null>();
  /** Per cached work: its manifests' reports by index (null: the manifest carries none). */
  private readonly made = new WeakMap<ManifestWork, Map<number, Report | null>>();
  private ids = 0;

  /**
   * @param workStatuses the WorkStatus cache, indexed by `identity`
   * @param bundleCarrying the cluster's bundled work carrying the object, with the manifest's index
   *   (placement's works cache), or undefined
   */
  constructor(readonly workStatuses: Store<WorkStatus>,
    private readonly bundleCarrying: (cluster: string, id: ObjectIdentity) => { work: ManifestWork; index: number } | undefined = () => undefined) {}

  /** What `cluster` reports of the object, or undefined when it reports nothing yet. */
  of(cluster: string, id: ObjectIdentity): Report | undefined {
    return this.inWork(cluster, id) ?? this.workStatuses.byIndex('identity', identityKey(cluster, id))[0] as CachedWorkStatus | undefined;
  }

  private inWork(cluster: string, id: ObjectIdentity): Report | undefined {
    const c = this.bundleCarrying(cluster, id);
    if (!c) return undefined;
    let reports = this.made.get(c.work);
    if (!reports) this.made.set(c.work, (reports = new Map()));
    let r = reports.get(c.index);
    if (r === undefined) reports.set(c.index, (r = this.make(cluster, c.work, c.index) ?? null));
    return r ?? undefined;
  }

  private make(cluster: string, work: ManifestWork, index: number): Report | undefined {
    const entry = statusEntry(work, index);
    const got = entry?.statusFeedback ? this.decode(entry.statusFeedback) : undefined;
    if (!entry || !got) return undefined;
    const time = lastStatusUpdate(work);
    const m = entry.resourceMeta;
    const base: Report = {
      apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
      metadata: { name: work.metadata.name, namespace: cluster, resourceVersion: `in-work-${got.id}`, ...(time ? { managedFields: [{ operation: 'Update', subresource: 'status', time }] } : {}) },
      spec: { sourceRef: { group: m.group, version: m.version, resource: m.resource, kind: m.kind, namespace: m.namespace, name: m.name } },
      carrier: work.metadata.name,
    };
    if (got.invalid !== undefined) return { ...base, refused: `its status in work ${work.metadata.name} is not whole: ${got.invalid}` };
    const b = got.bounded!;
    if (b.refused) return { ...base, refused: b.refused };
    return { ...base, status: b.status, ...(b.statusDetails ? { statusDetails: b.statusDetails } : {}), ...(b.capped ? { capped: b.capped } : {}) };
  }

  private decode(feedback: object & { values?: Parameters<typeof statusFromValues>[0] }): Decoded | undefined {
    let d = this.decoded.get(feedback);
    if (d === undefined) {
      const got = statusFromValues(feedback.values);
      d = !got ? null
        : 'invalid' in got ? { id: ++this.ids, invalid: got.invalid }
        : { id: ++this.ids, bounded: boundReport({ apiVersion: '', kind: '', metadata: {}, spec: { sourceRef: {} }, status: got.status, ...(got.details ? { statusDetails: got.details } : {}) } as WorkStatus) };
      this.decoded.set(feedback, d);
    }
    return d ?? undefined;
  }
}
