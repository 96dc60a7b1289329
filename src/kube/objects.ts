// The one set of types for Kubernetes objects as JSON: what every room reads and writes. Fields are
// optional and unknown beyond the few every object has, so code checks what it reads.

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
