// Where the status controller and the CombinedStatuses find what a cluster reports of an object:
// in the bundled work that carries it there, when the agent wrote its status into that work's
// statusFeedback (../../kube/status-in-work.ts, our agent in bundled mode), otherwise in its
// WorkStatus (our agent for a work of one object, or a status too big for the work; KubeStellar's
// status add-on always). The work's report wins: a WorkStatus left from before the object moved
// into a bundle is then not read.
// A report from a work is bounded as a WorkStatus is (./report-bounds.ts boundReport) and decoded
// once per distinct feedback (the works' cache shares equal feedbacks between clusters).
import type { Store } from '../../kube/informer.js';
import type { ManifestWork, WorkStatus } from '../../kube/ocm-api.js';
import { statusFromValues } from '../../kube/status-in-work.js';
import { lastStatusUpdate } from '../../kube/objects.js';
import { identityKey } from '../placement/keys.js';
import type { ObjectIdentity } from '../wrapping.js';
import { boundReport, type BoundedReport } from './report-bounds.js';
import type { CachedWorkStatus } from './workstatus-cache.js';

/** A cluster's report of an object, as read: a WorkStatus's cached copy, or one made of its work's feedback. */
export interface Report extends CachedWorkStatus {
  /** Set when the report came from this work (its name), not from a WorkStatus. */
  carrier?: string;
}

type Feedback = NonNullable<NonNullable<NonNullable<ManifestWork['status']>['resourceStatus']>['manifests']>[number]['statusFeedback'];
type Decoded = { invalid: string } | { bounded: BoundedReport };

export class Reports {
  /** Decoded and bounded, per (shared) feedback object. */
  private readonly decoded = new WeakMap<object, Decoded>();

  /**
   * @param workStatuses the WorkStatus cache, indexed by `identity`
   * @param carrying what the cluster's work carrying the object says of it (placement's works cache:
   *   a manifest's view of a bundle), or undefined
   */
  constructor(readonly workStatuses: Store<WorkStatus>, private readonly carrying: (cluster: string, id: ObjectIdentity) => ManifestWork | undefined = () => undefined) {}

  /** What `cluster` reports of the object, or undefined when it reports nothing yet. */
  of(cluster: string, id: ObjectIdentity): Report | undefined {
    return this.inWork(cluster, id) ?? this.workStatuses.byIndex('identity', identityKey(cluster, id))[0] as CachedWorkStatus | undefined;
  }

  private inWork(cluster: string, id: ObjectIdentity): Report | undefined {
    const work = this.carrying(cluster, id);
    const entry = work?.status?.resourceStatus?.manifests?.[0];
    const feedback = entry?.statusFeedback;
    if (!work || !entry || !feedback) return undefined;
    const got = this.decode(feedback);
    if (!got) return undefined;
    const time = lastStatusUpdate(work);
    const m = entry.resourceMeta;
    const base: Report = {
      apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
      metadata: { name: work.metadata.name, namespace: cluster, ...(time ? { managedFields: [{ operation: 'Update', subresource: 'status', time }] } : {}) },
      spec: { sourceRef: { group: m.group, version: m.version, resource: m.resource, kind: m.kind, namespace: m.namespace, name: m.name } },
      carrier: work.metadata.name,
    };
    if ('invalid' in got) return { ...base, refused: `its status in work ${work.metadata.name} is not whole: ${got.invalid}` };
    const b = got.bounded;
    if (b.refused) return { ...base, refused: b.refused };
    return { ...base, status: b.status, ...(b.statusDetails ? { statusDetails: b.statusDetails } : {}), ...(b.capped ? { capped: b.capped } : {}) };
  }

  private decode(feedback: NonNullable<Feedback>): Decoded | undefined {
    let d = this.decoded.get(feedback);
    if (!d) {
      const got = statusFromValues(feedback.values);
      d = got && 'status' in got
        ? { bounded: boundReport({ apiVersion: '', kind: '', metadata: {}, spec: { sourceRef: {} }, status: got.status, ...(got.details ? { statusDetails: got.details } : {}) } as WorkStatus) }
        : got;
      if (d) this.decoded.set(feedback, d);
    }
    return d;
  }
}
