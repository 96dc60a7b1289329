// The executor of a ManifestWork (OCM's `spec.executor.subject`, a ServiceAccount of the WEC): the
// identity the agent applies the work's manifests as, so the WEC's own RBAC, its escalation check
// and its admission decide what a work may write, not the agent's broad rights.
// - No executor (absent or null): the agent's own identity, as before executors existed.
// - A ServiceAccount subject: every request of the apply path carries `Impersonate-User:
//   system:serviceaccount:<ns>:<name>` and no Impersonate-Group, so kube-apiserver's impersonation
//   filter gives it exactly the groups a token of that ServiceAccount carries (system:serviceaccounts,
//   system:serviceaccounts:<ns>, system:authenticated: k8s.io/apiserver endpoints/filters/impersonation.go),
//   and the agent needs nothing but `impersonate` on that `serviceaccounts` object.
// - Anything else (another subject type, a missing or malformed ServiceAccount): an error every
//   manifest of the work reports; never a fallback to the agent's own rights.
// OCM's work agent (v1.2.0, pkg/work/spoke/auth/basic) checks the same subject by SubjectAccessReviews
// and a dry-run create for RBAC kinds, then applies with its own identity; impersonating the apply
// itself lets the WEC's admission decide as well. Like OCM, an object the work will own (and so
// delete when the work goes, with the agent's identity) needs `delete` for the executor too:
// DeleteRights asks the WEC by SubjectAccessReview with OCM's user and groups.
import type { ManifestWork } from '../../kube/ocm-api.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';

export interface Executor {
  namespace: string;
  name: string;
  /** system:serviceaccount:<namespace>:<name> */
  user: string;
  /** The request headers that make the WEC act as this ServiceAccount. */
  headers: Record<string, string>;
}

/** none: the agent's identity; executor: impersonate it; error: every manifest fails with it. */
export type ExecutorOf = { none: true } | { executor: Executor } | { error: string };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The executor a work names, checked as OCM's CRD and ExecutorBasicCheck check it. */
export function executorOf(work: ManifestWork): ExecutorOf {
  const raw = work.spec?.executor as unknown;
  if (raw === undefined || raw === null) return { none: true };
  const bad = (why: string): ExecutorOf => ({ error: `the work's executor is refused: ${why}; nothing of this work is applied with the agent's own rights` });
  if (typeof raw !== 'object' || Array.isArray(raw)) return bad('spec.executor is not an object');
  const subject = (raw as { subject?: unknown }).subject;
  if (!subject || typeof subject !== 'object' || Array.isArray(subject)) return bad('spec.executor.subject is missing');
  const { type, serviceAccount } = subject as { type?: unknown; serviceAccount?: unknown };
  if (type !== 'ServiceAccount') return bad(`only support ServiceAccount type for the executor, not ${JSON.stringify(type ?? '')}`);
  if (!serviceAccount || typeof serviceAccount !== 'object' || Array.isArray(serviceAccount)) return bad('the executor service account is nil');
  const { namespace, name } = serviceAccount as { namespace?: unknown; name?: unknown };
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    return bad(`the executor's serviceAccount.namespace ${JSON.stringify(namespace ?? '')} is not a valid namespace name`);
  }
  if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    return bad(`the executor's serviceAccount.name ${JSON.stringify(name ?? '')} is not a valid ServiceAccount name`);
  }
  return { executor: serviceAccountExecutor(namespace, name) };
}

