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
import type { JsonObject } from '../../kube/objects.js';

type Counts = readonly string[];

interface KindRule {
  counts: Counts;
  /** Fields kept only when equal in every cluster. */
  same?: readonly string[];
}

const RULES: Record<string, KindRule> = {
  'apps/Deployment': { counts: ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'terminatingReplicas'] },
  'apps/ReplicaSet': { counts: ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'terminatingReplicas'] },
  'apps/StatefulSet': { counts: ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas'], same: ['currentRevision', 'updateRevision'] },
  'apps/DaemonSet': { counts: ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'] },
  'batch/Job': { counts: ['active', 'succeeded', 'failed', 'ready', 'terminating'] },
};

/** Condition types whose True means trouble: True for the fleet when True anywhere. */
const NEGATIVE_CONDITIONS = new Set(['ReplicaFailure', 'Failed', 'FailureTarget']);

export const combinesKind = (k: { group: string; kind: string }): boolean => `${k.group}/${k.kind}` in RULES;

interface Condition extends JsonObject {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function combineStatuses(k: { group: string; kind: string }, statuses: readonly JsonObject[]): JsonObject {
  const rule = RULES[`${k.group}/${k.kind}`];
  if (!rule) throw new Error(`no combination for ${k.group}/${k.kind}`);
  const out: JsonObject = {};
  const generations = statuses.map((s) => num(s.observedGeneration)).filter((g): g is number => g !== undefined);
  if (generations.length > 0) out.observedGeneration = Math.min(...generations);
  for (const f of rule.counts) {
    const values = statuses.map((s) => num(s[f])).filter((v): v is number => v !== undefined);
    if (values.length > 0) out[f] = values.reduce((a, b) => a + b, 0);
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

/** One condition per type present in some cluster, in the order the types first appear. */
export function combineConditions(perCluster: readonly (readonly Condition[])[]): Condition[] {
  const types: string[] = [];
  for (const list of perCluster) for (const c of list) if (typeof c?.type === 'string' && !types.includes(c.type)) types.push(c.type);
  return types.map((type) => {
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
  });
}
