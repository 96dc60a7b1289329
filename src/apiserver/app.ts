// The HTTP app of `ksview serve`, assembled (the process around it — connections, controllers,
// listening, shutdown — is wired in src/cli/serve.ts): fastify over HTTPS with TLS client
// certificates requested (front proxy and client CAs from the WDS), the front door on every
// request (./front-door.ts: body limits, authentication but for health checks, the admission
// webhooks answered only for the WDS's kube-apiserver, each user's requests counted against the
// limits of ./http/request-limits.ts), the group view.kubestellar.io (discovery, OpenAPI, the
// virtual `spaces`, `bindings`, `combinedstatuses` and `upsyncedobjects`: ./groups/), the
// admission webhooks (./admission/), /metrics, and the view under its root (./view/, where
// `bindings` and `combinedstatuses` are also served in control.kubestellar.io, `upsyncedobjects`
// in this group, and each cluster's upsynced objects below `clusters/<cluster>`). Every error is
// a Kubernetes Status; no request can crash the process. Tests build it with a stub
// Authenticator/Authorizer and drive it with `inject`.
import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { errors, MAX_BODY_BYTES, statusForCode, toStatus } from '../kube/status.js';
import type { Upstream } from '../kube/upstream.js';
import type { DenaturedRegistry } from '../storage/denatured-registry.js';
import type { KindCategories } from '../storage/kind-categories.js';
import type { ProtobufDecoder } from '../storage/protobuf-decoder.js';
import { bindingPoliciesWebhook } from './admission/bindingpolicies-webhook.js';
import { denaturedWebhook } from './admission/denatured-webhook.js';
import { statusCollectorsWebhook, type CollectorValidator } from './admission/statuscollectors-webhook.js';
import type { AuthnConfig } from './auth/authn-config.js';
import type { Authenticator } from './auth/authn.js';
import type { Authorizer } from './auth/authz.js';
import { SubjectAccess } from './auth/subject-access.js';
import type { BindingSource } from './groups/bindings-resource.js';
import type { CombinedStatusSource } from './groups/combinedstatuses-resource.js';
import { spacesResource, type SpaceInfo } from './groups/spaces-resource.js';
import type { UpsyncedSource } from './groups/upsynced-source.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, GROUP, GROUP_VERSION, VIRTUAL_KINDS, viewRoot } from './groups/view-group.js';
import { openAPIV2, openAPIV3GroupVersion, openAPIV3Index } from './groups/view-openapi.js';
import { ViewPaths } from './groups/view-paths.js';
import { groupResources } from './groups/group-resources.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, wantsAggregatedDiscovery } from './http/negotiation.js';
import { decorateRequests, userOf } from './http/request-state.js';
import { DEFAULT_REQUEST_LIMITS, RequestLimits } from './http/request-limits.js';
import { sendExact } from './http/send-exact.js';
import { installFrontDoor } from './front-door.js';
import { createMetrics, instrument } from './server-metrics.js';
import type { Authorize, SubjectVisibility } from './virtual/read-only-resource.js';
import { view } from './view/view-plugin.js';

