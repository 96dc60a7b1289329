// A list-and-watch cache of one collection of a kube-apiserver (an informer, written here over the
// undici pool of ./upstream.ts: client-node's informer needs a KubeConfig per space and stops on any
// error but 410). Contract:
// - start() lists (paginated), then watches from the list's resourceVersion with bookmarks; a 410
//   Gone or an ERROR event relists; a dropped stream re-watches from the last resourceVersion; any
//   other failure retries with backoff (1 s doubling to 30 s). It never gives up until stop().
// - Every change to the cache is reported to onChange after the cache holds it, with the object
//   it replaced on an update; a relist reports the differences (adds, updates, deletes), so
//   nothing is missed across reconnects.
// - The cache is a Store (namespace/name → object, plus the indexes the caller asked for), which
//   unit tests fill directly. Cached objects are shared: callers must not mutate them (frozen).
// - One object never stops the informer: an object whose transform (or indexing) throws is
//   skipped — not cached, an older copy of it dropped as if deleted — and a handler that throws
//   is contained; both are reported to onError naming the object, and the stream goes on. (Before,
//   one WorkStatus nested 6,000 levels deep threw in every relist, and the informer relisted
//   forever: every cluster's status stopped.)
// - `synced` resolves after the first complete list; onRelisted is called after each.
import { setTimeout as sleep } from 'node:timers/promises';
import { jsonLines } from './json-lines.js';
import { deepFreeze } from './json.js';
import type { KubeObject } from './objects.js';
import { expectOk, upstreamRequest, type Upstream } from './upstream.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** An index function: the values under which an object is found (client-go's IndexFunc). */
export type Indexer<T extends KubeObject> = (obj: T) => readonly string[];

/** Index of objects by namespace (cluster-scoped objects are under ''). */
export const byNamespace: Indexer<KubeObject> = (o) => [o.metadata?.namespace ?? ''];

const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Objects by namespace/name, and by the values of each indexer (client-go's ThreadSafeStore). */
export class Store<T extends KubeObject = KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexes = new Map<string, Map<string, Map<string, T>>>();

  constructor(private readonly indexers: Readonly<Record<string, Indexer<T>>> = {}, objects: readonly T[] = []) {
    for (const name of Object.keys(indexers)) this.indexes.set(name, new Map());
    for (const o of objects) this.set(o);
  }

  get size(): number {
    return this.objects.size;
  }

  get(namespace: string, name: string): T | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  /** The objects whose indexer `index` yields `value`. */
  byIndex(index: string, value: string): T[] {
    const idx = this.indexes.get(index);
    if (!idx) throw new Error(`no index ${index}`);
    return [...(idx.get(value)?.values() ?? [])];
  }

  /** Adds or replaces obj (frozen); returns the object it replaced. An indexer that throws leaves the store as it was. */
  set(obj: T): T | undefined {
    const key = keyOf(obj);
    const values = Object.entries(this.indexers).map(([name, fn]) => [name, fn(obj)] as const);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    deepFreeze(obj);
    this.objects.set(key, obj);
    for (const [name, vs] of values) {
      const idx = this.indexes.get(name)!;
      for (const v of vs) {
        if (!idx.has(v)) idx.set(v, new Map());
        idx.get(v)!.set(key, obj);
      }
    }
    return old;
  }

  /** Removes the object with obj's namespace/name; returns it. */
  delete(obj: KubeObject): T | undefined {
    const key = keyOf(obj);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.objects.delete(key);
    return old;
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indexes.get(name)!;
      for (const v of fn(obj)) {
        const bucket = idx.get(v);
        bucket?.delete(key);
        if (bucket?.size === 0) idx.delete(v);
      }
    }
  }
}

