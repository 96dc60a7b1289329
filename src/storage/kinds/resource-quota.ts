// ResourceQuota: stored denatured, so that it blocks no create in the WDS; renatured in the WECs.
import { byteOrder, obj, str } from '../printing/go-json.js';
import { AGE, age, column, NAME, nameOf } from '../printing/printer.js';
import type { KindFacts } from './kind.js';

export const resourceQuota: KindFacts = {
  group: '',
  resource: 'resourcequotas',
  printer: {
    columns: [
      NAME,
      column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
      column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use ' +
        'independent of contention on the node.'),
      AGE,
    ],
    cells: (o, now) => {
      const status = obj(o.status);
      const hard = obj(status?.hard) ?? {};
      const used = obj(status?.used) ?? {};
      const requests: string[] = [];
      const limits: string[] = [];
      for (const resource of Object.keys(hard).sort(byteOrder)) {
        // Quantities are printed as given: kube-apiserver returns them canonical, as Quantity.String() does.
        // An absent used amount is the zero Quantity, "0".
        const entry = `${resource}: ${str(used[resource]) || '0'}/${str(hard[resource])}`;
        const pieces = resource.split('.');
        (pieces.length > 1 && pieces[0] === 'limits' ? limits : requests).push(entry);
      }
      return [nameOf(o), requests.join(', '), limits.join(', '), age(o, now)];
    },
  },
};
