import t from 'tap';
import { deepFreeze } from '../../src/kube/json.js';
import { printerFor } from '../../src/storage/kinds/index.js';
import { DEFAULT_PRINTER, type TableColumnDefinition } from '../../src/storage/printing/printer.js';
import { humanDuration } from '../../src/kube/duration.js';
import type { KubeObject } from '../../src/kube/objects.js';

// Expected values below are what a real kube-apiserver v1.33.13 sent (Accept: as=Table) for the
// same objects; cases marked "Go" come from running its printers on objects it cannot hold
// (absent fields, alpha kinds), since cells must keep Go's zero values.


/** The server's clock when it printed the samples, all created at CREATED. */
const NOW = new Date('2026-11-22T04:04:02Z');
const CREATED = '2026-11-22T04:03:53Z';
const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), creationTimestamp: CREATED });

const AR = 'admissionregistration.k8s.io';
const FC = 'flowcontrol.apiserver.k8s.io';
const RBAC = 'rbac.authorization.k8s.io';

const NAME_DOC = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DOC = 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

type Col = [name: string, type: string, description: string, priority?: number];
function columns(...cols: Col[]): TableColumnDefinition[] {
  return [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DOC, priority: 0 },
    ...cols.map(([name, type, description, priority = 0]) => ({ name, type, format: '', description, priority })),
  ];
}
const age: Col = ['Age', 'string', AGE_DOC];
const paramKind: Col = ['ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'];
const webhookColumns = columns(['Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'], age);
const bindingColumns = columns(
  ['PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'],
  ['ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'], age);
const subjectColumns = (kind: string): Col[] => [
  ['Users', 'string', `Users in the ${kind}`, 1], ['Groups', 'string', `Groups in the ${kind}`, 1],
  ['ServiceAccounts', 'string', `ServiceAccounts in the ${kind}`, 1],
];
const defaultColumns: TableColumnDefinition[] = [
  { name: 'Name', type: 'string', format: 'name', description: NAME_DOC, priority: 0 },
  { name: 'Created At', type: 'date', format: '', description: AGE_DOC, priority: 0 },
];

