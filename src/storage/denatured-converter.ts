// The one converter between the two forms of a denatured kind's objects: the stored form (its
// denatured.kubestellar.io object in the WDS) and the native form (what every client of the view
// sees). It binds the pure translation (./denatured-translation.ts) to one kind and adds what
// needs the kind: the managedFields of objects stored without the view's annotation, shaped from
// the native schema; the 422 of a native object the stored form cannot hold; the name and message
// of a stored object that cannot be converted (written around the view, before its admission
// webhook). A write converts the live object to native once and the registry's result to stored
// once (./denatured-store.ts); a read converts each stored object once, before Kubernetes' own
// code normalizes it (./denatured-presenter.ts).
import { FieldSelectorError } from '../kube/field-selector.js';
import { isJsonObject } from '../kube/json.js';
import type { KubeList, KubeObject } from '../kube/objects.js';
import { errors, type Status, type StatusCause } from '../kube/status.js';
import { DENATURED_GROUP } from './crd-schema.js';
import type { DenaturedKind } from './denatured-kinds.js';
import type { KindStrategy } from './denatured-strategy.js';
import {
  fieldSelectorToStored, hasNativeMetadata, listToNative, NATIVE_NAME_ANNOTATION, nativeApiVersion, statusToNative,
  storedName, toNative, toStored, TranslationError, watchEventToNative, type NativeGroupVersionResource, type WatchEvent,
} from './denatured-translation.js';

/** ObjectMeta's fields in the order of the Go struct, which is the order kube-apiserver writes them in. */
const OBJECT_META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'];

export function inGoOrder(meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of OBJECT_META_ORDER) if (meta[k] !== undefined) out[k] = meta[k];
  return out;
}

/** A stored object that cannot be shown natively: who it is (as far as can be told) and why. */
export interface Unreadable {
  /** The native name when its annotation can be trusted, else the stored name. */
  name: string;
  namespace: string;
  /** The name of the denatured.kubestellar.io object in the WDS. */
  stored: string;
  reason: string;
}

/** A copy without null-valued fields: the CRD would drop them anyway (they are not nullable there). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (!isJsonObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

/** What the converter reads of a kind's strategy. */
type ConvertedKind = Pick<KindStrategy, 'kind' | 'shaper'>;

export class StoredFormConverter {
  private readonly kind: DenaturedKind;

  constructor(private readonly strategy: ConvertedKind) {
    this.kind = strategy.kind;
  }

  /** The native apiVersion of a version of the kind. */
  apiVersion(version: string): string {
    return nativeApiVersion({ group: this.kind.group, version });
  }

  private gvr(version: string): NativeGroupVersionResource {
    return { group: this.kind.group, version, resource: this.kind.plural };
  }

  /** The name of the stored object of a native name (./denatured-translation.ts storedName). */
  storedName(nativeName: string): string {
    return storedName(nativeName);
  }

  /** A native object in stored form; what the stored form cannot hold is a 422 naming the field. */
  toStored(obj: KubeObject, version: string): KubeObject {
    try {
      return withoutNulls(toStored(obj, { group: this.kind.group, version })) as KubeObject;
    } catch (err) {
      if (err instanceof TranslationError) {
        const field = err.message.split(':')[0]!;
        const cause: StatusCause = { reason: 'FieldValueInvalid', message: err.message.replace(/^[^:]+: /, 'Invalid value: '), field };
        throw errors.invalid({ group: this.kind.group, kind: this.kind.kind, name: obj.metadata?.name ?? '' }, [cause]);
      }
      throw err;
    }
  }

  /**
   * A stored object in native form (names, apiVersion, native managedFields), not yet normalized;
   * TranslationError when its annotations are not the view's.
   */
  toNative(obj: unknown, version: string): KubeObject {
    if (!isJsonObject(obj)) throw new TranslationError('the WDS answered without an object');
    const out = toNative(obj as KubeObject, { group: this.kind.group, version });
    if (!hasNativeMetadata(obj as KubeObject) && out.metadata?.managedFields) {
      out.metadata.managedFields = this.strategy.shaper(version).entries(out.metadata.managedFields);
    }
    return out;
  }

  /** As toNative, an object that cannot be converted being a 500 that names it. */
  toNativeOrFail(obj: unknown, version: string): KubeObject {
    try {
      return this.toNative(obj, version);
    } catch (err) {
      if (err instanceof TranslationError) throw errors.internal(this.unreadableMessage(this.unreadable(obj, err.message)));
      throw err;
    }
  }

  /** The query for the stored kind: `metadata.name` field selector terms name stored objects; a malformed selector is a 400. */
  storedQuery(query: URLSearchParams): URLSearchParams {
    const q = new URLSearchParams(query);
    const fs = q.get('fieldSelector');
    if (fs) {
      try {
        q.set('fieldSelector', fieldSelectorToStored(fs));
      } catch (err) {
        if (err instanceof FieldSelectorError) throw errors.badRequest(err.message);
        throw err;
      }
    }
    return q;
  }

  /** A Status of the WDS worded for the native kind (./denatured-translation.ts statusToNative). */
  status<T extends Status>(status: T, version: string, name?: string): T {
    return statusToNative(status, this.gvr(version), name);
  }

  /** A watch event other than ADDED, MODIFIED and DELETED (whose objects are presented), in native form. */
  watchEvent(e: WatchEvent, version: string): WatchEvent {
    return watchEventToNative(e, this.gvr(version));
  }

  /** A stored list's own fields in native form (apiVersion, kind), its items left to the caller. */
  listWithoutItems(list: Omit<KubeList, 'items'>, version: string): KubeList {
    const out = listToNative({ ...list, items: [] } as KubeList, { group: this.kind.group, version });
    out.kind = `${this.kind.kind}List`;
    return out;
  }

  /** Who an unreadable stored object is: its native name only when the name annotation matches. */
  unreadable(obj: unknown, reason: string): Unreadable {
    const meta = isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata : {};
    const stored = typeof meta.name === 'string' ? meta.name : '';
    const annotated = isJsonObject(meta.annotations) ? meta.annotations[NATIVE_NAME_ANNOTATION] : undefined;
    const name = typeof annotated === 'string' && storedName(annotated) === stored ? annotated : stored;
    return { name, namespace: typeof meta.namespace === 'string' ? meta.namespace : '', stored, reason };
  }

  /** `<resource>.<group> "<name>" [in namespace "<ns>"] cannot be read: <why> (stored as ...)`. */
  unreadableMessage(u: Unreadable): string {
    const resource = this.kind.group ? `${this.kind.plural}.${this.kind.group}` : this.kind.plural;
    const where = u.namespace ? ` in namespace ${JSON.stringify(u.namespace)}` : '';
    return `${resource} ${JSON.stringify(u.name)}${where} cannot be read: ${u.reason} ` +
      `(stored in the WDS as ${this.kind.plural}.${DENATURED_GROUP} ${JSON.stringify(u.stored)}, written there around the view)`;
  }

  /** What is left to show of an unreadable object: its native identity and the WDS's own metadata. */
  identityOnly(obj: unknown, u: Unreadable, version: string): KubeObject {
    const meta = isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata : {};
    const keep = ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'finalizers'] as const;
    const metadata: Record<string, unknown> = { name: u.name, ...(u.namespace ? { namespace: u.namespace } : {}) };
    for (const k of keep) if (meta[k] !== undefined) metadata[k] = meta[k];
    return { apiVersion: this.apiVersion(version), kind: this.kind.kind, metadata: inGoOrder(metadata) as KubeObject['metadata'] };
  }
}
