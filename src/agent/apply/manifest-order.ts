// The order in which a work's manifests are applied (dependencies first: a Namespace before what
// it holds, a CRD before its resources, RBAC before workloads, webhooks last so they cannot block
// the work's own objects), and the objects a work never deletes or overwrites.
import type { JsonObject } from '../../kube/objects.js';

const RANK: Record<string, number> = {
  Namespace: 0, CustomResourceDefinition: 0,
  ClusterRole: 1, Role: 1, ClusterRoleBinding: 1, RoleBinding: 1,
  ResourceQuota: 2, LimitRange: 2, ServiceAccount: 2,
  ConfigMap: 3, Secret: 3, PersistentVolume: 3, PersistentVolumeClaim: 3, StorageClass: 3, PriorityClass: 3,
  Service: 4,
  ValidatingWebhookConfiguration: 6, MutatingWebhookConfiguration: 6, APIService: 6,
  ValidatingAdmissionPolicy: 6, ValidatingAdmissionPolicyBinding: 6,
  MutatingAdmissionPolicy: 6, MutatingAdmissionPolicyBinding: 6,
};
const WORKLOAD_RANK = 5;

export function rankOf(kind: unknown): number {
  return typeof kind === 'string' && kind in RANK ? RANK[kind]! : WORKLOAD_RANK;
}

/** Indexes of `manifests` in apply order; stable within a rank. */
export function applyOrder(manifests: readonly JsonObject[]): number[] {
  return manifests.map((m, i) => ({ i, r: rankOf(m?.kind) })).sort((a, b) => a.r - b.r || a.i - b.i).map((x) => x.i);
}

/** Namespaces a work never deletes, whatever its deleteOption says. */
export const PROTECTED_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease', 'default']);

interface ObjectRef { group: string; resource: string; namespace: string; name: string }

/** Objects a work must never delete: the system Namespaces and the fleet lease ConfigMap. */
export function isProtected(r: ObjectRef): boolean {
  if (r.group === '' && r.resource === 'namespaces' && r.namespace === '' && PROTECTED_NAMESPACES.has(r.name)) return true;
  return isNeverApplied(r);
}

/** Objects a work must never write: the push agent's fleet lease ConfigMap. */
export function isNeverApplied(r: ObjectRef): boolean {
  return r.group === '' && r.resource === 'configmaps' && r.namespace === 'kube-system' && r.name === 'kubestellar-fleet';
}
