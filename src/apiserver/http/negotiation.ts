// Content negotiation the way kube-apiserver does it for the few shapes this server answers
// itself: Table output, aggregated discovery v2 (and v2beta1), plain JSON.
import { AGGREGATED_V2 } from '../../kube/discovery.js';

export { AGGREGATED_V2 };
export const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

interface MediaType {
  type: string;
  params: Record<string, string>;
}

export function parseAccept(accept: string | undefined): MediaType[] {
  if (!accept) return [];
  return accept.split(',').map((part) => {
    const [type, ...rest] = part.trim().split(';');
    const params: Record<string, string> = {};
    for (const p of rest) {
      const [k, v] = p.split('=');
      if (k && v !== undefined) params[k.trim().toLowerCase()] = v.trim();
    }
    return { type: (type ?? '').trim().toLowerCase(), params };
  }).filter((m) => m.type);
}

/** 'v2' or 'v2beta1' when the client accepts aggregated discovery, in its order of preference. */
export function wantsAggregatedDiscovery(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const m of parseAccept(accept)) {
    if (m.type === 'application/json' && m.params.g === 'apidiscovery.k8s.io' && m.params.as === 'APIGroupDiscoveryList') {
      if (m.params.v === 'v2' || m.params.v === 'v2beta1') return m.params.v;
    }
    if (m.type === 'application/json' && !m.params.as) return undefined;
  }
  return undefined;
}

export function wantsTable(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  for (const m of parseAccept(accept)) {
    if (m.type === 'application/json' && m.params.as === 'Table' && m.params.g === 'meta.k8s.io') {
      return m.params.v === 'v1beta1' ? 'v1beta1' : 'v1';
    }
    if ((m.type === 'application/json' || m.type === '*/*') && !m.params.as) return undefined;
  }
  return undefined;
}

/** The Accept header without protobuf types, for calls whose answer this server rewrites as JSON. */
export function jsonOnlyAccept(accept: string | undefined): string {
  const kept = (accept ?? '').split(',').map((s) => s.trim()).filter((s) => s && !/protobuf/i.test(s));
  return kept.length > 0 ? kept.join(', ') : 'application/json';
}
