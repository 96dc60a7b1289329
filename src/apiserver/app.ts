// The HTTP app of `ksview serve` (the apiserver room; the process around it — connections,
// controllers, listening, shutdown — is wired in src/cli/serve.ts): fastify over HTTPS with TLS
// client certificates requested (front proxy and client CAs from the WDS), authentication on every
// request but health checks, the admission webhooks (every route under /admission/) answered only
// for the WDS's kube-apiserver itself, each user's requests counted against the limits of
// ./http/request-limits.ts, the group view.kubestellar.io (discovery, OpenAPI, the virtual
// `spaces`, `bindings`, `combinedstatuses` and `upsyncedobjects`), /metrics, and the view under its
// root (where `bindings` and `combinedstatuses` are also served in control.kubestellar.io,
// `upsyncedobjects` in this group, and each cluster's upsynced objects below `clusters/<cluster>`). Every error is
// a Kubernetes Status; no request can crash the process. Tests build it with a stub
// Authenticator/Authorizer and drive it with `inject`.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DenaturedRegistry } from '../storage/denatured-registry.js';
import type { ProtobufDecoder } from '../storage/protobuf-decoder.js';
import { registerBindings, type BindingSource } from './groups/bindings-resource.js';
import { registerCombinedStatuses, type CombinedStatusSource } from './groups/combinedstatuses-resource.js';
import { registerUpsyncedObjects } from './groups/upsyncedobjects-resource.js';
import { clusterViewPath } from './groups/upsynced-cluster-view.js';
import type { UpsyncedSource } from './groups/upsynced-source.js';
import type { KindCategories } from '../storage/kind-categories.js';
import type { Upstream } from '../kube/upstream.js';
import { registerAdmission, type CollectorValidator } from './admission/statuscollectors-webhook.js';
import { registerPolicyAdmission } from './admission/bindingpolicies-webhook.js';
import { DENATURED_ADMISSION_PATH, MAX_DENATURED_REVIEW_BYTES, registerDenaturedWebhook } from './admission/denatured-webhook.js';
import type { AuthnConfig } from './auth/authn-config.js';
import type { Authenticator } from './auth/authn.js';
import type { Authorizer } from './auth/authz.js';
import { createMetrics, instrument } from './server-metrics.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, wantsAggregatedDiscovery } from './http/negotiation.js';
import { assertSafePath } from '../kube/request-info.js';
import { registerSpaces, type SpaceInfo } from './groups/spaces-resource.js';
import { errors, MAX_BODY_BYTES, statusForCode, toStatus } from '../kube/status.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, GROUP, GROUP_VERSION, viewRoot } from './groups/view-group.js';
import { openAPIV2, openAPIV3GroupVersion, openAPIV3Index } from './groups/view-openapi.js';
import { SubjectAccess } from './auth/subject-access.js';
import type { Authorize, SubjectVisibility } from './virtual/read-only-resource.js';
import { registerView } from './view/view-plugin.js';
import { canonicalViewUrl } from './groups/view-paths.js';
import { decorateRequests, userOf } from './http/request-state.js';
import { DEFAULT_REQUEST_LIMITS, RequestLimits } from './http/request-limits.js';
import { isLongRunning, parseRequestInfo } from '../kube/request-info.js';
import { markLongRunning } from './graceful-shutdown.js';
import type { UserInfo } from '../kube/user.js';
import { sendExact } from './http/send-exact.js';
import { createHash } from 'node:crypto';

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


// Health, as kube-apiserver serves it: anyone may ask.
const UNAUTHENTICATED = /^\/(healthz|livez|readyz)(\/|$|\?)/;

/**
 * The admission webhooks (./admission/statuscollectors-webhook.ts, and any other route under /admission/): only the WDS's
 * kube-apiserver calls them, with its front-proxy client certificate (its
 * --admission-control-config-file; charts/kubestellar-view/README.md). Judged by the route matched, so no
 * spelling of the path escapes the rule.
 */
const isWebhookRoute = (req: FastifyRequest) => req.routeOptions.url?.startsWith('/admission/') === true;

