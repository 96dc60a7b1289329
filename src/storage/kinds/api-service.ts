// APIService (apiregistration.k8s.io): stored denatured, so that it routes no group of the WDS to
// another server; renatured in the WECs. Printed as k8s.io/kube-aggregator's REST.ConvertToTable.
// Never sent, when written natively: the WDS's local ones (no service: its built-in and CRD
// groups) and those of kubestellar-view's own groups.
import { list, obj, spec, str } from '../printing/go-json.js';
import { AGE, age, column, NAME, nameOf } from '../printing/printer.js';
import type { KindFacts } from './kind.js';
import { HIDDEN_GROUPS } from './project-groups.js';

export const apiService: KindFacts = {
  group: 'apiregistration.k8s.io',
  resource: 'apiservices',
  printer: {
    columns: [
      NAME,
      column('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
      column('Available', 'string', 'Whether this service is available.'),
      AGE,
    ],
    cells: (o, now) => {
      const svc = obj(spec(o).service);
      const service = svc ? `${str(svc.namespace)}/${str(svc.name)}` : 'Local';
      let available = 'Unknown';
      const cond = list(obj(o.status)?.conditions).map(obj).find((c) => c?.type === 'Available');
      if (cond) {
        const status = str(cond.status);
        const reason = str(cond.reason);
        available = status !== 'True' && reason !== '' ? `${status} (${reason})` : status;
      }
      return [nameOf(o), service, available, age(o, now)];
    },
  },
  isSystemObject: (o, direct) => direct && (!spec(o).service || HIDDEN_GROUPS.has(String(spec(o).group ?? ''))),
};
