// Prometheus metrics of `ksview agent` (prom-client), served on /metrics: works held, applies and
// their latency, errors, work-queue depth, and objects kept awaiting a handover, by cluster. One registry per agent process.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createAgentMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ksview_agent_' });
  const works = new Gauge({
    name: 'ksview_agent_manifestworks', help: 'ManifestWorks held for a cluster.', labelNames: ['cluster'], registers: [registry],
  });
  const applies = new Counter({
    name: 'ksview_agent_applies_total', help: 'Manifests applied to a WEC, by cluster and outcome (applied, failed).',
    labelNames: ['cluster', 'outcome'], registers: [registry],
  });
  const applyDuration = new Histogram({
    name: 'ksview_agent_apply_duration_seconds', help: 'Time to apply one ManifestWork (all its manifests), by cluster.',
    labelNames: ['cluster'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry],
  });
  const errors = new Counter({
    name: 'ksview_agent_errors_total', help: 'Errors by cluster and where (apply, status, gc, registration, health, upsync-write, upsync-status, upsync-watch, upsync-authorize).',
    labelNames: ['cluster', 'where'], registers: [registry],
  });
  const queueDepth = new Gauge({
    name: 'ksview_agent_queue_depth', help: 'Keys waiting in a cluster\'s work queue.', labelNames: ['cluster'], registers: [registry],
  });
  const handoverAwaiting = new Gauge({
    name: 'ksview_agent_handover_awaiting_objects',
    help: 'Objects a released or deleted work keeps in a cluster until the work that carries them now has applied them (a receiver refused keeps them there).',
    labelNames: ['cluster'], registers: [registry],
  });
  return { registry, works, applies, applyDuration, errors, queueDepth, handoverAwaiting };
}

export type AgentMetrics = ReturnType<typeof createAgentMetrics>;
