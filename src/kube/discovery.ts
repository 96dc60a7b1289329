// Aggregated discovery (apidiscovery.k8s.io/v2) of a kube-apiserver, read with the server's own
// identity: /api (the core group) and /apis (every other group), in one call for the three
// readers (the view's visible group versions, the denatured kinds, the placement controllers),
// and flattened into one row per (group, version, resource) for those that look resources up.
import { upstreamJson, type Upstream } from './upstream.js';

export interface AggregatedResource {
  resource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  scope?: string;
  singularResource?: string;
  shortNames?: string[];
  verbs?: string[];
  subresources?: Array<{ subresource: string }>;
  [k: string]: unknown;
}
export interface AggregatedVersion {
  version: string;
  resources?: AggregatedResource[];
  [k: string]: unknown;
}
export interface AggregatedGroup {
  metadata?: { name?: string };
  versions?: AggregatedVersion[];
  [k: string]: unknown;
}
export interface AggregatedDiscovery {
  items?: AggregatedGroup[];
  [k: string]: unknown;
}

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** [core, groups]: the aggregated discovery documents of /api and /apis. */
export function aggregatedDiscoveryOf(up: Upstream): Promise<[AggregatedDiscovery, AggregatedDiscovery]> {
  const headers = { accept: AGGREGATED_V2 };
  return Promise.all([
    upstreamJson<AggregatedDiscovery>(up, 'GET', '/api', { headers }),
    upstreamJson<AggregatedDiscovery>(up, 'GET', '/apis', { headers }),
  ]);
}

/** One resource of one version of aggregated discovery. */
export interface DiscoveredResource {
  group: string;
  version: string;
  /** The group's preferred version (discovery lists it first). */
  preferred: boolean;
  resource: string;
  kind: string;
  /** The singular name (the lowercase kind when discovery has none). */
  singular: string;
  namespaced: boolean;
  verbs: string[];
  hasStatus: boolean;
  /** As discovery lists them (kubectl's `cm` for configmaps). */
  shortNames: string[];
}

/** Every resource with a kind in `doc`, group by group, versions in preference order. */
export function discoveredResources(doc: AggregatedDiscovery): DiscoveredResource[] {
  const out: DiscoveredResource[] = [];
  for (const g of doc.items ?? []) {
    const group = g.metadata?.name ?? '';
    (g.versions ?? []).forEach((v, i) => {
      for (const r of v.resources ?? []) {
        const kind = r.responseKind?.kind;
        if (!kind || !r.resource) continue;
        out.push({
          group, version: v.version, preferred: i === 0, resource: r.resource, kind,
          singular: r.singularResource || kind.toLowerCase(),
          namespaced: r.scope === 'Namespaced',
          verbs: r.verbs ?? [],
          hasStatus: (r.subresources ?? []).some((s) => s.subresource === 'status'),
          shortNames: Array.isArray(r.shortNames) ? r.shortNames.filter((x): x is string => typeof x === 'string') : [],
        });
      }
    });
  }
  return out;
}
