// KubeStellar's object test (api/control/v1alpha1 DownsyncObjectTest), shared by the WDS's
// downsync resolution (src/controllers/model/resolution.ts) and the agent's upsync (src/agent/upsync):
// - apiGroup: absent (undefined or null) matches every group, "" is the core group (upsync
//   callers pass "" for absent: there absent means core);
// - resources, objectNames: empty or "*" match all, else the list must hold the object's;
// - namespaces: empty or "*" match all ("*" is the only way to match a cluster-scoped object
//   once the list is non-empty), else the list must hold the object's namespace;
// - namespaceSelectors: empty matches all; a namespaced object needs one matching its
//   Namespace's labels, a cluster-scoped one needs one that is `{}`;
// - objectSelectors: empty matches all, else one must match the object's labels.
// Pure functions; malformed selectors throw LabelSelectorError.
import { isEmptySelector, matchesLabelSelector, type LabelSelector, type Labels } from './label-selector.js';

/** The fields of one object test (a downsync clause has these and more). */
export interface ObjectTest {
  apiGroup?: string | null;
  resources?: string[];
  namespaces?: string[];
  namespaceSelectors?: LabelSelector[];
  objectNames?: string[];
  objectSelectors?: LabelSelector[];
}

/** What an object test looks at of one object. */
export interface SelectedObjectRef {
  group: string;
  resource: string;
  /** '' for cluster-scoped. */
  namespace: string;
  name: string;
  labels: Labels;
}

/** Absent, empty or "*" match all; else the list must hold value. */
export const listMatches = (list: readonly string[] | undefined, value: string): boolean =>
  !list || list.length === 0 || list.includes('*') || list.includes(value);

/** Whether one clause selects the object; `namespaceLabels` are the labels of its Namespace. */
export function clauseMatches(c: ObjectTest, obj: SelectedObjectRef, namespaceLabels: Labels | undefined): boolean {
  if (c.apiGroup !== undefined && c.apiGroup !== null && c.apiGroup !== obj.group) return false;
  if (!listMatches(c.resources, obj.resource)) return false;
  if (!listMatches(c.objectNames, obj.name)) return false;
  const namespaces = c.namespaces ?? [];
  if (namespaces.length > 0 && !namespaces.includes('*') && (obj.namespace === '' || !namespaces.includes(obj.namespace))) return false;
  const nsSelectors = c.namespaceSelectors ?? [];
  if (nsSelectors.length > 0) {
    const ok = obj.namespace === ''
      ? nsSelectors.some(isEmptySelector)
      : nsSelectors.some((s) => matchesLabelSelector(s, namespaceLabels ?? {}));
    if (!ok) return false;
  }
  const objSelectors = c.objectSelectors ?? [];
  if (objSelectors.length > 0 && !objSelectors.some((s) => matchesLabelSelector(s, obj.labels))) return false;
  return true;
}
