// The workload caches of one WDS: one Store per workload resource (the controller's informers fill
// them; unit tests fill them directly), and the reads reconciliation makes of them: an object in
// the native form it is sent in, with its identity (undefined for objects never sent); a
// Namespace's labels; the objects of one namespace (by index, not by scanning every object); the
// queue key of every object. Keys carry native names (a deleted object's works are found by them),
// the stores hold stored names (a denatured object's name may be encoded).
// One native identity may be listed under two resources: a denatured kind's objects through the
// view (denatured.kubestellar.io) and written straight to the WDS (the native resource). Both keys
// find the same object — the view's when both exist — so they reconcile to the same works.
// A stored object whose view.kubestellar.io/native-metadata cannot be read (written around the
// view) is still found, without that metadata, and marked unreadable: reconciliation holds it back
// and says why, instead of failing (or sending it).
import { byNamespace, Store } from '../../kube/informer.js';
import { NATIVE_METADATA_ANNOTATION, NATIVE_NAME_ANNOTATION, storedName, toNative, TranslationError } from '../../storage/denatured-translation.js';
import type { SentObject } from '../model/sent.js';
import { isSystemObject } from './system-objects.js';
import type { WorkloadResource } from '../model/workload-resources.js';
import { EXPAND_TEMPLATES_ANNOTATION, type ObjectIdentity } from '../model/wrapping.js';
import type { WorkloadObject } from '../model/api.js';
import { NAMESPACES, objectKey, resourceKey, type ObjectKey, type ResourceRef } from '../model/keys.js';


export interface WorkloadEntry {
  res: WorkloadResource;
  store: Store<WorkloadObject>;
}

export const WORKLOAD_INDEXERS = {
  namespace: byNamespace,
  /** Objects asking for template expansion (few): their failures are known before their siblings are written. */
  expands: (o: WorkloadObject) => (o.metadata.annotations?.[EXPAND_TEMPLATES_ANNOTATION] === 'true' ? ['true'] : []),
};

/** The object a key names in one resource's store, found by its stored name (a denatured name may be encoded). */
const storedObject = (e: WorkloadEntry, k: ObjectKey): WorkloadObject | undefined =>
  e.store.get(k.namespace, e.res.group === e.res.native.group ? k.name : storedName(k.name));

export class WorkloadCaches {
  private readonly entries = new Map<string, WorkloadEntry>();

  /** A store with the indexes these caches read. */
  static newStore(objects: readonly WorkloadObject[] = []): Store<WorkloadObject> {
    return new Store<WorkloadObject>(WORKLOAD_INDEXERS, objects);
  }

  has(r: ResourceRef): boolean {
    return this.entries.has(resourceKey(r));
  }

  add(res: WorkloadResource, store: Store<WorkloadObject>): void {
    this.entries.set(resourceKey(res), { res, store });
  }

  remove(r: ResourceRef): WorkloadEntry | undefined {
    const e = this.entries.get(resourceKey(r));
    this.entries.delete(resourceKey(r));
    return e;
  }

  resources(): WorkloadResource[] {
    return [...this.entries.values()].map((e) => e.res);
  }

  /** The queue key of a cached object. */
  keyOf(res: WorkloadResource, obj: WorkloadObject): ObjectKey {
    const name = res.group === res.native.group ? obj.metadata.name : obj.metadata.annotations?.[NATIVE_NAME_ANNOTATION] ?? obj.metadata.name;
    return objectKey(res, obj.metadata.namespace ?? '', name);
  }

  allKeys(): ObjectKey[] {
    return [...this.entries.values()].flatMap(({ res, store }) => store.list().map((o) => this.keyOf(res, o)));
  }

  /** The keys under which an object of the native kind `native` is queued (one per resource standing for it). */
  keysFor(native: { group: string; resource: string }, namespace: string, name: string): ObjectKey[] {
    return [...this.entries.values()].filter(({ res }) => res.native.group === native.group && res.native.resource === native.resource)
      .map(({ res }) => objectKey(res, namespace, name));
  }

  /**
   * The object a key names, as it is sent; undefined when it is not cached or never sent. Of the
   * resources standing for the same native kind, the view's object wins over one written natively.
   */
  find(k: ObjectKey): SentObject | undefined {
    const e = this.entries.get(resourceKey(k.resource));
    if (!e) return undefined;
    const twins = [...this.entries.values()].filter((t) => t.res.native.group === e.res.native.group && t.res.native.resource === e.res.native.resource);
    let viaView: SentObject | undefined;
    let direct: SentObject | undefined;
    for (const t of twins) {
      const cached = storedObject(t, k);
      const sent = cached && this.sentForm(t.res, cached);
      if (!sent) continue;
      if (sent.bypassesView) direct = sent;
      else viaView = sent;
    }
    if (viaView && direct) return { ...viaView, shadowsNative: true };
    return viaView ?? direct;
  }

  /** The object a key names as stored under the key's own resource (stored name), with that resource. */
  stored(k: ObjectKey): { res: WorkloadResource; obj: WorkloadObject } | undefined {
    const e = this.entries.get(resourceKey(k.resource));
    const obj = e && storedObject(e, k);
    return e && obj ? { res: e.res, obj } : undefined;
  }

  /** The keys of the objects asking for template expansion. */
  templatedKeys(): ObjectKey[] {
    return [...this.entries.values()].flatMap(({ res, store }) => store.byIndex('expands', 'true').map((o) => this.keyOf(res, o)));
  }

  /** The keys of the objects of namespaced resources in one namespace. */
  keysInNamespace(namespace: string): ObjectKey[] {
    return [...this.entries.values()].filter(({ res }) => res.namespaced)
      .flatMap(({ res, store }) => store.byIndex('namespace', namespace).map((o) => this.keyOf(res, o)));
  }

  namespaceLabels(namespace: string): Record<string, string> | undefined {
    return this.entries.get(resourceKey(NAMESPACES))?.store.get('', namespace)?.metadata.labels;
  }

  /** The native group of the objects listed under r (r's own group when r is unknown). */
  nativeGroupOf(r: ResourceRef): string {
    return this.entries.get(resourceKey(r))?.res.native.group ?? r.group;
  }

  private sentForm(res: WorkloadResource, obj: WorkloadObject): SentObject | undefined {
    const denatured = res.group !== res.native.group;
    let native = obj;
    let unreadable: string | undefined;
    if (denatured) {
      const gv = { group: res.native.group, version: res.version };
      try {
        native = toNative(obj, gv);
      } catch (err) {
        if (!(err instanceof TranslationError)) throw err;
        unreadable = err.message;
        // What it is without the metadata that cannot be read; a name that does not match its
        // annotation cannot be found by its key at all (storedObject), so it never gets here.
        const { [NATIVE_METADATA_ANNOTATION]: _bad, ...annotations } = obj.metadata.annotations ?? {};
        native = toNative({ ...obj, metadata: { ...obj.metadata, annotations } }, gv);
      }
    }
    if (isSystemObject(res.native, native, res.bypassesView)) return undefined;
    const id: ObjectIdentity = { group: res.native.group, version: res.version, resource: res.native.resource, namespace: native.metadata.namespace ?? '', name: native.metadata.name };
    return {
      key: this.keyOf(res, obj), id, native, bypassesView: res.bypassesView, shadowsNative: false, denatured, stored: obj,
      ...(unreadable !== undefined ? { unreadable } : {}),
      ref: { group: id.group, resource: id.resource, namespace: id.namespace, name: id.name, labels: native.metadata.labels ?? {} },
    };
  }
}
