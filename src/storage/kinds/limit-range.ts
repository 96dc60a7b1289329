// LimitRange: stored denatured, so that it constrains no pod of the WDS; renatured in the WECs.
// kube-apiserver has no printer for it: the default table convertor's columns.
import { DEFAULT_PRINTER } from '../printing/printer.js';
import type { KindFacts } from './kind.js';

export const limitRange: KindFacts = {
  group: '',
  resource: 'limitranges',
  printer: DEFAULT_PRINTER,
};
