// The state of one object in one destination cluster, read from the object's ManifestWork there
// and the cluster's ManagedCluster (pure). The states are those KubeFed's per-cluster propagation
// status tells apart, in ManifestWork terms:
// - WaitingForRemoval: the work is being deleted (the agent is removing the object);
// - ClusterNotReady: the cluster's ManagedClusterConditionAvailable is not True (its lease is
//   stale, or its agent says the WEC does not answer);
// - Pending: no work yet, or its agent has not reported the work's current generation;
// - Conflict / ApplyFailed: the agent's Applied is False (a server-side apply conflict is a
//   Conflict), with the agent's words; a Degraded work is ApplyFailed;
// - Applied: applied, not yet healthy — the work's Available is not True, or the kind's well-known
//   status feedback says so (a Deployment or DaemonSet with fewer available than desired, a Pod
//   not Ready, a Job not Complete);
// - Available: applied, present and healthy.
// Then, per policy, the destinations' counts and a capped list of broken objects (KubeStellar's
// seed: "limited-length lists of broken objects"), and whether the policy is Ready.
import type { Condition, FeedbackValue, ManagedCluster, ManifestWork } from '../../kube/ocm-api.js';
import type { ObjectIdentity } from '../model/wrapping.js';
import { applyFailures, wecWords } from './apply-failures.js';

export const OBJECT_STATES = ['Available', 'Applied', 'Pending', 'ApplyFailed', 'Conflict', 'ClusterNotReady', 'WaitingForRemoval'] as const;
export type ObjectState = typeof OBJECT_STATES[number];

export interface ObjectOutcome {
  state: ObjectState;
  /** Why it is not Available (the agent's or the hub's words). */
  message?: string;
}

/** How many broken objects a destination lists. */
export const MAX_BROKEN_OBJECTS = 10;

const condition = (conds: readonly Condition[] | undefined, type: string) => conds?.find((c) => c.type === type);

/** Whether a cluster takes work now: ManagedClusterConditionAvailable True. */
export function clusterReadiness(c: ManagedCluster | undefined): { ready: boolean; message?: string } {
  if (!c) return { ready: false, message: 'no such ManagedCluster' };
  const a = condition(c.status?.conditions, 'ManagedClusterConditionAvailable');
  if (a?.status === 'True') return { ready: true };
  return { ready: false, message: a ? `ManagedClusterConditionAvailable ${a.status}: ${a.reason}${a.message ? ` (${a.message})` : ''}` : 'no ManagedClusterConditionAvailable yet' };
}

function feedback(values: readonly FeedbackValue[] | undefined, name: string): number | string | boolean | undefined {
  const v = values?.find((x) => x.name === name)?.fieldValue;
  return v?.integer ?? v?.string ?? v?.boolean;
}

/** The kinds whose health the works' WellKnownStatus feedback tells (src/agent/status/status-feedback.ts). */
const WELL_KNOWN_HEALTH = new Set(['Deployment', 'DaemonSet', 'Pod', 'Job']);

/** Not healthy, by the kind's well-known status feedback: why, or undefined when healthy or the kind has none. */
function unhealthy(w: ManifestWork): string | undefined {
  const m = w.status?.resourceStatus?.manifests?.[0];
  const manifest = w.spec?.workload?.manifests?.[0] as { kind?: string; spec?: { replicas?: number } } | undefined;
  const values = m?.statusFeedback?.values ?? [];
  if (!manifest || !WELL_KNOWN_HEALTH.has(manifest.kind ?? '')) return undefined;
  // No value yet: the kind's status has not been reported (a Deployment scaled to 0 has none to give).
  if (values.length === 0) return manifest.kind === 'Deployment' && manifest.spec?.replicas === 0 ? undefined : 'status not reported yet';
  const num = (n: string) => Number(feedback(values, n) ?? 0);
  switch (manifest.kind) {
    case 'Deployment': {
      const desired = manifest.spec?.replicas ?? 1;
      return num('AvailableReplicas') < desired ? `${num('AvailableReplicas')} of ${desired} replicas available` : undefined;
    }
    case 'DaemonSet':
      return num('NumberAvailable') < num('DesiredNumberScheduled') ? `${num('NumberAvailable')} of ${num('DesiredNumberScheduled')} scheduled pods available` : undefined;
    case 'Pod':
      return feedback(values, 'PodReady') === 'True' || feedback(values, 'PodPhase') === 'Succeeded' ? undefined : `pod ${String(feedback(values, 'PodPhase') ?? 'phase unknown')}, not Ready`;
    case 'Job':
      return feedback(values, 'JobComplete') === 'True' ? undefined : 'job not complete';
    default:
      return undefined;
  }
}

