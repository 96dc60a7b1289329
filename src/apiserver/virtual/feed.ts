// The objects a controller computes (Bindings, CombinedStatuses) as a served VirtualCollection:
// filled from the source once, then kept by key. The source only says which keys may have changed
// (never pushes objects); a dirty key is recomputed before the next read, so no read is stale, and,
// while some watch is open, within COALESCE_MS (longer when recomputing is costly: LOAD_FACTOR), so
// that a burst of changes to one key (every object of a policy being placed) recomputes it once.
// With nobody watching nothing is recomputed: a Binding of thousands of objects is not rebuilt for
// every placement (measured: ksview serve's RSS in the placement bench doubled when it was).
// One feed per source object and resource (`sharedFeeds`): the paths that serve the same source
// (view.kubestellar.io and, inside the view, control.kubestellar.io) share objects and
// resourceVersions, so a resourceVersion read on one path is valid on the other.
import type { KubeObject } from '../../kube/objects.js';
import { VirtualCollection } from './collection.js';

/** What a feed reads; keys are `name` for cluster-scoped objects and `<namespace>/<name>` for namespaced ones. */
export interface FeedSource<T extends KubeObject> {
  all(): T[];
  one(key: string): T | undefined;
  keyOf(o: T): string;
  /** Called with a key whose object may have changed, appeared or gone; returns the unsubscribe. */
  onChange(cb: (key: string) => void): () => void;
}

/** The key of an object in a feed (and in the sources' contracts). */
export const objectKey = (namespace: string | undefined, name: string) => (namespace ? `${namespace}/${name}` : name);

/** How long the source's changes are gathered before they are recomputed for open watches. */
const COALESCE_MS = 100;
/**
 * And at least this many times as long as the last such recomputation took: under a flood of
 * changes (100 CombinedStatuses over 1,000 clusters, every one touched by each cluster's report)
 * recomputing for watches takes at most about a fifth of a core, and the informers that bring the
 * changes are not starved by it (measured: without it, serve spent all its CPU rebuilding the same
 * keys while its ManifestWork watch fell minutes behind).
 */
const LOAD_FACTOR = 4;

export class VirtualFeed<T extends KubeObject> {
  readonly collection: VirtualCollection<T>;
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** How long the last recomputation for watches took (ms). */
  private lastFlushMs = 0;

  /** `content` tells whether an object changed (its resourceVersion aside). */
  constructor(private readonly source: FeedSource<T> | undefined, content: (o: T) => string) {
    this.collection = new VirtualCollection<T>(content);
    if (!source) return;
    for (const o of source.all()) this.collection.set(source.keyOf(o), o);
    source.onChange((key) => {
      this.dirty.add(key);
      if (this.collection.watched()) this.timer ??= setTimeout(() => this.flushForWatches(), Math.max(COALESCE_MS, LOAD_FACTOR * this.lastFlushMs)).unref();
    });
  }

  /**
   * The timer's flush: outside any request, so a source that throws is logged to stderr and the
   * keys are tried again on the next read, never an uncaught exception that ends the server.
   */
  private flushForWatches(): void {
    const t0 = performance.now();
    try {
      this.flush();
      this.lastFlushMs = performance.now() - t0;
    } catch (err) {
      this.timer = undefined;
      process.stderr.write(`ksview serve: recomputing virtual objects for open watches: ${(err as Error).message}\n`);
    }
  }

  /** Recomputes the keys the source said may have changed (call before every read). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const key of this.dirty) this.collection.set(key, this.source?.one(key));
    this.dirty.clear();
  }
}

/**
 * The feed of a source, made on first use and kept as long as the source lives (one WeakMap per
 * call of this, i.e. per resource: a controller that is the source of two resources has two feeds).
 * Without a source, one empty feed.
 */
export function sharedFeeds<S extends object, T extends KubeObject>(make: (source: S | undefined) => VirtualFeed<T>): (source: S | undefined) => VirtualFeed<T> {
  const feeds = new WeakMap<object, VirtualFeed<T>>();
  const none = {};
  return (source) => {
    const key = source ?? none;
    let f = feeds.get(key);
    if (!f) feeds.set(key, (f = make(source)));
    return f;
  };
}
