// ValidatingWebhookConfiguration: stored denatured, so that it calls no webhook in the WDS; renatured in the WECs.
import { ADMISSION_REGISTRATION, webhookConfigurationPrinter } from './admission-registration.js';
import type { KindFacts } from './kind.js';

export const validatingWebhookConfiguration: KindFacts = {
  group: ADMISSION_REGISTRATION,
  resource: 'validatingwebhookconfigurations',
  printer: webhookConfigurationPrinter,
};
