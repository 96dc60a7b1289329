// The virtual resource `spaces` (cluster-scoped): one item, this server's WDS, telling where its
// view is. Computed on each request, never stored; get, list and watch, as JSON or as a Table.
// Access is decided by a SubjectAccessReview on `spaces` in view.kubestellar.io (the caller's `authorize`).
import { createHash } from 'node:crypto';
import { column, rfc3339, type KindPrinter } from '../storage/denatured-printers.js';
import { age } from '../kube/duration.js';
import { errors } from '../kube/status.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { wantsTable } from './negotiation.js';
import { objectFilter } from './selectors.js';
import { checkIncludeObject, objectsTable, type TableVersion } from './table.js';
import { GROUP, GROUP_VERSION } from './view-group.js';
import { openWatchStream, queryBool } from './watch-stream.js';


export interface SpaceInfo {
  name: string;
  wdsServer: string;
  viewPath: string;
  startedAt: Date;
}

export const SPACE_RESOURCE_VERSION = '1';

export function spaceObject(s: SpaceInfo) {
  const uid = createHash('sha256').update(`space/${s.name}/${s.wdsServer}`).digest('hex');
  return {
    apiVersion: GROUP_VERSION,
    kind: 'Space',
    metadata: {
      name: s.name,
      uid: `${uid.slice(0, 8)}-${uid.slice(8, 12)}-${uid.slice(12, 16)}-${uid.slice(16, 20)}-${uid.slice(20, 32)}`,
      resourceVersion: SPACE_RESOURCE_VERSION,
      creationTimestamp: rfc3339(s.startedAt.getTime()),
      labels: { 'view.kubestellar.io/space-type': 'wds' },
    },
    spec: { type: 'WDS', server: s.wdsServer },
    status: { phase: 'Ready', viewPath: s.viewPath, viewURL: s.wdsServer + s.viewPath },
  };
}

export type SpaceObject = ReturnType<typeof spaceObject>;

export function spaceList(items: SpaceObject[]) {
  return { apiVersion: GROUP_VERSION, kind: 'SpaceList', metadata: { resourceVersion: SPACE_RESOURCE_VERSION }, items };
}


const SPACE_PRINTER: KindPrinter<SpaceObject> = {
  columns: [
    { ...column('Name', 'string', 'Name of the space'), format: 'name' },
    column('Type', 'string', 'Kind of space'),
    column('View URL', 'string', 'Server URL of the view'),
    column('Age', 'string', 'Time since the server started serving it'),
    column('WDS', 'string', 'The WDS kube-apiserver', 1),
  ],
  cells: (o, now) => [o.metadata.name, o.spec.type, o.status.viewURL, age(o.metadata.creationTimestamp, now.getTime()), o.spec.server],
};

/** meta.k8s.io Table of spaces, with the columns `kubectl get spaces` prints. */
export function spaceTable(items: SpaceObject[], version: TableVersion, includeObject: string | undefined) {
  return objectsTable(items, SPACE_PRINTER, { version, includeObject }, { resourceVersion: SPACE_RESOURCE_VERSION });
}

/** Label and field selectors (fields: `metadata.name`) as kube-apiserver applies them; malformed ones are a 400. */
export function matchesSelectors(o: SpaceObject, labelSelector?: string, fieldSelector?: string): boolean {
  return objectFilter(labelSelector, fieldSelector, ['metadata.name'])(o.metadata.labels, { 'metadata.name': o.metadata.name });
}

interface Query { watch?: string; labelSelector?: string; fieldSelector?: string; timeoutSeconds?: string; resourceVersion?: string; sendInitialEvents?: string; includeObject?: string }

export function registerSpaces(app: FastifyInstance, info: SpaceInfo,
  authorize: (req: FastifyRequest, verb: string, name?: string) => Promise<void>): void {
  const base = `/apis/${GROUP_VERSION}/spaces`;
  app.get<{ Querystring: Query }>(base, async (req, reply) => {
    const watch = queryBool(req.query.watch);
    await authorize(req, watch ? 'watch' : 'list');
    checkIncludeObject(req.query.includeObject);
    const items = [spaceObject(info)].filter((o) => matchesSelectors(o, req.query.labelSelector, req.query.fieldSelector));
    const table = wantsTable(req.headers.accept);
    if (!watch) return table ? spaceTable(items, table, req.query.includeObject) : spaceList(items);
    // The one item (unless the client is already at its resourceVersion), then quiet until the end.
    const stream = openWatchStream(reply, req.query.timeoutSeconds);
    const rv = req.query.resourceVersion;
    const sendInitial = queryBool(req.query.sendInitialEvents);
    if ((sendInitial || !rv || rv === '0') && rv !== SPACE_RESOURCE_VERSION) {
      for (const o of items) stream.send('ADDED', table ? spaceTable([o], table, req.query.includeObject) : o);
    }
    if (sendInitial) {
      stream.send('BOOKMARK', { apiVersion: GROUP_VERSION, kind: 'Space', metadata: { resourceVersion: SPACE_RESOURCE_VERSION, annotations: { 'k8s.io/initial-events-end': 'true' } } });
    }
    return reply;
  });
  app.get<{ Params: { name: string }; Querystring: Query }>(`${base}/:name`, async (req) => {
    await authorize(req, 'get', req.params.name);
    if (req.params.name !== info.name) throw errors.notFound({ group: GROUP, kind: 'spaces', name: req.params.name });
    checkIncludeObject(req.query.includeObject);
    const o = spaceObject(info);
    const table = wantsTable(req.headers.accept);
    return table ? spaceTable([o], table, req.query.includeObject) : o;
  });
}
