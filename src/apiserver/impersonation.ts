// Request headers that make the WDS act as the end user: Impersonate-User/-Uid/-Group/-Extra-*.
// Whatever identity or impersonation headers the client sent are dropped first, so a request can
// never carry more than the user that authenticated here. These run on every passthrough request,
// so the client's headers are copied once (building the few Impersonate-* headers costs next to
// nothing; a cache of them measured no difference, as most users arrive by front-proxy headers,
// a new UserInfo per request).
import type { UserInfo } from '../kube/user.js';

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
 * The headers to send upstream for `user`: the client's headers minus credentials, hop-by-hop and
 * impersonation headers, plus the server's own credential (if a token) and impersonation.
 */
export function upstreamHeaders(incoming: Record<string, string | string[] | undefined>, user: UserInfo,
  serverAuthorization?: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // Headers the client named in Connection: are hop-by-hop too (RFC 9110 §7.6.1).
  const connection = incoming.connection;
  const named = connection ? new Set(String(connection).split(',').map((h) => h.trim().toLowerCase())) : undefined;
  for (const k in incoming) {
    const v = incoming[k];
    if (v === undefined || DROPPED.test(k) || named?.has(k.toLowerCase())) continue;
    out[k] = v;
  }
  if (serverAuthorization) out.authorization = serverAuthorization;
  return Object.assign(out, impersonationHeaders(user));
}
