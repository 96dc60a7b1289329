// A connection to one kube-apiserver (the WDS) from a kubeconfig: base URL, TLS material and
// credentials, three undici pools (the view's passthrough dispatches on them directly), and small
// JSON helpers for the server's own calls (discovery, TokenReview, SubjectAccessReview).
// Users' ordinary requests and the server's own go on pools of their own (users cannot starve the
// reviews that admit them, nor the controllers). Long-running requests (watches, logs, ...: request-info.ts isLongRunning) hold a connection for
// as long as they last, so they go on a pool of their own: however many are open, ordinary
// requests always find a connection (how many each user may open is bounded where they come in:
// src/apiserver/http/request-limits.ts).
import { Pool } from 'undici';
import type { RequestLimiter } from './request-limiter.js';
import { loadKubeconfig, loadKubeconfigText, type FleetKubeconfigPolicy, type LoadedKubeconfig } from './kubeconfig-file.js';

export interface Upstream {
  /** Origin of the kube-apiserver, e.g. https://127.0.0.1:16410 (no path). */
  origin: string;
  /** Path prefix of the server URL (usually empty). */
  basePath: string;
  tls: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; rejectUnauthorized?: boolean; servername?: string };
  /** Authorization header of the server's own identity, when a token is used. */
  authorization?: string;
  /** Ordinary requests made for users (impersonating them): each holds its connection only until answered. */
  pool: Pool;
  /**
   * Ordinary requests of the server's own identity (TokenReviews, SubjectAccessReviews, the
   * controllers' reads and writes): never queued behind users' requests, however many users hold.
   */
  ownPool: Pool;
  /** Long-running requests (watches, logs, ...): each holds a connection of its own for its life. */
  longPool: Pool;
  /**
   * The bound on the server's own requests (upstreamRequest) when one is set: the ITS's, from
   * `--max-its-requests-inflight` (./request-limiter.ts). Users' requests and watches are not under it.
   */
  limiter?: RequestLimiter;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The connection a kubeconfig describes; an unusable kubeconfig is a UserError naming the file. */
export async function upstreamFromKubeconfig(file: string, context?: string): Promise<Upstream> {
  return upstreamFromLoaded(await loadKubeconfig(file, context));
}

/**
 * The connection a kubeconfig held as text describes (a Secret's: the fleet's, loaded under
 * `policy`, KubeconfigRefused when it asks for more); `label` names it in a UserError.
 */
export async function upstreamFromKubeconfigText(text: string, label: string, policy: FleetKubeconfigPolicy, context?: string): Promise<Upstream> {
  return upstreamFromLoaded(await loadKubeconfigText(text, label, policy, context));
}

function upstreamFromLoaded({ cluster, server: url, https: opts }: LoadedKubeconfig): Upstream {
  const headers = (opts.headers ?? {}) as Record<string, string>;
  const tls = {
    ca: opts.ca as string | undefined, cert: opts.cert as string | undefined, key: opts.key as string | undefined,
    rejectUnauthorized: !cluster.skipTLSVerify, ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
  };
  // No pipelining: a slow LIST at the head of a pipeline would hold every request queued behind
  // it on that connection; concurrency comes from connections instead.
  const common = { pipelining: 1, headersTimeout: 120_000, connect: tls };
  // Ordinary requests of users: bounded, reused.
  const pool = new Pool(url.origin, { ...common, connections: 256, keepAliveTimeout: 60_000, bodyTimeout: 0 });
  // The server's own: a pool of their own, so that users who fill theirs (slow readers of large
  // lists) cannot hold back the reviews that admit or refuse every request, nor the controllers.
  const ownPool = new Pool(url.origin, { ...common, connections: 64, keepAliveTimeout: 60_000, bodyTimeout: 0 });
  // Long-running requests: a connection each, as many as are open (their number is bounded where
  // they come in); watches may be quiet for minutes, hence no body timeout.
  const longPool = new Pool(url.origin, { ...common, connections: null, keepAliveTimeout: 10_000, bodyTimeout: 0 });
  return {
    origin: url.origin,
    basePath: url.pathname.replace(/\/$/, ''),
    tls,
    authorization: headers.Authorization ?? headers.authorization,
    pool,
    ownPool,
    longPool,
  };
}

/**
 * A request with the server's own credential; a caller acting for an end user adds the
 * impersonation headers itself (the view's discovery reads), so the WDS authorizes that user.
 * Those go on the users' pool, the server's own on its own pool.
 */
export async function upstreamRequest(up: Upstream, method: string, path: string,
  opts: { headers?: Record<string, string | string[]>; body?: unknown; unlimited?: boolean } = {}): Promise<UpstreamResponse> {
  const headers: Record<string, string | string[]> = { accept: 'application/json', ...opts.headers };
  const contentType = headers['content-type'];
  if (up.authorization) headers.authorization = up.authorization;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = contentType ?? 'application/json';
  }
  const forUser = Object.keys(headers).some((h) => h.toLowerCase() === 'impersonate-user');
  const pool = forUser ? up.pool : up.ownPool;
  // The body is read inside: a request holds its place under the limiter until fully answered.
  const send = async (): Promise<UpstreamResponse> => {
    const res = await pool.request({ method: method as 'GET', path: up.basePath + path, headers, body });
    return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
  };
  // Leases (`unlimited`) never wait behind a burst of writes: a late renewal costs the lease.
  return up.limiter && !forUser && !opts.unlimited ? up.limiter.run(send) : send();
}

export async function upstreamJson<T>(up: Upstream, method: string, path: string,
  opts: { headers?: Record<string, string>; body?: unknown } = {}): Promise<T> {
  const res = expectOk(await upstreamRequest(up, method, path, opts), `${method} ${path}`);
  return JSON.parse(res.body.toString('utf8')) as T;
}

/**
 * `res` when its status is 2xx or one of `alsoOk` (e.g. 404 for a delete); otherwise an
 * UpstreamError saying what was done (`what`), the status and the start of the body.
 */
export function expectOk(res: UpstreamResponse, what: string, alsoOk: readonly number[] = []): UpstreamResponse {
  if ((res.status >= 200 && res.status < 300) || alsoOk.includes(res.status)) return res;
  throw new UpstreamError(res.status, `${what}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
}

/**
 * Server-side apply of `obj` at `path` (the object's own URL) under `fieldManager`, forced (the
 * server's own objects: it owns their fields). Returns the object as stored.
 */
export async function serverSideApply<T = unknown>(up: Upstream, path: string, obj: unknown, fieldManager: string): Promise<T> {
  const res = await upstreamRequest(up, 'PATCH', `${path}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`, {
    headers: { 'content-type': 'application/apply-patch+yaml' }, body: obj,
  });
  return JSON.parse(expectOk(res, `apply ${path}`).body.toString('utf8')) as T;
}

/** Closes both pools of `up` (waiting for what is under way). */
export async function closeUpstream(up: Upstream): Promise<void> {
  up.limiter?.close();
  await Promise.all([up.pool.close(), up.ownPool.close(), up.longPool.close()]);
}

/** Destroys the pools of `up` at once. */
export async function destroyUpstream(up: Upstream): Promise<void> {
  up.limiter?.close();
  await Promise.all([up.pool.destroy(), up.ownPool.destroy(), up.longPool.destroy()]);
}

export class UpstreamError extends Error {
  constructor(readonly upstreamStatus: number, message: string) {
    super(message);
    this.name = 'UpstreamError';
  }
}