const EXPECTED_COLUMNS: [group: string, resource: string, TableColumnDefinition[]][] = [
  [AR, 'mutatingwebhookconfigurations', webhookColumns],
  [AR, 'validatingwebhookconfigurations', webhookColumns],
  [AR, 'validatingadmissionpolicies', columns(
    ['Validations', 'integer', 'Validations indicates the number of validation rules defined in this configuration'], paramKind, age)],
  [AR, 'validatingadmissionpolicybindings', bindingColumns],
  [AR, 'mutatingadmissionpolicies', columns( // Go
    ['Mutations', 'integer', 'Mutation indicates the number of mutations rules defined in this configuration'], paramKind, age)],
  [AR, 'mutatingadmissionpolicybindings', bindingColumns], // Go
  ['apiregistration.k8s.io', 'apiservices', columns(
    ['Service', 'string', 'The reference to the service that hosts this API endpoint.'],
    ['Available', 'string', 'Whether this service is available.'], age)],
  [FC, 'flowschemas', columns(
    ['PriorityLevel', 'string', '`name` is the name of the priority level configuration being referenced Required.'],
    ['MatchingPrecedence', 'string', '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.'],
    ['DistinguisherMethod', 'string', '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.'],
    age,
    ['MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'])],
  [FC, 'prioritylevelconfigurations', columns(
    ['Type', 'string', '`type` indicates whether this priority level is subject to limitation on request execution.  A value of `"Exempt"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.'],
    ['NominalConcurrencyShares', 'string', '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server\'s concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a "jail" for this priority level that is used to hold some request(s)'],
    ['Queues', 'string', '`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.'],
    ['HandSize', 'string', '`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request\'s flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.'],
    ['QueueLengthLimit', 'string', '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.'],
    age)],
  [RBAC, 'clusterroles', defaultColumns],
  [RBAC, 'clusterrolebindings', columns(
    ['Role', 'string', 'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.'],
    age, ...subjectColumns('clusterRoleBinding'))],
  [RBAC, 'roles', defaultColumns],
  [RBAC, 'rolebindings', columns(
    ['Role', 'string', 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.'],
    age, ...subjectColumns('roleBinding'))],
  ['', 'limitranges', defaultColumns],
  ['', 'resourcequotas', columns(
    ['Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'],
    ['Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'],
    age)],
  ['', 'serviceaccounts', columns(
    ['Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret'],
    age)],
];

t.test('column definitions per kind', async (t) => {
  for (const [group, resource, expected] of EXPECTED_COLUMNS) {
    t.same(printerFor(group, resource)?.columns, expected, `${group}/${resource}`);
    t.equal(printerFor(group, resource)?.columns.length, expected.length, `${group}/${resource} has no extra column`);
  }
  t.same(DEFAULT_PRINTER.columns, defaultColumns);
});

t.test('kinds without a printer here', async (t) => {
  t.equal(printerFor('', 'pods'), undefined);
  t.equal(printerFor('apps', 'deployments'), undefined);
  t.equal(printerFor('rbac.authorization.k8s.io', 'serviceaccounts'), undefined, 'the group is part of the key');
  t.equal(printerFor('', 'roles'), undefined);
  t.equal(printerFor(RBAC, 'roles'), DEFAULT_PRINTER, 'kube uses its default table convertor for roles');
});

const webhook = { name: 'a.printers-check.example.com', clientConfig: { url: 'https://127.0.0.1:1/x' }, failurePolicy: 'Ignore', sideEffects: 'None', admissionReviewVersions: ['v1'] };
const selector = { matchLabels: { zeta: '1', alpha: 'two' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['a', 'b'] }, { key: 'tier', operator: 'Exists' }] };
const SELECTOR_STRING = '&LabelSelector{MatchLabels:map[string]string{alpha: two,zeta: 1,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[a b],},LabelSelectorRequirement{Key:tier,Operator:Exists,Values:[],},},}';
const EMPTY_SELECTOR_STRING = '&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}';
const matchConstraints = { resourceRules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['*'], resources: ['printerscheck'], scope: '*' }] };
const queuing = (queues: number, handSize: number, queueLengthLimit: number) => ({ type: 'Queue', queuing: { queues, handSize, queueLengthLimit } });
const rbacSubject = (kind: string, name: string) => ({ kind, apiGroup: RBAC, name });

