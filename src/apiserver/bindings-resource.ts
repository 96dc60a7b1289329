// The virtual Bindings (cluster-scoped, get/list/watch, Tables): one Binding per BindingPolicy,
// KubeStellar v0.29's shape, computed by the placement controllers and never stored. Served twice
// by the same code: as bindings.view.kubestellar.io for direct clients (./app.ts) and as
// bindings.control.kubestellar.io inside the view, where KubeStellar's tools read them
// (./view-proxy.ts); each answer carries its path's apiVersion. Without controllers (no
// --its-kubeconfig) the list is empty. Access is decided by a SubjectAccessReview on `bindings` in
// the path's group (the caller's `authorize`). Writes are refused as kube-apiserver refuses a verb
// a resource does not have: authorized first (403 without the right), then 405 MethodNotAllowed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { column, type KindPrinter } from '../storage/denatured-printers.js';
import { age } from '../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../kube/objects.js';
import { errors } from '../kube/status.js';
import { wantsTable } from './negotiation.js';
import { objectFilter } from './selectors.js';
import { checkIncludeObject, objectsTable, type TableVersion } from './table.js';
import { VERSION } from './view-group.js';
import { openWatchStream, queryBool } from './watch-stream.js';

/** What serves the Bindings (the placement controller). */
export interface BindingSource {
  bindings(): KubeObject[];
  binding(name: string): KubeObject | undefined;
  bindingsResourceVersion(): string;
  onBindingChange(cb: (policy: string) => void): () => void;
}

interface Query { watch?: string; fieldSelector?: string; labelSelector?: string; includeObject?: string; timeoutSeconds?: string; resourceVersion?: string }

/** A Binding as the placement controller makes it: KubeStellar's shape (empty lists left out). */
interface Binding extends KubeObject {
  metadata: ObjectMeta & { name: string; resourceVersion?: string; creationTimestamp?: string };
  spec: {
    workload: { clusterScope?: unknown[]; namespaceScope?: unknown[] };
    destinations?: Array<{ clusterId: string }>;
  };
  status?: unknown;
}

const BINDING_PRINTER: KindPrinter<Binding> = {
  columns: [
    { ...column('Name', 'string', 'Name of the Binding and of its BindingPolicy'), format: 'name' },
    column('Objects', 'integer', 'Workload objects the policy selects'),
    column('Clusters', 'string', 'The clusters the policy selects'),
    column('Age', 'string', 'Age of the BindingPolicy'),
  ],
  cells: (b, now) => [b.metadata.name, (b.spec.workload.clusterScope?.length ?? 0) + (b.spec.workload.namespaceScope?.length ?? 0),
    (b.spec.destinations ?? []).map((d) => d.clusterId).join(',') || '<none>', age(b.metadata.creationTimestamp, now.getTime())],
};

function table(items: Binding[], version: TableVersion, includeObject: string | undefined, resourceVersion: string | undefined) {
  return objectsTable(items, BINDING_PRINTER, { version, includeObject }, { resourceVersion });
}

/** Field selectors on `metadata.name`, the only field kubectl sends here (others are a 400). */
function nameFilter(fieldSelector: string | undefined): (name: string) => boolean {
  const matches = objectFilter(undefined, fieldSelector, ['metadata.name']);
  return (name) => matches({}, { 'metadata.name': name });
}

/** The verb a write would need, as kube-apiserver's request info names it. */
function writeVerb(method: string, named: boolean): string {
  if (method === 'POST') return 'create';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  return named ? 'delete' : 'deletecollection';
}

/**
 * Registers GET (get, list, watch) and the refused writes of `/apis/<group>/v1alpha1/bindings`
 * on `app` (or a plugin under a prefix). `authorize` checks `bindings` in `group`.
 */
