// What a work says about one of its manifests beside the manifest itself: the manifestConfig that
// applies to it (OCM's helper.FindManifestConfiguration) and the status the agent last reported
// for it (OCM's FindManifestCondition). Pure, read by the apply path and by the status refresh.
import type { Condition, FeedbackValue, ManifestConfigOption, ManifestResourceMeta, ManifestWork } from '../../kube/ocm-api.js';

function wildcardMatch(value: string, pattern: string | undefined): boolean {
  const p = pattern ?? '';
  if (p === value) return true;
  if (!p.includes('*')) return false;
  return new RegExp(`^${p.split('*').map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(value);
}

/** OCM's helper.FindManifestConfiguration: first matching non-empty part of every matching config. */
export function findManifestConfig(meta: ManifestResourceMeta, configs: ManifestConfigOption[] | undefined): ManifestConfigOption | undefined {
  const out: ManifestConfigOption = { resourceIdentifier: { group: meta.group, resource: meta.resource, name: meta.name, namespace: meta.namespace } };
  for (const c of configs ?? []) {
    const id = c.resourceIdentifier;
    if ((id.group ?? '') !== meta.group || id.resource !== meta.resource
      || !wildcardMatch(meta.namespace, id.namespace) || !wildcardMatch(meta.name, id.name)) continue;
    if (!out.conditionRules?.length && c.conditionRules?.length) out.conditionRules = c.conditionRules;
    if (!out.feedbackRules?.length && c.feedbackRules?.length) out.feedbackRules = c.feedbackRules;
    if (!out.updateStrategy && c.updateStrategy) out.updateStrategy = c.updateStrategy;
    out.feedbackScrapeType = c.feedbackScrapeType;
  }
  return out.feedbackRules?.length || out.conditionRules?.length || out.updateStrategy ? out : undefined;
}

/** What the agent last reported of one manifest. */
export interface PreviousStatus {
  conditions?: Condition[];
  values?: FeedbackValue[];
}

/** OCM's FindManifestCondition: the previous status of the same resource, ordinal aside. */
export function previousOf(work: ManifestWork, meta: ManifestResourceMeta): PreviousStatus | undefined {
  const key = (m: ManifestResourceMeta) => `${m.group}|${m.version}|${m.kind}|${m.resource}|${m.namespace}|${m.name}`;
  const found = (work.status?.resourceStatus?.manifests ?? []).find((m) => key(m.resourceMeta) === key(meta));
  return found ? { conditions: found.conditions, values: found.statusFeedback?.values } : undefined;
}
