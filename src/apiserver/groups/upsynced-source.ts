// What the view reads of upsynced objects (docs/upsync.md): the copies the agents wrote into the ITS for
// this WDS, as serve's upsync cache (src/controllers/upsync/) holds them. Only copies that a current
// UpsyncRequest of this WDS asks for are listed (a policy's clause removed, or its cluster no longer
// selected, hides them at once, before the agent deletes them). Objects are shared and frozen.
import type { UpsyncedObject } from '../../kube/upsync-api.js';

export interface UpsyncedSource {
  /** Every upsynced object of this WDS, all clusters. */
  list(): readonly UpsyncedObject[];
  /** One cluster's (the ITS's mailbox namespace is the cluster's name). */
  ofCluster(cluster: string): readonly UpsyncedObject[];
  /** The clusters with at least one UpsyncRequest of this WDS, sorted. */
  clusters(): readonly string[];
  /**
   * Whether the cluster's agent lease is stale (its copies are kept and shown, marked stale), and
   * since when (RFC 3339), undefined when it is not.
   */
  staleSince(cluster: string): string | undefined;
  /**
   * Called after each change of what list() returns: `old` the copy replaced (MODIFIED, DELETED),
   * `obj` the new one (ADDED, MODIFIED) or the last one (DELETED). A cluster turning stale or fresh
   * is reported as MODIFIED of each of its objects (same copy, obj === old).
   */
  onChange(cb: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: UpsyncedObject, old?: UpsyncedObject) => void): () => void;
}
