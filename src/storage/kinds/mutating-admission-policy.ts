// MutatingAdmissionPolicy (alpha in 1.33: served only where its feature gate is on, else left out
// of the view): stored denatured, so that it mutates nothing in the WDS; renatured in the WECs.
import { ADMISSION_REGISTRATION, admissionPolicyPrinter } from './admission-registration.js';
import type { KindFacts } from './kind.js';

export const mutatingAdmissionPolicy: KindFacts = {
  group: ADMISSION_REGISTRATION,
  resource: 'mutatingadmissionpolicies',
  printer: admissionPolicyPrinter('mutations', 'Mutations',
    'Mutation indicates the number of mutations rules defined in this configuration'),
};
