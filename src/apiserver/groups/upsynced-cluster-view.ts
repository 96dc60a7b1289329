// The per-cluster views of upsynced objects (docs/upsync.md), a fastify plugin on the view's: below
// `<view root>/clusters/<cluster>`, a read-only Kubernetes API holding exactly the objects upsynced
// from that cluster, in their native kinds — what a `<wds>-view-<cluster>` context of
// `ksview kubeconfig --view` points at, so `kubectl get pods -A`, `-w`, `-l`, `-o yaml` work as on
// the WEC itself, for what was upsynced.
// Why below the view's proxy subresource (`spaces/<wds>/proxy/clusters/<cluster>`) and not
// `spaces/<wds>/clusters/<cluster>/proxy`: kube-apiserver treats `proxy` as long-running, so a
// watch there lives past its 60 s request timeout, and it authorizes the outer path as
// `spaces/proxy` of the WDS, the right every user of the view already holds; a subresource
// `spaces/clusters` would be neither (and the aggregator would need it in discovery).
// Serving:
// - discovery (./upsynced-cluster-discovery.ts) from the cluster's copies; /version is the WDS's;
//   no OpenAPI (404: kubectl get does without);
// - get, list (all namespaces, one namespace, cluster-scoped) and watch (`?watch`, the /watch/
//   prefix) of a kind upsynced there, label selectors on the object's own labels and field
//   selectors on metadata.name and metadata.namespace, JSON or Tables (../../storage/workload-printers.ts);
// - resourceVersions are the fleet-wide UpsyncedObjects feed's (./upsyncedobjects-resource.ts): one
//   collection, so a list's resourceVersion is valid to watch from (kube-apiserver's rules:
//   ../virtual/list-watch.ts), and each object carries the feed's resourceVersion of its copy; the WEC's
//   own resourceVersion is in the annotation SOURCE_RV_ANNOTATION (WEC resourceVersions of many
//   objects say nothing about a collection, and change only with the object, not with staleness);
// - each request is authorized as the same request on the WDS (a SubjectAccessReview of the user:
//   the verb on that resource in that namespace; a denatured kind in denatured.kubestellar.io, as the
//   view reads it): 403 in kube's words otherwise;
// - writes: authorized as the write, then 405 saying where the object lives; an unknown cluster
//   (no UpsyncRequest of this WDS), kind or subresource is a 404.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject } from '../../kube/objects.js';
import { errors } from '../../kube/status.js';
import { DENATURED_GROUP } from '../../storage/crd-schema.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import { workloadPrinterFor } from '../../storage/workload-printers.js';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, wantsAggregatedDiscovery } from '../http/negotiation.js';
import { objectFilter } from '../http/selectors.js';
import { sendExact } from '../http/send-exact.js';
import { checkIncludeObject, tableAnswer } from '../http/table.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, kindsOf, type ClusterKind } from './upsynced-cluster-discovery.js';
import { qualifiedResource, upsyncedFeed, upsyncedName, type ServedUpsynced } from './upsyncedobjects-resource.js';
import type { UpsyncedSource } from './upsynced-source.js';
import { objectKey } from '../virtual/feed.js';
import { byKey, writeVerb, type Authorize } from '../virtual/read-only-resource.js';
import { listOrWatch, type CollectionQuery } from '../virtual/list-watch.js';
import { queryBool } from '../http/watch-stream.js';
import type { ViewPaths } from './view-paths.js';

/** On each object of a per-cluster view: its resourceVersion in the WEC. */
export const SOURCE_RV_ANNOTATION = 'view.kubestellar.io/source-resource-version';

export interface ClusterViewOptions {
  /** The view's paths (the routes are registered on the view's plugin, below its root). */
  paths: ViewPaths;
  source: UpsyncedSource | undefined;
  cats: Pick<KindCategories, 'categorize'>;
  /** A SubjectAccessReview of the user on `resource` in `group` (kube's 403 otherwise). */
  authorizeOn: (resource: string, group: string) => Authorize;
  /** GET /version, as the view answers it (the WDS's). */
  version: (req: FastifyRequest, reply: FastifyReply) => unknown;
}

