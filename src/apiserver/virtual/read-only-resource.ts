// The routes of one virtual, read-only resource (bindings, combinedstatuses) in one group, as
// kube-apiserver serves a resource that has only get, list and watch: list and watch across the
// cluster (and, namespaced, in one namespace), get by name, every answer in the path's apiVersion
// (the controllers make KubeStellar's), as JSON or a Table. Label selectors (when the resource
// takes them) and field selectors on metadata.name (and metadata.namespace) as kube-apiserver
// answers them for a CRD, malformed or unsupported ones a 400. Access is decided first by the
// caller's `authorize` (a SubjectAccessReview on the resource in the path's group and namespace),
// then, object by object, by what the reader may see of what each speaks of (`reader`): a hidden
// object is left out of lists and watches and is a 404 to a get, as if it did not exist; writes are refused as kube-apiserver refuses a verb a resource does not have: authorized as the
// write first (403 without the right), then 405 MethodNotAllowed. Lists and watches follow
// kube-apiserver's resourceVersion rules (./list-watch.ts) over the resource's feed
// (./feed.ts), read fresh before each request.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject, ObjectMeta } from '../../kube/objects.js';
import { errors } from '../../kube/status.js';
import type { KindPrinter } from '../../storage/printing/printer.js';
import { objectFilter } from '../http/selectors.js';
import { checkIncludeObject, tableAnswer } from '../http/table.js';
import { objectKey, type VirtualFeed } from './feed.js';
import { leftOutWarning, type Subject, type Visibility } from '../auth/subject-access.js';
import { listOrWatch, type CollectionQuery, type ReaderView } from './list-watch.js';
import { queryBool } from '../http/watch-stream.js';

/** A SubjectAccessReview of the request's user: `verb` on the resource, in `namespace` (none: cluster-wide), on `name`. */
export type Authorize = (req: FastifyRequest, verb: string, namespace?: string, name?: string) => Promise<void>;

/** What the request's user may `get`: of a batch of subjects, or of every object of some kinds (../auth/subject-access.ts). */
export type SubjectVisibility = (req: FastifyRequest) => {
  resolve(subjects: Iterable<Subject>): Promise<Visibility>;
  everywhere(kinds: Iterable<{ group: string; resource: string }>): Promise<boolean>;
};

/** A virtual, read-only resource: what discovery, OpenAPI and its routes say of it (one per resource, whatever groups serve it). */
export interface VirtualKind {
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  /** KubeStellar's CRD's. */
  shortNames: string[];
}

/** Who may read a resource in a group, and what of the objects it speaks of: every resource plugin's options. */
export interface ResourceAccess {
  /** The API group it is served in, at this path. */
  group: string;
  /** A SubjectAccessReview of the user on the resource in `group`. */
  authorize: Authorize;
  /** What the user may get of the objects the resource speaks of. */
  visibility: SubjectVisibility;
}

/** What the routes read of an object. */
export type ServedObject = KubeObject & { metadata: ObjectMeta & { name: string; namespace?: string; resourceVersion?: string } };

export interface VirtualResource<T extends ServedObject> {
  kind: VirtualKind;
  group: string;
  version: string;
  feed: VirtualFeed<T>;
  printer: KindPrinter<T>;
  /** Whether label selectors are applied (else they are a 400). */
  labelSelectors: boolean;
  authorize: Authorize;
  /** What the request's reader may see of each object (../auth/subject-access.ts). */
  reader: (req: FastifyRequest) => ReaderView<T>;
  /** The time the ages in Tables are counted to (default: the system clock's). */
  now?: () => Date;
}

interface Query extends CollectionQuery { watch?: string; fieldSelector?: string; labelSelector?: string; includeObject?: string }
interface Params { namespace?: string; name?: string }

/** The verb a write would need, as kube-apiserver's request info names it. */
export function writeVerb(method: string, named: boolean): string {
  if (method === 'POST') return 'create';
  if (method === 'PUT') return 'update';
  if (method === 'PATCH') return 'patch';
  return named ? 'delete' : 'deletecollection';
}

