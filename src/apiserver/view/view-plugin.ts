// The workload-as-data view at /apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy, as a fastify
// plugin prefixed with the view root: discovery and OpenAPI of the WDS minus hidden kinds, answered
// here; hidden kinds are 404; denatured kinds are served by ./denatured-handler.ts from their CRDs;
// every other request is passed to the WDS as the end user by ./passthrough.ts, watches included.
// Bodies are checked before they travel: at most 3 MiB, and JSON or YAML that parses.
// Resources of the view's own join the WDS's: the virtual Bindings and CombinedStatuses as
// KubeStellar's control.kubestellar.io/v1alpha1 (../groups/bindings-resource.ts,
// ../groups/combinedstatuses-resource.ts), in discovery (legacy and aggregated) and OpenAPI v2/v3, while
// the WDS's own control.kubestellar.io stays hidden. The UpsyncedObjects (../groups/upsyncedobjects-resource.ts)
// are served as upsyncedobjects.view.kubestellar.io, the only resource of that group in the view
// (in discovery and OpenAPI too), and each cluster's upsynced objects in their native
// kinds below `clusters/<cluster>` (../groups/upsynced-cluster-view.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import YAML from 'yaml';
import {
  filterAggregatedDiscovery, filterGroupList, filterResourceList, visibleGroupVersions,
} from '../../storage/discovery-filter.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import { filterOpenAPIDocument, filterOpenAPIV3Index } from '../../storage/openapi-filter.js';
import { upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { upstreamHeaders } from '../auth/impersonation.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, jsonOnlyAccept, wantsAggregatedDiscovery } from '../http/negotiation.js';
import type { DenaturedRegistry } from '../../storage/denatured-registry.js';
import { aggregatedDiscoveryOf } from '../../kube/discovery.js';
import type { ProtobufDecoder } from '../../storage/protobuf-decoder.js';
import { handleDenatured } from './denatured-handler.js';
import { parseRequestInfo } from '../../kube/request-info.js';
import { sendExact } from '../http/send-exact.js';
import { errors, MAX_BODY_BYTES } from '../../kube/status.js';
import { passThrough } from './passthrough.js';
import { bodyOf, userOf } from '../http/request-state.js';
import { registerBindings, type BindingSource } from '../groups/bindings-resource.js';
import { registerCombinedStatuses, type CombinedStatusSource } from '../groups/combinedstatuses-resource.js';
import { registerClusterViews } from '../groups/upsynced-cluster-view.js';
import { registerUpsyncedObjects } from '../groups/upsyncedobjects-resource.js';
import type { UpsyncedSource } from '../groups/upsynced-source.js';
import {
  apiGroup as viewApiGroup, CONTROL_GROUP, controlAggregatedGroup, controlApiGroup, controlResourceList, GROUP, inViewAggregatedGroup, inViewResourceList, VERSION,
} from '../groups/view-group.js';
import { inViewOpenAPIV2, inViewOpenAPIV3 } from '../groups/view-openapi.js';
import type { Authorize, SubjectVisibility } from '../virtual/read-only-resource.js';
import { createHash } from 'node:crypto';

export interface ViewOptions {
  root: string;
  up: Upstream;
  cats: KindCategories;
  denatured: DenaturedRegistry;
  protobuf?: ProtobufDecoder;
  /** The placement controllers' Bindings (none without an ITS: the list is empty). */
  bindings?: BindingSource;
  /** The status controller's CombinedStatuses (none without an ITS: the lists are empty). */
  combinedStatuses?: CombinedStatusSource;
  /** The agents' copies of WEC objects (none without an ITS: the lists and the clusters' views are empty). */
  upsynced?: UpsyncedSource;
  /** A SubjectAccessReview of the user on `resource` in `group`. */
  authorizeOn: (resource: string, group: string) => Authorize;
  /** What the user may get of the objects the Bindings and CombinedStatuses speak of. */
  visibility: SubjectVisibility;
  /** The time the UpsyncedObjects Table's ages count to (default: the system clock's). */
  now?: () => Date;
}

/** The view's own OpenAPI v3 documents, by index path, with their hashes for the index. */
const OWN_V3 = new Map([...inViewOpenAPIV3()].map(([p, doc]) => [p, { doc, hash: createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase() }]));

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

/** Registers the view under its root; routes below are relative to it. */
export async function registerView(app: FastifyInstance, opts: ViewOptions): Promise<void> {
  await app.register((view, _opts, done) => {
    viewRoutes(view, opts);
    done();
  }, { prefix: opts.root });
}

function viewRoutes(view: FastifyInstance, opts: ViewOptions): void {
  const { root, up, cats, denatured, protobuf } = opts;

  // Routes of their own: more specific than the catch-all below, so the hidden group's bindings and
  // combinedstatuses are these, never the WDS's (a KubeStellar install's real CRDs are shadowed).
  registerBindings(view, opts.bindings, opts.authorizeOn('bindings', CONTROL_GROUP), CONTROL_GROUP, opts.visibility);
  registerCombinedStatuses(view, opts.combinedStatuses, opts.authorizeOn('combinedstatuses', CONTROL_GROUP), CONTROL_GROUP, opts.visibility);
  registerUpsyncedObjects(view, opts.upsynced, opts.authorizeOn('upsyncedobjects', GROUP), GROUP, opts.visibility, opts.now);
  // Each cluster's upsynced objects as their native kinds; /version there is the WDS's, as in the view.
  registerClusterViews(view, {
    root, source: opts.upsynced, cats, authorizeOn: opts.authorizeOn,
    version: (req, reply) => {
      passThrough(up, { method: 'GET', path: `${up.basePath}/version`, headers: req.headers, user: userOf(req) }, reply);
      return reply;
    },
  });

  // Bodies are buffered (3 MiB at most), checked, and kept as they came for the passthrough.
  view.removeAllContentTypeParsers();
  view.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (req, body, done) => {
    try {
      checkBody(String(req.headers['content-type'] ?? ''), body as Buffer);
      done(null, body);
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  /** A GET to the WDS as the user, JSON only (this server rewrites the answer). */
  const fetchAsUser = async (req: FastifyRequest, path: string) => {
    const headers = upstreamHeaders(req.headers, userOf(req), up.authorization);
    headers.accept = jsonOnlyAccept(req.headers.accept);
    delete headers['content-length'];
    delete headers['accept-encoding'];
    return upstreamRequest(up, 'GET', path, { headers });
  };

  /** The WDS's answer as it came (a discovery call that did not succeed). */
  const sendAsIs = (reply: FastifyReply, res: { status: number; headers: Record<string, unknown>; body: Buffer }) =>
    reply.code(res.status).header('content-type', String(res.headers['content-type'] ?? 'application/json')).send(res.body);

  /**
   * The group versions that stay visible, from aggregated discovery of /api and /apis with the
   * server's identity; shared by concurrent callers and kept 2 s (a new CRD shows up after that).
   */
  let visibleCache: { at: number; value: Promise<Set<string>> } | undefined;
  const visible = (): Promise<Set<string>> => {
    if (visibleCache && Date.now() - visibleCache.at < 2000) return visibleCache.value;
    const value = aggregatedDiscoveryOf(up).then(([core, groups]) => visibleGroupVersions([filterAggregatedDiscovery(core, cats), filterAggregatedDiscovery(groups, cats)]));
    visibleCache = { at: Date.now(), value };
    value.catch(() => { visibleCache = undefined; });
    return value;
  };

  const discoveryRoot = (path: '/api' | '/apis') => async (req: FastifyRequest, reply: FastifyReply) => {
    const res = await fetchAsUser(req, path);
    if (res.status !== 200) return sendAsIs(reply, res);
    const doc = JSON.parse(res.body.toString('utf8'));
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    if (doc.kind === 'APIGroupDiscoveryList') {
      const version = wantsAggregatedDiscovery(req.headers.accept) ?? 'v2';
      const filtered = filterAggregatedDiscovery(doc, cats);
      if (path === '/apis') filtered.items = [...(filtered.items ?? []), controlAggregatedGroup(), inViewAggregatedGroup()];
      return sendExact(reply.header('vary', 'Accept'), version === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, filtered);
    }
    if (doc.kind === 'APIGroupList') {
      const filtered = filterGroupList(doc, await visible());
      if (path === '/apis') filtered.groups = [...(filtered.groups ?? []), controlApiGroup, viewApiGroup];
      return reply.header('content-type', contentType).send(filtered);
    }
    return reply.header('content-type', contentType).send(doc);
  };

  view.get('/api', discoveryRoot('/api'));
  view.get('/apis', discoveryRoot('/apis'));

  const resourceList = async (req: FastifyRequest, reply: FastifyReply, group: string, path: string) => {
    if (cats.isHiddenGroup(group)) throw errors.pathNotFound();
    const res = await fetchAsUser(req, path);
    if (res.status !== 200) return sendAsIs(reply, res);
    const doc = JSON.parse(res.body.toString('utf8'));
    const filtered = filterResourceList(doc, group, cats);
    if ((doc.resources ?? []).length > 0 && (filtered.resources ?? []).length === 0) throw errors.pathNotFound();
    return reply.header('content-type', 'application/json').send(filtered);
  };
  view.get('/api/v1', (req, reply) => resourceList(req, reply, '', '/api/v1'));
  view.get<{ Params: { group: string; version: string } }>('/apis/:group/:version', async (req, reply) => {
    const { group, version } = req.params;
    if (group === CONTROL_GROUP) {
      if (version !== VERSION) throw errors.pathNotFound();
      return controlResourceList();
    }
    if (group === GROUP) {
      if (version !== VERSION) throw errors.pathNotFound();
      return inViewResourceList();
    }
    return resourceList(req, reply, group, `/apis/${group}/${version}`);
  });
  view.get<{ Params: { group: string } }>('/apis/:group', async (req, reply) => {
    const { group } = req.params;
    if (group === CONTROL_GROUP) return { kind: 'APIGroup', apiVersion: 'v1', ...controlApiGroup };
    if (group === GROUP) return { kind: 'APIGroup', apiVersion: 'v1', ...viewApiGroup };
    if (cats.isHiddenGroup(group)) throw errors.pathNotFound();
    const gvs = await visible();
    if (![...gvs].some((gv) => gv.startsWith(`${group}/`))) throw errors.pathNotFound();
    const res = await fetchAsUser(req, `/apis/${group}`);
    return sendAsIs(reply, res);
  });

  view.get('/openapi/v2', async (req, reply) => {
    if (!/json|\*\/\*/.test(req.headers.accept ?? 'application/json') && req.headers.accept) {
      throw errors.notAcceptable('the view serves OpenAPI v2 as application/json only');
    }
    const res = await fetchAsUser(req, '/openapi/v2');
    if (res.status !== 200) return sendAsIs(reply, res);
    const doc = filterOpenAPIDocument(JSON.parse(res.body.toString('utf8')), cats);
    const own = inViewOpenAPIV2();
    return reply.header('content-type', 'application/json')
      .send({ ...doc, paths: { ...doc.paths, ...own.paths }, definitions: { ...doc.definitions, ...own.definitions } });
  });
  view.get('/openapi/v3', async (req, reply) => {
    const res = await fetchAsUser(req, '/openapi/v3');
    if (res.status !== 200) return sendAsIs(reply, res);
    const index = filterOpenAPIV3Index(JSON.parse(res.body.toString('utf8')), await visible(), cats, root);
    for (const [p, { hash }] of OWN_V3) index.paths = { ...index.paths, [p]: { serverRelativeURL: `${root}/openapi/v3/${p}?hash=${hash}` } };
    return reply.header('content-type', 'application/json').send(index);
  });
  view.get<{ Params: { '*': string } }>('/openapi/v3/*', async (req, reply) => {
    const sub = req.params['*'];
    const own = OWN_V3.get(sub);
    if (own) return reply.header('etag', `"${own.hash}"`).header('content-type', 'application/json').send(own.doc);
    const info = parseRequestInfo(`/${sub}`);
    if (info.group && cats.isHiddenGroup(info.group)) throw errors.pathNotFound();
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    const res = await fetchAsUser(req, `/openapi/v3/${sub}${query}`);
    if (res.status !== 200) return sendAsIs(reply, res);
    for (const h of ['cache-control', 'etag', 'expires', 'last-modified']) {
      const v = res.headers[h];
      if (typeof v === 'string') reply.header(h, v);
    }
    return reply.header('content-type', 'application/json').send(filterOpenAPIDocument(JSON.parse(res.body.toString('utf8')), cats));
  });

  // Everything else under the view root: hidden → 404, denatured → their CRDs, natured → the WDS.
  const passThroughRoute = (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | undefined => {
    const rest = req.url.slice(root.length);
    // Parsed by the app already when it counted the request (../http/request-limits.ts).
    let info = req.viewInfo;
    if (!info) {
      const q = rest.indexOf('?');
      info = parseRequestInfo((q < 0 ? rest : rest.slice(0, q)) || '/');
    }
    if (info.isResourceRequest) {
      const category = cats.categorize({ group: info.group, resource: info.resource });
      if (category === 'hidden') throw errors.pathNotFound();
      if (category === 'denatured') return handleDenatured(req, reply, info, userOf(req), { registry: denatured, up, protobuf });
    } else if (info.group && cats.isHiddenGroup(info.group)) {
      throw errors.pathNotFound();
    }
    passThrough(up, {
      method: req.method, path: up.basePath + (rest.startsWith('/') ? rest : `/${rest}`), headers: req.headers, body: bodyOf(req), user: userOf(req),
      longRunning: req.longRunning,
    }, reply);
    return undefined;
  };
  const methods = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
  view.route({ method: methods, url: '/', handler: passThroughRoute });
  view.route({ method: methods, url: '/*', handler: passThroughRoute });
}
