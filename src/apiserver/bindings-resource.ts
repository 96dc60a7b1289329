// The virtual Bindings (cluster-scoped, get/list/watch, Tables): one Binding per BindingPolicy,
// KubeStellar v0.29's shape, computed by the placement controllers and never stored. Served twice
// by the same code: as bindings.view.kubestellar.io for direct clients (./app.ts) and as
// bindings.control.kubestellar.io inside the view, where KubeStellar's tools read them
// (./view-proxy.ts); each answer carries its path's apiVersion. Without controllers (no
// --its-kubeconfig) the list is empty. Access is decided by a SubjectAccessReview on `bindings` in
// the path's group (the caller's `authorize`). Writes are refused as kube-apiserver refuses a verb
// a resource does not have: authorized first (403 without the right), then 405 MethodNotAllowed.
// Lists and watches follow kube-apiserver's resourceVersion rules (./virtual-collection.ts): each
// Binding carries the resourceVersion of its last change, a watch from a list's resourceVersion
// gets only what changed after it, DELETED carries the last state, bookmarks when asked.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { column, type KindPrinter } from '../storage/denatured-printers.js';
import { age } from '../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../kube/objects.js';
import { errors } from '../kube/status.js';
import { wantsTable } from './negotiation.js';
import { objectFilter } from './selectors.js';
import { checkIncludeObject, objectsTable, type TableVersion } from './table.js';
import { VERSION } from './view-group.js';
import { VirtualCollection } from './virtual-collection.js';
import { listOrWatch } from './virtual-serving.js';
import { queryBool } from './watch-stream.js';

/** What serves the Bindings (the placement controller). */
export interface BindingSource {
  bindings(): KubeObject[];
  binding(name: string): KubeObject | undefined;
  onBindingChange(cb: (policy: string) => void): () => void;
}

interface Query {
  watch?: string; fieldSelector?: string; labelSelector?: string; includeObject?: string; timeoutSeconds?: string;
  resourceVersion?: string; resourceVersionMatch?: string; sendInitialEvents?: string; allowWatchBookmarks?: string; continue?: string;
}

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
  const feed = feedOf(source);

  app.get<{ Querystring: Query }>(base, async (req, reply) => {
    const watch = queryBool(req.query.watch);
    await authorize(req, watch ? 'watch' : 'list');
    checkIncludeObject(req.query.includeObject);
    if (req.query.labelSelector) throw errors.badRequest('label selectors are not supported on bindings');
    const keep = nameFilter(req.query.fieldSelector);
    const tableVersion = wantsTable(req.headers.accept);
    feed.flush();
    return listOrWatch(reply, watch, req.query, {
      collection: feed.collection,
      keep: (b) => keep(b.metadata.name),
      list: (items, rv) => {
        const served = items.map(asServed).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
        return tableVersion ? table(served, tableVersion, req.query.includeObject, rv) : { apiVersion: groupVersion, kind: 'BindingList', metadata: { resourceVersion: rv }, items: served };
      },
      event: (b) => (tableVersion ? table([asServed(b)], tableVersion, req.query.includeObject, b.metadata.resourceVersion) : asServed(b)),
      type: { apiVersion: groupVersion, kind: 'Binding' },
    });
  });

  app.get<{ Params: { name: string }; Querystring: Query }>(`${base}/:name`, async (req) => {
    await authorize(req, 'get', req.params.name);
    checkIncludeObject(req.query.includeObject);
    feed.flush();
    const found = feed.collection.get(req.params.name);
    if (!found) throw errors.notFound({ group, kind: 'bindings', name: req.params.name });
    const b = asServed(found);
    const tableVersion = wantsTable(req.headers.accept);
    return tableVersion ? table([b], tableVersion, req.query.includeObject, b.metadata.resourceVersion) : b;
  });

  const refuse = (named: boolean) => async (req: FastifyRequest<{ Params: { name?: string } }>) => {
    await authorize(req, writeVerb(req.method, named), req.params.name);
    throw errors.methodNotAllowed(req.method);
  };
  app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: base, handler: refuse(false) });
  app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: `${base}/:name`, handler: refuse(true) });
}

/** What tells whether a Binding changed (not its resourceVersion). */
const content = (b: Binding) => JSON.stringify([b.metadata.uid, b.metadata.ownerReferences, b.metadata.generation, b.spec, b.status]);

/** How long the controllers' changes are gathered before the Bindings are recomputed for open watches. */
const COALESCE_MS = 100;

/**
 * The Bindings of one source as a served collection. A Binding the controllers say may have
 * changed is recomputed before the next read (so no read is stale) and, while some watch is open,
 * after COALESCE_MS (a burst of placements — every object of a policy — recomputes it once). With
 * nobody watching nothing is recomputed: a Binding of thousands of objects is not rebuilt for
 * every placement (measured: ksview serve's RSS in the placement bench doubled when it was).
 */
class BindingsFeed {
  readonly collection = new VirtualCollection<Binding>(content);
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly source: BindingSource | undefined) {
    if (!source) return;
    for (const b of source.bindings() as Binding[]) this.collection.set(b.metadata.name, b);
    source.onBindingChange((name) => {
      this.dirty.add(name);
      if (this.collection.watched()) this.timer ??= setTimeout(() => this.flush(), COALESCE_MS).unref();
    });
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const name of this.dirty) this.collection.set(name, this.source?.binding(name) as Binding | undefined);
    this.dirty.clear();
  }
}

/** One feed per source: both paths (view.kubestellar.io, control.kubestellar.io) serve the same Bindings and resourceVersions. */
const feeds = new WeakMap<object, BindingsFeed>();
const NO_SOURCE = {};
function feedOf(source: BindingSource | undefined): BindingsFeed {
  const key = source ?? NO_SOURCE;
  let f = feeds.get(key);
  if (!f) feeds.set(key, (f = new BindingsFeed(source)));
  return f;
}

