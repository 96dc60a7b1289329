// Under which identity a policy's works run in the WECs (docs/placement.md, "Executor: as whom a work runs in the WEC"): a BindingPolicy may name an
// executor (`spec.executor.serviceAccount: {namespace, name}`, our extension of KubeStellar's
// API), else the server's default (`ksview serve --default-executor NS/NAME`), else none. Placement
// writes it into each ManifestWork as OCM's `spec.executor.subject` (a ServiceAccount of the WEC),
// which the agent impersonates when applying the work's manifests: the WEC's own RBAC, escalation
// check and admission then decide. No executor keeps the agents' full rights (works written before
// the field existed, and servers started without a default); the policy's status says so.
//
// An object sent to one cluster by several policies that resolve to different executors is a
// conflict: it is not sent there (its work there stays as it was, as with other conflicts that
// hold an object back), and each of those policies says why. No executor is picked silently: a
// weaker one would break the delivery, a stronger one would be an escalation for the other
// policy's author.
// Pure functions; ../placement/reconcile.ts applies them, ../placement/policy-status.ts reports them.
import type { JsonObject } from '../../kube/objects.js';
import { serviceAccountRefErrors, type ServiceAccountRef } from '../../kube/service-account-ref.js';
import type { BindingPolicySpec } from './resolution.js';

export type { ServiceAccountRef };

export interface Executor extends ServiceAccountRef {
  /** Where it comes from: the policy's spec, or the server's default. */
  source: 'policy' | 'default';
}

/** The executor the policy names in its spec (validated; an invalid one names none, and is an error of the policy). */
export function specExecutor(spec: BindingPolicySpec | undefined): ServiceAccountRef | undefined {
  const sa = spec?.executor?.serviceAccount;
  if (!sa || serviceAccountRefErrors(sa, '').length > 0) return undefined;
  return { namespace: sa.namespace!, name: sa.name! };
}

/** The errors of a policy's spec.executor (none when absent). */
export function executorErrors(spec: BindingPolicySpec | undefined): string[] {
  if (spec?.executor === undefined || spec.executor === null) return [];
  return serviceAccountRefErrors(spec.executor.serviceAccount, 'spec.executor.serviceAccount');
}

/** The executor of a policy's works: its own, else the default, else none. */
export function policyExecutor(spec: BindingPolicySpec | undefined, fallback: ServiceAccountRef | undefined): Executor | undefined {
  const own = specExecutor(spec);
  if (own) return { ...own, source: 'policy' };
  // A policy with a malformed executor gets no default: it asked for someone, and is not sent (../placement/reconcile.ts).
  if (executorErrors(spec).length > 0) return undefined;
  return fallback ? { ...fallback, source: 'default' } : undefined;
}

/** OCM's ManifestWork spec.executor for it. */
export function workExecutor(e: ServiceAccountRef): JsonObject {
  return { subject: { type: 'ServiceAccount', serviceAccount: { namespace: e.namespace, name: e.name } } };
}

/**
 * The one executor of the policies sending an object to a cluster, or a conflict when they
 * resolve to different ones (no executor counts as one of them: it would apply with the agent's
 * full rights what another policy asked to apply with less).
 */
export function clusterExecutor(senders: readonly string[], executorOf: (policy: string) => Executor | undefined):
  { executor: Executor | undefined } | { conflict: string; policies: string[] } {
  const by = new Map<string, string[]>();
  let chosen: Executor | undefined;
  for (const p of [...senders].sort()) {
    const e = executorOf(p);
    const k = e ? `${e.namespace}/${e.name}` : '';
    if (!by.has(k)) by.set(k, []);
    by.get(k)!.push(p);
    chosen ??= e;
  }
  if (by.size <= 1) return { executor: chosen };
  const parts = [...by].map(([k, ps]) => `${ps.join(', ')} → ${k ? `ServiceAccount ${k}` : 'no executor'}`);
  return { conflict: `the policies sending it there name different executors (${parts.join('; ')})`, policies: [...senders].sort() };
}
