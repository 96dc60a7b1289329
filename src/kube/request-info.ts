// Parses a Kubernetes API path (under the view root) into what it addresses, as kube-apiserver's
// RequestInfoFactory does: group, version, namespace, resource, name, subresource. Paths with
// dot segments or encoded slashes are refused: they could address something else upstream. Also
// the way back: the path of a group version (/api/v1 for the core group, /apis/<group>/<version>).
import { errors } from './status.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  /** The legacy /watch/ path prefix was used. */
  legacyWatch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function assertSafePath(rawPath: string): void {
  const lower = rawPath.toLowerCase();
  if (lower.includes('%2f') || lower.includes('%5c') || lower.includes('%00') || lower.includes('\\')) {
    throw errors.badRequest(`invalid path ${JSON.stringify(rawPath.slice(0, 200))}: encoded separators are not allowed`);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    throw errors.badRequest('invalid path: bad percent-encoding');
  }
  if (decoded.split('/').some((seg) => seg === '..' || seg === '.')) {
    throw errors.badRequest(`invalid path ${JSON.stringify(rawPath.slice(0, 200))}: dot segments are not allowed`);
  }
}

/** The root path of a group version: `/api/<version>` for the core group (''), else `/apis/<group>/<version>`. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** A path segment as kube-apiserver routes it: percent-decoded (a malformed escape stays as sent). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * `path` is the part after the view root, starting with '/', without the query string. Segments
 * are decoded, as kube-apiserver decodes them before routing: `clusterrole%73` is `clusterroles`,
 * so classification by group and resource cannot be side-stepped by percent-encoding.
 */
export function parseRequestInfo(path: string): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false, path, group: '', version: '', namespace: '', resource: '', name: '', subresource: '', legacyWatch: false,
  };
  let parts = path.split('/').filter((p) => p !== '').map(decodeSegment);
  if (parts[0] === 'api') {
    if (parts.length < 2) return info;
    info.version = parts[1]!;
    parts = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length < 3) {
      info.group = parts[1] ?? '';
      return info;
    }
    info.group = parts[1]!;
    info.version = parts[2]!;
    parts = parts.slice(3);
  } else {
    return info;
  }
  if (parts.length === 0) return info; // discovery of a group version
  info.isResourceRequest = true;
  if (parts[0] === 'watch') {
    info.legacyWatch = true;
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1]!;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  info.resource = parts[0] ?? '';
  info.name = parts[1] ?? '';
  info.subresource = parts.slice(2).join('/');
  return info;
}

/** Subresources kube-apiserver serves as long-running (its BasicLongRunningRequestCheck). */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/**
 * The `watch` values that leave a list a list both for kube-apiserver's RequestInfo
 * (strconv.ParseBool) and for its handler (Convert_Slice_string_To_bool: `0`, or `false` in any
 * case): anything else may be served as a watch, and counts as one.
 */
const NOT_A_WATCH = new Set(['0', 'false', 'FALSE', 'False']);

/** A `watch` query parameter that makes a list a watch, read as kube-apiserver reads it (decoded: `%77atch=1` is one). */
function watchParam(query: string): boolean {
  if (!query.includes('watch') && !query.includes('%')) return false;
  const v = new URLSearchParams(query).get('watch');
  return v !== null && !NOT_A_WATCH.has(v);
}

/**
 * Whether kube-apiserver counts the request as long-running (it holds its connection for as long
 * as the client wants): the verbs watch and proxy (the legacy /watch/ and /proxy/ prefixes, or a
 * GET with `watch`) and the subresources attach, exec, proxy, log and portforward. `query` is the
 * query string, with or without its `?`. Errs on the long side: a GET of one object with `watch`
 * is counted too (kube-apiserver serves it as a get).
 */
export function isLongRunning(info: RequestInfo, method: string, query: string): boolean {
  if (!info.isResourceRequest) return false;
  if (info.legacyWatch || info.resource === 'proxy') return true;
  const slash = info.subresource.indexOf('/');
  if (LONG_RUNNING_SUBRESOURCES.has(slash < 0 ? info.subresource : info.subresource.slice(0, slash))) return true;
  return method === 'GET' && watchParam(query);
}