interface Query extends CollectionQuery { watch?: string; labelSelector?: string; fieldSelector?: string; includeObject?: string }

/** The native form of a served copy: the WEC's object with the feed's resourceVersion (computed once per served object). */
const natives = new WeakMap<ServedUpsynced, KubeObject>();
export function nativeOf(s: ServedUpsynced): KubeObject {
  let o = natives.get(s);
  if (!o) {
    const src = s.spec.source;
    // Identity from `source` (what was authorized), whatever the copy's own metadata says.
    const { namespace: _namespace, ...meta } = s.spec.object.metadata ?? {};
    o = {
      ...s.spec.object,
      apiVersion: src.group ? `${src.group}/${src.version}` : src.version, kind: src.kind,
      metadata: {
        ...meta, name: src.name, ...(src.namespace ? { namespace: src.namespace } : {}), resourceVersion: s.metadata.resourceVersion,
        annotations: { ...meta.annotations, [SOURCE_RV_ANNOTATION]: src.resourceVersion },
      },
    };
    natives.set(s, o);
  }
  return o;
}

/** 405, saying where the object lives and where to change it. */
function readOnly(method: string, k: ClusterKind, cluster: string, name: string) {
  const err = errors.methodNotAllowed(method);
  const what = qualifiedResource(k.group, k.resource);
  err.status.message = name
    ? `${what} "${name}" lives in cluster ${cluster}: upsynced objects are read-only in the view; change it in the WEC`
    : `${what} of cluster ${cluster} are upsynced objects, read-only in the view; change them in the WEC`;
  err.status.details = { ...(name ? { name } : {}), ...(k.group ? { group: k.group } : {}), kind: k.resource };
  return err;
}

const unknownCluster = (cluster: string) => errors.notFound({ group: 'view.kubestellar.io', kind: 'clusters', name: cluster },
  `cluster "${cluster}" has no upsynced objects for this WDS: no BindingPolicy upsyncs from it`);

