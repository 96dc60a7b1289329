// The virtual UpsyncedObjects (namespaced, get/list/watch, Tables; docs/upsync.md): one per object of a
// WEC that an upsync clause selects, read from the copies the agents write into the ITS
// (./upsynced-source.ts) and never stored. A fastify plugin as the Bindings and CombinedStatuses
// (../virtual/read-only-resource.ts), registered once per group that serves it (./group-resources.ts):
// upsyncedobjects.view.kubestellar.io for direct clients and, inside the view, in the same group
// (its only resource there: control.kubestellar.io/upsyncedobjects is the ITS's CRD of the copies,
// another shape), one feed for both (../virtual/feed.ts),
// whose resourceVersions the per-cluster views (./upsynced-cluster-view.ts) use too.
// A served object: metadata.name `<cluster>:<resource>[.<group>]:<name>` (unique per WDS, since a
// copy is one per (cluster, group, resource, namespace, name), and readable), in the source
// object's namespace (none for a cluster-scoped one), labelled with its cluster and kind (label
// selectors work on those), created when the source object was, with a uid derived from the
// cluster and the source's identity and uid (a source deleted and made again is another object);
// `spec: {cluster, source, policies, object}`, `status: {lastSeen, stale, conditions: [Stale]}`.
// Stale: the cluster's agent lease is stale; the copy stays visible, marked.
// A reader sees an upsynced object only if the WDS lets them `get` the source object (its
// group/resource, in its namespace; ../auth/subject-access.ts), as for a CombinedStatus: otherwise it is
// absent from lists and watches and a 404 to a get.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { age } from '../../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../../kube/objects.js';
import type { UpsyncedObject, UpsyncedSourceRef } from '../../kube/upsync-api.js';
import { column, type KindPrinter } from '../../storage/printing/printer.js';
import type { Subject } from '../auth/subject-access.js';
import type { UpsyncedSource } from './upsynced-source.js';
import { GROUP_VERSION, UPSYNCED_OBJECTS, VERSION } from './view-group.js';
import { objectKey, sharedFeeds, VirtualFeed, type FeedSource } from '../virtual/feed.js';
import { registerVirtualResource, type ResourceAccess } from '../virtual/read-only-resource.js';

export const CLUSTER_LABEL = 'view.kubestellar.io/cluster';
export const KIND_LABEL = 'view.kubestellar.io/kind';

export interface StaleCondition {
  type: 'Stale';
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** An UpsyncedObject as served. */
export interface ServedUpsynced extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace?: string; uid: string; resourceVersion?: string; creationTimestamp?: string; labels: Record<string, string> };
  spec: { cluster: string; source: UpsyncedSourceRef; policies: string[]; object: KubeObject };
  status: { lastSeen: string; stale: boolean; conditions: [StaleCondition] };
}

/** `<resource>[.<group>]`, as kubectl names a resource. */
export const qualifiedResource = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);

/** The served name of an upsynced object. */
export const upsyncedName = (cluster: string, group: string, resource: string, name: string) => `${cluster}:${qualifiedResource(group, resource)}:${name}`;

/** The cluster of a copy: the ITS mailbox namespace it is in is the cluster's name. */
const clusterOfCopy = (c: UpsyncedObject) => c.metadata.namespace;

/** The feed key of a copy (the served object's `<namespace>/<name>`, or its name when cluster-scoped). */
const keyOfCopy = (c: UpsyncedObject) =>
  objectKey(c.source.namespace || undefined, upsyncedName(clusterOfCopy(c), c.source.group, c.source.resource, c.source.name));

