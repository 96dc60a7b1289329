// What the kinds of admissionregistration.k8s.io share: their printers (webhook configurations,
// admission policies, policy bindings), as kube-apiserver v1.33's
// pkg/printers/internalversion/printers.go prints them. Stored denatured, they call no webhook
// and enforce no policy in the WDS.
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import { byteOrder, list, obj, spec, str } from '../printing/go-json.js';
import { AGE, age, column, NAME, nameOf, type KindPrinter } from '../printing/printer.js';

export const ADMISSION_REGISTRATION = 'admissionregistration.k8s.io';

export const webhookConfigurationPrinter: KindPrinter = {
  columns: [NAME, column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), AGE],
  cells: (o, now) => [nameOf(o), list(o.webhooks).length, age(o, now)],
};

const PARAM_KIND = column('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy');

function paramKind(o: KubeObject): string {
  const pk = obj(spec(o).paramKind);
  return pk ? `${str(pk.apiVersion)}/${str(pk.kind)}` : '<unset>';
}

/** Admission policies: how many rules (`spec.<field>`) under the column `title`, and the ParamKind. */
export function admissionPolicyPrinter(field: string, title: string, description: string): KindPrinter {
  return {
    columns: [NAME, column(title, 'integer', description), PARAM_KIND, AGE],
    cells: (o, now) => [nameOf(o), list(spec(o)[field]).length, paramKind(o), age(o, now)],
  };
}

/** The gogo-protobuf String() of a *metav1.LabelSelector, which the binding printers show as is. */
function labelSelectorString(sel: JsonObject): string {
  const labels = obj(sel.matchLabels) ?? {};
  const matchLabels = Object.keys(labels).sort(byteOrder).map((k) => `${k}: ${str(labels[k])},`).join('');
  const matchExpressions = list(sel.matchExpressions).map((e) => {
    const r = obj(e) ?? {};
    const values = list(r.values).map(str).join(' ');
    return `LabelSelectorRequirement{Key:${str(r.key)},Operator:${str(r.operator)},Values:[${values}],},`;
  }).join('');
  return `&LabelSelector{MatchLabels:map[string]string{${matchLabels}},` +
    `MatchExpressions:[]LabelSelectorRequirement{${matchExpressions}},}`;
}

function paramRef(o: KubeObject): string {
  const pr = obj(spec(o).paramRef);
  if (!pr) return '<unset>';
  const name = str(pr.name);
  if (name !== '') {
    // A param without a namespace may be cluster-scoped or not; kube cannot tell here, so `*`.
    const ns = str(pr.namespace);
    return `${ns !== '' ? ns : '*'}/${name}`;
  }
  const sel = obj(pr.selector);
  return sel ? labelSelectorString(sel) : '<unset>';
}

export const admissionPolicyBindingPrinter: KindPrinter = {
  columns: [
    NAME,
    column('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
    column('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
    AGE,
  ],
  cells: (o, now) => [nameOf(o), str(spec(o).policyName), paramRef(o), age(o, now)],
};
