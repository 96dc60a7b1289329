// The objects placement sends and what the status controller reads of them: the contract between
// the two rooms, which neither owns. Placement records a Placement per object and provides the
// StatusSources (../placement/placement-controller.ts statusSources()); status reads them to return each
// WEC's state into the WDS object. Types only.
import type { KubeObject } from '../../kube/objects.js';
import type { ManifestWork } from '../../kube/ocm-api.js';
import type { WorkloadObject } from './api.js';
import type { ObjectKey } from './keys.js';
import type { Modulation, WorkloadRef } from './resolution.js';
import type { WorkloadResource } from './workload-resources.js';
import type { ObjectIdentity } from './wrapping.js';

/** An object as it is sent: native form, identity, and what resolution reads of it. */
export interface SentObject {
  /** The key it is reconciled under (of the resource it was found in). */
  key: ObjectKey;
  id: ObjectIdentity;
  native: WorkloadObject;
  ref: WorkloadRef;
  /** Of a denatured kind, written straight to the WDS: it took effect there too. */
  bypassesView: boolean;
  /** Written through the view while an object of the same identity exists natively in the WDS (this one wins). */
  shadowsNative: boolean;
  /** Stored as a denatured.kubestellar.io object: Kubernetes' validation of its kind never ran in the WDS. */
  denatured: boolean;
  /** As cached (the stored form). */
  stored: WorkloadObject;
  /** Why its stored form cannot be read as the native object (its native form is then shown without its native metadata). */
  unreadable?: string;
}

/** What reconciliation records of a placed object. */
export interface Placement {
  id: ObjectIdentity;
  resourceVersion: string;
  /** The policies selecting it, sorted. */
  policies: string[];
  /** Each selecting policy's modulation of it (shown per object in that policy's Binding), and the clusters it picks. */
  modulations: Record<string, Modulation & { clusters: string[] }>;
}

/** The object as stored in the WDS and the resource it is listed under. */
export interface StoredObject {
  res: WorkloadResource;
  obj: KubeObject;
}

/** What the status controller reads of placement (the placement controller provides it). */
export interface StatusSources {
  /** The object a key names, in the native form it is sent in. */
  find(k: ObjectKey): SentObject | undefined;
  /** The object a key names as stored in the WDS, with its resource (for writes). */
  stored(k: ObjectKey): StoredObject | undefined;
  /** What reconciliation recorded of an object (by encoded key); undefined when no policy selects it. */
  placement(source: string): Placement | undefined;
  /** The keys under which an object of a native kind is queued. */
  keysFor(native: { group: string; resource: string }, namespace: string, name: string): ObjectKey[];
  /** Every object key. */
  allKeys(): ObjectKey[];
  onPlacementChange(cb: (source: string) => void): () => void;
  onObjectChange(cb: (k: ObjectKey) => void): () => void;
  /**
   * The bundled work of the cluster carrying the object (as placement's cache holds it: its
   * feedback may carry the object's status, ../status/reports.ts), with the manifest's index; undefined
   * when a work of its own carries it, or none.
   */
  bundleCarrying?(cluster: string, id: ObjectIdentity): { work: ManifestWork; index: number } | undefined;
  /** Calls cb with the encoded key of each object whose status a work's feedback carries when that changed. */
  onWorkReport?(cb: (source: string) => void): () => void;
  /** A BindingPolicy by name (its uid names CombinedStatuses). */
  policy(name: string): (KubeObject & { metadata: { name: string; uid?: string; creationTimestamp?: string } }) | undefined;
  /** Errors returning an object's status found, per selecting policy (shown in their status.errors). */
  recordStatusErrors?(source: string, byPolicy: ReadonlyMap<string, string[]>): void;
}