export interface InformerOptions<T extends KubeObject> {
  /** Collection path, e.g. /apis/apps/v1/deployments (all namespaces). */
  path: string;
  /** Called after the cache holds the change; `old` is the object an update replaced. */
  onChange: (type: ChangeType, obj: T, old?: T) => void;
  /** A failed list or watch (retried), or one object skipped or a handler that threw (named in the message). */
  onError?: (err: Error) => void;
  /** After each complete list (the cache then holds exactly what the server listed, less skipped objects). */
  onRelisted?: () => void;
  /** Label selector applied to list and watch. */
  labelSelector?: string;
  /** Field selector applied to list and watch (e.g. `metadata.name=x`: one object, which RBAC can grant by name). */
  fieldSelector?: string;
  indexers?: Readonly<Record<string, Indexer<T>>>;
  /** Cache metadata only (PartialObjectMetadata): for informers that only need to hear of changes. */
  metadataOnly?: boolean;
  /**
   * Applied to each object as it arrives, before the cache holds it (client-go's SetTransform):
   * to keep only what the informer's users read. Gets a freshly parsed object, which it may change.
   * Throwing skips the object (reported to onError), as for an object that cannot be cached.
   */
  transform?: (obj: T) => T;
}

/**
 * A transform dropping metadata.managedFields, which a cache rarely needs and which often are as
 * large as the rest of the object (every field of a server-side-applied manifest is listed).
 */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
}

const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

class GoneError extends Error {}

/** What Informer.cache answers for an object it could not cache. */
const SKIPPED = Symbol('skipped');

interface WatchEvent<T> {
  type: string;
  object: T & { code?: number; message?: string };
}

