// The workload-as-data view at /apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy: discovery
// and OpenAPI of the WDS minus hidden kinds, answered here; every other request to a natured kind
// streamed to the WDS as the end user (impersonation), watches included; hidden kinds are 404;
// denatured kinds are served by ./denatured-handler.ts from their CRDs. Bodies are checked before
// they travel: at most 3 MiB, and JSON or YAML that parses.
import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable, pipeline } from 'node:stream';
import YAML from 'yaml';
import {
  filterAggregatedDiscovery, filterGroupList, filterResourceList, visibleGroupVersions,
} from '../storage/discovery-filter.js';
import type { KindCategories } from '../storage/kind-categories.js';
import { filterOpenAPIDocument, filterOpenAPIV3Index } from '../storage/openapi-filter.js';
import { upstreamRequest, type Upstream } from '../kube/upstream.js';
import { upstreamHeaders } from './impersonation.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, jsonOnlyAccept, wantsAggregatedDiscovery } from './negotiation.js';
import type { DenaturedRegistry } from '../storage/denatured-registry.js';
import { aggregatedDiscoveryOf } from '../kube/discovery.js';
import type { ProtobufDecoder } from '../storage/protobuf-decoder.js';
import { handleDenatured } from './denatured-handler.js';
import { parseRequestInfo } from '../kube/request-info.js';
import { sendExact } from './send-exact.js';
import { errors, MAX_BODY_BYTES, statusForCode } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';

export interface ViewOptions {
  root: string;
  up: Upstream;
  cats: KindCategories;
  denatured: DenaturedRegistry;
  protobuf?: ProtobufDecoder;
}

declare module 'fastify' {
  interface FastifyRequest {
    user?: UserInfo;
    /** The request body as received (bodies of the view are buffered, 3 MiB at most). */
    rawBody?: Buffer;
  }
}

function userOf(req: FastifyRequest): UserInfo {
  if (!req.user) throw errors.unauthorized();
  return req.user;
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

async function textOf(stream: NodeJS.ReadableStream, limit = 64 * 1024): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    if (text.length < limit) text += chunk.toString();
  }
  return text;
}

