// The kinds the view stores denatured by default (docs/view.md, "Kinds in the view"), one file each
// in this folder: adding a kind is its file and one line in DENATURED_KINDS. Their order is the
// default of `ksview serve --denatured` (../kind-categories.ts DEFAULT_DENATURED), in which they
// are discovered and their CRDs applied. A kind configured with --denatured that is not listed
// here is served all the same, with the defaults of ../denatured-strategy.ts. The facts are the
// native kind's whether or not it is configured denatured (its system objects stay the WDS's own).
import type { KindPrinter } from '../printing/printer.js';
import { apiService } from './api-service.js';
import { clusterRoleBinding } from './cluster-role-binding.js';
import { clusterRole } from './cluster-role.js';
import { flowSchema } from './flow-schema.js';
import type { KindFacts } from './kind.js';
import { limitRange } from './limit-range.js';
import { mutatingAdmissionPolicyBinding } from './mutating-admission-policy-binding.js';
import { mutatingAdmissionPolicy } from './mutating-admission-policy.js';
import { mutatingWebhookConfiguration } from './mutating-webhook-configuration.js';
import { priorityLevelConfiguration } from './priority-level-configuration.js';
import { resourceQuota } from './resource-quota.js';
import { roleBinding } from './role-binding.js';
import { role } from './role.js';
import { serviceAccount } from './service-account.js';
import { validatingAdmissionPolicyBinding } from './validating-admission-policy-binding.js';
import { validatingAdmissionPolicy } from './validating-admission-policy.js';
import { validatingWebhookConfiguration } from './validating-webhook-configuration.js';

export const DENATURED_KINDS: readonly KindFacts[] = [
  mutatingWebhookConfiguration,
  validatingWebhookConfiguration,
  validatingAdmissionPolicy,
  validatingAdmissionPolicyBinding,
  mutatingAdmissionPolicy,
  mutatingAdmissionPolicyBinding,
  apiService,
  flowSchema,
  priorityLevelConfiguration,
  clusterRole,
  clusterRoleBinding,
  role,
  roleBinding,
  limitRange,
  resourceQuota,
  serviceAccount,
];

const BY_RESOURCE = new Map(DENATURED_KINDS.map((k) => [`${k.resource}.${k.group}`, k]));

/** The facts of a native kind (group, plural resource), or undefined when it is none of DENATURED_KINDS. */
export function kindFacts(group: string, resource: string): KindFacts | undefined {
  return BY_RESOURCE.get(`${resource}.${group}`);
}

/**
 * The printer of a native kind; undefined when the kind has none here. Kinds kube-apiserver prints
 * with its default table convertor (roles, clusterroles, limitranges) have DEFAULT_PRINTER.
 */
export function printerFor(group: string, resource: string): KindPrinter | undefined {
  return kindFacts(group, resource)?.printer;
}

