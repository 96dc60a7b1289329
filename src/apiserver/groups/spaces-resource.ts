// The virtual resource `spaces` (cluster-scoped): one item, this server's WDS, telling where its
// view is. Never stored; get, list and watch (kube-apiserver's resourceVersion rules:
// ../virtual/list-watch.ts), as JSON or as a Table.
// Access is decided by a SubjectAccessReview on `spaces` in view.kubestellar.io (the caller's
// `authorize`). A fastify plugin, registered by the app.
import { column, rfc3339, type KindPrinter } from '../../storage/printing/printer.js';
import { age } from '../../kube/duration.js';
import { stableUid } from '../../kube/objects.js';
import { errors } from '../../kube/status.js';
import type { FastifyInstance } from 'fastify';
import { wantsTable } from '../http/negotiation.js';
import { objectFilter } from '../http/selectors.js';
import { checkIncludeObject, objectsTable, type TableVersion } from '../http/table.js';
import { GROUP, GROUP_VERSION } from './view-group.js';
import { VirtualCollection } from '../virtual/collection.js';
import type { Authorize } from '../virtual/read-only-resource.js';
import { listOrWatch, type CollectionQuery } from '../virtual/list-watch.js';
import { queryBool } from '../http/watch-stream.js';


export interface SpaceInfo {
  name: string;
  wdsServer: string;
  viewPath: string;
  startedAt: Date;
}

export const SPACE_RESOURCE_VERSION = '1';

export function spaceObject(s: SpaceInfo) {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'Space',
    metadata: {
      name: s.name,
      uid: stableUid(`space/${s.name}/${s.wdsServer}`),
      resourceVersion: SPACE_RESOURCE_VERSION,
      creationTimestamp: rfc3339(s.startedAt.getTime()),
      labels: { 'view.kubestellar.io/space-type': 'wds' },
    },
    spec: { type: 'WDS', server: s.wdsServer },
    status: { phase: 'Ready', viewPath: s.viewPath, viewURL: s.wdsServer + s.viewPath },
  };
}

export type SpaceObject = ReturnType<typeof spaceObject>;

export function spaceList(items: SpaceObject[], resourceVersion = SPACE_RESOURCE_VERSION) {
  return { apiVersion: GROUP_VERSION, kind: 'SpaceList', metadata: { resourceVersion }, items };
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
export function spaceTable(items: SpaceObject[], version: TableVersion, includeObject: string | undefined, resourceVersion = SPACE_RESOURCE_VERSION) {
  return objectsTable(items, SPACE_PRINTER, { version, includeObject }, { resourceVersion });
}

/** Label and field selectors (fields: `metadata.name`) as kube-apiserver applies them; malformed ones are a 400. */
export function matchesSelectors(o: SpaceObject, labelSelector?: string, fieldSelector?: string): boolean {
  return objectFilter(labelSelector, fieldSelector, ['metadata.name'])(o.metadata.labels, { 'metadata.name': o.metadata.name });
}

interface Query extends CollectionQuery { watch?: string; labelSelector?: string; fieldSelector?: string; includeObject?: string }

export interface SpacesOptions {
  /** The one space served: this server's WDS. */
  space: SpaceInfo;
  /** A SubjectAccessReview of the user on `spaces` in view.kubestellar.io. */
  authorize: Authorize;
}

/** GET (get, list, watch) of `/apis/view.kubestellar.io/v1alpha1/spaces`. */
export async function spacesResource(app: FastifyInstance, { space: info, authorize }: SpacesOptions): Promise<void> {
  const base = `/apis/${GROUP_VERSION}/spaces`;
  // One object that never changes, served with the resourceVersion rules of every virtual resource.
  const collection = new VirtualCollection<SpaceObject>((o) => JSON.stringify(o));
  collection.set(info.name, spaceObject(info));
  app.get<{ Querystring: Query }>(base, async (req, reply) => {
    const watch = queryBool(req.query.watch);
    await authorize(req, watch ? 'watch' : 'list');
    checkIncludeObject(req.query.includeObject);
    const table = wantsTable(req.headers.accept);
    return listOrWatch(reply, watch, req.query, {
      collection,
      keep: (o) => matchesSelectors(o, req.query.labelSelector, req.query.fieldSelector),
      list: (items, rv) => (table ? spaceTable(items, table, req.query.includeObject, rv) : spaceList(items, rv)),
      event: (o) => (table ? spaceTable([o], table, req.query.includeObject, o.metadata.resourceVersion) : o),
      type: { apiVersion: GROUP_VERSION, kind: 'Space' },
    });
  });
  app.get<{ Params: { name: string }; Querystring: Query }>(`${base}/:name`, async (req) => {
    await authorize(req, 'get', undefined, req.params.name);
    if (req.params.name !== info.name) throw errors.notFound({ group: GROUP, kind: 'spaces', name: req.params.name });
    checkIncludeObject(req.query.includeObject);
    const o = collection.get(info.name)!;
    const table = wantsTable(req.headers.accept);
    return table ? spaceTable([o], table, req.query.includeObject, o.metadata.resourceVersion) : o;
  });
}
