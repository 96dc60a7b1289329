// The view's discovery and OpenAPI (a fastify plugin on the view's, below its root): the WDS's,
// fetched as the end user, minus hidden kinds (../../storage/discovery-filter.ts,
// ../../storage/openapi-filter.ts), plus the view's own resources — the virtual Bindings and
// CombinedStatuses as KubeStellar's control.kubestellar.io/v1alpha1 and the UpsyncedObjects in
// view.kubestellar.io (../groups/view-group.ts, ../groups/view-openapi.ts) — in discovery (legacy
// and aggregated) and OpenAPI v2/v3, while the WDS's own control.kubestellar.io stays hidden.
// Every spelling of these paths reaches these routes (../groups/view-paths.ts, before routing).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { aggregatedDiscoveryOf } from '../../kube/discovery.js';
import { parseRequestInfo } from '../../kube/request-info.js';
import { errors } from '../../kube/status.js';
import { upstreamRequest, type Upstream } from '../../kube/upstream.js';
import {
  filterAggregatedDiscovery, filterGroupList, filterResourceList, visibleGroupVersions,
} from '../../storage/discovery-filter.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import { filterOpenAPIDocument, filterOpenAPIV3Index } from '../../storage/openapi-filter.js';
import { upstreamHeaders } from '../auth/impersonation.js';
import {
  apiGroup as viewApiGroup, CONTROL_GROUP, controlAggregatedGroup, controlApiGroup, controlResourceList, GROUP, inViewAggregatedGroup, inViewResourceList, VERSION,
} from '../groups/view-group.js';
import { inViewOpenAPIV2, inViewOpenAPIV3 } from '../groups/view-openapi.js';
import type { ViewPaths } from '../groups/view-paths.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, jsonOnlyAccept, wantsAggregatedDiscovery } from '../http/negotiation.js';
import { userOf } from '../http/request-state.js';
import { sendExact } from '../http/send-exact.js';

export interface ViewDiscoveryOptions {
  paths: ViewPaths;
  up: Upstream;
  cats: KindCategories;
}

/** The view's own OpenAPI v3 documents, by index path, with their hashes for the index. */
const OWN_V3 = new Map([...inViewOpenAPIV3()].map(([p, doc]) => [p, { doc, hash: createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase() }]));

export async function viewDiscovery(view: FastifyInstance, { paths, up, cats }: ViewDiscoveryOptions): Promise<void> {
  const { root } = paths;
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

  viewOpenAPI(view, { root, cats, fetchAsUser, sendAsIs, visible });
}

/** What the OpenAPI routes share with discovery's. */
interface Fetching {
  root: string;
  cats: KindCategories;
  /** A GET to the WDS as the user, JSON only. */
  fetchAsUser: (req: FastifyRequest, path: string) => ReturnType<typeof upstreamRequest>;
  /** The WDS's answer as it came (a call that did not succeed). */
  sendAsIs: (reply: FastifyReply, res: { status: number; headers: Record<string, unknown>; body: Buffer }) => FastifyReply;
  /** The group versions that stay visible. */
  visible: () => Promise<Set<string>>;
}

/** OpenAPI v2 and v3 of the view: the WDS's filtered, with the view's own documents. */
function viewOpenAPI(view: FastifyInstance, { root, cats, fetchAsUser, sendAsIs, visible }: Fetching): void {
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

}
