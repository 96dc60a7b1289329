// The virtual resource bindings.view.kubestellar.io (cluster-scoped, get/list/watch, Tables): one
// Binding per BindingPolicy, KubeStellar's shape, computed by the placement controllers and never
// stored. Without controllers (no --its-kubeconfig) the list is empty. Access is decided by a
// SubjectAccessReview on `bindings` in view.kubestellar.io, as for spaces.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { wantsTable } from './negotiation.js';
import { checkIncludeObject } from './spaces-resource.js';
import { errors } from '../kube/status.js';
import { GROUP, GROUP_VERSION } from './view-group.js';
import { age } from '../kube/duration.js';

type Obj = Record<string, any>;

/** What serves the Bindings (the placement controller). */
export interface BindingSource {
  bindings(): Obj[];
  binding(name: string): Obj | undefined;
  bindingsResourceVersion(): string;
  onBindingChange(cb: (policy: string) => void): () => void;
}

interface Query { watch?: string; fieldSelector?: string; labelSelector?: string; includeObject?: string; timeoutSeconds?: string; resourceVersion?: string }


function table(items: Obj[], version: 'v1' | 'v1beta1', includeObject: string | undefined, rv: string) {
  const now = Date.now();
  return {
    kind: 'Table', apiVersion: `meta.k8s.io/${version}`, metadata: { resourceVersion: rv },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the Binding and of its BindingPolicy', priority: 0 },
      { name: 'Objects', type: 'integer', format: '', description: 'Workload objects the policy selects', priority: 0 },
      { name: 'Clusters', type: 'string', format: '', description: 'The clusters the policy selects', priority: 0 },
      { name: 'Age', type: 'string', format: '', description: 'Age of the BindingPolicy', priority: 0 },
    ],
    rows: items.map((b) => ({
      cells: [b.metadata.name, b.spec.workload.clusterScope.length + b.spec.workload.namespaceScope.length,
        (b.spec.destinations as Obj[]).map((d) => d.clusterId).join(',') || '<none>', age(b.metadata.creationTimestamp, now)],
      ...(includeObject === 'None' ? {} : { object: includeObject === 'Object' ? b : { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: b.metadata } }),
    })),
  };
}

/** `metadata.name=x` / `metadata.name!=x` field selectors, the only field kubectl sends here. */
function nameFilter(fieldSelector: string | undefined): (name: string) => boolean {
  if (!fieldSelector) return () => true;
  const tests = fieldSelector.split(',').map((t) => {
    const m = /^metadata\.name(==|=|!=)(.*)$/.exec(t.trim());
    if (!m) throw errors.badRequest(`field label not supported: ${t.split(/[!=]/)[0]}`);
    return m[1] === '!=' ? (n: string) => n !== m[2] : (n: string) => n === m[2];
  });
  return (name) => tests.every((f) => f(name));
}

export function registerBindings(app: FastifyInstance, source: BindingSource | undefined,
  authorize: (req: FastifyRequest, verb: string, name?: string) => Promise<void>): void {
  const base = `/apis/${GROUP_VERSION}/bindings`;
  const list = () => source?.bindings() ?? [];
  const rv = () => source?.bindingsResourceVersion() ?? '1';

  app.get<{ Querystring: Query }>(base, async (req, reply) => {
    const watch = req.query.watch === 'true' || req.query.watch === '1';
    await authorize(req, watch ? 'watch' : 'list');
    checkIncludeObject(req.query.includeObject);
    if (req.query.labelSelector) throw errors.badRequest('label selectors are not supported on bindings');
    const keep = nameFilter(req.query.fieldSelector);
    const tableVersion = wantsTable(req.headers.accept);
    if (!watch) {
      const items = list().filter((b) => keep(b.metadata.name));
      return tableVersion ? table(items, tableVersion, req.query.includeObject, rv())
        : { apiVersion: GROUP_VERSION, kind: 'BindingList', metadata: { resourceVersion: rv() }, items };
    }
    return watchBindings(req, reply, source, keep, tableVersion, req.query.includeObject);
  });

  app.get<{ Params: { name: string }; Querystring: Query }>(`${base}/:name`, async (req) => {
    await authorize(req, 'get', req.params.name);
    checkIncludeObject(req.query.includeObject);
    const b = source?.binding(req.params.name);
    if (!b) throw errors.notFound({ group: GROUP, kind: 'bindings', name: req.params.name });
    const tableVersion = wantsTable(req.headers.accept);
    return tableVersion ? table([b], tableVersion, req.query.includeObject, rv()) : b;
  });
}

/** Sends every Binding, then an event whenever one changes, until timeoutSeconds or the client leaves. */
function watchBindings(req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, source: BindingSource | undefined,
  keep: (name: string) => boolean, tableVersion: 'v1' | 'v1beta1' | undefined, includeObject: string | undefined) {
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'cache-control': 'no-cache' });
  const sent = new Map<string, string>();
  const send = (type: string, b: Obj) => {
    const object = tableVersion ? table([b], tableVersion, includeObject, b.metadata.resourceVersion) : b;
    raw.write(`${JSON.stringify({ type, object })}\n`);
  };
  for (const b of source?.bindings() ?? []) {
    if (!keep(b.metadata.name)) continue;
    sent.set(b.metadata.name, JSON.stringify(b.spec));
    send('ADDED', b);
  }
  const unsubscribe = source?.onBindingChange((name) => {
    if (!keep(name)) return;
    const b = source.binding(name);
    if (!b) {
      if (sent.delete(name)) send('DELETED', { apiVersion: GROUP_VERSION, kind: 'Binding', metadata: { name, resourceVersion: source.bindingsResourceVersion() }, spec: { workload: { clusterScope: [], namespaceScope: [] }, destinations: [] } });
      return;
    }
    const spec = JSON.stringify(b.spec);
    if (sent.get(name) === spec) return;
    const type = sent.has(name) ? 'MODIFIED' : 'ADDED';
    sent.set(name, spec);
    send(type, b);
  });
  const timeout = Math.min(Number(req.query.timeoutSeconds ?? 1800) || 1800, 3600);
  const timer = setTimeout(() => raw.end(), timeout * 1000);
  raw.on('close', () => { clearTimeout(timer); unsubscribe?.(); });
  return reply.hijack();
}