export interface AppOptions {
  wdsName: string;
  up: Upstream;
  cats: KindCategories;
  denatured: DenaturedRegistry;
  protobuf?: ProtobufDecoder;
  /** The placement controllers' Bindings (none without an ITS). */
  bindings?: BindingSource;
  /** The status controller's CombinedStatuses (none without an ITS). */
  combinedStatuses?: CombinedStatusSource;
  /** The agents' copies of WEC objects, upsynced (none without an ITS: empty lists, no cluster views). */
  upsynced?: UpsyncedSource;
  /** Compiles a StatusCollector for the admission webhook (none without an ITS: all allowed). */
  validateCollector?: CollectorValidator;
  servingCertPem: string;
  servingKeyPem: string;
  authnConfig: () => AuthnConfig;
  authenticator: Pick<Authenticator, 'authenticate' | 'authenticateKnown' | 'isKubeApiserver'>;
  /** Authorizes requests for the server's own resources; `decide` (with `cached`) the objects the virtual ones speak of. */
  authorizer: Pick<Authorizer, 'authorize' | 'decide'> & Partial<Pick<Authorizer, 'cached'>>;
  /** Readiness beyond "serving": e.g. the WDS answers. */
  ready: () => Promise<boolean>;
  /** True once a graceful shutdown has begun (./graceful-shutdown.ts): /readyz answers 503 at once. */
  shuttingDown?: () => boolean;
  /** What users may hold open at once (default: DEFAULT_REQUEST_LIMITS); shared with the upgrade passthrough. */
  limits?: RequestLimits;
  startedAt?: Date;
  /** The time the UpsyncedObjects Table's ages count to (default: the system clock's; tests fix it). */
  now?: () => Date;
  /** Where the server's own log lines go (default: nowhere). */
  log?: (msg: string) => void;
}


/** The paths of the group's own API, composed once (spaces and bindings are under GROUP_VERSION_PATH, the view root under spaces). */
const GROUP_PATH = `/apis/${GROUP}`;
const GROUP_VERSION_PATH = `/apis/${GROUP_VERSION}`;

