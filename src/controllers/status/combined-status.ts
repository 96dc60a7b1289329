// One CombinedStatus, built (pure): KubeStellar's object for a (workload object, BindingPolicy)
// pair whose policy names StatusCollectors for the object. Named `<object uid>.<policy uid>`, in the
// object's namespace (`kubestellar-report` for a cluster-scoped object), with the five labels
// KubeStellar's selectors look for; `results` holds one entry per named collector that exists and
// is valid, sorted by collector name (computed by ./collectors.ts, given here). Virtual: no spec, no status,
// its uid derived from its name and its creationTimestamp the later of the object's and the
// policy's, so every replica serves the same object.
import { stableUid, type KubeObject } from '../../kube/objects.js';
import type { ObjectIdentity } from '../model/wrapping.js';
import type { NamedStatusCombination } from './collector-rows.js';

export const COMBINED_STATUS_API_VERSION = 'control.kubestellar.io/v1alpha1';
/** Where the CombinedStatuses of cluster-scoped objects live (KubeStellar's name). */
export const CLUSTER_SCOPED_NAMESPACE = 'kubestellar-report';

export const LABELS = {
  group: 'status.kubestellar.io/api-group',
  resource: 'status.kubestellar.io/resource',
  namespace: 'status.kubestellar.io/namespace',
  name: 'status.kubestellar.io/name',
  policy: 'status.kubestellar.io/binding-policy',
} as const;

export interface CombinedStatus extends KubeObject {
  metadata: { name: string; namespace: string; uid: string; creationTimestamp?: string; labels: Record<string, string>; resourceVersion?: string };
  results?: NamedStatusCombination[];
}

/** Where a CombinedStatus is: its namespace and name. */
export function combinedStatusRef(id: ObjectIdentity, objectUid: string, policyUid: string): { namespace: string; name: string } {
  return { namespace: id.namespace || CLUSTER_SCOPED_NAMESPACE, name: `${objectUid}.${policyUid}` };
}

export interface CombinedStatusInput {
  id: ObjectIdentity;
  object: KubeObject;
  policy: KubeObject & { metadata: { name: string; uid?: string; creationTimestamp?: string } };
  /** One per valid collector the policy names for the object, over its clusters' reports. */
  results: NamedStatusCombination[];
}

export function buildCombinedStatus(i: CombinedStatusInput): CombinedStatus {
  const { namespace, name } = combinedStatusRef(i.id, i.object.metadata?.uid ?? '', i.policy.metadata.uid ?? '');
  const times = [i.object.metadata?.creationTimestamp, i.policy.metadata.creationTimestamp].filter((x): x is string => typeof x === 'string').sort();
  const results = [...i.results].sort((a, b) => a.name.localeCompare(b.name));
  return {
    apiVersion: COMBINED_STATUS_API_VERSION, kind: 'CombinedStatus',
    metadata: {
      name, namespace, uid: stableUid(`combinedstatus/${namespace}/${name}`),
      ...(times.length > 0 ? { creationTimestamp: times.at(-1) } : {}),
      labels: {
        [LABELS.group]: i.id.group, [LABELS.resource]: i.id.resource, [LABELS.namespace]: i.id.namespace,
        [LABELS.name]: i.id.name, [LABELS.policy]: i.policy.metadata.name,
      },
    },
    ...(results.length > 0 ? { results } : {}),
  };
}
