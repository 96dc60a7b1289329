// How the stored objects of a denatured kind are shown as the native kind (the presentation half
// of ./denatured-store.ts): translated (./denatured-translation.ts), then normalized by Kubernetes'
// own code (ksview-native), the result kept by uid and resourceVersion. A stored object that
// cannot be shown natively (its view.kubestellar.io annotations malformed, or a shape Kubernetes
// cannot decode: written around the view, before its admission webhook) is answered as
// Unreadable, named with its native name only when its annotation can be trusted, and logged once
// per version; the store leaves it out of lists with a Warning, skips it in watches.
import { LRUCache } from 'lru-cache';
import { errors } from '../kube/status.js';
import { isJsonObject } from '../kube/json.js';
import type { KubeObject } from '../kube/objects.js';
import { warningHeader } from '../kube/warning.js';
import { DENATURED_GROUP } from './crd-schema.js';
import type { DenaturedKind } from './denatured-kinds.js';
import type { ManagedFieldsShaper } from './managed-fields-shape.js';
import { hasNativeMetadata, NATIVE_NAME_ANNOTATION, nativeApiVersion, storedName, toNative, TranslationError } from './denatured-translation.js';
import type { NativeRegistries } from './native-code.js';

/** ObjectMeta's fields in the order of the Go struct, which is the order kube-apiserver writes them in. */
const OBJECT_META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'];

export function inGoOrder(meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of OBJECT_META_ORDER) if (meta[k] !== undefined) out[k] = meta[k];
  return out;
}

/** How much of the objects as shown each store keeps (they are immutable per uid and resourceVersion). */
const SHOWN_CACHE_BYTES = 16 << 20;

/** A stored object that cannot be shown natively: who it is (as far as can be told) and why. */
export interface Unreadable {
  /** The native name when its annotation can be trusted, else the stored name. */
  name: string;
  namespace: string;
  /** The name of the denatured.kubestellar.io object in the WDS. */
  stored: string;
  reason: string;
}

export type Shown = { object: KubeObject; unreadable?: undefined } | { unreadable: Unreadable; object?: undefined };

/** How many unreadable objects one answer names in Warning headers (the rest are counted). */
const MAX_NAMED_UNREADABLE = 10;

/** The key of an object as shown: version, uid and resourceVersion (none without both). */
export function shownKey(version: string, obj: unknown): string | undefined {
  const meta = isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata : undefined;
  return meta?.uid && meta.resourceVersion ? `${version}/${String(meta.uid)}/${String(meta.resourceVersion)}` : undefined;
}

/** What the presenter reads of a kind's strategy (./denatured-store.ts KindStrategy). */
export interface PresentedKind {
  kind: DenaturedKind;
  /** The managedFields shaper of a version, for objects written without the view's annotations. */
  shaper(version: string): ManagedFieldsShaper;
}

export class StoredObjectPresenter {
  private readonly kind: DenaturedKind;
  /** Objects as shown (JSON), by version, uid and resourceVersion: a read of an unchanged object needs no ksview-native. */
  private readonly shown = new LRUCache<string, string>({ maxSize: SHOWN_CACHE_BYTES, sizeCalculation: (s) => s.length || 1 });

  /** Unreadable objects already logged (by uid and resourceVersion): each is logged once. */
  private readonly logged = new LRUCache<string, true>({ max: 1000 });

  constructor(private readonly strategy: PresentedKind, private readonly native: NativeRegistries, private readonly log: (msg: string) => void) {
    this.kind = strategy.kind;
  }

  /** Keeps an object as shown (a write's answer), so that reading it back needs no ksview-native. */
  remember(key: string, shown: KubeObject): void {
    this.shown.set(key, JSON.stringify(shown));
  }

  /**
   * A stored object in native form (names, apiVersion, native managedFields), not yet normalized;
   * TranslationError when its annotations are not the view's.
   */
  translate(obj: unknown, version: string): KubeObject {
    if (!isJsonObject(obj)) throw new TranslationError('the WDS answered without an object');
    const out = toNative(obj as KubeObject, { group: this.kind.group, version });
    if (!hasNativeMetadata(obj as KubeObject) && out.metadata?.managedFields) {
      out.metadata.managedFields = this.strategy.shaper(version).entries(out.metadata.managedFields);
    }
    return out;
  }

