// ValidatingAdmissionPolicyBinding: stored denatured, so that it puts no policy in force in the WDS; renatured in the WECs.
import { ADMISSION_REGISTRATION, admissionPolicyBindingPrinter } from './admission-registration.js';
import type { KindFacts } from './kind.js';

export const validatingAdmissionPolicyBinding: KindFacts = {
  group: ADMISSION_REGISTRATION,
  resource: 'validatingadmissionpolicybindings',
  printer: admissionPolicyBindingPrinter,
};