const CASES: [group: string, resource: string, obj: KubeObject, cells: unknown[]][] = [
  [AR, 'mutatingwebhookconfigurations', { metadata: meta('printers-check-mwc-two'), webhooks: [webhook, { ...webhook, name: 'b' }] }, ['printers-check-mwc-two', 2, '9s']],
  [AR, 'mutatingwebhookconfigurations', { metadata: meta('printers-check-mwc-empty') }, ['printers-check-mwc-empty', 0, '9s']],
  [AR, 'validatingwebhookconfigurations', { metadata: meta('printers-check-vwc-one'), webhooks: [webhook] }, ['printers-check-vwc-one', 1, '9s']],
  [AR, 'validatingwebhookconfigurations', { metadata: meta('printers-check-vwc-empty') }, ['printers-check-vwc-empty', 0, '9s']],
  [AR, 'validatingadmissionpolicies', {
    metadata: meta('printers-check-vap-param'),
    spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints, validations: [{ expression: 'true' }, { expression: '1 == 1' }], failurePolicy: 'Ignore' },
    status: { observedGeneration: 1, typeChecking: {} },
  }, ['printers-check-vap-param', 2, 'v1/ConfigMap', '9s']],
  [AR, 'validatingadmissionpolicies', {
    metadata: meta('printers-check-vap-plain'), spec: { matchConstraints, validations: [{ expression: 'true' }], failurePolicy: 'Ignore' },
  }, ['printers-check-vap-plain', 1, '<unset>', '9s']],
  [AR, 'validatingadmissionpolicies', { metadata: meta('go-kind-only'), spec: { paramKind: { kind: 'X' } } }, ['go-kind-only', 0, '/X', '9s']], // Go
  [AR, 'validatingadmissionpolicybindings', {
    metadata: meta('printers-check-vapb-nsname'),
    spec: { policyName: 'printers-check-vap-param', paramRef: { name: 'cm1', namespace: 'printers-check', parameterNotFoundAction: 'Allow' }, validationActions: ['Audit'] },
  }, ['printers-check-vapb-nsname', 'printers-check-vap-param', 'printers-check/cm1', '9s']],
  [AR, 'validatingadmissionpolicybindings', {
    metadata: meta('printers-check-vapb-name'),
    spec: { policyName: 'printers-check-vap-param', paramRef: { name: 'cm1', parameterNotFoundAction: 'Allow' }, validationActions: ['Audit'] },
  }, ['printers-check-vapb-name', 'printers-check-vap-param', '*/cm1', '9s']],
  [AR, 'validatingadmissionpolicybindings', {
    metadata: meta('printers-check-vapb-selector'),
    spec: { policyName: 'printers-check-vap-param', paramRef: { selector, parameterNotFoundAction: 'Deny' }, validationActions: ['Audit'] },
  }, ['printers-check-vapb-selector', 'printers-check-vap-param', SELECTOR_STRING, '9s']],
  [AR, 'validatingadmissionpolicybindings', {
    metadata: meta('printers-check-vapb-emptysel'),
    spec: { policyName: 'printers-check-vap-param', paramRef: { selector: {}, parameterNotFoundAction: 'Allow' }, validationActions: ['Audit'] },
  }, ['printers-check-vapb-emptysel', 'printers-check-vap-param', EMPTY_SELECTOR_STRING, '9s']],
  [AR, 'validatingadmissionpolicybindings', {
    metadata: meta('printers-check-vapb-none'), spec: { policyName: 'printers-check-vap-plain', validationActions: ['Audit'] },
  }, ['printers-check-vapb-none', 'printers-check-vap-plain', '<unset>', '9s']],
  [AR, 'validatingadmissionpolicybindings', { // Go: a name wins over a selector; neither is <unset>
    metadata: meta('go-both'), spec: { policyName: 'p', paramRef: { name: 'n', selector } },
  }, ['go-both', 'p', '*/n', '9s']],
  [AR, 'validatingadmissionpolicybindings', { metadata: meta('go-neither'), spec: { paramRef: { namespace: 'x' } } }, ['go-neither', '', '<unset>', '9s']],
  [AR, 'mutatingadmissionpolicies', { // Go (v1alpha1 in 1.33, not served by default)
    metadata: meta('go-map'), spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, mutations: [{}, {}, {}] },
  }, ['go-map', 3, 'v1/ConfigMap', '9s']],
  [AR, 'mutatingadmissionpolicies', { metadata: meta('go-map-plain'), spec: {} }, ['go-map-plain', 0, '<unset>', '9s']],
  [AR, 'mutatingadmissionpolicybindings', {
    metadata: meta('go-mapb'), spec: { policyName: 'p', paramRef: { selector: { matchLabels: { b: '', a: 'x y' }, matchExpressions: [{ key: 'k', operator: 'NotIn', values: ['x', 'y', 'z'] }] } } },
  }, ['go-mapb', 'p', '&LabelSelector{MatchLabels:map[string]string{a: x y,b: ,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:NotIn,Values:[x y z],},},}', '9s']],
  [AR, 'mutatingadmissionpolicybindings', { metadata: meta('go-mapb-ns'), spec: { policyName: 'p', paramRef: { name: 'n', namespace: 'ns' } } }, ['go-mapb-ns', 'p', 'ns/n', '9s']],
  ['apiregistration.k8s.io', 'apiservices', {
    metadata: { name: 'v1.', creationTimestamp: '2026-11-22T03:38:34Z', labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
    spec: { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 },
    status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2026-11-22T03:38:34Z', reason: 'Local', message: 'Local APIServices are always available' }] },
  }, ['v1.', 'Local', 'True', '25m']],
  ['apiregistration.k8s.io', 'apiservices', {
    metadata: { name: 'v1alpha1.view.kubestellar.io', creationTimestamp: '2026-11-22T03:38:39Z' },
    spec: { service: { namespace: 'kubestellar-view', name: 'ksview', port: 16405 }, group: 'view.kubestellar.io', version: 'v1alpha1', groupPriorityMinimum: 2000, versionPriority: 100 },
    status: { conditions: [{ type: 'Available', status: 'False', lastTransitionTime: '2026-11-22T04:01:19Z', reason: 'FailedDiscoveryCheck', message: 'failing or missing response' }] },
  }, ['v1alpha1.view.kubestellar.io', 'kubestellar-view/ksview', 'False (FailedDiscoveryCheck)', '25m']],
  ['apiregistration.k8s.io', 'apiservices', { metadata: meta('go-no-status'), spec: { service: {} } }, ['go-no-status', '/', 'Unknown', '9s']],
  ['apiregistration.k8s.io', 'apiservices', {
    metadata: meta('go-false'), spec: {}, status: { conditions: [{ type: 'Other', status: 'True' }, { type: 'Available', status: 'False' }] },
  }, ['go-false', 'Local', 'False', '9s']],
  [FC, 'flowschemas', {
    metadata: meta('printers-check-fs-ok'),
    spec: { priorityLevelConfiguration: { name: 'printers-check-plc-queue' }, matchingPrecedence: 1000, distinguisherMethod: { type: 'ByNamespace' }, rules: [] },
    status: { conditions: [{ type: 'Dangling', status: 'False', lastTransitionTime: CREATED, reason: 'Found', message: '' }] },
  }, ['printers-check-fs-ok', 'printers-check-plc-queue', 1000, 'ByNamespace', '9s', 'False']],
  [FC, 'flowschemas', {
    metadata: meta('printers-check-fs-dangling'),
    spec: { priorityLevelConfiguration: { name: 'printers-check-missing' }, matchingPrecedence: 9999, rules: [] },
    status: { conditions: [{ type: 'Dangling', status: 'True', lastTransitionTime: CREATED, reason: 'NotFound', message: '' }] },
  }, ['printers-check-fs-dangling', 'printers-check-missing', 9999, '<none>', '9s', 'True']],
  [FC, 'flowschemas', { metadata: meta('go-bare'), spec: { distinguisherMethod: {} } }, ['go-bare', '', 0, '', '9s', '?']],
  [FC, 'prioritylevelconfigurations', {
    metadata: meta('printers-check-plc-queue'),
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: queuing(16, 4, 10), lendablePercent: 0 } }, status: {},
  }, ['printers-check-plc-queue', 'Limited', 1, 16, 4, 10, '9s']],
  [FC, 'prioritylevelconfigurations', {
    metadata: { name: 'printers-check-plc-default', creationTimestamp: '2026-11-22T04:03:56Z' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 30, limitResponse: queuing(64, 8, 50), lendablePercent: 0 } }, status: {},
  }, ['printers-check-plc-default', 'Limited', 30, 64, 8, 50, '6s']],
  [FC, 'prioritylevelconfigurations', {
    metadata: meta('printers-check-plc-reject'),
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' }, lendablePercent: 0 } }, status: {},
  }, ['printers-check-plc-reject', 'Limited', 0, '<none>', '<none>', '<none>', '9s']],
  [FC, 'prioritylevelconfigurations', {
    metadata: meta('exempt'), spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  }, ['exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>', '9s']],
  [FC, 'prioritylevelconfigurations', { metadata: meta('go-bare'), spec: { limited: { limitResponse: { queuing: {} } } } }, ['go-bare', '', 0, 0, 0, 0, '9s']],
  [RBAC, 'clusterroles', {
    metadata: meta('printers-check-cr'), rules: [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['printerscheck'] }],
  }, ['printers-check-cr', '2026-11-22T04:03:53Z']],
  [RBAC, 'clusterrolebindings', {
    metadata: meta('printers-check-crb'),
    subjects: [
      rbacSubject('User', 'printers-check-u1'), { kind: 'ServiceAccount', name: 'sa1', namespace: 'printers-check' },
      rbacSubject('Group', 'printers-check-g1'), rbacSubject('User', 'printers-check-u2'), rbacSubject('Group', 'printers-check-g2'),
      { kind: 'ServiceAccount', name: 'sa2', namespace: 'other' },
    ],
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'printers-check-cr' },
  }, ['printers-check-crb', 'ClusterRole/printers-check-cr', '9s', 'printers-check-u1, printers-check-u2', 'printers-check-g1, printers-check-g2', 'printers-check/sa1, other/sa2']],
  [RBAC, 'clusterrolebindings', {
    metadata: meta('printers-check-crb-nosubjects'), roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'printers-check-cr' },
  }, ['printers-check-crb-nosubjects', 'ClusterRole/printers-check-cr', '9s', '', '', '']],
  [RBAC, 'clusterrolebindings', { // Go: other subject kinds are left out
    metadata: meta('go-crb'), subjects: [{ kind: 'Weird', name: 'w', namespace: 'n' }, rbacSubject('User', '')],
  }, ['go-crb', '/', '9s', '', '', '']],
  [RBAC, 'roles', {
    metadata: meta('printers-check-role', 'printers-check'), rules: [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['printerscheck'] }],
  }, ['printers-check-role', '2026-11-22T04:03:53Z']],
  [RBAC, 'rolebindings', {
    metadata: meta('printers-check-rb', 'printers-check'),
    subjects: [{ kind: 'ServiceAccount', name: 'sa1' }, rbacSubject('User', 'printers-check-u1')],
    roleRef: { apiGroup: RBAC, kind: 'Role', name: 'printers-check-role' },
  }, ['printers-check-rb', 'Role/printers-check-role', '9s', 'printers-check-u1', '', '/sa1']],
  [RBAC, 'rolebindings', {
    metadata: meta('printers-check-rb-cr', 'printers-check'),
    subjects: [rbacSubject('Group', 'printers-check-g1')], roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'printers-check-cr' },
  }, ['printers-check-rb-cr', 'ClusterRole/printers-check-cr', '9s', '', 'printers-check-g1', '']],
  ['', 'limitranges', {
    metadata: meta('printers-check-lr', 'printers-check'),
    spec: { limits: [{ type: 'Container', max: { cpu: '2' }, default: { cpu: '2' }, defaultRequest: { cpu: '2' } }] },
  }, ['printers-check-lr', '2026-11-22T04:03:53Z']],
  ['', 'resourcequotas', {
    metadata: meta('printers-check-rq', 'printers-check'),
    spec: { hard: { 'count/configmaps': '5', 'limits.cpu': '1500m', 'limits.memory': '1Gi', memory: '2Gi', pods: '10', 'requests.cpu': '1', services: '3' } },
    status: {
      hard: { 'requests.cpu': '1', services: '3', 'count/configmaps': '5', 'limits.cpu': '1500m', 'limits.memory': '1Gi', memory: '2Gi', pods: '10' },
      used: { 'count/configmaps': '1', 'limits.cpu': '0', 'limits.memory': '0', memory: '0', pods: '0', 'requests.cpu': '0', services: '0' },
    },
  }, ['printers-check-rq', 'count/configmaps: 1/5, memory: 0/2Gi, pods: 0/10, requests.cpu: 0/1, services: 0/3', 'limits.cpu: 0/1500m, limits.memory: 0/1Gi', '9s']],
  ['', 'resourcequotas', { metadata: meta('printers-check-rq-empty', 'printers-check'), spec: {}, status: {} }, ['printers-check-rq-empty', '', '', '9s']],
  ['', 'resourcequotas', { // Go: bytewise order, "limits" alone is a request, an absent used amount is 0
    metadata: meta('go-rq'),
    status: { hard: { limits: '1', 'limits.cpu': '2', 'requests.limits.x': '3', Zed: '1', a: '1', '.limits': '6' }, used: { 'limits.cpu': '500m', other: '1' } },
  }, ['go-rq', '.limits: 0/6, Zed: 0/1, a: 0/1, limits: 0/1, requests.limits.x: 0/3', 'limits.cpu: 500m/2', '9s']],
  ['', 'serviceaccounts', {
    metadata: meta('printers-check-sa', 'printers-check'), secrets: [{ name: 's1' }, { name: 's2' }],
  }, ['printers-check-sa', 2, '9s']],
  ['', 'serviceaccounts', { metadata: meta('printers-check-sa-none', 'printers-check') }, ['printers-check-sa-none', 0, '9s']],
];

