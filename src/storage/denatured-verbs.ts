// The verbs of a denatured kind's store, one interface per capability (as kubernetes/
// sample-apiserver's rest.Getter, rest.Lister...), and what they take: who asks, what is
// addressed, what a write sends. Inputs and outputs are in native form (./denatured-store.ts).
import type { KubeList, KubeObject } from '../kube/objects.js';
import type { Status } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';
import type { WatchEvent } from './denatured-translation.js';

/** Who asks, as headers for the WDS (impersonation, the server's credential, user-agent...). */
export interface Caller {
  headers: Record<string, string | string[]>;
  /** The user of those headers: whom Kubernetes' RBAC escalation check asks about on writes. */
  user?: UserInfo;
}

/** What a request addresses (`name` and `subresource` may be empty). */
export interface Target {
  version: string;
  namespace: string;
  name: string;
  subresource: string;
}

/** A result with the Warning headers the WDS sent (CRD field validation in Warn mode). */
export interface Result<T> {
  value: T;
  warnings: string[];
}

export interface Getter { get(caller: Caller, target: Target, query: URLSearchParams): Promise<Result<KubeObject>> }
export interface Lister { list(caller: Caller, target: Target, query: URLSearchParams): Promise<Result<KubeList>> }
export interface Watcher {
  /** Opens the watch (a failure to open throws), then streams native events to onEvent until it ends or signal aborts. */
  watch(caller: Caller, target: Target, query: URLSearchParams, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<{ done: Promise<void> }>;
}
/** A write as the client sent it: the body is decoded by Kubernetes' own code, not here. */
export interface WriteRequest {
  method: 'POST' | 'PUT' | 'PATCH';
  contentType: string;
  body: Buffer;
  userAgent?: string;
}
export interface Writer { write(caller: Caller, target: Target, w: WriteRequest, query: URLSearchParams): Promise<Result<KubeObject> & { code: number }> }
export interface Deleter { delete(caller: Caller, target: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeObject | Status>> }
export interface CollectionDeleter { deleteCollection(caller: Caller, target: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeList>> }

/** A write made to the WDS around the view, as its admission sees it: the stored objects. */
export interface StoredWrite {
  operation: 'CREATE' | 'UPDATE';
  /** '' or 'status'. */
  subresource: string;
  version: string;
  object: unknown;
  /** The object before an UPDATE. */
  oldObject?: unknown;
  /**
   * Who writes: for RBAC kinds Kubernetes' escalation check asks about this user. Absent: the
   * object is only validated (it was checked when written), as VALIDATION_USER (./native-code.ts).
   */
  user?: UserInfo;
}
