// Warning Events about BindingPolicies (cluster-scoped, so the Events go to namespace default), each
// announced once per subject: a WDS conflict, an object written straight to the WDS, a native and a
// view object of one identity. What they say is also on the policies' status.errors, so a failed
// Event write is only logged.
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';

/** A BindingPolicy named in an Event (its uid when it is known). */
export interface PolicyRef {
  name: string;
  uid?: string;
}

export class PolicyEvents {
  /** Subjects already announced. */
  private readonly announced = new Set<string>();

  constructor(private readonly wds: Upstream, private readonly wdsName: string, private readonly log: (msg: string) => void) {}

  /** Emits a Warning Event on each policy, unless `subject` was announced before. */
  async warnOnce(subject: string, policies: readonly PolicyRef[], reason: string, message: string): Promise<void> {
    if (this.announced.has(subject)) return;
    this.announced.add(subject);
    for (const p of policies) await this.event(p, reason, message);
  }

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
