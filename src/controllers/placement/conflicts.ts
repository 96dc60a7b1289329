// Conflicts between WDSs: the same object sent to the same cluster by this WDS and another one.
// Other WDSs' ManifestWorks are indexed by the identity of the object they carry (cluster, group,
// resource, namespace, name); reconciling an object asks which other WDSs send it where it goes.
// Each conflict is announced once (per identity and set of WDSs) by a Warning Event on the
// selecting BindingPolicies, in namespace default (BindingPolicies are cluster-scoped).
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { WDS_LABEL, type ManifestWork, type ObjectIdentity, type ResourceIdentifier } from '../wrapping.js';
import { identityKey, workKey } from './keys.js';

/** A BindingPolicy named in an Event (its uid when it is known). */
export interface PolicyRef {
  name: string;
  uid?: string;
}

export class Conflicts {
  /** other WDS's work key → identity key; identity key → work key → its WDS. */
  private readonly identityOfWork = new Map<string, string>();
  private readonly worksByIdentity = new Map<string, Map<string, string>>();
  /** Conflicts already announced (identity key + WDSs). */
  private readonly announced = new Set<string>();

  constructor(private readonly wds: Upstream, private readonly wdsName: string, private readonly log: (msg: string) => void) {}

  /**
   * Records a change of another WDS's work; returns the identity of the object it carries (or
   * carried), whose own reconciliation may now find a conflict, or find it gone.
   */
  index(deleted: boolean, w: ManifestWork): Partial<ResourceIdentifier> {
    const wk = workKey(w.metadata.namespace, w.metadata.name);
    const previous = this.identityOfWork.get(wk);
    if (previous) this.worksByIdentity.get(previous)?.delete(wk);
    const rid = w.spec?.manifestConfigs?.[0]?.resourceIdentifier;
    const wds = w.metadata.labels?.[WDS_LABEL] ?? '';
    if (!deleted && rid && wds) {
      const key = identityKey(w.metadata.namespace, rid);
      this.identityOfWork.set(wk, key);
      if (!this.worksByIdentity.has(key)) this.worksByIdentity.set(key, new Map());
      this.worksByIdentity.get(key)!.set(wk, wds);
    } else {
      this.identityOfWork.delete(wk);
    }
    return rid ?? {};
  }

  /** The other WDSs sending this object to this cluster, sorted. */
  otherWDSs(cluster: string, id: ObjectIdentity): string[] {
    const works = this.worksByIdentity.get(identityKey(cluster, id));
    return works ? [...new Set(works.values())].sort() : [];
  }

  /** Emits the conflict's Warning Event on each policy, unless it was announced before. */
  async announce(cluster: string, id: ObjectIdentity, others: readonly string[], policies: readonly PolicyRef[], message: string): Promise<void> {
    const announcement = `${identityKey(cluster, id)}|${others.join(',')}`;
    if (this.announced.has(announcement)) return;
    this.announced.add(announcement);
    for (const p of policies) await this.event(p, 'WDSConflict', message);
  }

  /** A Warning Event about a BindingPolicy; failures are logged (the conflict is on its status too). */
  private async event({ name, uid }: PolicyRef, reason: string, message: string): Promise<void> {
    const now = new Date().toISOString();
    const component = `kubestellar-view-${this.wdsName}`;
    try {
      expectOk(await upstreamRequest(this.wds, 'POST', '/api/v1/namespaces/default/events', { body: {
        apiVersion: 'v1', kind: 'Event',
        metadata: { generateName: `${name}.`, namespace: 'default' },
        involvedObject: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', name, ...(uid ? { uid } : {}) },
        reason, message, type: 'Warning', count: 1, firstTimestamp: now, lastTimestamp: now,
        source: { component }, reportingComponent: component,
      } }), `event for BindingPolicy ${name}`);
    } catch (err) {
      this.log(`placement: ${(err as Error).message}`);
    }
  }
}