t.test('cells per kind, as kube-apiserver prints them', async (t) => {
  for (const [group, resource, obj, cells] of CASES) {
    const printer = printerFor(group, resource);
    t.ok(printer, `${group}/${resource} has a printer`);
    t.strictSame(printer?.cells(deepFreeze(obj), NOW), cells, `${resource} ${obj.metadata?.name}`);
    t.equal(printer?.columns.length, cells.length, `${resource}: one cell per column`);
  }
});

t.test('every kind is exercised', async (t) => {
  const tested = new Set(CASES.map(([g, r]) => `${g}/${r}`));
  for (const [group, resource] of EXPECTED_COLUMNS) t.ok(tested.has(`${group}/${resource}`), `${group}/${resource}`);
});

t.test('ages and creation timestamps', async (t) => {
  const sa = printerFor('', 'serviceaccounts')!;
  const at = (creationTimestamp: unknown, now: string) =>
    sa.cells({ metadata: { name: 'x', creationTimestamp } }, new Date(now))[2];
  t.equal(at(undefined, '2026-01-01T00:00:00Z'), '<unknown>', 'absent');
  t.equal(at(null, '2026-01-01T00:00:00Z'), '<unknown>', 'null');
  t.equal(at('0001-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), '<unknown>', 'the zero time');
  t.equal(at('2026-01-01T00:00:03Z', '2026-01-01T00:00:00Z'), '<invalid>', 'in the future beyond skew');
  t.equal(at('2026-01-01T00:00:01Z', '2026-01-01T00:00:00Z'), '0s', 'within skew');
  t.equal(at('2026-01-01T02:00:00+02:00', '2026-01-01T00:10:00Z'), '10m', 'an offset timestamp');
  t.equal(at('2018-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), '8y');

  const created = (creationTimestamp: unknown) => DEFAULT_PRINTER.cells({ metadata: { name: 'x', creationTimestamp } }, NOW)[1];
  t.equal(created(undefined), '0001-01-01T00:00:00Z', 'Go prints the zero time');
  t.equal(created('2024-02-29T23:59:59+02:00'), '2024-02-29T21:59:59Z', 'in UTC');
  t.equal(created('2024-02-29T23:59:59.987Z'), '2024-02-29T23:59:59Z', 'whole seconds');
  t.strictSame(DEFAULT_PRINTER.cells({}, NOW), ['', '0001-01-01T00:00:00Z'], 'no metadata at all');
});

t.test('humanDuration is duration.HumanDuration', async (t) => {
  // Each pair is Go's output for that many milliseconds.
  const cases: [number, string][] = [
    [-2000, '<invalid>'], [-1999, '0s'], [-1, '0s'], [0, '0s'], [999, '0s'], [1000, '1s'], [59_999, '59s'],
    [119_999, '119s'], [120_000, '2m'], [121_000, '2m1s'], [599_000, '9m59s'], [600_000, '10m'], [659_000, '10m'],
    [10_799_999, '179m'], [10_800_000, '3h'], [10_860_000, '3h1m'], [28_799_000, '7h59m'], [28_800_000, '8h'],
    [172_799_000, '47h'], [172_800_000, '2d'], [176_400_000, '2d1h'], [691_199_000, '7d23h'], [691_200_000, '8d'],
    [63_071_999_000, '729d'], [63_072_000_000, '2y'], [63_158_400_000, '2y1d'], [252_287_999_000, '7y364d'],
    [252_288_000_000, '8y'], [3_153_600_000_000, '100y'],
  ];
  for (const [ms, want] of cases) t.equal(humanDuration(ms), want, `${ms}ms`);
});

t.test('mistyped fields (which kube would reject) read as absent', async (t) => {
  const crb = printerFor(RBAC, 'clusterrolebindings')!;
  t.strictSame(crb.cells({ metadata: { name: 'x', creationTimestamp: CREATED }, roleRef: 'oops', subjects: { kind: 'User' } }, NOW),
    ['x', '/', '9s', '', '', '']);
  const mwc = printerFor(AR, 'mutatingwebhookconfigurations')!;
  t.strictSame(mwc.cells({ metadata: { name: 'x', creationTimestamp: CREATED }, webhooks: null }, NOW), ['x', 0, '9s']);
});