  /** As translate, an untranslatable object being a 500 that names it. */
  translated(obj: unknown, version: string): KubeObject {
    try {
      return this.translate(obj, version);
    } catch (err) {
      if (err instanceof TranslationError) throw errors.internal(this.unreadableMessage(this.unreadable(obj, err.message)));
      throw err;
    }
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

  /** Logs an unreadable object once per version of it. */
  private report(obj: unknown, u: Unreadable): void {
    const key = shownKey('', obj) ?? `${u.namespace}/${u.stored}`;
    if (this.logged.has(key)) return;
    this.logged.set(key, true);
    this.log(`denatured: ${this.unreadableMessage(u)}`);
  }

  /** Warning headers naming the unreadable objects of an answer (a few; the rest counted). */
  unreadableWarnings(us: readonly Unreadable[]): string[] {
    const out = us.slice(0, MAX_NAMED_UNREADABLE).map((u) => warningHeader(this.unreadableMessage(u)));
    if (us.length > MAX_NAMED_UNREADABLE) {
      out.push(warningHeader(`${us.length - MAX_NAMED_UNREADABLE} more ${this.kind.plural} cannot be read and are left out (ksview serve's log names each)`));
    }
    return out;
  }

  /**
   * Stored objects as kube-apiserver shows the native kind: translated, then normalized by
   * Kubernetes' code; each one that cannot be is reported (logged) and answered as unreadable.
   */
  async present(objs: readonly unknown[], version: string): Promise<Shown[]> {
    const keys = objs.map((o) => shownKey(version, o));
    const out: Shown[] = new Array<Shown>(objs.length);
    const missing: number[] = [];
    const translated: KubeObject[] = [];
    const fail = (i: number, reason: string) => {
      const u = this.unreadable(objs[i], reason);
      this.report(objs[i], u);
      out[i] = { unreadable: u };
    };
    keys.forEach((key, i) => {
      const hit = key === undefined ? undefined : this.shown.get(key);
      if (hit !== undefined) {
        out[i] = { object: JSON.parse(hit) as KubeObject };
        return;
      }
      try {
        translated.push(this.translate(objs[i], version));
        missing.push(i);
      } catch (err) {
        if (!(err instanceof TranslationError)) throw err;
        fail(i, err.message);
      }
    });
    if (missing.length === 0) return out;
    const normalized = await this.native.normalize(nativeApiVersion({ group: this.kind.group, version }), translated);
    missing.forEach((i, j) => {
      const n = normalized[j]!;
      if ('error' in n) {
        fail(i, `Kubernetes cannot decode it: ${n.error}`);
        return;
      }
      out[i] = { object: n.object as KubeObject };
      const key = keys[i];
      if (key !== undefined) this.shown.set(key, JSON.stringify(n.object));
    });
    return out;
  }

  /** One stored object as shown; a 500 naming it when it cannot be. */
  async presentOne(obj: unknown, version: string): Promise<KubeObject> {
    const [shown] = await this.present([obj], version);
    if (shown!.unreadable) throw errors.internal(this.unreadableMessage(shown!.unreadable));
    return shown!.object!;
  }

  /** What is left to show of an unreadable object: its native identity and the WDS's own metadata. */
  identityOnly(obj: unknown, u: Unreadable, version: string): KubeObject {
    const meta = isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata : {};
    const keep = ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'finalizers'] as const;
    const metadata: Record<string, unknown> = { name: u.name, ...(u.namespace ? { namespace: u.namespace } : {}) };
    for (const k of keep) if (meta[k] !== undefined) metadata[k] = meta[k];
    return { apiVersion: nativeApiVersion({ group: this.kind.group, version }), kind: this.kind.kind, metadata: inGoOrder(metadata) as KubeObject['metadata'] };
  }
}