export async function registerView(app: FastifyInstance, opts: ViewOptions): Promise<void> {
  const { root, up, cats, denatured, protobuf } = opts;

  /** A GET to the WDS as the user, JSON only (this server rewrites the answer). */
  const fetchAsUser = async (req: FastifyRequest, path: string) => {
    const headers = upstreamHeaders(req.headers, userOf(req), up.authorization) as Record<string, string>;
    headers.accept = jsonOnlyAccept(req.headers.accept);
    delete headers['content-length'];
    delete headers['accept-encoding'];
    return upstreamRequest(up, 'GET', path, { headers });
  };

  const passThrough = (reply: FastifyReply, res: { status: number; headers: Record<string, unknown>; body: Buffer }) =>
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
    if (res.status !== 200) return passThrough(reply, res);
    const doc = JSON.parse(res.body.toString('utf8'));
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    if (doc.kind === 'APIGroupDiscoveryList') {
      const version = wantsAggregatedDiscovery(req.headers.accept) ?? 'v2';
      return sendExact(reply.header('vary', 'Accept'), version === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, filterAggregatedDiscovery(doc, cats));
    }
    if (doc.kind === 'APIGroupList') return reply.header('content-type', contentType).send(filterGroupList(doc, await visible()));
    return reply.header('content-type', contentType).send(doc);
  };

  app.get(`${root}/api`, discoveryRoot('/api'));
  app.get(`${root}/apis`, discoveryRoot('/apis'));

  const resourceList = async (req: FastifyRequest, reply: FastifyReply, group: string, path: string) => {
    if (cats.isHiddenGroup(group)) throw errors.pathNotFound();
    const res = await fetchAsUser(req, path);
    if (res.status !== 200) return passThrough(reply, res);
    const doc = JSON.parse(res.body.toString('utf8'));
    const filtered = filterResourceList(doc, group, cats);
    if ((doc.resources ?? []).length > 0 && (filtered.resources ?? []).length === 0) throw errors.pathNotFound();
    return reply.header('content-type', 'application/json').send(filtered);
  };
  app.get(`${root}/api/v1`, (req, reply) => resourceList(req, reply, '', '/api/v1'));
  app.get<{ Params: { group: string; version: string } }>(`${root}/apis/:group/:version`,
    (req, reply) => resourceList(req, reply, req.params.group, `/apis/${req.params.group}/${req.params.version}`));
  app.get<{ Params: { group: string } }>(`${root}/apis/:group`, async (req, reply) => {
    const { group } = req.params;
    if (cats.isHiddenGroup(group)) throw errors.pathNotFound();
    const gvs = await visible();
    if (![...gvs].some((gv) => gv.startsWith(`${group}/`))) throw errors.pathNotFound();
    const res = await fetchAsUser(req, `/apis/${group}`);
    return passThrough(reply, res);
  });

  app.get(`${root}/openapi/v2`, async (req, reply) => {
    if (!/json|\*\/\*/.test(req.headers.accept ?? 'application/json') && req.headers.accept) {
      throw errors.notAcceptable('the view serves OpenAPI v2 as application/json only');
    }
    const res = await fetchAsUser(req, '/openapi/v2');
    if (res.status !== 200) return passThrough(reply, res);
    return reply.header('content-type', 'application/json').send(filterOpenAPIDocument(JSON.parse(res.body.toString('utf8')), cats));
  });
  app.get(`${root}/openapi/v3`, async (req, reply) => {
    const res = await fetchAsUser(req, '/openapi/v3');
    if (res.status !== 200) return passThrough(reply, res);
    return reply.header('content-type', 'application/json')
      .send(filterOpenAPIV3Index(JSON.parse(res.body.toString('utf8')), await visible(), cats, root));
  });
  app.get<{ Params: { '*': string } }>(`${root}/openapi/v3/*`, async (req, reply) => {
    const sub = req.params['*'];
    const info = parseRequestInfo(`/${sub}`);
    if (info.group && cats.isHiddenGroup(info.group)) throw errors.pathNotFound();
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    const res = await fetchAsUser(req, `/openapi/v3/${sub}${query}`);
    if (res.status !== 200) return passThrough(reply, res);
    for (const h of ['cache-control', 'etag', 'expires', 'last-modified']) {
      const v = res.headers[h];
      if (typeof v === 'string') reply.header(h, v);
    }
    return reply.header('content-type', 'application/json').send(filterOpenAPIDocument(JSON.parse(res.body.toString('utf8')), cats));
  });

  // Passthrough, in a context of its own: bodies are buffered (3 MiB at most) and checked here.
  await app.register(async (proxy) => {
    proxy.removeAllContentTypeParsers();
    proxy.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (req, body, done) => {
      try {
        checkBody(String(req.headers['content-type'] ?? ''), body as Buffer);
        req.rawBody = body as Buffer;
        // Handed on as a stream: reply-from would re-encode a parsed JSON body.
        done(null, Readable.from([body], { objectMode: false }));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    await proxy.register(httpProxy, {
      upstream: up.origin,
      prefix: root,
      rewritePrefix: up.basePath || '',
      undici: up.pool as never,
      proxyPayloads: false,
      contentTypesToEncode: [],
      httpMethods: ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'],
      preHandler: async (req: FastifyRequest, reply: FastifyReply) => {
        const path = req.url.slice(root.length).split('?')[0] || '/';
        const info = parseRequestInfo(path);
        if (info.isResourceRequest) {
          const category = cats.categorize({ group: info.group, resource: info.resource });
          if (category === 'hidden') throw errors.pathNotFound();
          if (category === 'denatured') return handleDenatured(req, reply, info, userOf(req), { registry: denatured, up, protobuf });
        } else if (info.group && cats.isHiddenGroup(info.group)) {
          throw errors.pathNotFound();
        }
      },
      replyOptions: {
        rewriteRequestHeaders: (req: FastifyRequest, headers: Record<string, unknown>) =>
          upstreamHeaders(headers as Record<string, string>, userOf(req), up.authorization),
        onResponse: (_req: FastifyRequest, reply: FastifyReply, res: { statusCode: number; headers: Record<string, unknown>; stream: NodeJS.ReadableStream }) => {
          const type = String(res.headers['content-type'] ?? '');
          if (res.statusCode >= 400 && !/json|protobuf|yaml/.test(type)) {
            // kube-apiserver answers some errors (an unknown group's path) in plain text; a client of
            // the view always gets a Status.
            void textOf(res.stream).catch(() => '').then((text) => {
              const status = statusForCode(res.statusCode, text.trim().slice(0, 500) || `HTTP ${res.statusCode}`);
              void reply.removeHeader('content-length').header('content-type', 'application/json').send(status);
            });
            return;
          }
          if (res.headers['content-length'] !== undefined) {
            void reply.send(res.stream);
            return;
          }
          // A streaming answer (watch, logs -f): headers go out now, as kube-apiserver flushes
          // them, not with the first event; Node would otherwise hold them until the first write.
          const raw = reply.raw;
          reply.hijack();
          raw.writeHead(reply.statusCode, reply.getHeaders() as Record<string, string>);
          raw.flushHeaders();
          pipeline(res.stream, raw, () => { /* a client going away ends the stream; nothing to report */ });
        },
        onError: (reply: FastifyReply, { error }: { error: Error }) => {
          const s = errors.serviceUnavailable(`the WDS did not answer: ${error.message}`).status;
          reply.code(s.code).header('content-type', 'application/json').send(s);
        },
      },
    } as never);
  });
}