/** `/clusters/<cluster>` and everything below it, registered on the view's plugin. */
export async function clusterViews(view: FastifyInstance, opts: ClusterViewOptions): Promise<void> {
  const feed = upsyncedFeed(opts.source);
  const rbacGroup = (k: ClusterKind) => (opts.cats.categorize({ group: k.group, resource: k.resource }) === 'denatured' ? DENATURED_GROUP : k.group);

  const discovery = (req: FastifyRequest, reply: FastifyReply, path: string, kinds: ClusterKind[]) => {
    const parts = path.split('/').filter(Boolean);
    const aggregated = wantsAggregatedDiscovery(req.headers.accept);
    const send = (doc: unknown) => {
      if (doc === undefined) throw errors.pathNotFound();
      return reply.header('content-type', 'application/json').send(doc);
    };
    if (parts.length === 1 && parts[0] === 'version') return opts.version(req, reply);
    if (parts.length === 0) {
      const gvs = [...new Set(kinds.map((k) => (k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`)))];
      return send({ paths: ['/api', ...gvs.filter((p) => p.startsWith('/api/')), '/apis', ...gvs.filter((p) => p.startsWith('/apis/')), '/version'] });
    }
    if (parts[0] === 'api' && parts.length === 1) {
      if (aggregated) return sendExact(reply.header('vary', 'Accept'), aggregated === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, aggregatedDiscovery(kinds, 'core', aggregated));
      return send(apiVersions(kinds));
    }
    if (parts[0] === 'apis' && parts.length === 1) {
      if (aggregated) return sendExact(reply.header('vary', 'Accept'), aggregated === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, aggregatedDiscovery(kinds, 'groups', aggregated));
      return send(apiGroupList(kinds));
    }
    if (parts[0] === 'api' && parts.length === 2) return send(apiResourceList(kinds, '', parts[1]!));
    if (parts[0] === 'apis' && parts.length === 2) {
      const g = apiGroup(kinds, parts[1]!);
      return send(g && { kind: 'APIGroup', apiVersion: 'v1', ...g });
    }
    if (parts[0] === 'apis' && parts.length === 3) return send(apiResourceList(kinds, parts[1]!, parts[2]!));
    throw errors.pathNotFound();
  };

  const handler = async (req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply) => {
    const resolved = opts.paths.resolve(req.url);
    const target = resolved?.cluster;
    if (!target) throw errors.pathNotFound();
    const { cluster } = target;
    if (!opts.source || !opts.source.clusters().includes(cluster)) throw unknownCluster(cluster);
    const kinds = kindsOf(opts.source.ofCluster(cluster));
    const { info } = resolved;
    if (!info.isResourceRequest) {
      if (req.method !== 'GET') throw errors.methodNotAllowed(req.method);
      return discovery(req, reply, target.path, kinds);
    }
    const kind = kinds.find((k) => k.group === info.group && k.version === info.version && k.resource === info.resource);
    if (!kind || info.subresource) throw errors.pathNotFound();
    // `/api/v1/namespaces/<n>` is the namespace <n> itself (RequestInfo reads <n> as a namespace too).
    const namespace = kind.namespaced ? info.namespace : '';
    if (kind.namespaced ? info.name && !info.namespace : info.namespace && kind.resource !== 'namespaces') throw errors.pathNotFound();
    const name = info.name;
    const authorize = opts.authorizeOn(kind.resource, rbacGroup(kind));
    if (req.method !== 'GET') {
      await authorize(req, writeVerb(req.method, name !== ''), namespace || undefined, name || undefined);
      throw readOnly(req.method, kind, cluster, name);
    }
    const query = req.query;
    const watch = info.legacyWatch || queryBool(query.watch);
    checkIncludeObject(query.includeObject);
    const answer = tableAnswer(req.headers.accept, query.includeObject, workloadPrinterFor(kind.group, kind.resource));

    if (name && !watch) {
      await authorize(req, 'get', namespace || undefined, name);
      feed.flush();
      const found = feed.collection.get(objectKey(namespace || undefined, upsyncedName(cluster, kind.group, kind.resource, name)));
      if (!found || found.spec.source.version !== kind.version) throw errors.notFound({ group: kind.group, kind: kind.resource, name });
      return answer.one(nativeOf(found));
    }

    await authorize(req, watch ? 'watch' : 'list', namespace || undefined, name || undefined);
    const selected = objectFilter(query.labelSelector, query.fieldSelector, ['metadata.name', 'metadata.namespace']);
    const keep = (s: ServedUpsynced) => {
      const src = s.spec.source;
      return s.spec.cluster === cluster && src.group === kind.group && src.resource === kind.resource && src.version === kind.version
        && (!namespace || src.namespace === namespace) && (!name || src.name === name)
        && selected(s.spec.object.metadata?.labels ?? {}, { 'metadata.name': src.name, 'metadata.namespace': src.namespace });
    };
    const groupVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
    feed.flush();
    return listOrWatch(reply, watch, query, {
      collection: feed.collection,
      keep,
      list: (items, rv) => {
        const objects = items.map(nativeOf).sort(byKey);
        return answer.list(objects, rv, () => ({ apiVersion: groupVersion, kind: `${kind.kind}List`, metadata: { resourceVersion: rv }, items: objects }));
      },
      event: (s) => answer.one(nativeOf(s)),
      type: { apiVersion: groupVersion, kind: kind.kind },
    });
  };

  const methods = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
  const route = async (req: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply) => {
    if (req.method === 'HEAD' || req.method === 'OPTIONS') throw errors.methodNotAllowed(req.method);
    return handler(req, reply);
  };
  view.route({ method: methods, url: '/clusters/:cluster', handler: route });
  view.route({ method: methods, url: '/clusters/:cluster/*', handler: route });
}
