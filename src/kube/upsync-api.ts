// The upsync contract between `ksview serve` (WDS side) and the agents (WEC side), both through a
// cluster's mailbox namespace of the ITS (docs/upsync.md):
// - UpsyncRequest (control.kubestellar.io/v1alpha1, one per (WDS, BindingPolicy, cluster), named
//   upsyncRequestName): written by serve's upsync controller for each cluster a policy with
//   `spec.upsync` selects; carries the clauses, the objects the policy downsynced there (for
//   `associatedWith: downsync`), the executor (the agent copies only what that ServiceAccount of
//   the WEC may `get`) and the bounds. Its status is the agent's: how many objects it upsyncs, how
//   many the clauses select, what a bound or the executor's rights left out. Deleted when the
//   clause goes or the cluster is no longer selected: the agent then removes what only that
//   request selected.
// - UpsyncedObject (same group, one per (WDS, cluster, object), named upsyncedObjectName, labelled
//   with its WDS): the agent's copy of one WEC object, managedFields stripped, with the object's
//   own identity, resourceVersion and the time the agent last saw it. Written only by the agent.
import { createHash } from 'node:crypto';
import type { ObjectTest } from './object-selection.js';
import type { KubeObject, ObjectMeta } from './objects.js';

export const UPSYNC_GROUP = 'control.kubestellar.io';
export const upsyncRequestsPath = (cluster: string): string => `/apis/${UPSYNC_GROUP}/v1alpha1/namespaces/${cluster}/upsyncrequests`;
export const upsyncedObjectsPath = (cluster: string): string => `/apis/${UPSYNC_GROUP}/v1alpha1/namespaces/${cluster}/upsyncedobjects`;
/** Across every mailbox (serve's informers). */
export const UPSYNC_REQUESTS_PATH = `/apis/${UPSYNC_GROUP}/v1alpha1/upsyncrequests`;
export const UPSYNCED_OBJECTS_PATH = `/apis/${UPSYNC_GROUP}/v1alpha1/upsyncedobjects`;

/** On both kinds: the WDS they belong to (two WDSes may share an ITS and its mailboxes). */
export const UPSYNC_WDS_LABEL = 'upsync.view.kubestellar.io/wds';
/** On an UpsyncRequest: its policy (when the name fits a label value; the spec always has it). */
export const UPSYNC_POLICY_LABEL = 'upsync.view.kubestellar.io/policy';

/**
 * What `associatedWith: downsync` follows owners through, besides the downsynced objects' own
 * kinds (`group|resource`): what the agent watches and copies for it, and what serve accepts a
 * copy of under such a clause.
 */
export const ASSOCIATED_RESOURCES: readonly string[] = ['apps|replicasets', '|pods', 'batch|jobs', '|persistentvolumeclaims'];

/** Default bounds (docs/upsync.md, "Transport"): objects per (cluster, policy), bytes per object (its JSON). */
export const DEFAULT_UPSYNC_MAX_OBJECTS = 10_000;
export const DEFAULT_UPSYNC_MAX_OBJECT_BYTES = 256 * 1024;

/**
 * One upsync clause of a BindingPolicy (spec.upsync[]), as its CRD validates it: the object test
 * of a downsync clause (here an absent or "" apiGroup is the core group), and more.
 */
export interface UpsyncClause extends ObjectTest {
  associatedWith?: 'downsync';
  /** StatusCollectors combining the policy's upsynced objects (serve's, never sent to the agents). */
  statusCollectors?: string[];
}

/** An object the policy downsynced to the cluster (what `associatedWith: downsync` follows). */
export interface DownsyncedRef {
  group: string;
  resource: string;
  /** '' for cluster-scoped. */
  namespace: string;
  name: string;
}

/** A ServiceAccount of the WEC (namespace: a DNS-1123 label; name: a DNS-1123 subdomain). */
export interface UpsyncExecutor {
  namespace: string;
  name: string;
}

export interface UpsyncRequestSpec {
  wds: string;
  policy: string;
  clauses: UpsyncClause[];
  /** Only when a clause says associatedWith: downsync; sorted. */
  downsynced?: DownsyncedRef[];
  /**
   * The ServiceAccount of the WEC whose rights bound what is upsynced (the policy's executor, else
   * serve's default executor): the agent copies only objects it may `get`, as downsync applies only
   * what it may write. Absent: the agent's own rights (as a work without executor).
   */
  executor?: UpsyncExecutor;
  maxObjects: number;
  maxObjectBytes: number;
}

export interface UpsyncRequestStatus {
  /** The request's generation the agent last acted on. */
  observedGeneration?: number;
  /** Objects upsynced for this request. */
  objects: number;
  /** Objects its clauses select in the WEC (more than `objects` past maxObjects). */
  selected: number;
  /** Selected objects left out for being larger than maxObjectBytes. */
  tooLarge: number;
  /** Why objects were left out, '' when none were. */
  message?: string;
}

export interface UpsyncRequest extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: UpsyncRequestSpec;
  status?: UpsyncRequestStatus;
}

/** What an UpsyncedObject says of the object it copies. */
export interface UpsyncedSourceRef {
  group: string;
  version: string;
  resource: string;
  kind: string;
  /** '' for cluster-scoped. */
  namespace: string;
  name: string;
  uid: string;
  /** The object's own resourceVersion in the WEC. */
  resourceVersion: string;
  /** The WEC's discovery of the resource: its singular name and short names (the view's per-cluster discovery). */
  singular?: string;
  shortNames?: string[];
}

export interface UpsyncedObject extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  source: UpsyncedSourceRef;
  /** RFC 3339: when the agent last saw this version of the object (written with each copy). */
  lastSeen: string;
  /** The names of the UpsyncRequests' policies selecting it (sorted). */
  policies: string[];
  /** The object as the WEC holds it, managedFields stripped. */
  object: KubeObject;
}

const hash = (s: string, n: number) => createHash('sha256').update(s).digest('hex').slice(0, n);

/** The UpsyncRequest of (wds, policy) in a mailbox: `<wds>.<policy>`, hashed when too long. */
export function upsyncRequestName(wds: string, policy: string): string {
  const plain = `${wds}.${policy}`;
  return plain.length <= 253 ? plain : `${wds}.${policy.slice(0, 200)}.${hash(policy, 16)}`;
}

/** The UpsyncedObject of one WEC object for one WDS: `<wds>.<sha-256 of its identity, 40 hex>`. */
export function upsyncedObjectName(wds: string, ref: { group: string; resource: string; namespace: string; name: string }): string {
  return `${wds}.${hash(`${ref.group}/${ref.resource}/${ref.namespace}/${ref.name}`, 40)}`;
}

/** One entry of a BindingPolicy's status.upsync: how its upsync went in one cluster. */
export interface UpsyncClusterStatus {
  clusterId: string;
  objects: number;
  selected?: number;
  tooLarge?: number;
  message?: string;
}
