// What this server attaches to a fastify request: the user who authenticated (set by the app's
// onRequest hook; absent on health checks), whether the request is long-running (watch, logs, ...:
// it goes to the WDS on the long-running pool) and, under the view root, what its path addresses
// (parsed once for both), declared once with decorateRequest so every request
// object has the same shape; and how to read the body as received (the view's body parser keeps
// bodies as Buffers, 3 MiB at most).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../../kube/status.js';
import type { RequestInfo } from '../../kube/request-info.js';
import type { UserInfo } from '../../kube/user.js';

declare module 'fastify' {
  interface FastifyRequest {
    user?: UserInfo;
    longRunning: boolean;
    /** Under the view root: what the path below the root addresses. */
    viewInfo?: RequestInfo;
  }
}

export function decorateRequests(app: FastifyInstance): void {
  app.decorateRequest('user', undefined);
  app.decorateRequest('longRunning', false);
  app.decorateRequest('viewInfo', undefined);
}

/** The authenticated user; a route that is not behind authentication has none (401). */
export function userOf(req: FastifyRequest): UserInfo {
  if (!req.user) throw errors.unauthorized();
  return req.user;
}

/** The request body as received, or undefined when there was none. */
export function bodyOf(req: FastifyRequest): Buffer | undefined {
  return Buffer.isBuffer(req.body) ? req.body : undefined;
}
