// What belongs to the WDS itself and is never sent, whatever a policy selects (even `"*"` on every
// field): the WDS's own infrastructure, which every cluster has of its own or which only makes sense
// in the WDS. Pure; `direct` says the object was written to the WDS natively — an object of a
// denatured kind written through the view is a user's (even if named `system:…`) and is sent.
//
// Never sent:
// - everything in the namespaces kube-system, kube-public, kube-node-lease and kubestellar-view
//   (the project's own), and those Namespaces and `default`;
// - in every namespace: the kube-root-ca.crt ConfigMap, the `default` ServiceAccount,
//   service-account-token and bootstrap-token Secrets (../../kube/system-secrets.ts, shared with upsync);
// - Service default/kubernetes, its Endpoints and EndpointSlices;
// - ServiceCIDRs and IPAddresses (the WDS's own service network);
// - the system PriorityClasses (`system-` prefix);
// - CRDs of kubestellar-view's own groups;
// - of the denatured kinds, what each kind's file in src/storage/kinds/ says (its isSystemObject):
//   the `default` ServiceAccount above; written natively, APIServices of groups the WDS serves itself
//   (local ones, without a service: built-in and CRD groups) and of kubestellar-view's groups,
//   bootstrap RBAC (`system:` names, the rbac-defaults bootstrapping label, the autoupdate
//   annotation) and the project's own `kubestellar-view:` RBAC, the API priority and fairness
//   objects kube-apiserver maintains (the autoupdate-spec annotation).
import { isJsonObject } from '../../kube/json.js';
import type { KubeObject } from '../../kube/objects.js';
import { isNeverSentSecret } from '../../kube/system-secrets.js';
import { kindFacts } from '../../storage/kinds/index.js';
import { HIDDEN_GROUPS } from '../../storage/kinds/project-groups.js';

export const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease', 'kubestellar-view']);
const NEVER_SENT_NAMESPACE_OBJECTS: ReadonlySet<string> = new Set([...SYSTEM_NAMESPACES, 'default']);

interface Kind {
  group: string;
  resource: string;
}

const specOf = (obj: KubeObject): Record<string, unknown> => (isJsonObject(obj.spec) ? obj.spec : {});

function isCoreSystemObject(resource: string, obj: KubeObject): boolean {
  const { name = '', namespace = '' } = obj.metadata ?? {};
  switch (resource) {
    case 'namespaces': return NEVER_SENT_NAMESPACE_OBJECTS.has(name);
    case 'configmaps': return name === 'kube-root-ca.crt';
    case 'secrets': return isNeverSentSecret(obj);
    case 'services':
    case 'endpoints': return namespace === 'default' && name === 'kubernetes';
    default: return false;
  }
}

/** Whether an object (native form) of the native kind `kind` belongs to the WDS itself. */
export function isSystemObject(kind: Kind, obj: KubeObject, direct: boolean): boolean {
  const meta = obj.metadata ?? {};
  const name = meta.name ?? '';
  if (meta.namespace && SYSTEM_NAMESPACES.has(meta.namespace)) return true;
  const facts = kindFacts(kind.group, kind.resource);
  if (facts) return facts.isSystemObject?.(obj, direct) ?? false;
  if (kind.group === '') return isCoreSystemObject(kind.resource, obj);
  switch (`${kind.resource}.${kind.group}`) {
    case 'endpointslices.discovery.k8s.io':
      return meta.namespace === 'default' && meta.labels?.['kubernetes.io/service-name'] === 'kubernetes';
    case 'servicecidrs.networking.k8s.io':
    case 'ipaddresses.networking.k8s.io':
      return true;
    case 'priorityclasses.scheduling.k8s.io':
      return name.startsWith('system-');
    case 'customresourcedefinitions.apiextensions.k8s.io':
      return HIDDEN_GROUPS.has(String(specOf(obj).group ?? ''));
    default:
      return false;
  }
}
