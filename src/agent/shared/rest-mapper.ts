// apiVersion+kind → resource of the WEC, from its aggregated discovery. Cached; a miss refreshes
// the cache (at most once per `minRefreshMs`) so a CRD applied a moment ago is found.
import { aggregatedDiscoveryOf, discoveredResources, type DiscoveredResource } from '../../kube/discovery.js';
import type { Upstream } from '../../kube/upstream.js';
import { collectionPath } from '../../kube/resource-path.js';
import { joinApiVersion } from '../../kube/api-version.js';

export interface Mapping {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Discovery's singular name and short names (what an upsynced copy carries for the view's discovery). */
  singular?: string;
  shortNames?: string[];
}

export class RestMapper {
  private byGvk = new Map<string, Mapping>();
  private byGr = new Map<string, Mapping>();
  private lastRefresh = 0;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly wec: Upstream, private readonly minRefreshMs = 1000) {}

  /** The mapping of apiVersion+kind, refreshing discovery once (rate-limited) on a miss. */
  async map(apiVersion: string, kind: string): Promise<Mapping | undefined> {
    const key = `${apiVersion}|${kind}`;
    const hit = this.byGvk.get(key);
    if (hit) return hit;
    await this.refresh();
    return this.byGvk.get(key);
  }

  /** The cached mapping of apiVersion+kind, without a refresh (for synchronous callers). */
  cached(apiVersion: string, kind: string): Mapping | undefined {
    return this.byGvk.get(`${apiVersion}|${kind}`);
  }

  /** The cached mapping of group/resource (any version), without a refresh. */
  byResource(group: string, resource: string): Mapping | undefined {
    return this.byGr.get(`${group}|${resource}`);
  }

  /** Re-reads discovery unless it was read less than minRefreshMs ago (callers share one read). */
  async refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (Date.now() - this.lastRefresh < this.minRefreshMs) return;
    this.refreshing = (async () => {
      try {
        const [core, groups] = await aggregatedDiscoveryOf(this.wec);
        this.load([...discoveredResources(core), ...discoveredResources(groups)]);
      } finally {
        this.lastRefresh = Date.now();
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private load(rows: DiscoveredResource[]): void {
    const byGvk = new Map<string, Mapping>();
    const byGr = new Map<string, Mapping>();
    for (const r of rows) {
      const m: Mapping = { group: r.group, version: r.version, resource: r.resource, kind: r.kind, namespaced: r.namespaced, singular: r.singular, shortNames: r.shortNames };
      const av = joinApiVersion(r.group, r.version);
      if (!byGvk.has(`${av}|${r.kind}`)) byGvk.set(`${av}|${r.kind}`, m);
      if (r.preferred || !byGr.has(`${r.group}|${r.resource}`)) byGr.set(`${r.group}|${r.resource}`, m);
    }
    this.byGvk = byGvk;
    this.byGr = byGr;
  }
}

/** The REST path of an object (or its collection when name is empty). */
export function objectPath(m: Mapping, namespace: string, name: string): string {
  const collection = collectionPath(m, m.namespaced ? namespace : '');
  return name ? `${collection}/${encodeURIComponent(name)}` : collection;
}
