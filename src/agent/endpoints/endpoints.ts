// The agent's HTTP endpoints (one fastify app per process; HTTPS when it listens, src/agent/agent-process.ts):
// /healthz     the process is alive;
// /livez       the same;
// /readyz      200 "ok" when every check passes, else 503 with one line per failing check
//              (ITS unreachable or rejecting the credentials, WEC likewise in pull mode);
// /metrics     the agent's prom-client registry;
// /federatedresources           JSON list of every object the workers placed;
// /federatedresources/notready  the same, only those not ready, with their reasons.
// Only /healthz, /livez and /readyz are open, as Kubernetes components leave them. Every other
// request (any path, routes added later such as the push agent's /clusters, and unknown paths
// alike) is authenticated and authorized as kubelet does it (`auth`: the cluster the agent
// delegates to decides): no credential it vouches for is a 401 Status, a user it does not allow to
// `get` the path a 403 Status, both before any route runs.
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';
import type { Decision, NonResourceRequest } from '../../kube/delegated-auth.js';
import { errors, type StatusError } from '../../kube/status.js';
import type { UserInfo } from '../../kube/user.js';
import type { PlacedResource } from '../shared/contract.js';

/** Paths anyone may read: liveness and readiness, for probes that carry no credential. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz']);

export interface EndpointAuth {
  authenticate(req: IncomingMessage): Promise<UserInfo | undefined>;
  authorize(user: UserInfo, request: NonResourceRequest): Promise<Decision>;
}

export interface EndpointSources {
  registry: Registry;
  /** Failing readiness checks, one line each; empty when ready. */
  readiness: () => string[];
  placed: () => PlacedResource[];
  auth: EndpointAuth;
  /** Why requests could not be judged (the delegate unreachable, or refusing the agent's credentials): once per reason. */
  log?: (line: string) => void;
  /** HTTPS: the serving certificate and key (PEM); plain HTTP without (app.inject in tests only). */
  https?: { certPem: string; keyPem: string };
}

const sendStatus = (reply: FastifyReply, err: StatusError) => reply.code(err.code).type('application/json').send(JSON.stringify(err.status));

/** The non-resource request of an HTTP request, as kube-apiserver names it: lowercase method (HEAD is get), path without query. */
function nonResource(req: IncomingMessage): NonResourceRequest {
  const method = (req.method ?? 'GET').toLowerCase();
  return { verb: method === 'head' ? 'get' : method, path: (req.url ?? '/').split('?')[0]! };
}

export function buildEndpoints(src: EndpointSources): FastifyInstance {
  // requestCert without rejectUnauthorized: a client certificate is asked for and judged by
  // `auth` against the delegate's client CAs; clients without one still connect (tokens).
  const app = src.https
    ? Fastify({ logger: false, https: { cert: src.https.certPem, key: src.https.keyPem, requestCert: true, rejectUnauthorized: false } }) as unknown as FastifyInstance
    : Fastify({ logger: false });
  // A failing delegate is said once per distinct reason, however many requests meet it.
  let said = '';
  const log = (line: string) => { if (line !== said) (src.log ?? (() => {}))(line); said = line; };
  app.addHook('onRequest', async (req, reply) => {
    const request = nonResource(req.raw);
    if (OPEN_PATHS.has(request.path)) return;
    let user: UserInfo | undefined;
    try {
      user = await src.auth.authenticate(req.raw);
    } catch (err) {
      log(`endpoints: cannot review a bearer token (answering 401): ${(err as Error).message.split('\n')[0]}`);
    }
    if (!user) return sendStatus(reply, errors.unauthorized());
    let decision: Decision;
    try {
      decision = await src.auth.authorize(user, request);
    } catch (err) {
      log(`endpoints: cannot ask for an authorization decision (answering 500): ${(err as Error).message.split('\n')[0]}`);
      return sendStatus(reply, errors.internal('the authorizer could not be reached'));
    }
    if (!decision.allowed) return sendStatus(reply, errors.forbidden(`forbidden: User "${user.username}" cannot ${request.verb} path "${request.path}"`));
  });
  app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok'));
  app.get('/livez', async (_req, reply) => reply.type('text/plain').send('ok'));
  app.get('/readyz', async (_req, reply) => {
    const problems = src.readiness();
    if (problems.length === 0) return reply.type('text/plain').send('ok');
    return reply.code(503).type('text/plain').send(`${problems.join('\n')}\n`);
  });
  app.get('/metrics', async (_req, reply) => reply.type(src.registry.contentType).send(await src.registry.metrics()));
  app.get('/federatedresources', async () => ({ items: src.placed() }));
  app.get('/federatedresources/notready', async () => ({ items: src.placed().filter((p) => !p.ready) }));
  return app;
}
