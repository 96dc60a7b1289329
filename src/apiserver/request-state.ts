// What this server attaches to a fastify request: the user who authenticated (set by the app's
// onRequest hook; absent on health checks) and the body as received (set by the view's body
// parser). Declared once with decorateRequest, so every request object has the same shape.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';

declare module 'fastify' {
  interface FastifyRequest {
    user?: UserInfo;
    /** The request body as received (bodies of the view are buffered, 3 MiB at most). */
    rawBody?: Buffer;
  }
}

export function decorateRequests(app: FastifyInstance): void {
  app.decorateRequest('user', undefined);
  app.decorateRequest('rawBody', undefined);
}

/** The authenticated user; a route that is not behind authentication has none (401). */
export function userOf(req: FastifyRequest): UserInfo {
  if (!req.user) throw errors.unauthorized();
  return req.user;
}
