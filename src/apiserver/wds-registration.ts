// `ksview serve --register`: makes the WDS route view.kubestellar.io/v1alpha1 to this server and
// gives the server's identity what an aggregated server needs, by server-side apply (so running it
// again changes nothing): the ExternalName Service, the APIService with our CA as caBundle,
// system:auth-delegator, the authentication ConfigMap reader role, impersonation and the managing of
// the denatured kinds' CRDs, and what ksview-native's RBAC escalation check reads (the WDS's RBAC,
// denatured roles). It also installs the ClusterRoles an admin binds to users of the view
// (kubestellar-view:user, kubestellar-view:denatured-editor for the denatured kinds, and
// kubestellar-view:denatured-rbac-admin for escalate and bind on denatured roles), and the
// admission webhooks: of StatusCollectors (with the status controller), of BindingPolicies naming
// an executor (with the placement controllers), and of direct writes of denatured objects (with
// denatured kinds).
// The RBAC rules here are those of charts/kubestellar-view/files/wds/rbac.yaml (test/unit/chart.test.ts).
//
// Hosted (`--register-endpoints-from`, the server's pods in a hosting cluster, the WDS another
// cluster): the WDS's admin has installed the server's RBAC and the user roles (the chart's `wds`
// part, charts/kubestellar-view/files/wds/registration-rbac.yaml for the rights used here), so the server writes only
// the routing: a Service without selector (its endpoints are mirrored by the leader,
// ../controllers/hosting/endpoints-mirror.ts), the APIService and the webhooks, each by name.
import { serverSideApply, upstreamJson, type Upstream } from '../kube/upstream.js';
import { ADMISSION_PATH, WEBHOOK_NAME } from './admission/statuscollectors-webhook.js';
import { DENATURED_ADMISSION_PATH, DENATURED_WEBHOOK_NAME } from './admission/denatured-webhook.js';
import { POLICY_ADMISSION_PATH, POLICY_WEBHOOK_NAME } from './admission/bindingpolicies-webhook.js';
import { NOT_A_VIEW_WRITE } from '../storage/view-write-extra.js';
import { DENATURED_GROUP } from '../storage/crd-schema.js';
import { GROUP, VERSION } from './groups/view-group.js';

export interface RegistrationOptions {
  namespace: string;
  service: string;
  /** Where the aggregator connects: `localhost` for local spaces (not hosted). */
  externalName: string;
  /** The Service's port, which the APIService and the webhooks name. */
  port: number;
  /**
   * Hosted: the Service has no selector and no externalName (its endpoints are mirrored from the
   * hosting cluster), and no RBAC nor Namespace is written (the WDS's admin installs them).
   */
  hosted?: boolean;
  caBundlePem: string;
  /** Also the StatusCollector admission webhook (./admission/statuscollectors-webhook.ts): when the status controller runs. */
  admission?: boolean;
  /** Also the webhook of BindingPolicies naming an executor (./admission/bindingpolicies-webhook.ts): when the placement controllers run. */
  policyAdmission?: boolean;
  /** Also the webhook of direct writes of denatured objects (./admission/denatured-webhook.ts): when there are denatured kinds. */
  denaturedAdmission?: boolean;
}

const FIELD_MANAGER = 'ksview-serve';

const apply = async (up: Upstream, path: string, obj: object): Promise<void> => { await serverSideApply(up, path, obj, FIELD_MANAGER); };

