// What a WDS object should show of the state its WECs report (pure): KubeStellar's "singleton
// status" and "multi-WEC aggregated status" rules, applied to an object's placement and the
// WorkStatuses of its clusters.
// - Singleton return is requested when some selecting policy asks wantSingletonReportedState; its
//   qualified clusters are the clusters of those policies. While requested, the label
//   kubestellar.io/executing-count holds their number; otherwise the label is absent.
// - Multi-WEC return (wantMultiWECReportedState) qualifies the clusters of the policies asking it.
// - One qualified cluster (singleton, multi-WEC or both): its reported .status is the object's.
//   More than one multi-WEC cluster: the combination over the multi-WEC clusters (./combine.ts;
//   one not reported yet counts with an empty status), for the kinds that have one. Otherwise
//   nothing returned stays in .status.
// - The annotation view.kubestellar.io/status-returned-from names where the shown status came from
//   (a cluster, or the clusters combined); it is also how a status returned earlier is known, so
//   that it is cleared when return stops and a status the WDS itself keeps is never touched.
// - Never for the kinds whose status the WDS's own control plane keeps and acts on
//   (WDS_KEPT_STATUS): a CustomResourceDefinition's acceptedNames and conditions decide what the
//   WDS serves, an APIService's Available condition whether the WDS proxies its group. A cluster's
//   report written there (as the server, on the status subresource) would let a hostile WEC
//   unserve a resource or an API group of the WDS. Their status is left as the WDS has it.
import type { JsonObject } from '../../kube/objects.js';
import type { WorkStatus } from '../../kube/ocm-api.js';
import { combineStatuses, combinesKind } from './combine.js';


/** `<group>/<Kind>` of the kinds whose .status is the WDS's own: never returned from a cluster. */
export const WDS_KEPT_STATUS: ReadonlySet<string> = new Set(['apiextensions.k8s.io/CustomResourceDefinition', 'apiregistration.k8s.io/APIService']);

const keptByWds = (k: { group: string; kind: string }): boolean => WDS_KEPT_STATUS.has(`${k.group}/${k.kind}`);

/** Each selecting policy's modulation of the object and the clusters it picks. */
export type PolicyReturn = Readonly<Record<string, { wantSingletonReportedState: boolean; wantMultiWECReportedState: boolean; clusters: readonly string[] }>>;

export interface ReturnRequest {
  singleton: boolean;
  /** Sorted. */
  singletonClusters: string[];
  multi: boolean;
  /** Sorted. */
  multiClusters: string[];
}

export function returnRequest(byPolicy: PolicyReturn | undefined): ReturnRequest {
  const single = new Set<string>();
  const multi = new Set<string>();
  let singleton = false;
  let wantMulti = false;
  for (const p of Object.values(byPolicy ?? {})) {
    if (p.wantSingletonReportedState) {
      singleton = true;
      for (const c of p.clusters) single.add(c);
    }
    if (p.wantMultiWECReportedState) {
      wantMulti = true;
      for (const c of p.clusters) multi.add(c);
    }
  }
  return { singleton, singletonClusters: [...single].sort(), multi: wantMulti, multiClusters: [...multi].sort() };
}

/** Where the returned status comes from. */
export type ReturnPlan =
  | { kind: 'none'; why: string }
  | { kind: 'copy'; cluster: string }
  | { kind: 'combine'; clusters: string[] };

export function returnPlan(req: ReturnRequest, objectKind: { group: string; kind: string }): ReturnPlan {
  if (!req.singleton && !req.multi) return { kind: 'none', why: 'not requested' };
  if (keptByWds(objectKind)) return { kind: 'none', why: `the status of a ${objectKind.kind} is the WDS's own` };
  const qualified = [...new Set([...(req.singleton ? req.singletonClusters : []), ...(req.multi ? req.multiClusters : [])])].sort();
  if (req.multi && req.multiClusters.length > 1) {
    return combinesKind(objectKind) ? { kind: 'combine', clusters: req.multiClusters }
      : { kind: 'none', why: `the status of a ${objectKind.kind} is not combined over clusters` };
  }
  if (qualified.length === 1) return { kind: 'copy', cluster: qualified[0]! };
  return { kind: 'none', why: `${qualified.length} clusters qualify` };
}

/**
 * A WorkStatus's .status in the WDS object's terms. The WEC's observedGeneration counts the WEC
 * object's generations; when the agent says which WDS generation it holds (statusDetails, from the
 * work's source-generation annotation), observedGeneration becomes that generation once it is in
 * effect in the WEC, and the one before it until then, so that a client comparing it with the WDS
 * object's generation (`kubectl rollout status`) waits exactly as long as it should. Without
 * statusDetails (KubeStellar's and OCM's agents) the WEC's number stays. Never mutates `ws`.
 */
export function statusInWdsTerms(ws: WorkStatus): JsonObject | undefined {
  const status = ws.status;
  const d = ws.statusDetails;
  if (!status || typeof status.observedGeneration !== 'number' || !d || !Number.isSafeInteger(d.lastGeneration) || d.lastGeneration < 1) return status;
  const observedGeneration = d.lastGenerationIsApplied ? d.lastGeneration : d.lastGeneration - 1;
  return observedGeneration === status.observedGeneration ? status : { ...status, observedGeneration };
}

/** What the object should carry: the label, the annotation, and .status (undefined: leave it as it is). */
export interface ReturnedState {
  executingCount: string | undefined;
  returnedFrom: string | undefined;
  status: JsonObject | undefined;
}

/**
 * The state to show, from the plan, the reported statuses by cluster (a cluster with no
 * WorkStatus yet is absent) and whether the object carries a status returned earlier.
 */
export function returnedState(req: ReturnRequest, plan: ReturnPlan, reported: ReadonlyMap<string, JsonObject>, objectKind: { group: string; kind: string }, returnedBefore: boolean): ReturnedState {
  const executingCount = req.singleton ? String(req.singletonClusters.length) : undefined;
  // A status the WDS keeps is never written, not even cleared: its own controllers rewrite it.
  const cleared: ReturnedState = { executingCount, returnedFrom: undefined, status: returnedBefore && !keptByWds(objectKind) ? {} : undefined };
  if (plan.kind === 'copy') {
    const status = reported.get(plan.cluster);
    return status ? { executingCount, returnedFrom: plan.cluster, status } : cleared;
  }
  if (plan.kind === 'combine') {
    const present = plan.clusters.filter((c) => reported.has(c));
    if (present.length === 0) return cleared;
    // A cluster that has not reported yet counts, with nothing: no condition is True everywhere
    // and no Job complete until it reports.
    return { executingCount, returnedFrom: present.join(','), status: combineStatuses(objectKind, plan.clusters.map((c) => reported.get(c) ?? {})) };
  }
  return cleared;
}