/** The executor of a ServiceAccount (namespace and name already checked). */
export function serviceAccountExecutor(namespace: string, name: string): Executor {
  const user = `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
  return { namespace, name, user, headers: { 'impersonate-user': user } };
}

/** The headers of `ex` (none for the agent's own identity). */
export const executorHeaders = (ex: ExecutorOf): Record<string, string> => ('executor' in ex ? ex.executor.headers : {});

/** The groups a ServiceAccount token carries (serviceaccount.MakeGroupNames plus system:authenticated), as OCM's SARs name them. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
}

/** How long a namespace-wide (or cluster-wide) "may delete" answer is reused. */
export const DELETE_RIGHT_TTL_MS = 10_000;

/** What a review asks about: `namespace` '' is every namespace (or the cluster scope), `name` '' every name. */
export type ReviewAttributes = { group: string; version: string; resource: string; namespace: string; name: string };

/**
 * Asks the WEC by SubjectAccessReview whether `ex` may `verb` what `a` names, with OCM's user and
 * groups for a ServiceAccount (the agent's right of system:auth-delegator). The one SAR client of
 * executors: the delete check below and upsync's read check (../upsync/read-rights.ts).
 */
export async function reviewExecutor(wec: Upstream, ex: Pick<Executor, 'namespace' | 'user'>, verb: string, a: ReviewAttributes):
  Promise<{ allowed: boolean; reason?: string }> {
  const body = {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
    spec: {
      user: ex.user, groups: serviceAccountGroups(ex.namespace),
      resourceAttributes: { group: a.group, version: a.version, resource: a.resource, namespace: a.namespace, ...(a.name ? { name: a.name } : {}), verb },
    },
  };
  const res = expectOk(await upstreamRequest(wec, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body }), 'SubjectAccessReview of the executor');
  const status = (JSON.parse(res.body.toString('utf8')) as { status?: { allowed?: boolean; reason?: string } }).status;
  return { allowed: status?.allowed === true, reason: status?.reason };
}

/**
 * Whether executors may delete what their works would own, asked of the WEC by SubjectAccessReview
 * (the agent's right of system:auth-delegator) with OCM's user and groups. A rule without
 * resourceNames allows every name, so the agent first asks for the whole resource in the namespace
 * (no name) and reuses a yes for DELETE_RIGHT_TTL_MS per executor, resource and namespace (OCM's
 * ExecutorValidatingCaches likewise caches its reviews): a work of many objects in one namespace
 * costs one review, not one each. Otherwise it asks for the object by name, every time. A revoked
 * right is so seen by new applies within the TTL; the delete itself, when the work goes, is
 * decided by what was checked when the object was applied (docs/agent.md, "Executors").
 */
export class DeleteRights {
  private readonly wide = new Map<string, { until: number; answer: Promise<boolean> }>();

  constructor(private readonly wec: Upstream, private readonly ttlMs = DELETE_RIGHT_TTL_MS, private readonly now = () => Date.now()) {}

  /** Undefined when `ex` may delete the object of `meta`; else why not, in the words of the manifest's condition. */
  async refusal(ex: Executor, meta: ReviewAttributes): Promise<string | undefined> {
    const key = `${ex.user}|${meta.group}|${meta.resource}|${meta.namespace}`;
    let hit = this.wide.get(key);
    if (!hit || hit.until <= this.now()) {
      if (this.wide.size > 10_000) this.sweep();
      hit = { until: this.now() + this.ttlMs, answer: this.review(ex, { ...meta, name: '' }).then((r) => r.allowed) };
      this.wide.set(key, hit);
      hit.answer.catch(() => this.wide.delete(key));
    }
    if (await hit.answer) return undefined;
    const r = await this.review(ex, meta);
    if (r.allowed) return undefined;
    const where = meta.namespace ? `in the namespace "${meta.namespace}"` : 'at the cluster scope';
    return `not allowed to apply the resource ${meta.group} ${meta.resource}, ${meta.namespace} ${meta.name}: its executor ${ex.user} cannot delete it ${where}, `
      + `and the work would own it (the agent deletes what a work owns when the work goes; set deleteOption Orphan or SelectivelyOrphan for it, or grant delete)`
      + (r.reason ? ` (${r.reason})` : '');
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, v] of this.wide) if (v.until <= now) this.wide.delete(k);
  }

  private review(ex: Executor, a: ReviewAttributes): Promise<{ allowed: boolean; reason?: string }> {
    return reviewExecutor(this.wec, ex, 'delete', a);
  }
}
