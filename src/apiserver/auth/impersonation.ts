// Request headers that make the WDS act as the end user: Impersonate-User/-Uid/-Group/-Extra-*.
// Whatever identity or impersonation headers the client sent are dropped first, so a request can
// never carry more than the user that authenticated here. These run on every passthrough request,
// so the client's headers are copied once (building the few Impersonate-* headers costs next to
// nothing; a cache of them measured no difference, as most users arrive by front-proxy headers,
// a new UserInfo per request).
import type { UserInfo } from '../../kube/user.js';

/**
 * Credentials, identity, hop-by-hop headers, Host (the upstream's own) and Expect (the body is
 * already here; undici refuses the header).
 */
const DROPPED = /^(authorization|impersonate-.*|x-remote-.*|connection|keep-alive|proxy-.*|te|trailer|transfer-encoding|upgrade|host|expect)$/i;

/** Extra keys are percent-encoded in header names, as kube-apiserver expects. */
const encodeExtraKey = (k: string) => encodeURIComponent(k).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The Impersonate-* headers for `user`. */
export function impersonationHeaders(user: UserInfo): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'impersonate-user': user.username };
  if (user.uid) h['impersonate-uid'] = user.uid;
  if (user.groups.length > 0) h['impersonate-group'] = user.groups;
  for (const [k, values] of Object.entries(user.extra)) {
    if (values.length > 0) h[`impersonate-extra-${encodeExtraKey(k)}`] = values;
  }
  return h;
}

/**
 * `headers` without those `drop` names and those their own Connection header names (hop-by-hop
 * too, RFC 9110 §7.6.1): for requests to the WDS and for the WDS's answers. Node gives header
 * names in lower case.
 */
export function withoutHeaders(headers: Record<string, string | string[] | undefined>,
  drop: (name: string) => boolean): Record<string, string | string[]> {
  const connection = headers.connection;
  const named = connection ? new Set(String(connection).split(',').map((h) => h.trim().toLowerCase())) : undefined;
  const out: Record<string, string | string[]> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v === undefined || drop(k) || named?.has(k.toLowerCase())) continue;
    out[k] = v;
  }
  return out;
}

const dropped = (name: string) => DROPPED.test(name);

/**
 * The headers to send upstream for `user`: the client's headers minus credentials, hop-by-hop and
 * impersonation headers, plus the server's own credential (if a token) and impersonation.
 */
export function upstreamHeaders(incoming: Record<string, string | string[] | undefined>, user: UserInfo,
  serverAuthorization?: string): Record<string, string | string[]> {
  const out = withoutHeaders(incoming, dropped);
  if (serverAuthorization) out.authorization = serverAuthorization;
  return Object.assign(out, impersonationHeaders(user));
}