/** A stable uid (UUID-shaped) of one incarnation of one source object in one cluster. */
function uidOf(cluster: string, s: UpsyncedSourceRef): string {
  const h = createHash('sha256').update([cluster, s.group, s.resource, s.namespace, s.name, s.uid].join('\u0000')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The served form of a copy, with its cluster's staleness now. */
export function served(c: UpsyncedObject, staleSince: string | undefined): ServedUpsynced {
  const cluster = clusterOfCopy(c);
  const s = c.source;
  const created = c.object.metadata?.creationTimestamp;
  const stale = staleSince !== undefined;
  return {
    apiVersion: GROUP_VERSION, kind: UPSYNCED_OBJECTS.kind,
    metadata: {
      name: upsyncedName(cluster, s.group, s.resource, s.name),
      ...(s.namespace ? { namespace: s.namespace } : {}),
      uid: uidOf(cluster, s),
      ...(typeof created === 'string' ? { creationTimestamp: created } : {}),
      labels: { [CLUSTER_LABEL]: cluster, [KIND_LABEL]: s.kind },
    },
    spec: { cluster, source: s, policies: c.policies, object: c.object },
    status: {
      lastSeen: c.lastSeen, stale,
      conditions: [stale
        ? { type: 'Stale', status: 'True', reason: 'AgentLeaseStale', message: `the agent of cluster ${cluster} has not renewed its lease since ${staleSince}: this copy may be out of date`, lastTransitionTime: staleSince }
        // When it turned fresh is not told by the source: the copy's own first write is the closest.
        : { type: 'Stale', status: 'False', reason: 'AgentReporting', message: `the agent of cluster ${cluster} is reporting`, lastTransitionTime: typeof c.metadata.creationTimestamp === 'string' ? c.metadata.creationTimestamp : c.lastSeen }],
    },
  };
}

/** The source object a served one is a copy of, as the reader's rights are asked about. */
export const subjectOf = (o: ServedUpsynced): Subject => {
  const s = o.spec.source;
  return { group: s.group, resource: s.resource, ...(s.namespace ? { namespace: s.namespace } : {}), name: s.name };
};

/**
 * The source as a FeedSource: the copies indexed by served key (kept current from its change
 * callbacks, which carry objects where the feed wants keys), each served with its cluster's
 * staleness when the feed reads it.
 */
function feedSourceOf(source: UpsyncedSource): FeedSource<ServedUpsynced> {
  const copies = new Map<string, UpsyncedObject>();
  for (const c of source.list()) copies.set(keyOfCopy(c), c);
  const listeners = new Set<(key: string) => void>();
  source.onChange((type, obj) => {
    const key = keyOfCopy(obj);
    if (type === 'DELETED') copies.delete(key);
    else copies.set(key, obj);
    for (const l of listeners) l(key);
  });
  const serve = (c: UpsyncedObject) => served(c, source.staleSince(clusterOfCopy(c)));
  return {
    all: () => [...copies.values()].map(serve),
    one: (key) => {
      const c = copies.get(key);
      return c && serve(c);
    },
    keyOf: (o) => objectKey(o.metadata.namespace, o.metadata.name),
    onChange: (cb) => {
      listeners.add(cb);
      return () => { listeners.delete(cb); };
    },
  };
}

/** What tells whether a served object changed (not its resourceVersion). */
const content = (o: ServedUpsynced) => JSON.stringify([o.metadata.uid, o.metadata.creationTimestamp, o.spec.source.resourceVersion, o.spec.policies, o.spec.object, o.status]);

/** The one feed of a source (both groups and every per-cluster view share its resourceVersions). */
export const upsyncedFeed = sharedFeeds((source: UpsyncedSource | undefined) => new VirtualFeed<ServedUpsynced>(source && feedSourceOf(source), content));

const UPSYNCED_PRINTER: KindPrinter<ServedUpsynced> = {
  columns: [
    { ...column('Name', 'string', 'Name of the UpsyncedObject: <cluster>:<resource>[.<group>]:<name>'), format: 'name' },
    column('Cluster', 'string', 'The WEC the object lives in'),
    column('Kind', 'string', 'Kind of the object'),
    column('Age', 'string', 'Age of the object in its WEC'),
    column('Last-Seen', 'string', 'Time since the agent last saw this version of the object'),
    column('Stale', 'string', 'Whether the cluster\'s agent stopped reporting (the copy may be out of date)'),
  ],
  cells: (o, now) => [o.metadata.name, o.spec.cluster, o.spec.source.kind, age(o.metadata.creationTimestamp, now.getTime()),
    age(o.status.lastSeen, now.getTime()), String(o.status.stale)],
};

export interface UpsyncedObjectsOptions extends ResourceAccess {
  /** The agents' copies (none without an ITS: the lists are empty). */
  source: UpsyncedSource | undefined;
  /** The time the Table's Age and Last-Seen count to (default: the system clock's). */
  now?: () => Date;
}

/**
 * GET (get, list, watch) and the refused writes of `/apis/<group>/v1alpha1/upsyncedobjects`
 * and `/apis/<group>/v1alpha1/namespaces/<namespace>/upsyncedobjects`. `authorize` checks
 * `upsyncedobjects` in `group`, in the path's namespace; `visibility` which source objects the
 * reader may get.
 */
export async function upsyncedObjectsResource(app: FastifyInstance, { source, group, authorize, visibility, now }: UpsyncedObjectsOptions): Promise<void> {
  registerVirtualResource(app, {
    kind: UPSYNCED_OBJECTS, group, version: VERSION, feed: upsyncedFeed(source), printer: UPSYNCED_PRINTER, labelSelectors: true, authorize, now,
    reader: (req) => async (items) => {
      const vis = await visibility(req).resolve(items.map(subjectOf));
      return { visible: (o) => vis.may(subjectOf(o)), show: (o) => o, leftOut: vis.leftOut };
    },
  });
}
