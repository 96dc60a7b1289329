// ServiceAccount: stored denatured, so that no token is made for it in the WDS; renatured in the
// WECs. The `default` ServiceAccount of every namespace is the cluster's own: never sent.
import { list } from '../printing/go-json.js';
import { AGE, age, column, NAME, nameOf } from '../printing/printer.js';
import type { KindFacts } from './kind.js';

export const serviceAccount: KindFacts = {
  group: '',
  resource: 'serviceaccounts',
  printer: {
    columns: [
      NAME,
      column('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using ' +
        'this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a ' +
        '"kubernetes.io/enforce-mountable-secrets" annotation set to "true". The ' +
        '"kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces ' +
        'to isolate access to mounted secrets. This field should not be used to find auto-generated service account ' +
        'token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest ' +
        'API, or service account token secrets can be manually created. More info: ' +
        'https://kubernetes.io/docs/concepts/configuration/secret'),
      AGE,
    ],
    cells: (o, now) => [nameOf(o), list(o.secrets).length, age(o, now)],
  },
  isSystemObject: (o) => o.metadata?.name === 'default',
};
