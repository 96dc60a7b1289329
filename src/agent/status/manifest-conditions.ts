// Per-manifest conditions as OCM's work agent v1.2.0 sets them: Applied (manifestwork_reconciler),
// Available and StatusFeedbackSynced (availablestatus controller, objectreader), and the results of
// conditionRules (conditions/reader). lastTransitionTime is kept from the previous condition of
// the same type while its status is unchanged (meta.SetStatusCondition); StatusFeedbackSynced is
// renewed when the values change, as OCM does.
import type { KubeObject } from '../../kube/objects.js';
import type { Condition, ConditionRule, FeedbackValue, ManifestConfigOption } from '../../kube/ocm-api.js';
import { feedbackOf } from './status-feedback.js';
import { splitApiVersion } from '../../kube/api-version.js';
import { setCondition, type NewCondition } from '../../kube/conditions.js';

export function appliedCondition(error: string | undefined, generation: number | undefined): NewCondition {
  return error === undefined
    ? { type: 'Applied', status: 'True', reason: 'AppliedManifestComplete', message: 'Apply manifest complete', observedGeneration: generation }
    : { type: 'Applied', status: 'False', reason: 'AppliedManifestFailed', message: `Failed to apply manifest: ${error}`, observedGeneration: generation };
}

/** How reading the live object went: found, not found, meta incomplete, or failed with a message. */
export type LiveRead = { found: KubeObject } | { notFound: true } | { incomplete: true } | { error: string };

export function availableCondition(read: LiveRead): NewCondition {
  if ('found' in read) return { type: 'Available', status: 'True', reason: 'ResourceAvailable', message: 'Resource is available' };
  if ('notFound' in read) return { type: 'Available', status: 'False', reason: 'ResourceNotAvailable', message: 'Resource is not available' };
  if ('incomplete' in read) return { type: 'Available', status: 'Unknown', reason: 'IncompleteResourceMeta', message: 'Resource meta is incomplete' };
  return { type: 'Available', status: 'Unknown', reason: 'FetchingResourceFailed', message: `Failed to fetch resource: ${read.error}` };
}

/** OCM's well-known condition rules (conditions/rules), evaluated here without CEL. */
function wellKnownCondition(obj: KubeObject, condition: string): NewCondition | undefined {
  const { group, version } = splitApiVersion(obj.apiVersion ?? '');
  const status = (obj.status ?? {}) as Record<string, unknown>;
  if (condition !== 'Complete' || version !== 'v1') return undefined;
  if (group === 'batch' && obj.kind === 'Job') {
    const conds = Array.isArray(status.conditions) ? (status.conditions as Array<Record<string, unknown>>) : [];
    const done = conds.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    return { type: 'Complete', status: done ? 'True' : 'False', reason: 'ConditionRuleEvaluated', message: done ? 'Job is finished' : 'Job is not finished' };
  }
  if (group === '' && obj.kind === 'Pod') {
    const phase = status.phase;
    if (typeof phase !== 'string') {
      return { type: 'Complete', status: 'False', reason: 'ConditionRuleExpressionError', message: "no such key: phase" };
    }
    const done = phase === 'Succeeded' || phase === 'Failed';
    return { type: 'Complete', status: done ? 'True' : 'False', reason: 'ConditionRuleEvaluated', message: `Pod is in phase ${phase}` };
  }
  return undefined;
}

/** Results of `rules` on `obj`; CEL rules are not evaluated by this agent (ConditionRuleInvalid says so). */
export function conditionRuleResults(obj: KubeObject, rules: ConditionRule[] | undefined, generation: number | undefined): NewCondition[] {
  const out: NewCondition[] = [];
  for (const rule of rules ?? []) {
    let c: NewCondition | undefined;
    if (rule.type === 'WellKnownConditions') c = wellKnownCondition(obj, rule.condition);
    else if (rule.type === 'CEL') {
      c = { type: rule.condition, status: 'Unknown', reason: 'ConditionRuleInvalid', message: 'CEL condition rules are not supported by the ksview agent' };
    } else {
      c = { type: rule.condition, status: 'Unknown', reason: 'ConditionRuleInvalid', message: `unrecognized condition rule type ${String(rule.type)}` };
    }
    if (c) out.push({ ...c, observedGeneration: generation });
  }
  return out;
}

export interface ManifestStatusInput {
  /** undefined when applied; the error text when not. */
  applyError: string | undefined;
  read: LiveRead;
  option: ManifestConfigOption | undefined;
  generation: number | undefined;
  previous?: { conditions?: Condition[]; values?: FeedbackValue[] };
  now?: string;
}

/** The manifest's conditions (Applied, Available, StatusFeedbackSynced, rules) and feedback values. */
export function manifestStatus(input: ManifestStatusInput): { conditions: Condition[]; feedback: FeedbackValue[] } {
  const now = input.now ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  let conds = [...(input.previous?.conditions ?? [])];
  conds = setCondition(conds, appliedCondition(input.applyError, input.generation), now);
  conds = setCondition(conds, availableCondition(input.read), now);
  let feedback = input.previous?.values ?? [];
  if ('found' in input.read) {
    const fb = feedbackOf(input.read.found, input.option?.feedbackRules);
    if (JSON.stringify(fb.values) !== JSON.stringify(input.previous?.values ?? [])) {
      conds = conds.filter((c) => c.type !== 'StatusFeedbackSynced');
    }
    conds = setCondition(conds, fb.condition, now);
    feedback = fb.values;
    for (const c of conditionRuleResults(input.read.found, input.option?.conditionRules, input.generation)) conds = setCondition(conds, c, now);
  }
  return { conditions: conds, feedback };
}
