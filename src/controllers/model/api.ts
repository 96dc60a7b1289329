// The kinds the placement controller reads and writes besides the workload: their collection
// paths and typed views of the fields it uses (everything else stays unknown). The OCM kinds
// (ManifestWork, ManagedCluster) are typed once for both sides, in ../../kube/ocm-api.ts.
import type { JsonObject, KubeObject, ObjectMeta } from '../../kube/objects.js';
import type { BindingPolicySpec } from './resolution.js';

export const POLICIES = '/apis/control.kubestellar.io/v1alpha1/bindingpolicies';
export const TRANSFORMS = '/apis/control.kubestellar.io/v1alpha1/customtransforms';
export const CLUSTERS = '/apis/cluster.open-cluster-management.io/v1/managedclusters';
export const WORKS = '/apis/work.open-cluster-management.io/v1/manifestworks';

/** The URL of one ManifestWork in the ITS. */
export const workPath = (cluster: string, name: string): string => `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${name}`;

/** Objects read from a server always have a name (and a namespace when namespaced). */
type Named = ObjectMeta & { name: string };

export interface BindingPolicy extends KubeObject {
  metadata: Named;
  spec?: BindingPolicySpec;
  status?: { observedGeneration?: number; errors?: string[]; conditions?: JsonObject[] };
}

export interface CustomTransform extends KubeObject {
  metadata: Named;
  spec?: { apiGroup?: string; resource?: string; remove?: string[] };
}

export type { ManagedCluster } from '../../kube/ocm-api.js';

/** A workload object as listed from the WDS. */
export interface WorkloadObject extends KubeObject {
  metadata: Named;
}
