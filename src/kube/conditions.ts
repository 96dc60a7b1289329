// Status conditions as apimachinery's meta.SetStatusCondition keeps them: one per type, its
// lastTransitionTime kept while the status stays the same. Used for ManifestWork conditions (the
// agent) and BindingPolicy conditions (the placement controller).
import type { Condition } from './ocm-api.js';

export type NewCondition = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/** meta.SetStatusCondition on a copy: replaces `c`'s type, keeping lastTransitionTime if the status is the same. */
export function setCondition(list: readonly Condition[], c: NewCondition, now: string): Condition[] {
  const prev = list.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type, status: c.status,
    ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : (c.lastTransitionTime ?? now),
    reason: c.reason, message: c.message,
  };
  return prev ? list.map((x) => (x.type === c.type ? next : x)) : [...list, next];
}