/** The subject the WDS sees for this server's own credentials. */
export async function serverSubject(up: Upstream): Promise<{ kind: string; name: string; namespace?: string; apiGroup?: string }> {
  const review = await upstreamJson<{ status?: { userInfo?: { username?: string } } }>(up, 'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  const username = review.status?.userInfo?.username ?? '';
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
  return sa ? { kind: 'ServiceAccount', name: sa[2]!, namespace: sa[1]! } : { kind: 'User', name: username, apiGroup: 'rbac.authorization.k8s.io' };
}

export const IMPERSONATOR_RULES = [
  // Passthrough requests act as the end user: the WDS's RBAC decides, and the server gains nothing.
  { apiGroups: [''], resources: ['users', 'groups', 'serviceaccounts'], verbs: ['impersonate'] },
  // Extras are checked as userextras/<key>; RBAC has no `userextras/*` wildcard (only `*` and
  // `*/sub`), and keys vary by authenticator (service-account tokens carry credential-id, …).
  // In this group `impersonate` applies to nothing but userextras and uids. It also covers the
  // extra the store adds to the view's own writes of denatured objects, which the denatured
  // webhook leaves out (../storage/view-write-extra.ts).
  { apiGroups: ['authentication.k8s.io'], resources: ['*'], verbs: ['impersonate'] },
];

export const VIEW_USER_RULES = [
  // kube-apiserver authorizes the outer path of every view request as spaces/proxy.
  { apiGroups: [GROUP], resources: ['spaces/proxy'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [GROUP], resources: ['spaces'], verbs: ['get', 'list', 'watch'] },
  // The virtual Bindings (what each BindingPolicy resolves to) and CombinedStatuses (the status
  // its StatusCollectors combine; namespaced, their SubjectAccessReviews carry the namespace, so
  // RBAC can also grant them per namespace), in both groups that serve them
  // (control.kubestellar.io only inside the view). They show only the objects the user may get
  // in the WDS (./auth/subject-access.ts): this right reveals nothing more.
  { apiGroups: [GROUP, 'control.kubestellar.io'], resources: ['bindings', 'combinedstatuses'], verbs: ['get', 'list', 'watch'] },
  // The fleet's upsynced objects (docs/upsync.md), each shown only to who may get its resource there in the WDS.
  { apiGroups: [GROUP], resources: ['upsyncedobjects'], verbs: ['get', 'list', 'watch'] },
];

/** Where the WDS reaches this server's webhooks, and the CA it verifies the server by. */
type WebhookEndpoint = Pick<RegistrationOptions, 'namespace' | 'service' | 'port' | 'caBundlePem'>;

/** One ValidatingWebhookConfiguration of a single webhook of this server (admission.k8s.io/v1 reviews, no side effects). */
function validatingWebhook(o: WebhookEndpoint, w: {
  configuration: string; name: string; path: string; failurePolicy: 'Fail' | 'Ignore'; timeoutSeconds: number;
  rules: object[]; matchConditions?: object[];
}): object {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: w.configuration },
    webhooks: [{
      name: w.name, admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: w.failurePolicy, timeoutSeconds: w.timeoutSeconds, matchPolicy: 'Equivalent',
      clientConfig: { service: { namespace: o.namespace, name: o.service, port: o.port, path: w.path }, caBundle: Buffer.from(o.caBundlePem).toString('base64') },
      rules: w.rules,
      ...(w.matchConditions ? { matchConditions: w.matchConditions } : {}),
    }],
  };
}

/** Name of the ValidatingWebhookConfiguration of StatusCollectors. */
export const WEBHOOK_CONFIGURATION = 'kubestellar-view-statuscollectors';

/**
 * The ValidatingWebhookConfiguration sending StatusCollector creates and updates to this server.
 * failurePolicy Ignore: while the server is down collectors can still be written, and the status
 * controller reports a bad one's errors in its status.errors when it is back.
 */