/** Fastify over HTTPS, every error a Status: those of routes, of the router and of Node's HTTP parser. */
function createServer(opts: AppOptions, paths: ViewPaths): FastifyInstance {
  const cfg = opts.authnConfig();
  const app = Fastify({
    https: {
      key: opts.servingKeyPem, cert: opts.servingCertPem, ca: cfg.caBundlePem || undefined,
      requestCert: true, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'],
    },
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { maxParamLength: 1000 },
    // Before routing, view URLs take their one spelling: `/api/v1/` reaches the filtered discovery
    // of /api/v1, never the passthrough (./groups/view-paths.ts).
    rewriteUrl: (req) => paths.canonical(req.url ?? '/'),
    return503OnClosing: true,
    // Watches never finish by themselves: on shutdown every connection is closed, clients re-watch.
    forceCloseConnections: true,
    logger: false,
    // Keep long-running watches open: no per-request timeout.
    requestTimeout: 0,
    keepAliveTimeout: 75_000,
    // URLs fastify's router refuses (bad percent-encoding) are a 400 Status too.
    frameworkErrors: (err, _req, reply) => {
      const s = err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_ASYNC_CONSTRAINT'
        ? errors.badRequest(`invalid request: ${err.message}`).status
        : toStatus(err);
      void (reply as FastifyReply).code(s.code).header('content-type', 'application/json').send(s);
    },
    // Requests Node's HTTP parser refuses (unknown methods, oversized headers, garbage) still get
    // a Status, not a bare socket close.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return socket.destroy();
      const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
      const s = tooLarge
        ? statusForCode(431, 'request header fields too large')
        : errors.badRequest(`malformed HTTP request: ${err.code ?? err.message}`).status;
      const body = JSON.stringify(s);
      socket.end(`HTTP/1.1 ${s.code} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    },
  });
  app.setErrorHandler((err, _req, reply) => {
    const status = toStatus(err);
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    // As kube-apiserver: a Status that says when to retry says it in Retry-After too.
    if (status.details?.retryAfterSeconds) reply.header('retry-after', String(status.details.retryAfterSeconds));
    void reply.code(status.code).header('content-type', 'application/json').send(status);
  });
  app.setNotFoundHandler((_req, reply) => {
    const s = errors.pathNotFound().status;
    void reply.code(404).header('content-type', 'application/json').send(s);
  });
  return app;
}

/** Health, metrics, and the group's own discovery and OpenAPI. */
function serverRoutes(app: FastifyInstance, opts: AppOptions, metrics: ReturnType<typeof createMetrics>): void {
  // Health, as kube-apiserver serves it: anyone may ask.
  const ok = async (_req: FastifyRequest, reply: FastifyReply) => reply.type('text/plain').send('ok');
  app.get('/healthz', ok);
  app.get('/livez', ok);
  app.get('/readyz', async (_req, reply) => {
    if (opts.shuttingDown?.()) return reply.code(503).type('text/plain').send('[-]shutdown failed: the server is shutting down\nreadyz check failed');
    if (!(await opts.ready())) return reply.code(503).type('text/plain').send('[-]wds failed: the WDS does not answer\nreadyz check failed');
    return reply.type('text/plain').send('ok');
  });
  app.get('/metrics', async (req, reply) => {
    await opts.authorizer.authorize(userOf(req), { nonResource: { verb: 'get', path: '/metrics' } });
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  // The group's own discovery: any authenticated user, as system:discovery grants.
  app.get('/apis', async (req, reply) => {
    const v = wantsAggregatedDiscovery(req.headers.accept);
    if (v) return sendExact(reply.header('vary', 'Accept'), v === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, aggregatedDiscovery(v));
    return apiGroupList();
  });
  app.get(GROUP_PATH, async () => ({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup }));
  app.get(GROUP_VERSION_PATH, async () => apiResourceList());
  app.get('/openapi/v2', async () => openAPIV2());
  const v3doc = openAPIV3GroupVersion();
  const v3hash = createHash('sha512').update(JSON.stringify(v3doc)).digest('hex').slice(0, 32).toUpperCase();
  app.get('/openapi/v3', async () => openAPIV3Index(v3hash));
  app.get(`/openapi/v3${GROUP_VERSION_PATH}`, async (_req, reply) => reply.header('etag', `"${v3hash}"`).send(v3doc));
}

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const paths = new ViewPaths(viewRoot(opts.wdsName));
  const limits = opts.limits ?? new RequestLimits(DEFAULT_REQUEST_LIMITS);
  const app = createServer(opts, paths);
  decorateRequests(app);
  const metrics = createMetrics(() => limits.usage());
  instrument(app, metrics, paths);
  installFrontDoor(app, { authenticator: opts.authenticator, limits, paths });
  serverRoutes(app, opts, metrics);

  // The group's own resources: a SubjectAccessReview of the user on each.
  const authorizeOn = (resource: string, group = GROUP): Authorize => (req, verb, namespace, name) =>
    opts.authorizer.authorize(userOf(req), { resource: { verb, group, resource, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) } });
  const space: SpaceInfo = {
    name: opts.wdsName, wdsServer: opts.up.origin + opts.up.basePath, viewPath: paths.root, startedAt: opts.startedAt ?? new Date(),
  };
  await app.register(spacesResource, { space, authorize: authorizeOn('spaces') });
  // And on what each Binding, CombinedStatus and UpsyncedObject speaks of: the user's own rights, object by object.
  const access = new SubjectAccess(opts.authorizer, opts.cats);
  const visibility: SubjectVisibility = (req) => ({
    resolve: (subjects) => access.resolve(userOf(req), subjects),
    everywhere: (kinds) => access.everywhere(userOf(req), kinds),
  });
  const sources = { bindings: opts.bindings, combinedStatuses: opts.combinedStatuses, upsynced: opts.upsynced };
  await app.register(groupResources, { group: GROUP, kinds: VIRTUAL_KINDS, sources, authorizeOn, visibility, now: opts.now });
  const log = opts.log ?? (() => undefined);
  await app.register(statusCollectorsWebhook, { validate: opts.validateCollector });
  await app.register(bindingPoliciesWebhook, { authorizer: opts.authorizer, log });
  await app.register(denaturedWebhook, { registry: opts.denatured, log });

  // Inside the view the same resources are also KubeStellar's, in control.kubestellar.io.
  await app.register(view, {
    paths, up: opts.up, cats: opts.cats, denatured: opts.denatured, protobuf: opts.protobuf, sources, authorizeOn, visibility, now: opts.now,
  });
  return app;
}
