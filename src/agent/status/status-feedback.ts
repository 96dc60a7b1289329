// statusFeedback values of one live object as OCM's work agent v1.2.0 reads them
// (pkg/work/spoke/statusfeedback): WellKnownStatus rules per kind and JSONPaths rules; the first
// match of a path; Integer/String/Boolean values only (RawFeedbackJsonString is off by default, so
// any other type is an error, as in OCM); a path that finds nothing gives no value.
import type { KubeObject } from '../../kube/objects.js';
import type { Condition, FeedbackRule, FeedbackValue, JsonPathRule } from '../../kube/ocm-api.js';
import { evalJsonPath } from './jsonpath.js';
import { splitApiVersion } from '../../kube/api-version.js';

const WELL_KNOWN: Record<string, JsonPathRule[]> = {
  'apps/v1/Deployment': [
    { name: 'ReadyReplicas', path: '.status.readyReplicas' },
    { name: 'Replicas', path: '.status.replicas' },
    { name: 'AvailableReplicas', path: '.status.availableReplicas' },
  ],
  'batch/v1/Job': [
    { name: 'JobComplete', path: '.status.conditions[?(@.type=="Complete")].status' },
    { name: 'JobSucceeded', path: '.status.succeeded' },
  ],
  '/v1/Pod': [
    { name: 'PodReady', path: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'PodPhase', path: '.status.phase' },
  ],
  'apps/v1/DaemonSet': [
    { name: 'NumberReady', path: '.status.numberReady' },
    { name: 'DesiredNumberScheduled', path: '.status.desiredNumberScheduled' },
    { name: 'NumberAvailable', path: '.status.numberAvailable' },
  ],
};

/** Kinds OCM's agent has a WellKnownStatus rule for (group, version v1). */
export function wellKnownStatusKinds(): Array<{ group: string; kind: string }> {
  return Object.keys(WELL_KNOWN).map((k) => { const [group, , kind] = k.split('/'); return { group: group!, kind: kind! }; });
}

export function wellKnownPaths(apiVersion: string, kind: string): JsonPathRule[] {
  const { group, version } = splitApiVersion(apiVersion);
  return WELL_KNOWN[`${group}/${version}/${kind}`] ?? [];
}

function goTypeName(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'number') return 'float64';
  if (v && typeof v === 'object') return 'map[string]interface {}';
  return typeof v;
}

function valueByPath(name: string, path: string, obj: KubeObject): FeedbackValue | undefined {
  let results: unknown[];
  try {
    results = evalJsonPath(obj, path);
  } catch (err) {
    throw new Error(`failed to parse json path ${path} of ${name} with error: ${(err as Error).message}`);
  }
  const v = results[0];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return { name, fieldValue: { type: 'Integer', integer: v } };
  if (typeof v === 'string') return { name, fieldValue: { type: 'String', string: v } };
  if (typeof v === 'boolean') return { name, fieldValue: { type: 'Boolean', boolean: v } };
  throw new Error(`the type ${goTypeName(v)} of the value for ${name} is not found`);
}

/** Values of `rules` on `obj`, and the StatusFeedbackSynced condition (no lastTransitionTime yet). */
export function feedbackOf(obj: KubeObject, rules: FeedbackRule[] | undefined): { values: FeedbackValue[]; condition: Omit<Condition, 'lastTransitionTime'> } {
  const values: FeedbackValue[] = [];
  if (!rules || rules.length === 0) {
    return { values, condition: { type: 'StatusFeedbackSynced', status: 'True', reason: 'NoStatusFeedbackSynced', message: '' } };
  }
  const errs: string[] = [];
  const apiVersion = obj.apiVersion ?? '';
  const kind = obj.kind ?? '';
  for (const rule of rules) {
    let paths: JsonPathRule[] = [];
    if (rule.type === 'WellKnownStatus') {
      paths = wellKnownPaths(apiVersion, kind);
      if (paths.length === 0) {
        const { group, version } = splitApiVersion(apiVersion);
        errs.push(`cannot find the wellknown statuses for resource with gvk ${group ? `${group}/` : '/'}${version}, Kind=${kind}`);
      }
    } else if (rule.type === 'JSONPaths') {
      for (const p of rule.jsonPaths ?? []) {
        if (p.version && splitApiVersion(apiVersion).version !== p.version) {
          errs.push(`version set in the path ${p.name} is not matched for the related resource`);
        } else paths.push(p);
      }
    }
    for (const p of paths) {
      try {
        const v = valueByPath(p.name, p.path, obj);
        if (v) values.push(v);
      } catch (err) { errs.push((err as Error).message); }
    }
  }
  if (errs.length > 0) {
    const agg = errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
    return { values, condition: { type: 'StatusFeedbackSynced', status: 'False', reason: 'StatusFeedbackSyncFailed', message: `Sync status feedback failed with error ${agg}` } };
  }
  return { values, condition: { type: 'StatusFeedbackSynced', status: 'True', reason: 'StatusFeedbackSynced', message: '' } };
}
