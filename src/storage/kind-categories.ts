// Which kinds the view shows and how (docs/view.md, "Kinds in the view"): hidden kinds and groups
// are absent from the view; denatured kinds are stored as denatured.kubestellar.io CRs; every
// other kind is data, passed through to the WDS. Resources are named as in discovery
// (group + plural resource), so classification needs no round trip. What the view knows of each
// denatured kind is in its file under ./kinds/.
import { DENATURED_KINDS } from './kinds/index.js';
import { HIDDEN_GROUPS } from './kinds/project-groups.js';

export type KindCategory = 'hidden' | 'denatured' | 'natured';

export interface GroupResource {
  group: string;
  resource: string;
}

const key = (gr: GroupResource) => `${gr.resource}.${gr.group}`;

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

/** The denatured kinds by default: those of ./kinds/, in their order. */
export const DEFAULT_DENATURED: readonly GroupResource[] = DENATURED_KINDS.map(({ group, resource }) => ({ group, resource }));

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
