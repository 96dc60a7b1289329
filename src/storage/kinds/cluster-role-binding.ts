// ClusterRoleBinding: stored denatured, so that it grants nothing in the WDS; renatured in the WECs.
import type { KindFacts } from './kind.js';
import { isBootstrapRbac, RBAC, roleBindingPrinter } from './rbac.js';

export const clusterRoleBinding: KindFacts = {
  group: RBAC,
  resource: 'clusterrolebindings',
  printer: roleBindingPrinter(
    'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the ' +
    'Authorizer must return an error.', 'clusterRoleBinding'),
  isSystemObject: isBootstrapRbac,
  metadataOnlyUpdates: 'gc-fields',
};