export function webhookConfiguration(o: WebhookEndpoint): object {
  return validatingWebhook(o, {
    configuration: WEBHOOK_CONFIGURATION, name: WEBHOOK_NAME, path: ADMISSION_PATH, failurePolicy: 'Ignore', timeoutSeconds: 5,
    rules: [{ apiGroups: ['control.kubestellar.io'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['statuscollectors'], scope: 'Cluster' }],
  });
}

/** Name of the ValidatingWebhookConfiguration of direct writes of denatured objects. */
export const DENATURED_WEBHOOK_CONFIGURATION = 'kubestellar-view-denatured';

/**
 * The ValidatingWebhookConfiguration sending every create and update of a denatured.kubestellar.io
 * object, and of its status, to this server, but the view's own writes (checked by the view
 * already; the matchCondition, ../storage/view-write-extra.ts says why it cannot be forged).
 * failurePolicy Fail: it is a security check (it keeps forged metadata and objects Kubernetes
 * would refuse out of the WDS, whence placement sends them to clusters); while this server does
 * not answer, only writes made around the view wait, and the view is down then anyway.
 */
export function denaturedWebhookConfiguration(o: WebhookEndpoint): object {
  return validatingWebhook(o, {
    configuration: DENATURED_WEBHOOK_CONFIGURATION, name: DENATURED_WEBHOOK_NAME, path: DENATURED_ADMISSION_PATH, failurePolicy: 'Fail', timeoutSeconds: 10,
    rules: [{ apiGroups: [DENATURED_GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*', '*/status'], scope: '*' }],
    matchConditions: [{ name: 'not-written-by-the-view', expression: NOT_A_VIEW_WRITE }],
  });
}

/** Name of the ValidatingWebhookConfiguration of BindingPolicies. */
export const POLICY_WEBHOOK_CONFIGURATION = 'kubestellar-view-bindingpolicies';

/**
 * The ValidatingWebhookConfiguration sending creates and updates of BindingPolicies that name an
 * executor (a matchCondition: the others are not its business) to this server, which admits one
 * only if its author may impersonate that ServiceAccount (./admission/bindingpolicies-webhook.ts). failurePolicy
 * Fail: it is a security check; while the server does not answer, only policies naming an
 * executor wait (and placement, which this server runs, is down then anyway).
 */
export function policyWebhookConfiguration(o: WebhookEndpoint): object {
  return validatingWebhook(o, {
    configuration: POLICY_WEBHOOK_CONFIGURATION, name: POLICY_WEBHOOK_NAME, path: POLICY_ADMISSION_PATH, failurePolicy: 'Fail', timeoutSeconds: 10,
    rules: [{ apiGroups: ['control.kubestellar.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['bindingpolicies'], scope: 'Cluster' }],
    matchConditions: [{ name: 'names-an-executor', expression: POLICY_NAMES_EXECUTOR }],
  });
}

/** CEL of the matchCondition: the policy (as it would be stored) names an executor. */
export const POLICY_NAMES_EXECUTOR = 'has(object.spec) && has(object.spec.executor)';

export const CRD_MANAGER_RULES = [
  // The denatured kinds' CRDs: read, created and server-side applied at start and every 5 minutes.
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'create', 'patch'] },
];

export const DENATURED_EDITOR_RULES = [
  // Denatured objects are read and written as the user: this decides who manages RBAC, webhooks,
  // quotas, ... through the view, and grants nothing in the WDS itself.
  { apiGroups: ['denatured.kubestellar.io'], resources: ['*'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] },
];

export const ESCALATION_CHECKER_RULES = [
  // Kubernetes' RBAC escalation check of denatured RBAC (ksview-native, docs/view.md): its rule
  // resolver holds the WDS's native RBAC in informers, to compute the rules a user holds, as
  // kube-apiserver's does. Read only.
  { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'], verbs: ['list', 'watch'] },
  // The rules of the denatured role a binding refers to (the role as the fleet will hold it),
  // read when the binding is written. Read only, these two kinds only.
  { apiGroups: ['denatured.kubestellar.io'], resources: ['roles', 'clusterroles'], verbs: ['get'] },
];

export const DENATURED_RBAC_ADMIN_RULES = [
  // Kubernetes' RBAC escalation check on denatured Roles, ClusterRoles and their bindings (docs/
  // view.md): `escalate` lets a Role or ClusterRole carry rules its writer does not hold, `bind` a
  // binding refer to a role whose rules its writer does not hold. Granting this is granting what
  // those roles grant in every WEC the fleet sends them to: bind it to fleet RBAC admins only (or
  // grant `bind` with resourceNames, as docs/view.md shows).
  { apiGroups: ['denatured.kubestellar.io'], resources: ['roles', 'clusterroles'], verbs: ['escalate', 'bind'] },
];

/** Name of the Service's one port: the mirrored endpoints' port carries it (the aggregator matches by name). */
export const SERVICE_PORT_NAME = 'https';

/** The Service the APIService and the webhooks name: an ExternalName, or (hosted) a ClusterIP Service without selector. */
export function registeredService(o: Pick<RegistrationOptions, 'namespace' | 'service' | 'externalName' | 'port' | 'hosted'>): object {
  const ports = [{ name: SERVICE_PORT_NAME, port: o.port, protocol: 'TCP' }];
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { name: o.service, namespace: o.namespace },
    spec: o.hosted ? { type: 'ClusterIP', ports } : { type: 'ExternalName', externalName: o.externalName, ports },
  };
}

/** The routing objects: the Service, the APIService and the webhooks the server runs. */
async function registerRouting(up: Upstream, o: RegistrationOptions): Promise<void> {
  await apply(up, `/api/v1/namespaces/${o.namespace}/services/${o.service}`, registeredService(o));
  await apply(up, `/apis/apiregistration.k8s.io/v1/apiservices/${VERSION}.${GROUP}`, apiService(o));
  if (o.admission) await apply(up, `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${WEBHOOK_CONFIGURATION}`, webhookConfiguration(o));
  if (o.policyAdmission) {
    await apply(up, `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${POLICY_WEBHOOK_CONFIGURATION}`, policyWebhookConfiguration(o));
  }
  if (o.denaturedAdmission) {
    await apply(up, `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${DENATURED_WEBHOOK_CONFIGURATION}`, denaturedWebhookConfiguration(o));
  }
}

/** The APIService of view.kubestellar.io/v1alpha1, verified by our CA. */
export function apiService(o: Pick<RegistrationOptions, 'namespace' | 'service' | 'port' | 'caBundlePem'>): object {
  return {
    apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: `${VERSION}.${GROUP}` },
    spec: {
      group: GROUP, version: VERSION, groupPriorityMinimum: 2000, versionPriority: 100,
      service: { name: o.service, namespace: o.namespace, port: o.port },
      caBundle: Buffer.from(o.caBundlePem).toString('base64'),
    },
  };
}

export async function register(up: Upstream, o: RegistrationOptions): Promise<void> {
  if (o.hosted) {
    await registerRouting(up, o);
    return;
  }
  const subject = await serverSubject(up);
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await apply(up, `/api/v1/namespaces/${o.namespace}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace } });
  await apply(up, `${rbac}/clusterrolebindings/kubestellar-view:auth-delegator`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kubestellar-view:auth-delegator' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' }, subjects: [subject],
  });
  await apply(up, `${rbac}/namespaces/kube-system/rolebindings/kubestellar-view:authentication-reader`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'kubestellar-view:authentication-reader', namespace: 'kube-system' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' }, subjects: [subject],
  });
  await apply(up, `${rbac}/clusterroles/kubestellar-view:impersonator`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubestellar-view:impersonator' }, rules: IMPERSONATOR_RULES,
  });
  await apply(up, `${rbac}/clusterrolebindings/kubestellar-view:impersonator`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kubestellar-view:impersonator' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubestellar-view:impersonator' }, subjects: [subject],
  });
  await apply(up, `${rbac}/clusterroles/kubestellar-view:user`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubestellar-view:user' }, rules: VIEW_USER_RULES,
  });
  await apply(up, `${rbac}/clusterroles/kubestellar-view:crd-manager`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubestellar-view:crd-manager' }, rules: CRD_MANAGER_RULES,
  });
  await apply(up, `${rbac}/clusterrolebindings/kubestellar-view:crd-manager`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kubestellar-view:crd-manager' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubestellar-view:crd-manager' }, subjects: [subject],
  });
  await apply(up, `${rbac}/clusterroles/kubestellar-view:denatured-editor`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubestellar-view:denatured-editor' }, rules: DENATURED_EDITOR_RULES,
  });
  await apply(up, `${rbac}/clusterroles/kubestellar-view:escalation-checker`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubestellar-view:escalation-checker' }, rules: ESCALATION_CHECKER_RULES,
  });
  await apply(up, `${rbac}/clusterrolebindings/kubestellar-view:escalation-checker`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kubestellar-view:escalation-checker' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubestellar-view:escalation-checker' }, subjects: [subject],
  });
  await apply(up, `${rbac}/clusterroles/kubestellar-view:denatured-rbac-admin`, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubestellar-view:denatured-rbac-admin' }, rules: DENATURED_RBAC_ADMIN_RULES,
  });
  await registerRouting(up, o);
}
