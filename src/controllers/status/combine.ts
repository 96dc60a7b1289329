// The status of a workload object combined over the clusters it runs in (pure), for the kinds whose
// status is counts of replicas or pods: Deployment, ReplicaSet, StatefulSet, DaemonSet (group apps)
// and Job (batch). The rule, which departs from KubeStellar's minimum: the object as a
// whole across the fleet, so
// - counts (replicas, readyReplicas, availableReplicas, numberReady, active, succeeded…) are summed;
// - observedGeneration is the smallest (the least advanced cluster); collisionCount the largest;
// - a revision (currentRevision, updateRevision) is kept only when every cluster has the same;
// - startTime is the earliest; completionTime the latest, and only when every cluster has one;
// - conditions, per type: a positive one (Available, Progressing, Complete, Ready…) is True only
//   when True in every cluster, False when False in some, else Unknown; a negative one
//   (ReplicaFailure, Failed, FailureTarget) is True when True in some cluster. The reason, message
//   and times are those of the cluster whose condition decided (the latest transition among them).
// Other fields of the status are left out: they have no meaning for the fleet as a whole.
//
// One cluster's report never makes the combination one the WDS refuses (which kept every other
// cluster's status from being returned): a report is taken only when it is a valid status of its
// kind, as Kubernetes' validation of that status says (invalidStatus: every count an int32 ≥ 0,
// observedGeneration ≥ 0, and e.g. a Deployment's availableReplicas ≤ readyReplicas ≤ replicas);
// sums are clamped to int32, the counts' type in k8s.io/api (an honest fleet cannot overflow it, a
// lying cluster must not); at most REPORT_LIMITS.conditions conditions, those most clusters report
// first, and no more of them than a report may hold (REPORT_LIMITS.bytes).
import type { JsonObject } from '../../kube/objects.js';
import { REPORT_LIMITS } from './report-bounds.js';

type Counts = readonly string[];

interface KindRule {
  /** The counts, all int32 in k8s.io/api (DeploymentStatus.Replicas, JobStatus.Active…; the optional ones *int32). */
  counts: Counts;
  /** Fields kept only when equal in every cluster. */
  same?: readonly string[];
  /** [field, bound]: Kubernetes' validation of the kind's status refuses field > bound (a missing count is 0). */
  atMost?: readonly (readonly [string, string])[];
}

const RULES: Record<string, KindRule> = {
  // k8s.io/kubernetes pkg/apis/apps/validation ValidateDeploymentStatus.
  'apps/Deployment': {
    counts: ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'terminatingReplicas'],
    atMost: [['updatedReplicas', 'replicas'], ['readyReplicas', 'replicas'], ['availableReplicas', 'replicas'], ['availableReplicas', 'readyReplicas']],
  },
  // ValidateReplicaSetStatus.
  'apps/ReplicaSet': {
    counts: ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'terminatingReplicas'],
    atMost: [['fullyLabeledReplicas', 'replicas'], ['readyReplicas', 'replicas'], ['availableReplicas', 'replicas'], ['availableReplicas', 'readyReplicas']],
  },
  // ValidateStatefulSetStatus.
  'apps/StatefulSet': {
    counts: ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas'], same: ['currentRevision', 'updateRevision'],
    atMost: [['readyReplicas', 'replicas'], ['currentReplicas', 'replicas'], ['updatedReplicas', 'replicas'], ['availableReplicas', 'replicas'], ['availableReplicas', 'readyReplicas']],
  },
  // validateDaemonSetStatus: counts only.
  'apps/DaemonSet': { counts: ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'] },
  // validateJobStatus: counts only (the rest concerns fields not combined).
  'batch/Job': { counts: ['active', 'succeeded', 'failed', 'ready', 'terminating'] },
};

export const INT32_MAX = 2 ** 31 - 1;

/**
 * Why a cluster's status of an object of a combined kind is not a valid status of that kind, in
 * Kubernetes' words (`status.availableReplicas: Invalid value: 5: cannot be greater than
 * status.replicas`); undefined when it is valid, or the kind is not combined.
 */
export function invalidStatus(k: { group: string; kind: string }, status: JsonObject): string | undefined {
  const rule = RULES[`${k.group}/${k.kind}`];
  if (!rule) return undefined;
  const problems: string[] = [];
  const whole = (f: string, max: number) => {
    const v = status[f];
    if (v === undefined || v === null) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v > max) problems.push(`status.${f}: Invalid value: ${JSON.stringify(v)}: must be a whole number of at most ${max}`);
    else if (v < 0) problems.push(`status.${f}: Invalid value: ${v}: must be greater than or equal to 0`);
  };
  for (const f of [...rule.counts, 'collisionCount']) whole(f, INT32_MAX);
  whole('observedGeneration', Number.MAX_SAFE_INTEGER);
  if (problems.length > 0) return problems.join('; ');
  const count = (f: string) => (typeof status[f] === 'number' ? status[f] : 0);
  for (const [f, bound] of rule.atMost ?? []) {
    if (count(f) > count(bound)) problems.push(`status.${f}: Invalid value: ${count(f)}: cannot be greater than status.${bound}`);
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}

