// What the kinds of rbac.authorization.k8s.io share. Stored denatured, they grant nothing in the
// WDS. Never sent when written natively: the bootstrap RBAC kube-apiserver maintains (`system:`
// names, the rbac-defaults bootstrapping label, the autoupdate annotation) and the project's own
// `kubestellar-view:` objects. A direct write changing only their GC fields is not judged again
// (pkg/registry/rbac.IsOnlyMutatingGCFields): a change of labels is, since labels decide where
// placement sends a grant. The bindings' printer is kube-apiserver v1.33's.
import type { KubeObject } from '../../kube/objects.js';
import { list, obj, str } from '../printing/go-json.js';
import { AGE, age, column, NAME, nameOf, type KindPrinter } from '../printing/printer.js';

export const RBAC = 'rbac.authorization.k8s.io';
const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
const RBAC_AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const PROJECT_PREFIX = 'kubestellar-view:';

/** Bootstrap or project RBAC written natively: the WDS's own. */
export function isBootstrapRbac(o: KubeObject, direct: boolean): boolean {
  if (!direct) return false;
  const meta = o.metadata ?? {};
  const name = meta.name ?? '';
  return name.startsWith('system:') || name.startsWith(PROJECT_PREFIX)
    || meta.labels?.[BOOTSTRAP_LABEL] === 'rbac-defaults' || meta.annotations?.[RBAC_AUTOUPDATE] !== undefined;
}

/** rbac.SubjectsStrings joined as the printer does: users, groups, service accounts. */
function subjectsCells(o: KubeObject): string[] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of list(o.subjects).map((x) => obj(x) ?? {})) {
    if (s.kind === 'ServiceAccount') sas.push(`${str(s.namespace)}/${str(s.name)}`);
    else if (s.kind === 'User') users.push(str(s.name));
    else if (s.kind === 'Group') groups.push(str(s.name));
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

export function roleBindingPrinter(roleRefDoc: string, kind: string): KindPrinter {
  return {
    columns: [
      NAME, column('Role', 'string', roleRefDoc), AGE,
      column('Users', 'string', `Users in the ${kind}`, 1),
      column('Groups', 'string', `Groups in the ${kind}`, 1),
      column('ServiceAccounts', 'string', `ServiceAccounts in the ${kind}`, 1),
    ],
    cells: (o, now) => {
      const ref = obj(o.roleRef) ?? {};
      return [nameOf(o), `${str(ref.kind)}/${str(ref.name)}`, age(o, now), ...subjectsCells(o)];
    },
  };
}
