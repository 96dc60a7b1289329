// The virtual resources of one API group, as a fastify plugin registered once per group that
// serves them: view.kubestellar.io for direct clients (VIRTUAL_KINDS, by the app), and inside the
// view control.kubestellar.io (CONTROL_KINDS: Bindings and CombinedStatuses, where KubeStellar's
// tools read them) and view.kubestellar.io (IN_VIEW_KINDS: UpsyncedObjects). The kinds a group
// serves are the lists ./view-group.ts gives its discovery and OpenAPI, so what is routed and what
// is advertised cannot drift apart. Each resource is authorized in the group of its path.
import type { FastifyInstance } from 'fastify';
import type { Authorize, SubjectVisibility, VirtualKind } from '../virtual/read-only-resource.js';
import { bindingsResource, type BindingSource } from './bindings-resource.js';
import { combinedStatusesResource, type CombinedStatusSource } from './combinedstatuses-resource.js';
import type { UpsyncedSource } from './upsynced-source.js';
import { upsyncedObjectsResource } from './upsyncedobjects-resource.js';
import { BINDINGS, COMBINED_STATUSES, UPSYNCED_OBJECTS } from './view-group.js';

/** What computes the virtual objects (none without an ITS: every list is empty). */
export interface VirtualSources {
  /** The placement controllers' Bindings. */
  bindings?: BindingSource;
  /** The status controller's CombinedStatuses. */
  combinedStatuses?: CombinedStatusSource;
  /** The agents' copies of WEC objects, upsynced. */
  upsynced?: UpsyncedSource;
}

export interface GroupResourcesOptions {
  group: string;
  /** The resources this group serves at this path. */
  kinds: readonly VirtualKind[];
  sources: VirtualSources;
  /** A SubjectAccessReview of the user on `resource` in `group`. */
  authorizeOn: (resource: string, group: string) => Authorize;
  /** What the user may get of the objects the resources speak of. */
  visibility: SubjectVisibility;
  /** The time the UpsyncedObjects Table's ages count to (default: the system clock's). */
  now?: () => Date;
}

export async function groupResources(app: FastifyInstance, { group, kinds, sources, authorizeOn, visibility, now }: GroupResourcesOptions): Promise<void> {
  for (const kind of kinds) {
    const access = { group, authorize: authorizeOn(kind.resource, group), visibility };
    if (kind === BINDINGS) await app.register(bindingsResource, { ...access, source: sources.bindings });
    else if (kind === COMBINED_STATUSES) await app.register(combinedStatusesResource, { ...access, source: sources.combinedStatuses });
    else if (kind === UPSYNCED_OBJECTS) await app.register(upsyncedObjectsResource, { ...access, source: sources.upsynced, now });
    else throw new Error(`no resource serves the virtual kind ${kind.resource}`);
  }
}
