// A list-and-watch cache of one collection of a kube-apiserver (an informer, written here over the
// undici pool of ./storage/upstream: client-node's informer needs a KubeConfig per space and stops
// on any error but 410). Contract:
// - start() lists (paginated), then watches from the list's resourceVersion with bookmarks; a 410
//   Gone or an ERROR event relists; a dropped stream re-watches from the last resourceVersion; any
//   other failure retries with backoff (1 s doubling to 30 s). It never gives up until stop().
// - Every change to the cache is reported to onChange after the cache holds it; a relist reports
//   the differences (adds, updates, deletes), so nothing is missed across reconnects.
// - Cached objects are shared: callers must not mutate them (they are frozen).
// - `synced` resolves after the first complete list.
import { jsonLines } from './json-lines.js';
import { deepFreeze } from './json.js';
import type { Upstream } from './upstream.js';

export type KubeObj = Record<string, any>;
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface InformerOptions {
  /** Collection path, e.g. /apis/apps/v1/deployments (all namespaces). */
  path: string;
  onChange: (type: ChangeType, obj: KubeObj) => void;
  onError?: (err: Error) => void;
  /** Label selector applied to list and watch. */
  labelSelector?: string;
}

const keyOf = (o: KubeObj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

class GoneError extends Error {}

export class Informer {
  private readonly cache = new Map<string, KubeObj>();
  private resourceVersion = '';
  private stopped = false;
  private abort: AbortController | undefined;
  private markSynced!: () => void;
  readonly synced: Promise<void> = new Promise((r) => { this.markSynced = r; });
  hasSynced = false;

  constructor(private readonly up: Upstream, private readonly o: InformerOptions) {}

  get(namespace: string, name: string): KubeObj | undefined {
    return this.cache.get(`${namespace}/${name}`);
  }

  list(): KubeObj[] {
    return [...this.cache.values()];
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
    return `${this.o.path}?${q.toString()}`;
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (this.up.authorization) h.authorization = this.up.authorization;
    return h;
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
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  private async relist(): Promise<void> {
    const items: KubeObj[] = [];
    let cont = '';
    let rv = '';
    do {
      const res = await this.up.pool.request({ method: 'GET', path: this.up.basePath + this.query({ limit: '500', ...(cont ? { continue: cont } : {}) }), headers: this.headers() });
      const text = await res.body.text();
      if (res.statusCode === 410) throw new GoneError('continue token expired');
      if (res.statusCode !== 200) throw new Error(`list ${this.o.path}: ${res.statusCode} ${text.slice(0, 300)}`);
      const list = JSON.parse(text) as { metadata?: { resourceVersion?: string; continue?: string }; items?: KubeObj[]; apiVersion?: string; kind?: string };
      const itemKind = list.kind?.replace(/List$/, '');
      for (const i of list.items ?? []) items.push({ apiVersion: list.apiVersion, kind: itemKind, ...i });
      cont = list.metadata?.continue ?? '';
      rv = list.metadata?.resourceVersion ?? rv;
    } while (cont);
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = deepFreeze(raw);
      const key = keyOf(obj);
      seen.add(key);
      const old = this.cache.get(key);
      this.cache.set(key, obj);
      if (!old) this.o.onChange('ADDED', obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.o.onChange('MODIFIED', obj);
    }
    for (const [key, old] of [...this.cache]) {
      if (!seen.has(key)) {
        this.cache.delete(key);
        this.o.onChange('DELETED', old);
      }
    }
    this.resourceVersion = rv;
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.markSynced();
    }
  }

  private async watch(): Promise<void> {
    this.abort = new AbortController();
    const res = await this.up.pool.request({
      method: 'GET',
      path: this.up.basePath + this.query({ watch: '1', resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: '300' }),
      headers: this.headers(), signal: this.abort.signal,
    });
    if (res.statusCode === 410) {
      await res.body.text();
      throw new GoneError('resourceVersion too old');
    }
    if (res.statusCode !== 200) throw new Error(`watch ${this.o.path}: ${res.statusCode} ${(await res.body.text()).slice(0, 300)}`);
    for await (const e of jsonLines(res.body)) this.apply(e as { type: string; object: KubeObj });
  }

  private apply(e: { type: string; object: KubeObj }): void {
    if (e.type === 'ERROR') {
      throw e.object?.code === 410 ? new GoneError(String(e.object?.message)) : new Error(`watch ${this.o.path}: ${String(e.object?.message)}`);
    }
    const rv = e.object?.metadata?.resourceVersion;
    if (typeof rv === 'string') this.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    const obj = deepFreeze(e.object);
    const key = keyOf(obj);
    if (e.type === 'DELETED') {
      this.cache.delete(key);
      this.o.onChange('DELETED', obj);
    } else if (e.type === 'ADDED' || e.type === 'MODIFIED') {
      const had = this.cache.has(key);
      this.cache.set(key, obj);
      this.o.onChange(had ? 'MODIFIED' : 'ADDED', obj);
    }
  }
}
