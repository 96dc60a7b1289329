// A list-and-watch cache of one collection of a kube-apiserver (an informer, written here over the
// undici pool of ./upstream: client-node's informer needs a KubeConfig per space and stops on any
// error but 410). Contract:
// - start() lists (paginated), then watches from the list's resourceVersion with bookmarks; a 410
//   Gone or an ERROR event relists; a dropped stream re-watches from the last resourceVersion; any
//   other failure retries with backoff (1 s doubling to 30 s). It never gives up until stop().
// - Every change to the cache is reported to onChange after the cache holds it, with the object
//   it replaced on an update; a relist reports the differences (adds, updates, deletes), so
//   nothing is missed across reconnects.
// - The cache is a Store (namespace/name → object, plus the indexes the caller asked for), which
//   unit tests fill directly. Cached objects are shared: callers must not mutate them (frozen).
// - `synced` resolves after the first complete list.
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

  /** Adds or replaces obj (frozen); returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    deepFreeze(obj);
    this.objects.set(key, obj);
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indexes.get(name)!;
      for (const v of fn(obj)) {
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
  onError?: (err: Error) => void;
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

interface WatchEvent<T> {
  type: string;
  object: T & { code?: number; message?: string };
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  private resourceVersion = '';
  private stopped = false;
  private abort: AbortController | undefined;
  private markSynced!: () => void;
  readonly synced: Promise<void> = new Promise((r) => { this.markSynced = r; });
  hasSynced = false;

  constructor(private readonly up: Upstream, private readonly o: InformerOptions<T>) {
    this.store = new Store<T>(o.indexers);
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
    if (this.o.labelSelector) q.set('labelSelector', this.o.labelSelector);
    if (this.o.fieldSelector) q.set('fieldSelector', this.o.fieldSelector);
    return `${this.o.path}?${q.toString()}`;
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
        this.o.onError?.(err as Error);
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
        this.o.metadataOnly ? { headers: { accept: METADATA_LIST } } : {});
      if (res.status === 410) throw new GoneError('continue token expired');
      const list = JSON.parse(expectOk(res, `list ${this.o.path}`).body.toString('utf8')) as
        { metadata?: { resourceVersion?: string; continue?: string }; items?: T[]; apiVersion?: string; kind?: string };
      const itemKind = list.kind?.replace(/List$/, '');
      for (const i of list.items ?? []) items.push(this.prepare({ apiVersion: list.apiVersion, kind: itemKind, ...i }));
      cont = list.metadata?.continue ?? '';
      rv = list.metadata?.resourceVersion ?? rv;
    } while (cont);
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(keyOf(obj));
      const old = this.store.set(obj);
      if (!old) this.o.onChange('ADDED', obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.o.onChange('MODIFIED', obj, old);
    }
    for (const old of this.store.list()) {
      if (seen.has(keyOf(old))) continue;
      this.store.delete(old);
      this.o.onChange('DELETED', old);
    }
    this.resourceVersion = rv;
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.markSynced();
    }
  }

  private prepare(obj: T): T {
    return this.o.transform ? this.o.transform(obj) : obj;
  }

  private async watch(): Promise<void> {
    this.abort = new AbortController();
    const headers: Record<string, string> = { accept: this.o.metadataOnly ? METADATA_WATCH : 'application/json' };
    if (this.up.authorization) headers.authorization = this.up.authorization;
    const res = await this.up.longPool.request({
      method: 'GET',
      path: this.up.basePath + this.query({ watch: '1', resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: '300' }),
      headers, signal: this.abort.signal,
    });
    if (res.statusCode !== 200) {
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode === 410) throw new GoneError('resourceVersion too old');
      expectOk({ status: res.statusCode, headers: res.headers, body }, `watch ${this.o.path}`);
      throw new Error(`watch ${this.o.path}: unexpected status ${res.statusCode}`);
    }
    for await (const e of jsonLines(res.body)) this.apply(e as WatchEvent<T>);
  }

  private apply(e: WatchEvent<T>): void {
    if (e.type === 'ERROR') {
      throw e.object?.code === 410 ? new GoneError(String(e.object?.message)) : new Error(`watch ${this.o.path}: ${String(e.object?.message)}`);
    }
    const rv = e.object?.metadata?.resourceVersion;
    if (typeof rv === 'string') this.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    if (e.object) e.object = this.prepare(e.object);
    if (e.type === 'DELETED') {
      this.store.delete(e.object);
      this.o.onChange('DELETED', deepFreeze(e.object));
    } else if (e.type === 'ADDED' || e.type === 'MODIFIED') {
      const old = this.store.set(e.object);
      this.o.onChange(old ? 'MODIFIED' : 'ADDED', e.object, old);
    }
  }
}