/** kube-apiserver's order of a list (etcd's, by key): namespace, then name. */
export const byKey = (a: KubeObject, b: KubeObject) =>
  (a.metadata?.namespace ?? '').localeCompare(b.metadata?.namespace ?? '') || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');

/** Registers the resource's routes on `app` (or on a plugin under a prefix). */
export function registerVirtualResource<T extends ServedObject>(app: FastifyInstance, r: VirtualResource<T>): void {
  const { resource, kind, namespaced } = r.kind;
  const groupVersion = `${r.group}/${r.version}`;
  const all = `/apis/${groupVersion}/${resource}`;
  const inNamespace = `/apis/${groupVersion}/namespaces/:namespace/${resource}`;
  const named = namespaced ? `${inNamespace}/:name` : `${all}/:name`;
  const fields = namespaced ? ['metadata.name', 'metadata.namespace'] : ['metadata.name'];
  const asServed = (o: T): T => (o.apiVersion === groupVersion ? o : { ...o, apiVersion: groupVersion });

  const list = async (req: FastifyRequest<{ Params: Params; Querystring: Query }>, reply: FastifyReply) => {
    const { namespace } = req.params;
    const watch = queryBool(req.query.watch);
    await r.authorize(req, watch ? 'watch' : 'list', namespace);
    checkIncludeObject(req.query.includeObject);
    if (!r.labelSelectors && req.query.labelSelector) throw errors.badRequest(`label selectors are not supported on ${resource}`);
    const selected = objectFilter(req.query.labelSelector, req.query.fieldSelector, fields);
    const keep = (o: T) => (namespace === undefined || o.metadata.namespace === namespace)
      && selected(o.metadata.labels ?? {}, { 'metadata.name': o.metadata.name, 'metadata.namespace': o.metadata.namespace ?? '' });
    const answer = tableAnswer(req.headers.accept, req.query.includeObject, r.printer, r.now);
    r.feed.flush();
    return listOrWatch(reply, watch, req.query, {
      collection: r.feed.collection,
      keep,
      list: (items, rv) => {
        const served = items.map(asServed).sort(byKey);
        return answer.list(served, rv, () => ({ apiVersion: groupVersion, kind: `${kind}List`, metadata: { resourceVersion: rv }, items: served }));
      },
      event: (o) => answer.one(asServed(o)),
      type: { apiVersion: groupVersion, kind },
      reader: r.reader(req),
    });
  };
  app.get(all, list);
  if (namespaced) app.get(inNamespace, list);

  app.get<{ Params: Params & { name: string }; Querystring: Query }>(named, async (req, reply) => {
    const { namespace, name } = req.params;
    await r.authorize(req, 'get', namespace, name);
    checkIncludeObject(req.query.includeObject);
    r.feed.flush();
    const found = r.feed.collection.get(objectKey(namespace, name));
    if (!found) throw errors.notFound({ group: r.group, kind: resource, name });
    const shown = await r.reader(req)([found]);
    if (shown.leftOut > 0) reply.header('warning', leftOutWarning(shown.leftOut));
    if (!shown.visible(found)) throw errors.notFound({ group: r.group, kind: resource, name });
    return tableAnswer(req.headers.accept, req.query.includeObject, r.printer, r.now).one(asServed(shown.show(found)));
  });

  const refuse = (isNamed: boolean) => async (req: FastifyRequest<{ Params: Params }>) => {
    await r.authorize(req, writeVerb(req.method, isNamed), req.params.namespace, req.params.name);
    throw errors.methodNotAllowed(req.method);
  };
  const writes = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
  app.route({ method: [...writes], url: all, handler: refuse(false) });
  if (namespaced) app.route({ method: [...writes], url: inNamespace, handler: refuse(false) });
  app.route({ method: [...writes], url: named, handler: refuse(true) });
}