/** Condition types whose True means trouble: True for the fleet when True anywhere. */
const NEGATIVE_CONDITIONS = new Set(['ReplicaFailure', 'Failed', 'FailureTarget']);

export const combinesKind = (k: { group: string; kind: string }): boolean => `${k.group}/${k.kind}` in RULES;

interface Condition extends JsonObject {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

/** A count as Kubernetes takes it: a whole number, not negative (reports are checked by invalidStatus first). */
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

export function combineStatuses(k: { group: string; kind: string }, statuses: readonly JsonObject[]): JsonObject {
  const rule = RULES[`${k.group}/${k.kind}`];
  if (!rule) throw new Error(`no combination for ${k.group}/${k.kind}`);
  const out: JsonObject = {};
  const generations = statuses.map((s) => num(s.observedGeneration)).filter((g): g is number => g !== undefined);
  if (generations.length > 0) out.observedGeneration = Math.min(...generations);
  for (const f of rule.counts) {
    const values = statuses.map((s) => num(s[f])).filter((v): v is number => v !== undefined);
    if (values.length > 0) out[f] = Math.min(INT32_MAX, values.reduce((a, b) => a + b, 0));
  }
  const collisions = statuses.map((s) => num(s.collisionCount)).filter((v): v is number => v !== undefined);
  if (collisions.length > 0) out.collisionCount = Math.max(...collisions);
  for (const f of rule.same ?? []) {
    const values = new Set(statuses.map((s) => s[f]));
    const only = [...values][0];
    if (values.size === 1 && typeof only === 'string') out[f] = only;
  }
  if (k.kind === 'Job') {
    const starts = statuses.map((s) => s.startTime).filter((v): v is string => typeof v === 'string').sort();
    if (starts.length > 0) out.startTime = starts[0]!;
    const ends = statuses.map((s) => s.completionTime);
    if (ends.every((v) => typeof v === 'string')) out.completionTime = (ends as string[]).sort().at(-1)!;
  }
  const conditions = combineConditions(statuses.map((s) => (Array.isArray(s.conditions) ? s.conditions as Condition[] : [])));
  if (conditions.length > 0) out.conditions = conditions;
  return out;
}

/**
 * One condition per type present in some cluster, in the order the types first appear: at most
 * `limits.conditions` types, and no more than `limits.bytes` of them. Which are kept: the types
 * most clusters report first, then, among those as widely reported, each cluster's in turn (its
 * first, then its second…): one cluster's many types cannot push out another's few.
 */
export function combineConditions(perCluster: readonly (readonly Condition[])[], limits = REPORT_LIMITS): Condition[] {
  const reporting = new Map<string, number>();
  /** The earliest place of the type in any cluster's list. */
  const place = new Map<string, number>();
  for (const list of perCluster) {
    const seen = new Set<string>();
    list.forEach((c, i) => {
      if (typeof c?.type !== 'string' || seen.has(c.type)) return;
      seen.add(c.type);
      place.set(c.type, Math.min(place.get(c.type) ?? i, i));
    });
    for (const type of seen) reporting.set(type, (reporting.get(type) ?? 0) + 1);
  }
  const order = [...reporting.keys()];
  // Array.prototype.sort is stable: otherwise equal, the type that appears first comes first.
  const ranked = [...order].sort((a, b) => reporting.get(b)! - reporting.get(a)! || place.get(a)! - place.get(b)!);
  const kept = new Map<string, Condition>();
  let length = 0;
  for (const type of ranked) {
    if (kept.size >= limits.conditions) break;
    const c = combineCondition(perCluster, type);
    length += JSON.stringify(c).length;
    if (length > limits.bytes) break;
    kept.set(type, c);
  }
  return order.filter((t) => kept.has(t)).map((t) => kept.get(t)!);
}

/** The fleet's condition of one type. */
function combineCondition(perCluster: readonly (readonly Condition[])[], type: string): Condition {
  const found = perCluster.map((list) => list.find((c) => c?.type === type));
  const statuses = found.map((c) => c?.status);
  let status: string;
  if (NEGATIVE_CONDITIONS.has(type)) status = statuses.includes('True') ? 'True' : statuses.every((s) => s === 'False') ? 'False' : 'Unknown';
  else status = statuses.includes('False') ? 'False' : statuses.every((s) => s === 'True') ? 'True' : 'Unknown';
  // The clusters that decided: those with the combined status (all of them for a True positive).
  const deciding = found.filter((c): c is Condition => c !== undefined && c.status === status);
  const pick = (deciding.length > 0 ? deciding : found.filter((c): c is Condition => c !== undefined))
    .reduce((a, b) => ((b.lastTransitionTime ?? '') > (a.lastTransitionTime ?? '') ? b : a));
  return { ...pick, status };
}
