// The one set of types for Kubernetes objects as JSON: what every room reads and writes. Fields are
// optional and unknown beyond the few every object has, so code checks what it reads.
import { createHash } from 'node:crypto';

/** Any JSON value (a parsed document or any part of it), read by code that checks what it finds. */
export type JsonValue = unknown;

/** A JSON object (the parsed form of any Kubernetes object or part of one). */
export type JsonObject = Record<string, JsonValue>;

export interface ManagedFieldsEntry {
  apiVersion?: string;
  fieldsV1?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
  items: T[];
  [key: string]: unknown;
}

/**
 * Whether resourceVersion `seen` is ahead of `had` (e.g. a watch's copy against the one a write
 * returned). resourceVersions are opaque, but kube-apiserver's are etcd revisions: compared as
 * numbers when both are, else any difference counts as newer.
 */
export function newerResourceVersion(seen: string | undefined, had: string | undefined): boolean {
  if (seen === undefined || seen === had) return false;
  return /^\d+$/.test(seen) && had !== undefined && /^\d+$/.test(had) ? BigInt(seen) > BigInt(had) : true;
}

/**
 * A uid for an object that is computed, not stored (virtual resources): UUID-shaped, from a
 * sha256 of `seed`, so every replica and every restart gives the same object the same uid.
 */
export function stableUid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** When an object's status last changed: the latest managedFields entry that touches status (KubeStellar's rule for a WorkStatus). */
export function lastStatusUpdate(obj: KubeObject): string | undefined {
  let latest: string | undefined;
  for (const m of obj.metadata?.managedFields ?? []) {
    const fields = m.fieldsV1 as JsonObject | undefined;
    const touchesStatus = m.subresource === 'status' || (fields !== undefined && 'f:status' in fields);
    if (touchesStatus && typeof m.time === 'string' && (!latest || m.time > latest)) latest = m.time;
  }
  return latest;
}
