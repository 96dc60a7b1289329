// Authentication as an aggregated API server does it. In order: X-Remote-* headers, trusted only
// on a client certificate verified against the request header CA alone and with an allowed CN;
// a client certificate verified against the client CA alone (CN = user, O = groups); a bearer
// token checked by TokenReview (cached briefly). Anything else is 401. Headers are never trusted
// without the certificate. Each CA pool is judged on its own, by signatures (../../kube/cert-chain.ts):
// the TLS layer checks the chain against both pools at once, and the chain a client sends, its
// order and its names are the client's choice.
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { verifyClientChain } from '../../kube/cert-chain.js';
import { upstreamJson, type Upstream } from '../../kube/upstream.js';
import type { AuthnConfig } from './authn-config.js';
import { errors } from '../../kube/status.js';
import type { UserInfo } from '../../kube/user.js';

export type TokenReviewer = (token: string) => Promise<UserInfo | undefined>;

/**
 * The peer's certificates, leaf first: what the client sent (Node links them by names, and may
 * add certificates of the server's CA list), parsed. Only the leaf's place is known; the rest are
 * candidates for a path, each to be verified.
 */
function peerCertificates(socket: TLSSocket): { chain: X509Certificate[]; subject?: DetailedPeerCertificate['subject'] } {
  const chain: X509Certificate[] = [];
  const first = socket.getPeerCertificate?.(true) as DetailedPeerCertificate | undefined;
  let cert = first;
  while (cert && cert.raw && chain.length < 10) {
    try {
      chain.push(new X509Certificate(cert.raw));
    } catch {
      break; // not a certificate Node can read: nothing after it is usable either
    }
    if (!cert.issuerCertificate || cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  // The leaf's names as Node reads them from the certificate (unescaped, unlike X509Certificate.subject).
  return { chain, subject: first?.subject };
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
  /** Until when the judgement holds (the first expiry on the verified paths), ms since the epoch. */
  until: number;
  /** Verified against the request header CA, with an allowed CN: the kube-apiserver's own certificate. */
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
    const now = Date.now();
    const known = this.peers.get(socket);
    if (known && known.config === cfg && now <= known.until) return known;
    const identity: PeerIdentity = { config: cfg, until: Infinity, frontProxy: false };
    const { chain: [leaf, ...rest], subject } = socket.authorized ? peerCertificates(socket) : { chain: [] };
    if (leaf) {
      // Several CNs: the last, as Go's pkix.Name reads them (kube-apiserver's user name).
      const cn = String(([] as string[]).concat(subject?.CN ?? '').at(-1) ?? '');
      const o = subject?.O === undefined ? [] : ([] as string[]).concat(subject.O);
      const asFrontProxy = verifyClientChain(leaf, rest, cfg.requestHeaderCAs, now);
      if (asFrontProxy && (cfg.allowedNames.length === 0 || cfg.allowedNames.includes(cn))) {
        identity.frontProxy = true;
        identity.until = asFrontProxy.notAfter;
      }
      const asUser = cn ? verifyClientChain(leaf, rest, cfg.clientCAs, now) : undefined;
      if (asUser) {
        identity.user = { username: cn, groups: [...o, 'system:authenticated'], extra: {} };
        identity.until = Math.min(identity.until, asUser.notAfter);
      }
    }
    if (typeof socket === 'object' && socket !== null) this.peers.set(socket, identity);
    return identity;
  }

  /**
   * Whether the request comes from the WDS's kube-apiserver itself: its connection's client
   * certificate verifies against the request header CA and has an allowed CN (the certificate it
   * proxies users' requests with, and presents to this server's admission webhooks).
   */
  isKubeApiserver(req: IncomingMessage): boolean {
    return this.peerIdentity(req.socket as TLSSocket, this.config()).frontProxy;
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
