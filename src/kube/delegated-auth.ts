// Delegated authentication and authorization, as Kubernetes components guard the endpoints they
// serve themselves (k8s.io/apiserver's DelegatingAuthenticationOptions and
// DelegatingAuthorizationOptions: kubelet, metrics-server, kube-controller-manager's /metrics):
// - who: a client certificate issued by one of the delegate cluster's client CAs (CN = user,
//   O = groups), else a bearer token that the cluster's TokenReview accepts. No anonymous user, no
//   request headers: a request with neither is nobody (the caller answers 401).
// - may they: a SubjectAccessReview of the request's non-resource path and verb, asked of the same
//   cluster, with this server's own credentials (the `Upstream`).
// Both answers are cached for 10 s (Kubernetes' defaults for delegated authn/authz), tokens by
// their hash only, and concurrent reviews of one token or question are asked once.
//
// The certificate check is ./cert-chain.ts's (the view's): the leaf's signature is verified with the
// public key of a CA of the pool, with its validity and client-auth usage. The chain the peer sent is never
// read, so nothing in it (order, names, extra certificates) can make a leaf trusted; a leaf must
// be issued by a pool CA directly (Kubernetes would also follow intermediates the client sends).
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { verifyClientChain } from './cert-chain.js';
import type { ClientCASource } from './client-ca.js';
import { upstreamJson, type Upstream } from './upstream.js';
import type { UserInfo } from './user.js';

const CACHE_TTL_MS = 10_000;
const CACHE_ENTRIES = 4096;

export interface NonResourceRequest {
  verb: string;
  path: string;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Whether `leaf` is a client certificate (not a CA), valid now, issued directly by a valid CA of `cas` (./cert-chain.ts, no intermediates). */
export function verifiedByPool(leaf: X509Certificate, cas: readonly X509Certificate[], now = Date.now()): boolean {
  return !leaf.ca && verifyClientChain(leaf, [], cas.filter((ca) => ca.ca), now) !== undefined;
}

const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The user of a verified client certificate: its one CN, its Os as groups; none when it has no single CN. */
function certificateUser(subject: Record<string, string | string[] | undefined> | undefined): UserInfo | undefined {
  const cn = values(subject?.CN);
  if (cn.length !== 1 || !cn[0]) return undefined;
  return { username: cn[0], groups: [...values(subject?.O), 'system:authenticated'], extra: {} };
}

function bearerToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth !== 'string' || !/^bearer /i.test(auth)) return undefined;
  return auth.slice(7).trim() || undefined;
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

/** A cache whose misses are computed once however many ask at the same time. */
class ReviewCache<T extends object> {
  private readonly done = new LRUCache<string, T>({ max: CACHE_ENTRIES, ttl: CACHE_TTL_MS });
  private readonly asking = new Map<string, Promise<T>>();

  async get(key: string, ask: () => Promise<T>): Promise<T> {
    const known = this.done.get(key);
    if (known) return known;
    let pending = this.asking.get(key);
    if (!pending) {
      pending = ask().then((v) => { this.done.set(key, v); return v; }).finally(() => this.asking.delete(key));
      this.asking.set(key, pending);
    }
    return pending;
  }
}

export class DelegatedAuth {
  private readonly peers = new WeakMap<TLSSocket, { cas: readonly X509Certificate[]; user?: UserInfo }>();
  private readonly tokens = new ReviewCache<{ user?: UserInfo }>();
  private readonly decisions = new ReviewCache<Decision>();

  /** `delegate`: the cluster asked, with this server's credentials; `clientCAs`: whom client certificates must come from. */
  constructor(private readonly delegate: Upstream, private readonly clientCAs: ClientCASource) {}

  /** The client certificate's user, judged once per TLS connection (and again when the CAs change). */
  private certificateUser(socket: TLSSocket): UserInfo | undefined {
    if (typeof socket?.getPeerCertificate !== 'function') return undefined; // not TLS (app.inject)
    const cas = this.clientCAs.current();
    const known = this.peers.get(socket);
    if (known && known.cas === cas) return known.user;
    let user: UserInfo | undefined;
    const peer = socket.getPeerCertificate(false);
    if (peer?.raw && cas.length > 0) {
      let leaf: X509Certificate | undefined;
      try { leaf = new X509Certificate(peer.raw); } catch { /* unparsable: nobody */ }
      if (leaf && verifiedByPool(leaf, cas)) user = certificateUser(peer.subject as unknown as Record<string, string | string[]>);
    }
    this.peers.set(socket, { cas, user });
    return user;
  }

  /**
   * The request's user, or undefined when it carries no credential the delegate vouches for.
   * Throws when the TokenReview cannot be asked (the caller answers 401 and logs it).
   */
  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const byCert = this.certificateUser(req.socket as TLSSocket);
    if (byCert) return byCert;
    const token = bearerToken(req);
    if (!token) return undefined;
    const key = createHash('sha256').update(token).digest('hex');
    const { user } = await this.tokens.get(key, async () => {
      const review = await upstreamJson<{ status?: TokenReviewStatus }>(this.delegate, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews',
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
      const u = review.status?.user;
      if (!review.status?.authenticated || !u?.username) return {};
      return { user: { username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups ?? [], extra: u.extra ?? {} } };
    });
    return user;
  }

  /** Whether `user` may `verb` the non-resource `path`, by the delegate's SubjectAccessReview. Throws when it cannot be asked. */
  async authorize(user: UserInfo, request: NonResourceRequest): Promise<Decision> {
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      extra: user.extra,
      nonResourceAttributes: { path: request.path, verb: request.verb },
    };
    return this.decisions.get(JSON.stringify(spec), async () => {
      const review = await upstreamJson<{ status?: { allowed?: boolean; denied?: boolean; reason?: string } }>(this.delegate, 'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
      return { allowed: review.status?.allowed === true && review.status?.denied !== true, reason: review.status?.reason ?? '' };
    });
  }
}