/** The state of the object a work carries, in its cluster. */
export function objectOutcome(w: ManifestWork | undefined, cluster: { ready: boolean; message?: string }): ObjectOutcome {
  if (w?.metadata.deletionTimestamp) return { state: 'WaitingForRemoval', message: 'the agent is removing it' };
  if (!cluster.ready) return { state: 'ClusterNotReady', ...(cluster.message ? { message: cluster.message } : {}) };
  if (!w) return { state: 'Pending', message: 'no ManifestWork yet' };
  const conds = w.status?.conditions;
  const applied = condition(conds, 'Applied');
  const generation = w.metadata.generation;
  if (!applied || (applied.observedGeneration !== undefined && generation !== undefined && applied.observedGeneration < generation)) {
    return { state: 'Pending', message: `the agent has not reported generation ${generation ?? 1} of the work yet` };
  }
  const failure = applyFailures(w)[0];
  if (failure || applied.status === 'False') {
    const message = wecWords(failure?.message || applied.message || applied.reason || '');
    return { state: /\bconflicts?\b/i.test(message) ? 'Conflict' : 'ApplyFailed', message };
  }
  const degraded = condition(conds, 'Degraded');
  if (degraded?.status === 'True') return { state: 'ApplyFailed', message: degraded.message || degraded.reason };
  const available = condition(conds, 'Available');
  if (available?.status !== 'True') return { state: 'Applied', message: available ? `${available.reason}: ${available.message}` : 'availability not reported yet' };
  const why = unhealthy(w);
  return why ? { state: 'Applied', message: why } : { state: 'Available' };
}

/** A broken object of a destination: which, in what state, why. */
export interface BrokenObject {
  group: string;
  resource: string;
  namespace?: string;
  name: string;
  state: ObjectState;
  message?: string;
}

/** One destination of a policy: its readiness, how many of its objects are in each state, the first broken ones. */
export interface DestinationStatus {
  clusterId: string;
  ready: boolean;
  objects: number;
  states: Partial<Record<ObjectState, number>>;
  brokenObjects?: BrokenObject[];
}

/** The destinations of one policy: its clusters and, for each, the objects it sends there. */
export function destinationStatuses(clusters: readonly string[], objectsIn: (cluster: string) => readonly ObjectIdentity[],
  outcome: (cluster: string, id: ObjectIdentity) => ObjectOutcome, readiness: (cluster: string) => { ready: boolean }): DestinationStatus[] {
  return [...clusters].sort().map((clusterId) => {
    const states: Partial<Record<ObjectState, number>> = {};
    const broken: BrokenObject[] = [];
    const ids = objectsIn(clusterId);
    for (const id of ids) {
      const o = outcome(clusterId, id);
      states[o.state] = (states[o.state] ?? 0) + 1;
      if (o.state !== 'Available' && broken.length < MAX_BROKEN_OBJECTS) {
        broken.push({ group: id.group, resource: id.resource, ...(id.namespace ? { namespace: id.namespace } : {}), name: id.name, state: o.state, ...(o.message ? { message: o.message } : {}) });
      }
    }
    return { clusterId, ready: readiness(clusterId).ready, objects: ids.length, states, ...(broken.length > 0 ? { brokenObjects: broken } : {}) };
  });
}

/** Ready: every object Available in every destination. The message says what is not, briefly. */
export function readyCondition(dests: readonly DestinationStatus[]): { status: 'True' | 'False'; reason: 'Available' | 'Unavailable'; message: string } {
  const total = dests.reduce((n, d) => n + d.objects, 0);
  const available = dests.reduce((n, d) => n + (d.states.Available ?? 0), 0);
  if (available === total) {
    return { status: 'True', reason: 'Available', message: total === 0 ? 'no object is selected for any cluster' : `all ${total} placements are available` };
  }
  const firsts = dests.flatMap((d) => (d.brokenObjects ?? []).slice(0, 1).map((b) => `${d.clusterId}: ${b.resource}${b.group ? `.${b.group}` : ''} ${b.namespace ? `${b.namespace}/` : ''}${b.name} ${b.state}${b.message ? ` (${b.message})` : ''}`));
  return { status: 'False', reason: 'Unavailable', message: `${total - available} of ${total} placements are not available; ${firsts.slice(0, 3).join('; ')}` };
}
