// Which kinds the view shows and how (DESIGN.md, "Kinds in the view"): hidden kinds and groups
// are absent from the view; denatured kinds are stored as denatured.kubestellar.io CRs; every
// other kind is data, passed through to the WDS. Resources are named as in discovery
// (group + plural resource), so classification needs no round trip.

export type KindCategory = 'hidden' | 'denatured' | 'natured';

export interface GroupResource {
  group: string;
  resource: string;
}

const key = (gr: GroupResource) => `${gr.resource}.${gr.group}`;

/** Groups of kubestellar-view itself: never part of the view. */
export const HIDDEN_GROUPS: ReadonlySet<string> = new Set([
  'control.kubestellar.io', 'denatured.kubestellar.io', 'view.kubestellar.io',
]);

export const DEFAULT_HIDDEN: readonly GroupResource[] = [
  { group: '', resource: 'events' },
  { group: 'events.k8s.io', resource: 'events' },
  { group: 'coordination.k8s.io', resource: 'leases' },
  { group: 'authentication.k8s.io', resource: 'tokenreviews' },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews' },
  { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' },
  { group: '', resource: 'nodes' },
  { group: '', resource: 'componentstatuses' },
  { group: 'apps', resource: 'controllerrevisions' },
  { group: '', resource: 'bindings' },
];

export const DEFAULT_DENATURED: readonly GroupResource[] = [
  { group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' },
  { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' },
  { group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicies' },
  { group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicybindings' },
  { group: 'admissionregistration.k8s.io', resource: 'mutatingadmissionpolicies' },
  { group: 'admissionregistration.k8s.io', resource: 'mutatingadmissionpolicybindings' },
  { group: 'apiregistration.k8s.io', resource: 'apiservices' },
  { group: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas' },
  { group: 'flowcontrol.apiserver.k8s.io', resource: 'prioritylevelconfigurations' },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
  { group: 'rbac.authorization.k8s.io', resource: 'roles' },
  { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' },
  { group: '', resource: 'limitranges' },
  { group: '', resource: 'resourcequotas' },
  { group: '', resource: 'serviceaccounts' },
];

export class KindCategories {
  private readonly hidden: Set<string>;
  private readonly denatured: Set<string>;

  constructor(hidden: readonly GroupResource[] = DEFAULT_HIDDEN, denatured: readonly GroupResource[] = DEFAULT_DENATURED) {
    this.hidden = new Set(hidden.map(key));
    this.denatured = new Set(denatured.map(key));
  }

  /** The category of a resource; subresources (`pods/status`) follow their resource. */
  categorize(gr: GroupResource): KindCategory {
    const resource = gr.resource.split('/')[0]!;
    if (HIDDEN_GROUPS.has(gr.group) || this.hidden.has(key({ group: gr.group, resource }))) return 'hidden';
    if (this.denatured.has(key({ group: gr.group, resource }))) return 'denatured';
    return 'natured';
  }

  isHiddenGroup(group: string): boolean {
    return HIDDEN_GROUPS.has(group);
  }
}
