// Server-side Table printing (what `kubectl get` shows) for the native kinds the view serves as
// denatured kinds. Contract:
// - printerFor(group, resource) gives exactly the column definitions and the cells kube-apiserver
//   v1.33 produces for that kind: pkg/printers/internalversion/printers.go for most kinds,
//   k8s.io/kube-aggregator's apiservice REST.ConvertToTable for APIServices, and the default
//   table convertor (DEFAULT_PRINTER) for roles, clusterroles and limitranges, which have no printer.
// - cells(obj, now) reads obj as the v1 JSON kube-apiserver returns (defaults applied, quantities
//   canonical) and reproduces Go's zero values for absent fields; it never mutates obj. Ages are
//   duration.HumanDuration(now - creationTimestamp).
// - Server-side printing is always "wide" (printers.GenerateOptions{Wide: true}), so priority-1
//   columns have cells too.
// Column definitions and printers are shared: callers must not mutate them.
import { age as ageSince, GO_ZERO_TIME } from '../../kube/duration.js';
import { isJsonObject } from '../../kube/json.js';
import type { JsonObject, KubeObject } from '../../kube/objects.js';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface KindPrinter<T extends KubeObject = KubeObject> {
  columns: TableColumnDefinition[];
  cells(obj: T, now: Date): unknown[];
}

// metav1.ObjectMeta{}.SwaggerDoc()["name"] and ["creationTimestamp"], as kube-apiserver sends them.
const NAME_DOC = 'Name must be unique within a namespace. Is required when creating resources, although some ' +
  'resources may allow a client to request the generation of an appropriate name automatically. Name is ' +
  'primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: ' +
  'https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATION_TIMESTAMP_DOC = 'CreationTimestamp is a timestamp representing the server time when this object ' +
  'was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may ' +
  'not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. ' +
  'Null for lists. More info: ' +
  'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A column definition (format '' — only Name columns have one, `name`). */
export function column(name: string, type: string, description: string, priority = 0): TableColumnDefinition {
  return { name, type, format: '', description, priority };
}
const NAME = { ...column('Name', 'string', NAME_DOC), format: 'name' };
const AGE = column('Age', 'string', CREATION_TIMESTAMP_DOC);

// ---- Go-compatible reading of untyped JSON: an absent or mistyped field reads as Go's zero value.

function obj(v: unknown): JsonObject | undefined {
  return isJsonObject(v) ? v : undefined;
}
function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}
function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function spec(o: KubeObject): JsonObject {
  return obj(o.spec) ?? {};
}
function nameOf(o: KubeObject): string {
  return str(o.metadata?.name);
}

// ---- Timestamps

function creationTime(o: KubeObject): number {
  const ms = Date.parse(str(o.metadata?.creationTimestamp));
  return Number.isNaN(ms) ? GO_ZERO_TIME : ms;
}

/** time.Time.UTC().Format(time.RFC3339), as metav1.Time serializes: whole seconds, `Z` suffix. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The AGE cell (the aggregator's ConvertToHumanReadableDateType is the same). */
function age(o: KubeObject, now: Date): string {
  return ageSince(str(o.metadata?.creationTimestamp), now.getTime());
}

// Go's sort.Strings order (bytewise), which differs from JS's UTF-16 order only beyond the BMP.
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

// ---- The printers

/** The generic printer kube-apiserver uses for kinds without one (Name, Created At). */
export const DEFAULT_PRINTER: KindPrinter = {
  columns: [NAME, column('Created At', 'date', CREATION_TIMESTAMP_DOC)],
  cells: (o) => [nameOf(o), rfc3339(creationTime(o))],
};

const webhookConfigurationPrinter: KindPrinter = {
  columns: [NAME, column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), AGE],
  cells: (o, now) => [nameOf(o), list(o.webhooks).length, age(o, now)],
};

const PARAM_KIND = column('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy');

function paramKind(o: KubeObject): string {
  const pk = obj(spec(o).paramKind);
  return pk ? `${str(pk.apiVersion)}/${str(pk.kind)}` : '<unset>';
}

/** Admission policies: how many rules (`spec.<field>`) under the column `title`, and the ParamKind. */
function admissionPolicyPrinter(field: string, title: string, description: string): KindPrinter {
  return {
    columns: [NAME, column(title, 'integer', description), PARAM_KIND, AGE],
    cells: (o, now) => [nameOf(o), list(spec(o)[field]).length, paramKind(o), age(o, now)],
  };
}

const validatingAdmissionPolicyPrinter = admissionPolicyPrinter('validations', 'Validations',
  'Validations indicates the number of validation rules defined in this configuration');
const mutatingAdmissionPolicyPrinter = admissionPolicyPrinter('mutations', 'Mutations',
  'Mutation indicates the number of mutations rules defined in this configuration');

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

