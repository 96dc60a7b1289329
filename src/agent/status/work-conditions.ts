// ManifestWork status from per-manifest results, as OCM's work agent v1.2.0 aggregates it:
// Applied (manifestwork_reconciler: True only when every manifest's Applied is True),
// Available and condition-rule aggregates (conditions.AggregateManifestConditions), rule
// aggregates of older generations pruned; plus Degraded, which this agent sets when the work
// itself cannot be applied as asked (unknown update strategy, over OCM's 500 KiB limit) — OCM's
// webhook rejects such works, our agent reports them instead of crashing.
import type { Condition, ManifestCondition, ManifestWork, ManifestWorkStatus } from '../../kube/ocm-api.js';
import type { ManifestApplyResult } from '../shared/contract.js';
import { setCondition, type NewCondition } from '../../kube/conditions.js';

/** OCM's default webhook limit on the total size of a work's manifests. */
export const MANIFEST_SIZE_LIMIT = 500 * 1024;

const RULE_PREFIX = 'ConditionRule';

/** Why a work is Degraded as a whole, or undefined: size over the limit, or a manifest with an unknown strategy. */
export function workProblem(work: ManifestWork, results: readonly ManifestApplyResult[]): { reason: string; message: string } | undefined {
  const manifests = work.spec?.workload?.manifests ?? [];
  const size = manifests.reduce((n, m) => n + Buffer.byteLength(JSON.stringify(m)), 0);
  if (size > MANIFEST_SIZE_LIMIT) {
    return { reason: 'ManifestsTooLarge', message: `the size of manifests is ${size} bytes which exceeds the ${MANIFEST_SIZE_LIMIT} limit` };
  }
  const bad = results.find((r) => r.conditions.some((c) => c.type === 'Applied' && c.status === 'False' && c.message.includes('unknown update strategy')));
  if (bad) return { reason: 'UnknownUpdateStrategy', message: `manifest ${bad.ordinal}: ${bad.conditions.find((c) => c.type === 'Applied')!.message}` };
  return undefined;
}

function aggregate(generation: number | undefined, manifests: ManifestCondition[]): NewCondition[] {
  const agg = new Map<string, { t: number; f: number; u: number; message: string }>([['Available', { t: 0, f: 0, u: 0, message: '' }]]);
  for (const m of manifests) {
    for (const c of m.conditions) {
      if (c.type !== 'Available' && !c.reason.startsWith(RULE_PREFIX)) continue;
      const a = agg.get(c.type) ?? { t: 0, f: 0, u: 0, message: '' };
      if (c.status === 'True') a.t++; else if (c.status === 'False') a.f++; else a.u++;
      if (c.message) a.message = c.message;
      agg.set(c.type, a);
    }
  }
  const out: NewCondition[] = [];
  const total = manifests.length;
  for (const [type, a] of agg) {
    if (type === 'Available') {
      if (a.f > 0) out.push({ type, status: 'False', reason: 'ResourcesNotAvailable', message: `${a.f} of ${total} resources are not available`, observedGeneration: generation });
      else if (a.u > 0) out.push({ type, status: 'Unknown', reason: 'ResourcesStatusUnknown', message: `${a.u} of ${total} resources have unknown status`, observedGeneration: generation });
      else if (a.t === 0) out.push({ type, status: 'Unknown', reason: 'ResourcesStatusUnknown', message: 'cannot get any available resource ', observedGeneration: generation });
      else out.push({ type, status: 'True', reason: 'ResourcesAvailable', message: 'All resources are available', observedGeneration: generation });
      continue;
    }
    let status: Condition['status'];
    if (type === 'Progressing') status = a.t > 0 ? 'True' : a.u > 0 ? 'Unknown' : 'False';
    else status = a.f > 0 ? 'False' : a.u > 0 || a.t === 0 ? 'Unknown' : 'True';
    const n = a.t + a.f + a.u;
    out.push({ type, status, reason: 'ConditionRulesAggregated', message: n === 1 && a.message ? a.message : `Aggregated from ${n} manifest conditions`, observedGeneration: generation });
  }
  return out.sort((x, y) => x.type.localeCompare(y.type));
}

export interface WorkStatusOptions {
  /** Push mode, WEC not answering: Available is Unknown with this reason. */
  wecUnreachable?: string;
  now?: string;
}

/** The full ManifestWork status for `results` (one per manifest, any order), keeping transition times from `previous`. */
export function workStatus(work: ManifestWork, results: readonly ManifestApplyResult[], previous: ManifestWorkStatus | undefined,
  opts: WorkStatusOptions = {}): ManifestWorkStatus {
  const now = opts.now ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const generation = work.metadata.generation;
  const manifests: ManifestCondition[] = [...results].sort((a, b) => a.ordinal - b.ordinal).map((r) => ({
    resourceMeta: r.resourceMeta,
    statusFeedback: { values: r.feedback },
    conditions: r.conditions,
  }));
  let conds = [...(previous?.conditions ?? [])];
  const applied = manifests.flatMap((m) => m.conditions.filter((c) => c.type === 'Applied'));
  if (applied.length > 0) {
    conds = setCondition(conds, applied.every((c) => c.status === 'True')
      ? { type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: 'Apply manifest work complete', observedGeneration: generation }
      : { type: 'Applied', status: 'False', reason: 'AppliedManifestWorkFailed', message: 'Failed to apply manifest work', observedGeneration: generation }, now);
  }
  for (const c of aggregate(generation, manifests)) conds = setCondition(conds, c, now);
  if (opts.wecUnreachable) {
    conds = setCondition(conds, { type: 'Available', status: 'Unknown', reason: 'ClusterUnreachable', message: opts.wecUnreachable, observedGeneration: generation }, now);
  }
  const problem = workProblem(work, results);
  conds = problem
    ? setCondition(conds, { type: 'Degraded', status: 'True', reason: problem.reason, message: problem.message, observedGeneration: generation }, now)
    : conds.filter((c) => c.type !== 'Degraded');
  conds = conds.filter((c) => !(c.reason.startsWith(RULE_PREFIX) && c.observedGeneration !== generation));
  return { conditions: conds, resourceStatus: { manifests } };
}
