// ValidatingAdmissionPolicy: stored denatured, so that it validates nothing in the WDS; renatured
// in the WECs.
import { ADMISSION_REGISTRATION, admissionPolicyPrinter } from './admission-registration.js';
import type { KindFacts } from './kind.js';

export const validatingAdmissionPolicy: KindFacts = {
  group: ADMISSION_REGISTRATION,
  resource: 'validatingadmissionpolicies',
  printer: admissionPolicyPrinter('validations', 'Validations',
    'Validations indicates the number of validation rules defined in this configuration'),
};