/** What a watch stream may carry; anything else is a broken stream (retried with backoff, not skipped). */
const WATCH_EVENT_TYPES: ReadonlySet<unknown> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  private resourceVersion = '';
  private stopped = false;
  private abort: AbortController | undefined;
  private markSynced!: () => void;
  readonly synced: Promise<void> = new Promise((r) => { this.markSynced = r; });
  hasSynced = false;

  constructor(private readonly up: Upstream, private readonly options: InformerOptions<T>) {
    this.store = new Store<T>(options.indexers);
  }

  get(namespace: string, name: string): T | undefined {
    return this.store.get(namespace, name);
  }

  list(): T[] {
    return this.store.list();
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  private query(extra: Record<string, string>): string {
    const q = new URLSearchParams(extra);
    if (this.options.labelSelector) q.set('labelSelector', this.options.labelSelector);
    if (this.options.fieldSelector) q.set('fieldSelector', this.options.fieldSelector);
    return `${this.options.path}?${q.toString()}`;
  }

  private async run(): Promise<void> {
    let backoff = 1000;
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) await this.relist();
        needList = false;
        await this.watch();
        backoff = 1000;
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof GoneError) {
          needList = true;
          continue;
        }
        this.options.onError?.(err as Error);
        needList = true;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  private async relist(): Promise<void> {
    const items: T[] = [];
    let cont = '';
    let rv = '';
    do {
      const res = await upstreamRequest(this.up, 'GET', this.query({ limit: '500', ...(cont ? { continue: cont } : {}) }),
        this.options.metadataOnly ? { headers: { accept: METADATA_LIST } } : {});
      if (res.status === 410) throw new GoneError('continue token expired');
      const list = JSON.parse(expectOk(res, `list ${this.options.path}`).body.toString('utf8')) as
        { metadata?: { resourceVersion?: string; continue?: string }; items?: T[]; apiVersion?: string; kind?: string };
      const itemKind = list.kind?.replace(/List$/, '');
      for (const i of list.items ?? []) {
        const obj = this.prepare({ apiVersion: list.apiVersion, kind: itemKind, ...i });
        if (obj) items.push(obj);
      }
      cont = list.metadata?.continue ?? '';
      rv = list.metadata?.resourceVersion ?? rv;
    } while (cont);
    const seen = new Set<string>();
    for (const obj of items) {
      const old = this.cache(obj);
      if (old === SKIPPED) continue;
      seen.add(keyOf(obj));
      if (!old) this.notify('ADDED', obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.notify('MODIFIED', obj, old);
    }
    // What was not listed, or was skipped this time, is gone from the cache.
    for (const old of this.store.list()) {
      if (seen.has(keyOf(old))) continue;
      this.store.delete(old);
      this.notify('DELETED', old);
    }
    this.resourceVersion = rv;
    this.contain(undefined, () => this.options.onRelisted?.(), 'onRelisted failed');
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.markSynced();
    }
  }

  /** The object as the cache will hold it; undefined (reported) when the transform threw. */
  private prepare(obj: T): T | undefined {
    if (!this.options.transform) return obj;
    let out: T | undefined;
    this.contain(obj, () => { out = this.options.transform!(obj); }, 'skipped');
    return out;
  }

  /** Caches obj; returns the object it replaced, or SKIPPED (reported) when it cannot be cached. */
  private cache(obj: T): T | undefined | typeof SKIPPED {
    let old: T | undefined | typeof SKIPPED = SKIPPED;
    this.contain(obj, () => { old = this.store.set(obj); }, 'skipped');
    return old;
  }

  /** Calls the handler; one that throws is reported, never stops the stream. */
  private notify(type: ChangeType, obj: T, old?: T): void {
    this.contain(obj, () => this.options.onChange(type, obj, old), `${type} handler failed`);
  }

  /** Runs fn; what it throws is reported to onError, naming the object. */
  private contain(obj: KubeObject | undefined, fn: () => void, what = 'failed'): void {
    try {
      fn();
    } catch (err) {
      const name = obj ? ` ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name ?? ''}` : '';
      this.options.onError?.(new Error(`${this.options.path}${name}: ${what}: ${(err as Error)?.message ?? String(err)}`));
    }
  }

  private async watch(): Promise<void> {
    this.abort = new AbortController();
    const headers: Record<string, string> = { accept: this.options.metadataOnly ? METADATA_WATCH : 'application/json' };
    if (this.up.authorization) headers.authorization = this.up.authorization;
    const res = await this.up.longPool.request({
      method: 'GET',
      path: this.up.basePath + this.query({ watch: '1', resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: '300' }),
      headers, signal: this.abort.signal,
    });
    if (res.statusCode !== 200) {
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode === 410) throw new GoneError('resourceVersion too old');
      expectOk({ status: res.statusCode, headers: res.headers, body }, `watch ${this.options.path}`);
      throw new Error(`watch ${this.options.path}: unexpected status ${res.statusCode}`);
    }
    const started = Date.now();
    let events = 0;
    for await (const e of jsonLines(res.body)) { events++; this.apply(e as WatchEvent<T>); }
    // As client-go's reflector: a watch closed within a second with nothing on it is a fault of the
    // path (a proxy, a misbehaving server), and is retried with backoff, not in a tight loop.
    if (events === 0 && Date.now() - started < 1000) throw new Error(`watch ${this.options.path}: very short watch: closed within a second with no events`);
  }

  private apply(e: WatchEvent<T>): void {
    if (!WATCH_EVENT_TYPES.has(e?.type)) throw new Error(`watch ${this.options.path}: not a watch event (type ${JSON.stringify(e?.type)?.slice(0, 64)})`);
    if (e.type === 'ERROR') {
      throw e.object?.code === 410 ? new GoneError(String(e.object?.message)) : new Error(`watch ${this.options.path}: ${String(e.object?.message)}`);
    }
    const rv = e.object?.metadata?.resourceVersion;
    if (typeof rv === 'string') this.resourceVersion = rv;
    if (e.type === 'BOOKMARK' || !e.object) return;
    const obj = this.prepare(e.object);
    if (e.type === 'DELETED') {
      const old = this.store.delete(e.object);
      const last = obj ?? old;
      if (last) this.notify('DELETED', deepFreeze(last));
    } else if (e.type === 'ADDED' || e.type === 'MODIFIED') {
      const old = obj ? this.cache(obj) : SKIPPED;
      if (old !== SKIPPED) {
        this.notify(old ? 'MODIFIED' : 'ADDED', obj!, old);
        return;
      }
      // Not cached: the copy held before is no longer the object, and goes.
      const stale = this.store.delete(e.object);
      if (stale) this.notify('DELETED', stale);
    }
  }
}
