// The app's front door: the onRequest hook every request passes before routing is done with it.
// In order: a body announced larger than the limit is refused before anything reads it, a path
// that could address something else upstream is refused (../kube/request-info.ts), health checks
// pass without credentials, the admission webhooks (every route under /admission/) answer only
// the WDS's kube-apiserver, and anyone else is authenticated, then counted against the limits of
// ./http/request-limits.ts until their response closes, as long-running or not in the way
// kube-apiserver counts (under the view root: as the WDS would see the request, which the path
// resolver tells, ./groups/view-paths.ts).
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assertSafePath, isLongRunning, parseRequestInfo } from '../kube/request-info.js';
import { errors, MAX_BODY_BYTES } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';
import { DENATURED_ADMISSION_PATH, MAX_DENATURED_REVIEW_BYTES } from './admission/denatured-webhook.js';
import type { Authenticator } from './auth/authn.js';
import { splitUrl, type ViewPaths } from './groups/view-paths.js';
import type { RequestLimits } from './http/request-limits.js';
import { markLongRunning } from './graceful-shutdown.js';

export interface FrontDoorOptions {
  authenticator: Pick<Authenticator, 'authenticate' | 'authenticateKnown' | 'isKubeApiserver'>;
  /** What users may hold open at once. */
  limits: RequestLimits;
  paths: ViewPaths;
}

// Health, as kube-apiserver serves it: anyone may ask.
const UNAUTHENTICATED = /^\/(healthz|livez|readyz)(\/|$|\?)/;

/**
 * The admission webhooks (./admission/statuscollectors-webhook.ts, and any other route under
 * /admission/): only the WDS's kube-apiserver calls them, with its front-proxy client certificate
 * (its --admission-control-config-file; charts/kubestellar-view/README.md). Judged by the route
 * matched, so no spelling of the path escapes the rule.
 */
const isWebhookRoute = (req: FastifyRequest) => req.routeOptions.url?.startsWith('/admission/') === true;

/** Adds the front door's hook to the app (on the root context: every route's). */
export function installFrontDoor(app: FastifyInstance, { authenticator, limits, paths }: FrontDoorOptions): void {
  // Callback style: this runs on every request, and an async hook costs a promise more.
  app.addHook('onRequest', (req, reply, done) => {
    try {
      rejectOversizedBody(req.raw, req.url.startsWith(DENATURED_ADMISSION_PATH) ? MAX_DENATURED_REVIEW_BYTES : MAX_BODY_BYTES);
      assertSafePath(splitUrl(req.url).path);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (UNAUTHENTICATED.test(req.url)) {
      done();
      return;
    }
    if (isWebhookRoute(req)) {
      if (authenticator.isKubeApiserver(req.raw)) {
        done();
        return;
      }
      // Anyone else: no credentials is 401, a user who is not the kube-apiserver 403.
      authenticator.authenticate(req.raw).then((user) => done(errors.forbidden(
        `User "${user.username}" cannot call the admission webhooks of this server: only the WDS's kube-apiserver may`)), done);
      return;
    }
    const known = authenticator.authenticateKnown(req.raw);
    if (known) {
      admit(req, reply, known, done);
      return;
    }
    authenticator.authenticate(req.raw).then((user) => admit(req, reply, user, done), done);
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
    const { path, query } = splitUrl(req.url);
    // A cluster's view of its upsynced objects is a Kubernetes API of its own below `clusters/<cluster>`.
    const target = paths.resolve(req.url);
    const info = target ? target.info : parseRequestInfo(path);
    // The view's routes classify the same request: resolved once.
    if (target) req.viewInfo = info;
    req.longRunning = isLongRunning(info, req.method, query.slice(1));
    return req.longRunning;
  };
}

/** How much of an oversized body is read and thrown away so the client sees the 413 (not a broken pipe). */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * A body announced larger than the limit (kube-apiserver's; an AdmissionReview of an update carries
 * two objects) is refused before anything reads it. The rest of the
 * upload is drained (up to MAX_DRAIN_BYTES, then the connection is cut), because closing early
 * makes clients report a write error instead of the 413.
 */
function rejectOversizedBody(raw: IncomingMessage, limit: number): void {
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