const admissionPolicyBindingPrinter: KindPrinter = {
  columns: [
    NAME,
    column('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
    column('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
    AGE,
  ],
  cells: (o, now) => [nameOf(o), str(spec(o).policyName), paramRef(o), age(o, now)],
};

const apiServicePrinter: KindPrinter = {
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
};

const flowSchemaPrinter: KindPrinter = {
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
};

const priorityLevelConfigurationPrinter: KindPrinter = {
  columns: [
    NAME,
    column('Type', 'string', '`type` indicates whether this priority level is subject to limitation on request ' +
      'execution.  A value of `"Exempt"` means that requests of this priority level are not subject to a limit ' +
      '(and thus are never queued) and do not detract from the capacity made available to other priority ' +
      'levels.  A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and ' +
      '(b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.'),
    column('NominalConcurrencyShares', 'string', '`nominalConcurrencyShares` (NCS) contributes to the computation ' +
      'of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available ' +
      'at this priority level. This is used both for requests dispatched from this priority level as well as ' +
      'requests dispatched from other priority levels borrowing seats from this level. The server\'s concurrency ' +
      'limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\n' +
      'NominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger ' +
      'numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not ' +
      'specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction ' +
      'of a "jail" for this priority level that is used to hold some request(s)'),
    column('Queues', 'string', '`queues` is the number of queues for this priority level. The queues exist ' +
      'independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes ' +
      'shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field ' +
      'has a default value of 64.'),
    column('HandSize', 'string', '`handSize` is a small positive number that configures the shuffle sharding of ' +
      'requests into queues.  When enqueuing a request at this priority level the request\'s flow identifier (a ' +
      'string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the ' +
      'size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be ' +
      'no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate ' +
      'most of the queues).  See the user-facing documentation for more extensive guidance on setting this ' +
      'field.  This field has a default value of 8.'),
    column('QueueLengthLimit', 'string', '`queueLengthLimit` is the maximum number of requests allowed to be ' +
      'waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must ' +
      'be positive.  If not specified, it will be defaulted to 50.'),
    AGE,
  ],
  cells: (o, now) => {
    const s = spec(o);
    let shares: unknown = '<none>';
    let queuing: unknown[] = ['<none>', '<none>', '<none>'];
    const limited = obj(s.limited);
    if (limited) {
      shares = num(limited.nominalConcurrencyShares);
      const q = obj(obj(limited.limitResponse)?.queuing);
      if (q) queuing = [num(q.queues), num(q.handSize), num(q.queueLengthLimit)];
    }
    return [nameOf(o), str(s.type), shares, ...queuing, age(o, now)];
  },
};

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

function roleBindingPrinter(roleRefDoc: string, kind: string): KindPrinter {
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

const resourceQuotaPrinter: KindPrinter = {
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
};

const serviceAccountPrinter: KindPrinter = {
  columns: [
    NAME,
    column('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using ' +
      'this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a ' +
      '"kubernetes.io/enforce-mountable-secrets" annotation set to "true". The ' +
      '"kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces ' +
      'to isolate access to mounted secrets. This field should not be used to find auto-generated service account ' +
      'token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest ' +
      'API, or service account token secrets can be manually created. More info: ' +
      'https://kubernetes.io/docs/concepts/configuration/secret'),
    AGE,
  ],
  cells: (o, now) => [nameOf(o), list(o.secrets).length, age(o, now)],
};

const PRINTERS = new Map<string, KindPrinter>([
  ['admissionregistration.k8s.io/mutatingwebhookconfigurations', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/validatingwebhookconfigurations', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/validatingadmissionpolicies', validatingAdmissionPolicyPrinter],
  ['admissionregistration.k8s.io/validatingadmissionpolicybindings', admissionPolicyBindingPrinter],
  ['admissionregistration.k8s.io/mutatingadmissionpolicies', mutatingAdmissionPolicyPrinter],
  ['admissionregistration.k8s.io/mutatingadmissionpolicybindings', admissionPolicyBindingPrinter],
  ['apiregistration.k8s.io/apiservices', apiServicePrinter],
  ['flowcontrol.apiserver.k8s.io/flowschemas', flowSchemaPrinter],
  ['flowcontrol.apiserver.k8s.io/prioritylevelconfigurations', priorityLevelConfigurationPrinter],
  ['rbac.authorization.k8s.io/clusterroles', DEFAULT_PRINTER],
  ['rbac.authorization.k8s.io/clusterrolebindings', roleBindingPrinter(
    'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the ' +
    'Authorizer must return an error.', 'clusterRoleBinding')],
  ['rbac.authorization.k8s.io/roles', DEFAULT_PRINTER],
  ['rbac.authorization.k8s.io/rolebindings', roleBindingPrinter(
    'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the ' +
    'RoleRef cannot be resolved, the Authorizer must return an error.', 'roleBinding')],
  ['/limitranges', DEFAULT_PRINTER],
  ['/resourcequotas', resourceQuotaPrinter],
  ['/serviceaccounts', serviceAccountPrinter],
]);

/**
 * The printer of a native kind; undefined when the kind has none here. Kinds kube-apiserver prints
 * with its default table convertor (roles, clusterroles, limitranges) get DEFAULT_PRINTER.
 */
export function printerFor(group: string, resource: string): KindPrinter | undefined {
  return PRINTERS.get(`${group}/${resource}`);
}
