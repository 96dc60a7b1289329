// What one cluster's report may bring into ksview serve (pure). A WorkStatus is written by the
// cluster's agent, the least trusted writer of the system (a WEC may be compromised): kube-apiserver
// accepts a free-form status nested thousands of levels deep and up to 1.5 MB, and any number of
// them in the cluster's mailbox. So what is taken from a report is bounded — its status's depth,
// its size and its conditions — in one pass over it (O(its size) at most once, before it is cached:
// src/kube/json.ts jsonExtent); the mailbox's totals are ./workstatus-cache.ts's.
// A report over a bound is refused (its status is not taken at all, never a part of it shown as the
// whole); conditions over their number are capped first (the first ones kept: a real object has a
// handful of condition types), so a status made big by thousands of conditions is still taken.
// What a report is of (spec.sourceRef) is taken only as its six names, each within the length
// Kubernetes allows that name (boundSourceRef): a report naming something no API server could
// hold is not a report of anything, and is not cached at all.
import { jsonExtent } from '../../kube/json.js';
import type { JsonObject } from '../../kube/objects.js';
import type { WorkStatus } from '../../kube/ocm-api.js';

export interface ReportLimits {
  /** Nesting of a report's status (Kubernetes' own statuses nest fewer than 10 levels). */
  depth: number;
  /** The JSON length of a report's status and statusDetails. */
  bytes: number;
  /** Conditions kept of a report's status (a Deployment has 3 types, a Pod 5). */
  conditions: number;
  /** Reports kept per mailbox (one per object sent to the cluster; more are not cached). */
  mailboxReports: number;
  /** The JSON length of the statuses and specs kept per mailbox, together. */
  mailboxBytes: number;
}

export const REPORT_LIMITS: ReportLimits = {
  depth: 64,
  bytes: 64 * 1024,
  conditions: 32,
  mailboxReports: 10_000,
  mailboxBytes: 16 * 1024 * 1024,
};

/**
 * Kubernetes' own limits on the names a sourceRef holds (k8s.io/apimachinery validation, as
 * kube-apiserver and apiextensions apply them): an API group is a DNS-1123 subdomain (253); a
 * version, a resource (a CRD's plural) and a kind (lowercased) are DNS-1035 labels (63); a
 * namespace is a DNS-1123 label (63); an object's name a DNS-1123 subdomain (253).
 * manifests/crds/control.kubestellar.io_workstatuses.yaml says the same as maxLength.
 */
export const SOURCE_REF_LIMITS = { group: 253, version: 63, resource: 63, kind: 63, namespace: 63, name: 253 } as const;

export type SourceRef = WorkStatus['spec']['sourceRef'];

/**
 * The spec to keep of a report: its sourceRef's six names (nothing else of the spec), each a string
 * within SOURCE_REF_LIMITS, and its JSON length (under 1 KiB: it counts in the mailbox's bytes);
 * or why it is refused (the message names the field and lengths, never its content).
 */
export function boundSourceRef(spec: unknown): { spec: WorkStatus['spec']; bytes: number } | { refused: string } {
  const given = isObject(spec) && isObject(spec.sourceRef) ? spec.sourceRef : {};
  const ref: Partial<SourceRef> = {};
  for (const [field, max] of Object.entries(SOURCE_REF_LIMITS) as [keyof SourceRef, number][]) {
    const v = given[field];
    if (v === undefined) continue;
    if (typeof v !== 'string') return { refused: `its spec.sourceRef.${field} is not a string` };
    if (v.length > max) return { refused: `its spec.sourceRef.${field} is ${v.length} characters long, more than Kubernetes allows (${max})` };
    ref[field] = v;
  }
  const kept = { sourceRef: ref as SourceRef };
  return { spec: kept, bytes: JSON.stringify(kept).length };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What is taken from one report. */
export interface BoundedReport {
  status?: JsonObject;
  statusDetails?: WorkStatus['statusDetails'];
  /** The JSON length of what is taken (0 when refused). */
  bytes: number;
  /** Why nothing of its status is taken. */
  refused?: string;
  /** What of its status is left out. */
  capped?: string;
}

export function boundReport(ws: WorkStatus, limits: ReportLimits = REPORT_LIMITS): BoundedReport {
  const { statusDetails } = ws;
  let status = ws.status;
  let capped: string | undefined;
  // Conditions first: a status made big by thousands of them is kept with the first ones.
  const conditions = status?.conditions;
  if (Array.isArray(conditions) && conditions.length > limits.conditions) {
    status = { ...status, conditions: conditions.slice(0, limits.conditions) };
    capped = `it has ${conditions.length} conditions; the first ${limits.conditions} are kept`;
  }
  // One walk over what is taken (the wrapper adds one level, not counted against the status).
  const extent = jsonExtent({ status, statusDetails }, limits.depth + 1, limits.bytes);
  if (extent.over === 'depth') return { bytes: 0, refused: `its status is nested more than ${limits.depth} levels deep` };
  if (extent.over === 'length') return { bytes: 0, refused: `its status is over ${limits.bytes} bytes` };
  return { status, statusDetails, bytes: extent.length, ...(capped ? { capped } : {}) };
}
