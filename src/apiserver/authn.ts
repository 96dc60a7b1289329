// Authentication as an aggregated API server does it. In order: X-Remote-* headers, trusted only
// on a client certificate that chains to the request header CA and has an allowed CN; a client
// certificate from the client CA (CN = user, O = groups); a bearer token checked by TokenReview
// (cached briefly). Anything else is 401. Headers are never trusted without the certificate.
import { createHash, type X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { upstreamJson, type Upstream } from '../kube/upstream.js';
import type { AuthnConfig } from './authn-config.js';
import { errors } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';

export type TokenReviewer = (token: string) => Promise<UserInfo | undefined>;

/** The peer's chain, leaf first, as Node verified it against the server's CA list. */
function peerChain(socket: TLSSocket): DetailedPeerCertificate[] {
  const chain: DetailedPeerCertificate[] = [];
  let cert = socket.getPeerCertificate?.(true) as DetailedPeerCertificate | undefined;
  while (cert && cert.raw && chain.length < 10) {
    chain.push(cert);
    if (!cert.issuerCertificate || cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  return chain;
}

function chainsTo(chain: DetailedPeerCertificate[], cas: X509Certificate[]): boolean {
  const fingerprints = new Set(cas.map((c) => c.fingerprint256));
  return chain.slice(1).some((c) => fingerprints.has(c.fingerprint256));
}

/** Every value of a header, in order, across repeated headers (Node joins some repeats). */
function headerValues(req: IncomingMessage, name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === name) out.push(req.rawHeaders[i + 1]!);
  }
  return out;
}

function fromRequestHeaders(req: IncomingMessage, cfg: AuthnConfig): UserInfo | undefined {
  const username = cfg.usernameHeaders.map((h) => headerValues(req, h)[0]).find((v) => v);
  if (!username) return undefined;
  const groups = cfg.groupHeaders.flatMap((h) => headerValues(req, h));
  const extra: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const prefix = cfg.extraHeaderPrefixes.find((p) => name.startsWith(p));
    if (!prefix) continue;
    let k = name.slice(prefix.length);
    try { k = decodeURIComponent(k); } catch { /* keep as sent */ }
    (extra[k] ??= []).push(req.rawHeaders[i + 1]!);
  }
  return { username, groups, extra };
}

/** What a connection's client certificate proves, worked out once per TLS connection. */
interface PeerIdentity {
  /** The configuration it was judged against: a new one (CAs rotated) judges again. */
  config: AuthnConfig;
  frontProxy: boolean;
  user?: UserInfo;
}

export class Authenticator {
  private readonly tokenCache = new LRUCache<string, { user?: UserInfo }>({ max: 4096, ttl: 10_000 });
  // Peer certificates do not change within a TLS connection; reading and checking the chain on
  // every request was the largest CPU cost of authentication.
  private readonly peers = new WeakMap<TLSSocket, PeerIdentity>();

  constructor(private readonly config: () => AuthnConfig, private readonly reviewToken: TokenReviewer) {}

  private peerIdentity(socket: TLSSocket, cfg: AuthnConfig): PeerIdentity {
    const known = this.peers.get(socket);
    if (known && known.config === cfg) return known;
    const identity: PeerIdentity = { config: cfg, frontProxy: false };
    const chain = socket.authorized ? peerChain(socket) : [];
    if (chain.length > 0) {
      const leaf = chain[0]!;
      const cn = String(leaf.subject?.CN ?? '');
      identity.frontProxy = chainsTo(chain, cfg.requestHeaderCAs) && (cfg.allowedNames.length === 0 || cfg.allowedNames.includes(cn));
      if (chainsTo(chain, cfg.clientCAs) && cn) {
        const o = leaf.subject?.O;
        identity.user = { username: cn, groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'], extra: {} };
      }
    }
    if (typeof socket === 'object' && socket !== null) this.peers.set(socket, identity);
    return identity;
  }

  /**
   * The user, when it can be told without asking the WDS: front-proxy headers, a client
   * certificate, or a token reviewed in the last few seconds. Undefined otherwise (authenticate).
   * Every request goes through here first, so the common case costs no promise.
   */
  authenticateKnown(req: IncomingMessage): UserInfo | undefined {
    const cfg = this.config();
    const peer = this.peerIdentity(req.socket as TLSSocket, cfg);
    if (peer.frontProxy) {
      const user = fromRequestHeaders(req, cfg);
      if (user) return user;
    }
    if (peer.user) return peer.user;
    const token = bearerToken(req);
    return token ? this.tokenCache.get(tokenKey(token))?.user : undefined;
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    const known = this.authenticateKnown(req);
    if (known) return known;
    const token = bearerToken(req);
    if (token) {
      const key = tokenKey(token);
      let entry = this.tokenCache.get(key);
      if (!entry) {
        entry = { user: await this.reviewToken(token) };
        this.tokenCache.set(key, entry);
      }
      if (entry.user) return entry.user;
    }
    throw errors.unauthorized();
  }
}

function bearerToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth !== 'string' || !/^bearer /i.test(auth)) return undefined;
  return auth.slice(7).trim() || undefined;
}

/** Tokens are cached by their hash, never kept as they are. */
const tokenKey = (token: string) => createHash('sha256').update(token).digest('hex');

export function tokenReviewer(up: Upstream): TokenReviewer {
  return async (token) => {
    const review = await upstreamJson<{ status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } } }>(
      up, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews',
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
    const u = review.status?.user;
    if (!review.status?.authenticated || !u?.username) return undefined;
    return { username: u.username, uid: u.uid, groups: u.groups ?? [], extra: u.extra ?? {} };
  };
}
