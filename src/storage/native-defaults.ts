// What kube-apiserver adds to a native object of a denatured kind that a CRD cannot: the Go
// defaulters (SetDefaults_* of k8s.io/kubernetes pkg/apis/*/v1, v1.33) of the kinds that have any,
// the `status: {}` of kinds with a status, and the absence of metadata.generation on kinds whose
// registry never sets it (RBAC, APIService, LimitRange, ResourceQuota, ServiceAccount — a CRD always
// does). Written by hand: the defaulters exist only as Go code. Applied to what is written (so the
// writer owns the defaulted fields, as natively) and to what is read (server-side apply results,
// which the WDS merges without them). Pure: returns a copy.
import type { JsonObject, KubeObject } from '../kube/objects.js';
import { isJsonObject } from '../kube/json.js';

const setDefault = (o: JsonObject, k: string, v: unknown) => { if (o[k] === undefined || o[k] === null) o[k] = v; };

const NO_GENERATION = new Set([
  'clusterroles.rbac.authorization.k8s.io', 'clusterrolebindings.rbac.authorization.k8s.io', 'roles.rbac.authorization.k8s.io',
  'rolebindings.rbac.authorization.k8s.io', 'apiservices.apiregistration.k8s.io', 'limitranges.', 'resourcequotas.', 'serviceaccounts.',
]);

/** admissionregistration v1: SetDefaults_ValidatingWebhook / _MutatingWebhook / _Rule. */
function defaultWebhook(w: JsonObject, mutating: boolean): void {
  setDefault(w, 'failurePolicy', 'Fail');
  setDefault(w, 'matchPolicy', 'Equivalent');
  setDefault(w, 'namespaceSelector', {});
  setDefault(w, 'objectSelector', {});
  setDefault(w, 'timeoutSeconds', 10);
  if (mutating) setDefault(w, 'reinvocationPolicy', 'Never');
  if (Array.isArray(w.rules)) for (const r of w.rules) if (isJsonObject(r)) setDefault(r, 'scope', '*');
}

/** SetDefaults_MatchResources (policies and their bindings). */
function defaultMatchResources(m: JsonObject): void {
  setDefault(m, 'matchPolicy', 'Equivalent');
  setDefault(m, 'namespaceSelector', {});
  setDefault(m, 'objectSelector', {});
  for (const key of ['resourceRules', 'excludeResourceRules']) {
    const rules = m[key];
    if (Array.isArray(rules)) for (const r of rules) if (isJsonObject(r)) setDefault(r, 'scope', '*');
  }
}

/** flowcontrol v1: SetDefaults_PriorityLevelConfiguration (Limited) and _QueuingConfiguration. */
function defaultPriorityLevel(spec: JsonObject): void {
  const limited = spec.limited;
  if (!isJsonObject(limited)) return;
  setDefault(limited, 'nominalConcurrencyShares', 30);
  setDefault(limited, 'lendablePercent', 0);
  const response = limited.limitResponse;
  if (isJsonObject(response) && isJsonObject(response.queuing)) {
    setDefault(response.queuing, 'queues', 64);
    setDefault(response.queuing, 'handSize', 8);
    setDefault(response.queuing, 'queueLengthLimit', 50);
  }
}

/** core v1: SetDefaults_LimitRangeItem — Container limits default to max, requests to default or min. */
function defaultLimitRangeItem(item: JsonObject): void {
  if (item.type !== 'Container') return;
  const max = isJsonObject(item.max) ? item.max : {};
  const min = isJsonObject(item.min) ? item.min : {};
  const dflt: JsonObject = isJsonObject(item.default) ? item.default : {};
  for (const [k, v] of Object.entries(max)) if (dflt[k] === undefined) dflt[k] = v;
  if (Object.keys(dflt).length > 0) item.default = dflt;
  const request: JsonObject = isJsonObject(item.defaultRequest) ? item.defaultRequest : {};
  for (const [k, v] of Object.entries(dflt)) if (request[k] === undefined) request[k] = v;
  for (const [k, v] of Object.entries(min)) if (request[k] === undefined) request[k] = v;
  if (Object.keys(request).length > 0) item.defaultRequest = request;
}

/** The Go defaulters of the kind applied to a copy of `obj`. */
export function applyNativeDefaults(group: string, resource: string, obj: KubeObject): KubeObject {
  const out = structuredClone(obj) as JsonObject;
  const spec = isJsonObject(out.spec) ? out.spec : undefined;
  switch (`${resource}.${group}`) {
    case 'validatingwebhookconfigurations.admissionregistration.k8s.io':
    case 'mutatingwebhookconfigurations.admissionregistration.k8s.io':
      if (Array.isArray(out.webhooks)) for (const w of out.webhooks) if (isJsonObject(w)) defaultWebhook(w, resource.startsWith('mutating'));
      break;
    case 'validatingadmissionpolicies.admissionregistration.k8s.io':
    case 'mutatingadmissionpolicies.admissionregistration.k8s.io':
      if (spec) {
        setDefault(spec, 'failurePolicy', 'Fail');
        if (isJsonObject(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
      }
      break;
    case 'validatingadmissionpolicybindings.admissionregistration.k8s.io':
    case 'mutatingadmissionpolicybindings.admissionregistration.k8s.io':
      if (spec && isJsonObject(spec.matchResources)) defaultMatchResources(spec.matchResources);
      break;
    case 'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io':
      if (spec) defaultPriorityLevel(spec);
      break;
    case 'limitranges.':
      if (spec && Array.isArray(spec.limits)) for (const item of spec.limits) if (isJsonObject(item)) defaultLimitRangeItem(item);
      break;
  }
  return out as KubeObject;
}

/** A native object as kube-apiserver would present it: defaults, `status: {}`, generation or not. */
export function presentNative(group: string, resource: string, hasStatus: boolean, obj: KubeObject): KubeObject {
  const out = applyNativeDefaults(group, resource, obj);
  if (NO_GENERATION.has(`${resource}.${group}`) && isJsonObject(out.metadata)) delete out.metadata.generation;
  if (hasStatus && out.status === undefined) out.status = {};
  return out;
}
