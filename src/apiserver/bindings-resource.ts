// The virtual resource bindings.view.kubestellar.io (cluster-scoped, get/list/watch, Tables): one
// Binding per BindingPolicy, KubeStellar's shape, computed by the placement controllers and never
// stored. Without controllers (no --its-kubeconfig) the list is empty. Access is decided by a
// SubjectAccessReview on `bindings` in view.kubestellar.io, as for spaces.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { column, type KindPrinter } from '../storage/denatured-printers.js';
import { age } from '../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../kube/objects.js';
import { errors } from '../kube/status.js';
import { wantsTable } from './negotiation.js';
import { objectFilter } from './selectors.js';
import { checkIncludeObject, objectsTable, type TableVersion } from './table.js';
import { GROUP, GROUP_VERSION } from './view-group.js';
import { openWatchStream, queryBool } from './watch-stream.js';

/** What serves the Bindings (the placement controller). */
export interface BindingSource {
  bindings(): KubeObject[];
  binding(name: string): KubeObject | undefined;
  bindingsResourceVersion(): string;
  onBindingChange(cb: (policy: string) => void): () => void;
}

interface Query { watch?: string; fieldSelector?: string; labelSelector?: string; includeObject?: string; timeoutSeconds?: string; resourceVersion?: string }

/** A Binding as the placement controller makes it: KubeStellar's shape. */
interface Binding extends KubeObject {
  metadata: ObjectMeta & { name: string; resourceVersion?: string; creationTimestamp?: string };
  spec: {
    workload: { clusterScope: unknown[]; namespaceScope: unknown[] };
    destinations: Array<{ clusterId: string }>;
  };
}

const BINDING_PRINTER: KindPrinter<Binding> = {
  columns: [
    { ...column('Name', 'string', 'Name of the Binding and of its BindingPolicy'), format: 'name' },
    column('Objects', 'integer', 'Workload objects the policy selects'),
    column('Clusters', 'string', 'The clusters the policy selects'),
    column('Age', 'string', 'Age of the BindingPolicy'),
  ],
  cells: (b, now) => [b.metadata.name, b.spec.workload.clusterScope.length + b.spec.workload.namespaceScope.length,
    b.spec.destinations.map((d) => d.clusterId).join(',') || '<none>', age(b.metadata.creationTimestamp, now.getTime())],
};

function table(items: Binding[], version: TableVersion, includeObject: string | undefined, resourceVersion: string | undefined) {
  return objectsTable(items, BINDING_PRINTER, { version, includeObject }, { resourceVersion });
}

/** Field selectors on `metadata.name`, the only field kubectl sends here (others are a 400). */
function nameFilter(fieldSelector: string | undefined): (name: string) => boolean {
  const matches = objectFilter(undefined, fieldSelector, ['metadata.name']);
  return (name) => matches({}, { 'metadata.name': name });
}

export function registerBindings(app: FastifyInstance, source: BindingSource | undefined,
  authorize: (req: FastifyRequest, verb: string, name?: string) => Promise<void>): void {
  const base = `/apis/${GROUP_VERSION}/bindings`;
  const list = () => (source?.bindings() ?? []) as Binding[];
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
        : { apiVersion: GROUP_VERSION, kind: 'BindingList', metadata: { resourceVersion: rv() }, items };
    }
    return watchBindings(req, reply, source, keep, tableVersion, req.query.includeObject);
  });

  app.get<{ Params: { name: string }; Querystring: Query }>(`${base}/:name`, async (req) => {
    await authorize(req, 'get', req.params.name);
    checkIncludeObject(req.query.includeObject);
    const b = source?.binding(req.params.name) as Binding | undefined;
    if (!b) throw errors.notFound({ group: GROUP, kind: 'bindings', name: req.params.name });
    const tableVersion = wantsTable(req.headers.accept);
    return tableVersion ? table([b], tableVersion, req.query.includeObject, rv()) : b;
  });
}

/** Sends every Binding, then an event whenever one changes, until timeoutSeconds or the client leaves. */
function watchBindings(req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, source: BindingSource | undefined,
  keep: (name: string) => boolean, tableVersion: TableVersion | undefined, includeObject: string | undefined) {
  const stream = openWatchStream(reply, req.query.timeoutSeconds);
  const sent = new Map<string, string>();
  const send = (type: 'ADDED' | 'MODIFIED' | 'DELETED', b: Binding) =>
    stream.send(type, tableVersion ? table([b], tableVersion, includeObject, b.metadata.resourceVersion) : b);
  for (const b of (source?.bindings() ?? []) as Binding[]) {
    if (!keep(b.metadata.name)) continue;
    sent.set(b.metadata.name, JSON.stringify(b.spec));
    send('ADDED', b);
  }
  const unsubscribe = source?.onBindingChange((name) => {
    if (!keep(name)) return;
    const b = source.binding(name) as Binding | undefined;
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
  if (unsubscribe) stream.onClose(unsubscribe);
  return reply;
}
