// The workload-as-data view at /apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy, as a fastify
// plugin prefixed with the view root: discovery and OpenAPI of the WDS minus hidden kinds, answered
// by ./view-discovery.ts; hidden kinds are 404; denatured kinds are served by
// ./denatured-handler.ts from their CRDs; every other request is passed to the WDS as the end user
// by ./passthrough.ts, watches included. Bodies are checked before they travel: at most 3 MiB, and
// JSON or YAML that parses. Resources of the view's own join the WDS's (../groups/group-resources.ts):
// the virtual Bindings and CombinedStatuses as KubeStellar's control.kubestellar.io/v1alpha1, the
// UpsyncedObjects as upsyncedobjects.view.kubestellar.io, the only resource of that group in the
// view, and each cluster's upsynced objects in their native kinds below `clusters/<cluster>`
// (../groups/upsynced-cluster-view.ts). What a path addresses is the resolver's word
// (../groups/view-paths.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import YAML from 'yaml';
import { errors, MAX_BODY_BYTES } from '../../kube/status.js';
import type { Upstream } from '../../kube/upstream.js';
import type { DenaturedRegistry } from '../../storage/denatured-registry.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import type { ProtobufDecoder } from '../../storage/protobuf-decoder.js';
import { clusterViews } from '../groups/upsynced-cluster-view.js';
import { CONTROL_GROUP, CONTROL_KINDS, GROUP, IN_VIEW_KINDS } from '../groups/view-group.js';
import type { ViewPaths } from '../groups/view-paths.js';
import { groupResources, type VirtualSources } from '../groups/group-resources.js';
import { bodyOf, userOf } from '../http/request-state.js';
import type { Authorize, SubjectVisibility } from '../virtual/read-only-resource.js';
import { handleDenatured } from './denatured-handler.js';
import { passThrough } from './passthrough.js';
import { viewDiscovery } from './view-discovery.js';

export interface ViewOptions {
  paths: ViewPaths;
  up: Upstream;
  cats: KindCategories;
  denatured: DenaturedRegistry;
  protobuf?: ProtobufDecoder;
  /** The virtual objects' sources (none without an ITS: the lists and the clusters' views are empty). */
  sources: VirtualSources;
  /** A SubjectAccessReview of the user on `resource` in `group`. */
  authorizeOn: (resource: string, group: string) => Authorize;
  /** What the user may get of the objects the Bindings and CombinedStatuses speak of. */
  visibility: SubjectVisibility;
  /** The time the UpsyncedObjects Table's ages count to (default: the system clock's). */
  now?: () => Date;
}

/** Validates a buffered body by its media type: JSON and YAML must parse; others pass as they are. */
function checkBody(contentType: string, body: Buffer): void {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (body.length === 0) return;
  if (type.endsWith('json')) {
    try {
      JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw errors.badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
    }
  } else if (type.endsWith('yaml')) {
    const docs = YAML.parseAllDocuments(body.toString('utf8'));
    const bad = docs.flatMap((d) => d.errors)[0];
    if (bad) throw errors.badRequest(`the request body is not valid YAML: ${bad.message.split('\n')[0]}`);
  }
}

/** The view, registered under its root: routes below are relative to it. */
export async function view(app: FastifyInstance, opts: ViewOptions): Promise<void> {
  await app.register(viewRoutes, { ...opts, prefix: opts.paths.root });
}

async function viewRoutes(view: FastifyInstance, opts: ViewOptions): Promise<void> {
  const { paths, up, cats, denatured, protobuf } = opts;

  // Bodies are buffered (3 MiB at most), checked, and kept as they came for the passthrough. Set
  // before the plugins below are registered: each takes this context's parsers.
  view.removeAllContentTypeParsers();
  view.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (req, body, done) => {
    try {
      checkBody(String(req.headers['content-type'] ?? ''), body as Buffer);
      done(null, body);
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // Routes of their own: more specific than the catch-all below, so the hidden group's bindings and
  // combinedstatuses are these, never the WDS's (a KubeStellar install's real CRDs are shadowed).
  const served = { sources: opts.sources, authorizeOn: opts.authorizeOn, visibility: opts.visibility, now: opts.now };
  await view.register(groupResources, { ...served, group: CONTROL_GROUP, kinds: CONTROL_KINDS });
  await view.register(groupResources, { ...served, group: GROUP, kinds: IN_VIEW_KINDS });
  // Each cluster's upsynced objects as their native kinds; /version there is the WDS's, as in the view.
  await view.register(clusterViews, {
    paths, source: opts.sources.upsynced, cats, authorizeOn: opts.authorizeOn,
    version: (req, reply) => {
      passThrough(up, { method: 'GET', path: `${up.basePath}/version`, headers: req.headers, user: userOf(req) }, reply);
      return reply;
    },
  });
  await view.register(viewDiscovery, { paths, up, cats });

  // Everything else under the view root: hidden → 404, denatured → their CRDs, natured → the WDS.
  const passThroughRoute = (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | undefined => {
    // Resolved by the app already when it counted the request (../http/request-limits.ts).
    const info = req.viewInfo ?? paths.resolve(req.url)!.info;
    if (info.isResourceRequest) {
      const category = cats.categorize({ group: info.group, resource: info.resource });
      if (category === 'hidden') throw errors.pathNotFound();
      if (category === 'denatured') return handleDenatured(req, reply, info, userOf(req), { registry: denatured, up, protobuf });
    } else if (info.group && cats.isHiddenGroup(info.group)) {
      throw errors.pathNotFound();
    }
    passThrough(up, {
      method: req.method, path: up.basePath + paths.upstreamPath(req.url), headers: req.headers, body: bodyOf(req), user: userOf(req),
      longRunning: req.longRunning,
    }, reply);
    return undefined;
  };
  const methods = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
  view.route({ method: methods, url: '/', handler: passThroughRoute });
  view.route({ method: methods, url: '/*', handler: passThroughRoute });
}
