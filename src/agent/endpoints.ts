// The agent's HTTP endpoints (one fastify app per process, plain HTTP on loopback by default):
// /healthz     the process is alive;
// /readyz      200 "ok" when every check passes, else 503 with one line per failing check
//              (ITS unreachable or rejecting the credentials, WEC likewise in pull mode);
// /metrics     the agent's prom-client registry;
// /federatedresources           JSON list of every object the workers placed;
// /federatedresources/notready  the same, only those not ready, with their reasons.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { PlacedResource } from './contract.js';

export interface EndpointSources {
  registry: Registry;
  /** Failing readiness checks, one line each; empty when ready. */
  readiness: () => string[];
  placed: () => PlacedResource[];
}

export function buildEndpoints(src: EndpointSources): FastifyInstance {
  const app = Fastify({ logger: false });
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