/** The paths of the group's own API, composed once (spaces and bindings are under GROUP_VERSION_PATH, the view root under spaces). */
const GROUP_PATH = `/apis/${GROUP}`;
const GROUP_VERSION_PATH = `/apis/${GROUP_VERSION}`;

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const root = viewRoot(opts.wdsName);
  const cfg = opts.authnConfig();
  const limits = opts.limits ?? new RequestLimits(DEFAULT_REQUEST_LIMITS);
  const app = Fastify({
    https: {
      key: opts.servingKeyPem, cert: opts.servingCertPem, ca: cfg.caBundlePem || undefined,
      requestCert: true, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'],
    },
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { maxParamLength: 1000 },
    // Before routing, view URLs take their one spelling: `/api/v1/` reaches the filtered discovery
    // of /api/v1, never the passthrough (./groups/view-paths.ts).
    rewriteUrl: (req) => canonicalViewUrl(req.url ?? '/', root),
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
  decorateRequests(app);
  const metrics = createMetrics(() => limits.usage());
  instrument(app, metrics, root);

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

  // Callback style: this runs on every request, and an async hook costs a promise more.
  app.addHook('onRequest', (req, reply, done) => {
    try {
      rejectOversizedBody(req.raw, req.url.startsWith(DENATURED_ADMISSION_PATH) ? MAX_DENATURED_REVIEW_BYTES : MAX_BODY_BYTES);
      const q = req.url.indexOf('?');
      assertSafePath(q < 0 ? req.url : req.url.slice(0, q));
    } catch (err) {
      done(err as Error);
      return;
    }
    if (UNAUTHENTICATED.test(req.url)) {
      done();
      return;
    }
    if (isWebhookRoute(req)) {
      if (opts.authenticator.isKubeApiserver(req.raw)) {
        done();
        return;
      }
      // Anyone else: no credentials is 401, a user who is not the kube-apiserver 403.
      opts.authenticator.authenticate(req.raw).then((user) => done(errors.forbidden(
        `User "${user.username}" cannot call the admission webhooks of this server: only the WDS's kube-apiserver may`)), done);
      return;
    }
    const known = opts.authenticator.authenticateKnown(req.raw);
    if (known) {
      admit(req, reply, known, done);
      return;
    }
    opts.authenticator.authenticate(req.raw).then((user) => admit(req, reply, user, done), done);
  });

  /** The user is known: count the request against their limits until its response closes. */
  const admit = (req: FastifyRequest, reply: FastifyReply, user: UserInfo, done: (err?: Error) => void) => {
    req.user = user;
    let release;
    try {
      const long = longRunning(req);
    release = limits.acquire(user, long);
    // A graceful shutdown ends these rather than waiting for them.
    if (long) markLongRunning(reply.raw);
    } catch (err) {
      done(err as Error);
      return;
    }
    // The client may have left while it was authenticated: its 'close' came already.
    if (reply.raw.destroyed) release();
    else reply.raw.once('close', release);
    done();
  };

  /** Whether kube-apiserver would count the request as long-running (under the view root: as the WDS would see it). */
  const longRunning = (req: FastifyRequest): boolean => {
    const url = req.url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    const inView = path.startsWith(root) && (path.length === root.length || path.charCodeAt(root.length) === 47 /* / */);
    const below = inView ? path.slice(root.length) || '/' : path;
    // A cluster's view of its upsynced objects is a Kubernetes API of its own below `clusters/<cluster>`.
    const info = parseRequestInfo(inView ? clusterViewPath(below)?.path ?? below : below);
    // The view's routes classify the same request: parsed once.
    if (inView) req.viewInfo = info;
    req.longRunning = isLongRunning(info, req.method, query);
    return req.longRunning;
  };

  const info: SpaceInfo = {
    name: opts.wdsName, wdsServer: opts.up.origin + opts.up.basePath, viewPath: root, startedAt: opts.startedAt ?? new Date(),
  };

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

  // The group's own resources: a SubjectAccessReview of the user on each.
  const authorizeOn = (resource: string, group = GROUP): Authorize => (req, verb, namespace, name) =>
    opts.authorizer.authorize(userOf(req), { resource: { verb, group, resource, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) } });
  registerSpaces(app, info, authorizeOn('spaces'));
  // And on what each Binding and CombinedStatus speaks of: the user's own rights, object by object.
  const access = new SubjectAccess(opts.authorizer, opts.cats);
  const visibility: SubjectVisibility = (req) => ({
    resolve: (subjects) => access.resolve(userOf(req), subjects),
    everywhere: (kinds) => access.everywhere(userOf(req), kinds),
  });
  registerBindings(app, opts.bindings, authorizeOn('bindings'), GROUP, visibility);
  registerCombinedStatuses(app, opts.combinedStatuses, authorizeOn('combinedstatuses'), GROUP, visibility);
  registerUpsyncedObjects(app, opts.upsynced, authorizeOn('upsyncedobjects'), GROUP, visibility, opts.now);
  registerAdmission(app, opts.validateCollector);
  registerPolicyAdmission(app, opts.authorizer, opts.log ?? (() => undefined));
  registerDenaturedWebhook(app, opts.denatured, opts.log ?? (() => undefined));

  // Inside the view the same resources are also KubeStellar's, in control.kubestellar.io.
  await registerView(app, {
    root, up: opts.up, cats: opts.cats, denatured: opts.denatured, protobuf: opts.protobuf,
    bindings: opts.bindings, combinedStatuses: opts.combinedStatuses, upsynced: opts.upsynced, authorizeOn, visibility, now: opts.now,
  });
  return app;
}

/** How much of an oversized body is read and thrown away so the client sees the 413 (not a broken pipe). */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * A body announced larger than the limit (kube-apiserver's; an AdmissionReview of an update carries
 * two objects) is refused before anything reads it. The rest of the
 * upload is drained (up to MAX_DRAIN_BYTES, then the connection is cut), because closing early
 * makes clients report a write error instead of the 413.
 */
function rejectOversizedBody(raw: import('node:http').IncomingMessage, limit: number): void {
  const length = Number(raw.headers['content-length'] ?? 0);
  if (!(length > limit)) return;
  let drained = 0;
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) raw.socket.destroy();
  });
  raw.resume();
  throw errors.requestEntityTooLarge(limit);
}
