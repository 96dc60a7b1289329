// RoleBinding: stored denatured, so that it grants nothing in the WDS; renatured in the WECs.
import type { KindFacts } from './kind.js';
import { isBootstrapRbac, RBAC, roleBindingPrinter } from './rbac.js';

export const roleBinding: KindFacts = {
  group: RBAC,
  resource: 'rolebindings',
  printer: roleBindingPrinter(
    'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the ' +
    'RoleRef cannot be resolved, the Authorizer must return an error.', 'roleBinding'),
  isSystemObject: isBootstrapRbac,
  metadataOnlyUpdates: 'gc-fields',
};
