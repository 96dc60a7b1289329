// Aggregated discovery (apidiscovery.k8s.io/v2) of a kube-apiserver, read with the server's own
// identity: /api (the core group) and /apis (every other group), in one call for the three
// readers (the view's visible group versions, the denatured kinds, the placement controllers).
import { upstreamJson, type Upstream } from './upstream.js';

export interface AggregatedResource {
  resource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  scope?: string;
  singularResource?: string;
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
