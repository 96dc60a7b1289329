// The one path resolver of this server (kcp's root-path resolver): what a URL addresses — the view
// of the WDS below its root (`/apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy`), a cluster's
// view of its upsynced objects below `<root>/clusters/<cluster>`, or the group's own API and the
// rest outside the root. The app's front door (long-running or not), the view's catch-all, the
// upgrade passthrough, the per-cluster views and the metrics ask it, never the URL itself.
//
// It also gives a view URL its one spelling before routing (fastify's rewriteUrl, `canonical`).
// kube-apiserver serves `/api/v1/`, `/api//v1` and `/api/%76%31` as `/api/v1`; the view's filtered
// routes (discovery, OpenAPI) must answer them all, or the catch-all passthrough would hand the
// WDS's unfiltered answer (hidden kinds included) to the client. So:
// - the view root itself, however percent-encoded, becomes the root as written;
// - a path below it that is not a resource request (discovery, OpenAPI, /version, ...) loses its
//   empty segments (double and trailing slashes) and has each segment decoded, as kube-apiserver
//   routes it (and encoded again where it must be);
// - a resource request keeps its own spelling below the root: it is classified by its decoded,
//   non-empty segments already (../../kube/request-info.ts), exactly what the WDS will address, and
//   a proxy subresource's trailing slash means something to its target.
// Already canonical URLs (nearly all) cost a few string checks.
import { parseRequestInfo, type RequestInfo } from '../../kube/request-info.js';

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Whether a path below the root may be spelled other than canonically. */
const unusual = (rest: string) => rest.includes('//') || rest.includes('%') || (rest.length > 1 && rest.endsWith('/'));

/** `url` in the view's canonical spelling (unchanged when it is not under `root`). */
export function canonicalViewUrl(url: string, root: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q);
  let rest: string;
  if (path.startsWith(root) && (path.length === root.length || path[root.length] === '/')) {
    rest = path.slice(root.length);
    if (!unusual(rest)) return url;
  } else {
    // The root spelled with escapes (`…/pro%78y`) is still the root, as the router decodes it.
    if (!path.includes('%')) return url;
    const rootSegments = root.split('/');
    const segments = path.split('/');
    if (segments.length < rootSegments.length || rootSegments.some((s, i) => decodeSegment(segments[i]!) !== s)) return url;
    const below = segments.slice(rootSegments.length);
    rest = below.length > 0 ? `/${below.join('/')}` : '';
  }
  if (parseRequestInfo(rest || '/').isResourceRequest) return root + rest + query;
  const segments = rest.split('/').filter((s) => s !== '').map((s) => encodeURIComponent(decodeSegment(s)));
  return root + (segments.length > 0 ? `/${segments.join('/')}` : '') + query;
}

/** The path and the query (with its `?`, or '') of a request URL. */
export function splitUrl(url: string): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q) };
}

/** The cluster and the path below its root, for a path below the view root; undefined for other paths. */
export function clusterViewPath(belowRoot: string): { cluster: string; path: string } | undefined {
  const m = /^\/clusters\/([^/]+)(\/.*)?$/.exec(belowRoot);
  if (!m) return undefined;
  let cluster: string;
  try {
    cluster = decodeURIComponent(m[1]!);
  } catch {
    cluster = m[1]!;
  }
  return { cluster, path: m[2] ?? '/' };
}

/** What a URL below the view root addresses. */
export interface ViewTarget {
  /** The path below the root, as the WDS addresses it ('/' at the root itself). */
  below: string;
  /** Below `clusters/<cluster>`: that cluster's view of its upsynced objects, and the path there. */
  cluster?: { cluster: string; path: string };
  /** What the path addresses: in a cluster's view, its path there (a Kubernetes API of its own). */
  info: RequestInfo;
}

/** Where the metrics count a request: the view, the group's own API, or the rest. */
export type Scope = 'view' | 'group' | 'other';

export class ViewPaths {
  constructor(readonly root: string) {}

  /** `url` in the view's canonical spelling (unchanged when it is not under the root). */
  canonical(url: string): string {
    return canonicalViewUrl(url, this.root);
  }

  /** The part of a path below the root ('' at the root itself), undefined when it is not under the root. */
  below(path: string): string | undefined {
    const { root } = this;
    if (!path.startsWith(root) || (path.length !== root.length && path.charCodeAt(root.length) !== 47 /* / */)) return undefined;
    return path.slice(root.length);
  }

  /** What a request URL (its query aside) addresses below the root; undefined outside it. */
  resolve(url: string): ViewTarget | undefined {
    const rest = this.below(splitUrl(url).path);
    if (rest === undefined) return undefined;
    const below = rest || '/';
    const cluster = clusterViewPath(below);
    return { below, ...(cluster ? { cluster } : {}), info: parseRequestInfo(cluster?.path ?? below) };
  }

  /** The path and query the WDS is asked for: the URL with the root taken off. */
  upstreamPath(url: string): string {
    const rest = url.slice(this.root.length);
    return rest.startsWith('/') ? rest : `/${rest}`;
  }

  /** The metrics' scope of a URL: by prefix alone, on every response (the router has decided the rest). */
  scope(url: string): Scope {
    return url.startsWith(this.root) ? 'view' : url.startsWith('/apis') ? 'group' : 'other';
  }
}
