// What UpsyncRequests one BindingPolicy asks for (pure): one per cluster its Binding's destinations
// list, when its spec.upsync has clauses, none otherwise (no clause, no cluster, policy deleted or
// being deleted). A request carries the clauses as the policy's CRD validated them (only the known
// selection fields), the bounds, and, when a clause says `associatedWith: downsync`, the objects
// the policy downsyncs (its Binding's workload: a policy sends every object to every destination).
// It also carries the executor whose rights in the WEC bound what the agent may copy — the one its
// works are applied as (../model/executor.ts: the policy's own, else the server's default) —
// so a policy's author reads through upsync no more than their executor could; none when neither
// is set (the agents' own rights, as for downsync). A policy naming a malformed executor asks for
// nothing, as it sends nothing: never a fallback to the agents' rights.
import type { ServiceAccountRef } from '../../kube/service-account-ref.js';
import type { DownsyncedRef, UpsyncClause, UpsyncRequestSpec } from '../../kube/upsync-api.js';
import { executorErrors, policyExecutor } from '../model/executor.js';
import type { BindingPolicySpec } from '../model/resolution.js';

export interface UpsyncLimits {
  maxObjects: number;
  maxObjectBytes: number;
}

/** What is read of a policy. */
export interface UpsyncPolicy {
  metadata: { name: string; deletionTimestamp?: string };
  spec?: { upsync?: UpsyncClause[] | null; executor?: BindingPolicySpec['executor'] };
}

/** What is read of its Binding. */
export interface UpsyncBinding {
  spec: {
    workload: { clusterScope?: ObjectId[]; namespaceScope?: ObjectId[] };
    destinations?: { clusterId: string }[];
  };
}

interface ObjectId { group: string; resource: string; namespace?: string; name: string }

const CLAUSE_FIELDS = ['apiGroup', 'resources', 'namespaces', 'namespaceSelectors', 'objectSelectors', 'objectNames', 'associatedWith'] as const;

/** A clause with only the fields agents act on (a KubeStellar-pruned or future field never reaches them). */
function cleanClause(c: UpsyncClause): UpsyncClause {
  const out: Record<string, unknown> = {};
  for (const k of CLAUSE_FIELDS) if (c[k] !== undefined && c[k] !== null) out[k] = c[k];
  return out as UpsyncClause;
}

const refKey = (r: DownsyncedRef) => `${r.group}/${r.resource}/${r.namespace}/${r.name}`;

/** The downsynced objects of a Binding, sorted, without duplicates. */
export function downsyncedOf(b: UpsyncBinding): DownsyncedRef[] {
  const all = [...(b.spec.workload.clusterScope ?? []), ...(b.spec.workload.namespaceScope ?? [])]
    .map((o) => ({ group: o.group, resource: o.resource, namespace: o.namespace ?? '', name: o.name }));
  const unique = new Map(all.map((r) => [refKey(r), r]));
  return [...unique.keys()].sort().map((k) => unique.get(k)!);
}

/** cluster → the request's spec; `defaultExecutor` is the server's (`ksview serve --default-executor`). */
export function desiredRequests(wds: string, policy: UpsyncPolicy | undefined, binding: UpsyncBinding | undefined, limits: UpsyncLimits,
  defaultExecutor?: ServiceAccountRef): Map<string, UpsyncRequestSpec> {
  const out = new Map<string, UpsyncRequestSpec>();
  const clauses = (policy?.spec?.upsync ?? []).map(cleanClause);
  if (!policy || policy.metadata.deletionTimestamp || clauses.length === 0 || !binding) return out;
  if (executorErrors(policy.spec).length > 0) return out;
  const ex = policyExecutor(policy.spec, defaultExecutor);
  const executor = ex ? { namespace: ex.namespace, name: ex.name } : undefined;
  const associated = clauses.some((c) => c.associatedWith === 'downsync');
  const downsynced = associated ? downsyncedOf(binding) : undefined;
  for (const { clusterId } of binding.spec.destinations ?? []) {
    out.set(clusterId, {
      wds, policy: policy.metadata.name, clauses, ...(downsynced ? { downsynced } : {}), ...(executor ? { executor } : {}),
      maxObjects: limits.maxObjects, maxObjectBytes: limits.maxObjectBytes,
    });
  }
  return out;
}
