// How the stored objects of a denatured kind are shown as the native kind (the read half of
// ./denatured-store.ts): converted (./denatured-converter.ts), then normalized by Kubernetes' own
// code (ksview-native), the result kept by uid and resourceVersion. A stored object that cannot be
// shown natively (its view.kubestellar.io annotations malformed, or a shape Kubernetes cannot
// decode: written around the view, before its admission webhook) is answered as Unreadable, named
// with its native name only when its annotation can be trusted, and logged once per version; the
// store leaves it out of lists with a Warning, skips it in watches.
import { LRUCache } from 'lru-cache';
import { errors } from '../kube/status.js';
import { isJsonObject } from '../kube/json.js';
import type { KubeObject } from '../kube/objects.js';
import { warningHeader } from '../kube/warning.js';
import type { StoredFormConverter, Unreadable } from './denatured-converter.js';
import { TranslationError } from './denatured-translation.js';
import type { NativeRegistries } from './native-code.js';

/** How much of the objects as shown each store keeps (they are immutable per uid and resourceVersion). */
const SHOWN_CACHE_BYTES = 16 << 20;

export type Shown = { object: KubeObject; unreadable?: undefined } | { unreadable: Unreadable; object?: undefined };

/** How many unreadable objects one answer names in Warning headers (the rest are counted). */
const MAX_NAMED_UNREADABLE = 10;

/** The key of an object as shown: version, uid and resourceVersion (none without both). */
export function shownKey(version: string, obj: unknown): string | undefined {
  const meta = isJsonObject(obj) && isJsonObject(obj.metadata) ? obj.metadata : undefined;
  return meta?.uid && meta.resourceVersion ? `${version}/${String(meta.uid)}/${String(meta.resourceVersion)}` : undefined;
}

interface PresenterOptions {
  /** The converter of the kind. */
  convert: StoredFormConverter;
  /** Kubernetes' own code, which normalizes what is shown. */
  native: NativeRegistries;
  /** The kind's resource, as Warnings name it. */
  plural: string;
  /** Where unreadable objects are logged. */
  log: (msg: string) => void;
}

export class StoredObjectPresenter {
  /** Objects as shown (JSON), by version, uid and resourceVersion: a read of an unchanged object needs no ksview-native. */
  private readonly shown = new LRUCache<string, string>({ maxSize: SHOWN_CACHE_BYTES, sizeCalculation: (s) => s.length || 1 });

  /** Unreadable objects already logged (by uid and resourceVersion): each is logged once. */
  private readonly logged = new LRUCache<string, true>({ max: 1000 });

  private readonly convert: StoredFormConverter;

  constructor(private readonly options: PresenterOptions) {
    this.convert = options.convert;
  }

  /** Keeps an object as shown (a write's answer), so that reading it back needs no ksview-native. */
  remember(key: string, shown: KubeObject): void {
    this.shown.set(key, JSON.stringify(shown));
  }

  /** Logs an unreadable object once per version of it. */
  private report(obj: unknown, u: Unreadable): void {
    const key = shownKey('', obj) ?? `${u.namespace}/${u.stored}`;
    if (this.logged.has(key)) return;
    this.logged.set(key, true);
    this.options.log(`denatured: ${this.convert.unreadableMessage(u)}`);
  }

  /** Warning headers naming the unreadable objects of an answer (a few; the rest counted). */
  unreadableWarnings(us: readonly Unreadable[]): string[] {
    const out = us.slice(0, MAX_NAMED_UNREADABLE).map((u) => warningHeader(this.convert.unreadableMessage(u)));
    if (us.length > MAX_NAMED_UNREADABLE) {
      out.push(warningHeader(`${us.length - MAX_NAMED_UNREADABLE} more ${this.options.plural} cannot be read and are left out (ksview serve's log names each)`));
    }
    return out;
  }

  /**
   * Stored objects as kube-apiserver shows the native kind: converted, then normalized by
   * Kubernetes' code; each one that cannot be is reported (logged) and answered as unreadable.
   */
  async present(objs: readonly unknown[], version: string): Promise<Shown[]> {
    const keys = objs.map((o) => shownKey(version, o));
    const out: Shown[] = new Array<Shown>(objs.length);
    const missing: number[] = [];
    const converted: KubeObject[] = [];
    const fail = (i: number, reason: string) => {
      const u = this.convert.unreadable(objs[i], reason);
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
        converted.push(this.convert.toNative(objs[i], version));
        missing.push(i);
      } catch (err) {
        if (!(err instanceof TranslationError)) throw err;
        fail(i, err.message);
      }
    });
    if (missing.length === 0) return out;
    const normalized = await this.options.native.normalize(this.convert.apiVersion(version), converted);
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
    if (shown!.unreadable) throw errors.internal(this.convert.unreadableMessage(shown!.unreadable));
    return shown!.object!;
  }

  /** One stored object as shown, or its identity alone (and the Warning naming it) when it cannot be shown. */
  async presentOrIdentity(obj: unknown, version: string): Promise<{ object: KubeObject; warnings: string[] }> {
    const [shown] = await this.present([obj], version);
    if (shown!.object) return { object: shown!.object, warnings: [] };
    return { object: this.convert.identityOnly(obj, shown!.unreadable!, version), warnings: this.unreadableWarnings([shown!.unreadable!]) };
  }
}
