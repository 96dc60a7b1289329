// Warning Events about the objects placement sends — a WDS conflict, an object written straight to
// the WDS, a native and a view object of one identity — each announced once per subject. An Event
// is about the object it names (its involvedObject) and lives where that object lives: in the
// object's namespace, or for a cluster-scoped object in `default`, as kube-apiserver wants for
// cluster-scoped involvedObjects. So whoever may read Events in a namespace learns nothing of
// objects in other namespaces (they used to go to `default` on the policy, naming objects of every
// namespace). The message names the selecting BindingPolicies (cluster-scoped). What the Events say
// is also on the policies' status.errors, so a failed Event write is only logged.
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';

/** The object an Event is about. */
export interface EventSubject {
  apiVersion: string;
  kind: string;
  /** Empty for a cluster-scoped object. */
  namespace: string;
  name: string;
  uid?: string;
}

export class ObjectEvents {
  /** Subjects already announced. */
  private readonly announced = new Set<string>();

  constructor(private readonly wds: Upstream, private readonly wdsName: string, private readonly log: (msg: string) => void) {}

  /** Emits a Warning Event on `about`, naming `policies`, unless `subject` was announced before. */
  async warnOnce(subject: string, about: EventSubject, policies: readonly string[], reason: string, message: string): Promise<void> {
    if (this.announced.has(subject)) return;
    this.announced.add(subject);
    const now = new Date().toISOString();
    const component = `kubestellar-view-${this.wdsName}`;
    const namespace = about.namespace || 'default';
    const selected = policies.length > 0 ? ` (selected by BindingPolicy ${[...policies].sort().join(', ')})` : '';
    try {
      expectOk(await upstreamRequest(this.wds, 'POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, { body: {
        apiVersion: 'v1', kind: 'Event',
        metadata: { generateName: `${about.name}.`, namespace },
        involvedObject: {
          apiVersion: about.apiVersion, kind: about.kind, name: about.name,
          ...(about.namespace ? { namespace: about.namespace } : {}), ...(about.uid ? { uid: about.uid } : {}),
        },
        reason, message: `${message}${selected}`, type: 'Warning', count: 1, firstTimestamp: now, lastTimestamp: now,
        source: { component }, reportingComponent: component,
      } }), `event for ${about.kind} ${about.namespace ? `${about.namespace}/` : ''}${about.name}`);
    } catch (err) {
      this.log(`placement: ${(err as Error).message}`);
    }
  }
}
