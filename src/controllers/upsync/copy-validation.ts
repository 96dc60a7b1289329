// What serve believes of an agent's copy (pure). The edge is less trusted than the center: an
// agent may write any UpsyncedObject into its own mailbox, so serve shows a copy only when
// - it is well formed: `source` names a resource as Kubernetes would (group a DNS subdomain or
//   core, resource a DNS label: no dots, so `<resource>.<group>` keys are unambiguous), not one of
//   the groups the view hides (control, denatured, view.kubestellar.io: a forged
//   `view.kubestellar.io/upsyncedobjects` would be authorized as a right every view user holds);
//   and the copied object is the object `source` says (kind, apiVersion, name, namespace), since
//   the view authorizes on `source` and shows `object`;
// - a request of its WDS in that mailbox, of a policy the copy names, selects it as far as serve
//   can tell: its resource named by a clause (or, for `associatedWith: downsync`, a kind owners are
//   followed through, in a namespace the policy downsyncs to), its namespace, name and labels
//   passing the clause (namespaceSelectors need the WEC's Namespace labels, which only the agent
//   has: not checked here), and Secrets only by name, never a service-account or bootstrap token.
// `policiesSelecting` returns the copy's policies that pass; none: not shown.
import { isDNS1123Label, isDNS1123Subdomain } from '../../kube/names.js';
import { clauseMatches } from '../../kube/object-selection.js';
import type { KubeObject } from '../../kube/objects.js';
import { isNeverSentSecret } from '../../kube/system-secrets.js';
import { ASSOCIATED_RESOURCES, type UpsyncClause, type UpsyncedObject, type UpsyncRequestSpec } from '../../kube/upsync-api.js';
import { HIDDEN_GROUPS } from '../../storage/kinds/project-groups.js';

const ASSOCIATED: ReadonlySet<string> = new Set(ASSOCIATED_RESOURCES);

const VERSION = /^v[0-9]+((alpha|beta)[0-9]+)?$/;

/** Whether a copy is well formed and says what it holds (see the header). */
export function wellFormed(c: UpsyncedObject): boolean {
  const s = c.source as Partial<UpsyncedObject['source']> | undefined;
  if (!s || typeof s !== 'object') return false;
  const { group, version, resource, kind, namespace, name } = s;
  if (typeof group !== 'string' || (group !== '' && !isDNS1123Subdomain(group)) || HIDDEN_GROUPS.has(group)) return false;
  if (typeof version !== 'string' || !VERSION.test(version)) return false;
  if (typeof resource !== 'string' || !isDNS1123Label(resource)) return false;
  if (typeof kind !== 'string' || !/^[A-Za-z][A-Za-z0-9]{0,62}$/.test(kind)) return false;
  if (typeof namespace !== 'string' || (namespace !== '' && !isDNS1123Label(namespace))) return false;
  if (typeof name !== 'string' || name === '' || name.length > 253) return false;
  const o = c.object as KubeObject | undefined;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return false;
  const apiVersion = group ? `${group}/${version}` : version;
  return o.apiVersion === apiVersion && o.kind === kind && o.metadata?.name === name && (o.metadata?.namespace ?? '') === namespace;
}

const isSecret = (c: UpsyncedObject) => c.source.group === '' && c.source.resource === 'secrets';

/** Whether one clause of a request selects the copy, as far as serve can tell. */
export function clauseSelects(clause: UpsyncClause, spec: UpsyncRequestSpec, c: UpsyncedObject): boolean {
  const s = c.source;
  const labels = (c.object.metadata?.labels ?? {}) as Record<string, string>;
  const ref = { group: s.group, resource: s.resource, namespace: s.namespace, name: s.name, labels };
  // namespaceSelectors need the WEC's Namespace labels: the agent's to judge.
  const test = { ...clause, namespaceSelectors: undefined };
  let selected = false;
  if ((clause.resources?.length ?? 0) > 0) {
    selected = !clause.resources!.includes('*') && clauseMatches({ ...test, apiGroup: clause.apiGroup ?? '' }, ref, undefined);
  }
  if (!selected && clause.associatedWith === 'downsync' && ASSOCIATED.has(`${s.group}|${s.resource}`)) {
    const namespaces = new Set((spec.downsynced ?? []).map((d) => d.namespace));
    selected = namespaces.has(s.namespace) && clauseMatches({ ...test, apiGroup: null, resources: undefined }, ref, undefined);
  }
  if (!selected) return false;
  if (isSecret(c)) return (clause.objectNames ?? []).includes(s.name) && !isNeverSentSecret(c.object);
  return true;
}

/** The copy's policies whose request (by `requestOf`) selects it, sorted; none when it is not well formed. */
export function policiesSelecting(c: UpsyncedObject, requestOf: (policy: string) => UpsyncRequestSpec | undefined): string[] {
  if (!wellFormed(c) || !Array.isArray(c.policies)) return [];
  const out = new Set<string>();
  for (const p of c.policies) {
    if (typeof p !== 'string') continue;
    const spec = requestOf(p);
    if (spec && (spec.clauses ?? []).some((clause) => clauseSelects(clause, spec, c))) out.add(p);
  }
  return [...out].sort();
}
