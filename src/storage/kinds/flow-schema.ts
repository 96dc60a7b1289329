// FlowSchema: stored denatured, so that it classifies no request of the WDS; renatured in the WECs.
// kube-apiserver prints a list of them by matching precedence, then name.
import type { KubeObject } from '../../kube/objects.js';
import { list, num, obj, spec, str } from '../printing/go-json.js';
import { AGE, age, column, NAME, nameOf } from '../printing/printer.js';
import { FLOWCONTROL, maintainedByKubeApiserver } from './flowcontrol.js';
import type { KindFacts } from './kind.js';

const precedence = (o: KubeObject) => Number((o.spec as { matchingPrecedence?: number } | undefined)?.matchingPrecedence ?? 0);
const nameKey = (o: KubeObject) => String(o.metadata?.name ?? '');

export const flowSchema: KindFacts = {
  group: FLOWCONTROL,
  resource: 'flowschemas',
  printer: {
    columns: [
      NAME,
      column('PriorityLevel', 'string', '`name` is the name of the priority level configuration being referenced Required.'),
      column('MatchingPrecedence', 'string', '`matchingPrecedence` is used to choose among the FlowSchemas that match a ' +
        'given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be ' +
        'logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note ' +
        'that if the precedence is not specified, it will be set to 1000 as default.'),
      column('DistinguisherMethod', 'string', '`distinguisherMethod` defines how to compute the flow distinguisher ' +
        'for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will ' +
        'always be the empty string.'),
      AGE,
      column('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
    ],
    cells: (o, now) => {
      const s = spec(o);
      const dm = obj(s.distinguisherMethod);
      const dangling = list(obj(o.status)?.conditions).map(obj).find((c) => c?.type === 'Dangling');
      return [
        nameOf(o), str(obj(s.priorityLevelConfiguration)?.name), num(s.matchingPrecedence),
        dm ? str(dm.type) : '<none>', age(o, now), dangling ? str(dangling.status) : '?',
      ];
    },
  },
  tableOrder: (items) => [...items].sort((a, b) =>
    precedence(a) - precedence(b) || (nameKey(a) < nameKey(b) ? -1 : nameKey(a) > nameKey(b) ? 1 : 0)),
  isSystemObject: maintainedByKubeApiserver,
};
