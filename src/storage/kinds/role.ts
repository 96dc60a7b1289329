// Role: stored denatured, so that it grants nothing in the WDS; renatured in the WECs.
// kube-apiserver has no printer for it: the default table convertor's columns.
import { DEFAULT_PRINTER } from '../printing/printer.js';
import type { KindFacts } from './kind.js';
import { isBootstrapRbac, RBAC } from './rbac.js';

export const role: KindFacts = {
  group: RBAC,
  resource: 'roles',
  printer: DEFAULT_PRINTER,
  isSystemObject: isBootstrapRbac,
  metadataOnlyUpdates: 'gc-fields',
};
