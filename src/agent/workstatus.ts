// Pure builder of the KubeStellar WorkStatus of one applied object (the ManifestWork status is
// work-conditions.ts's).
import type { WorkStatus } from '../kube/ocm-api.js';
import type { ManifestApplyResult } from './contract.js';

export const WORKSTATUS_WORK_LABEL = 'transport.kubestellar.io/manifestwork';

/**
 * The WorkStatus name for one applied object: `<kind>-<namespace>-<name>` lowercased
 * (`<kind>-<name>` when cluster-scoped), in the mailbox namespace.
 */
export function workStatusName(r: { kind: string; namespace: string; name: string }): string {
  const parts = [r.kind.toLowerCase(), ...(r.namespace ? [r.namespace] : []), r.name];
  return parts.join('-').slice(0, 253);
}

/** The WorkStatus of the object of `r` (its full .status), or undefined when nothing was applied. */
export function buildWorkStatusObject(cluster: string, workName: string, r: ManifestApplyResult): WorkStatus | undefined {
  if (!r.owned || !r.live) return undefined;
  const m = r.resourceMeta;
  const status = (r.live.status && typeof r.live.status === 'object' ? r.live.status : {}) as Record<string, unknown>;
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1',
    kind: 'WorkStatus',
    metadata: { name: workStatusName(m), namespace: cluster, labels: { [WORKSTATUS_WORK_LABEL]: workName } },
    spec: { sourceRef: { group: m.group, version: m.version, resource: m.resource, kind: m.kind, namespace: m.namespace, name: m.name } },
    status,
  };
}
