// The one spelling of a view URL that the view's routes know, made before routing (fastify's
// rewriteUrl). kube-apiserver serves `/api/v1/`, `/api//v1` and `/api/%76%31` as `/api/v1`; the
// view's filtered routes (discovery, OpenAPI) must answer them all, or the catch-all passthrough
// would hand the WDS's unfiltered answer (hidden kinds included) to the client. So:
// - the view root itself, however percent-encoded, becomes the root as written;
// - a path below it that is not a resource request (discovery, OpenAPI, /version, ...) loses its
//   empty segments (double and trailing slashes) and has each segment decoded, as kube-apiserver
//   routes it (and encoded again where it must be);
// - a resource request keeps its own spelling below the root: it is classified by its decoded,
//   non-empty segments already (../../kube/request-info.ts), exactly what the WDS will address, and
//   a proxy subresource's trailing slash means something to its target.
// Already canonical URLs (nearly all) cost a few string checks.
import { parseRequestInfo } from '../../kube/request-info.js';

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