export function registerBindings(app: FastifyInstance, source: BindingSource | undefined,
  authorize: (req: FastifyRequest, verb: string, name?: string) => Promise<void>, group: string): void {
  const groupVersion = `${group}/${VERSION}`;
  const base = `/apis/${groupVersion}/bindings`;
  // The controllers make KubeStellar's apiVersion; each path answers in its own group.
  const asServed = (b: Binding): Binding => (b.apiVersion === groupVersion ? b : { ...b, apiVersion: groupVersion });
  const list = () => ((source?.bindings() ?? []) as Binding[]).map(asServed);
  const one = (name: string) => {
    const b = source?.binding(name) as Binding | undefined;
    return b && asServed(b);
  };
  const rv = () => source?.bindingsResourceVersion() ?? '1';

  app.get<{ Querystring: Query }>(base, async (req, reply) => {
    const watch = queryBool(req.query.watch);
    await authorize(req, watch ? 'watch' : 'list');
    checkIncludeObject(req.query.includeObject);
    if (req.query.labelSelector) throw errors.badRequest('label selectors are not supported on bindings');
    const keep = nameFilter(req.query.fieldSelector);
    const tableVersion = wantsTable(req.headers.accept);
    if (!watch) {
      const items = list().filter((b) => keep(b.metadata.name));
      return tableVersion ? table(items, tableVersion, req.query.includeObject, rv())
        : { apiVersion: groupVersion, kind: 'BindingList', metadata: { resourceVersion: rv() }, items };
    }
    return watchBindings(req, reply, { list, one, rv, source, groupVersion }, keep, tableVersion, req.query.includeObject);
  });

  app.get<{ Params: { name: string }; Querystring: Query }>(`${base}/:name`, async (req) => {
    await authorize(req, 'get', req.params.name);
    checkIncludeObject(req.query.includeObject);
    const b = one(req.params.name);
    if (!b) throw errors.notFound({ group, kind: 'bindings', name: req.params.name });
    const tableVersion = wantsTable(req.headers.accept);
    return tableVersion ? table([b], tableVersion, req.query.includeObject, rv()) : b;
  });

  const refuse = (named: boolean) => async (req: FastifyRequest<{ Params: { name?: string } }>) => {
    await authorize(req, writeVerb(req.method, named), req.params.name);
    throw errors.methodNotAllowed(req.method);
  };
  app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: base, handler: refuse(false) });
  app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: `${base}/:name`, handler: refuse(true) });
}

interface Served {
  list: () => Binding[];
  one: (name: string) => Binding | undefined;
  rv: () => string;
  source: BindingSource | undefined;
  groupVersion: string;
}

/** What a watch compares to tell whether a Binding changed (not its resourceVersion, which always grows). */
const content = (b: Binding) => JSON.stringify([b.metadata.uid, b.metadata.ownerReferences, b.spec, b.status]);

/** Sends every Binding, then an event whenever one changes, until timeoutSeconds or the client leaves. */
function watchBindings(req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, served: Served,
  keep: (name: string) => boolean, tableVersion: TableVersion | undefined, includeObject: string | undefined) {
  const stream = openWatchStream(reply, req.query.timeoutSeconds);
  const sent = new Map<string, string>();
  const send = (type: 'ADDED' | 'MODIFIED' | 'DELETED', b: Binding) =>
    stream.send(type, tableVersion ? table([b], tableVersion, includeObject, b.metadata.resourceVersion) : b);
  for (const b of served.list()) {
    if (!keep(b.metadata.name)) continue;
    sent.set(b.metadata.name, content(b));
    send('ADDED', b);
  }
  const unsubscribe = served.source?.onBindingChange((name) => {
    if (!keep(name)) return;
    const b = served.one(name);
    if (!b) {
      if (sent.delete(name)) send('DELETED', { apiVersion: served.groupVersion, kind: 'Binding', metadata: { name, resourceVersion: served.rv() }, spec: { workload: {} }, status: { observedGeneration: 0 } });
      return;
    }
    const c = content(b);
    if (sent.get(name) === c) return;
    const type = sent.has(name) ? 'MODIFIED' : 'ADDED';
    sent.set(name, c);
    send(type, b);
  });
  if (unsubscribe) stream.onClose(unsubscribe);
  return reply;
}
