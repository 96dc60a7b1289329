// Prometheus metrics of `ksview serve` (prom-client): requests by verb, route kind and code, and
// their latency, the requests users hold open now (long-running and ordinary, as
// ./http/request-limits.ts counts them; its refusals are the code-429 requests), plus Node's process metrics. Recorded on every request: the labelled children
// are looked up once per (method, scope, code), not hashed from label objects each time.
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Scope, ViewPaths } from './groups/view-paths.js';

export function createMetrics(usage?: () => { longRunning: number; inflight: number }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ksview_' });
  const requests = new Counter({
    name: 'ksview_apiserver_requests_total', help: 'Requests served, by method, kind of route and HTTP code.',
    labelNames: ['method', 'scope', 'code'], registers: [registry],
  });
  const duration = new Histogram({
    name: 'ksview_apiserver_request_duration_seconds', help: 'Time until the response ended (a watch: its whole life), by method and kind of route.',
    labelNames: ['method', 'scope'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
    registers: [registry],
  });
  if (usage) {
    new Gauge({
      name: 'ksview_apiserver_long_running_requests', help: 'Long-running requests (watches, logs, exec, attach, port-forward, proxy) open now, of all users.',
      registers: [registry], collect() { this.set(usage().longRunning); },
    });
    new Gauge({
      name: 'ksview_apiserver_requests_inflight', help: 'Other requests in flight now, of all users.',
      registers: [registry], collect() { this.set(usage().inflight); },
    });
  }
  return { registry, requests, duration };
}

export type Metrics = ReturnType<typeof createMetrics>;

export function instrument(app: FastifyInstance, metrics: Metrics, paths: ViewPaths): void {
  const children = new Map<string, { requests: { inc(): void }; duration: { observe(v: number): void } }>();
  const childrenOf = (method: string, scope: Scope, code: number) => {
    const key = `${method} ${scope} ${code}`;
    let c = children.get(key);
    if (!c) {
      c = { requests: metrics.requests.labels(method, scope, String(code)), duration: metrics.duration.labels(method, scope) };
      children.set(key, c);
    }
    return c;
  };
  app.addHook('onResponse', (req, reply, done) => {
    const c = childrenOf(req.method, paths.scope(req.url), reply.statusCode);
    c.requests.inc();
    c.duration.observe(reply.elapsedTime / 1000);
    done();
  });
}
