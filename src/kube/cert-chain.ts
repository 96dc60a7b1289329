// Verification of a TLS client's certificate against one pool of CAs, as kube-apiserver's x509
// authenticator does it (Go's x509.Verify with Roots = that pool, Intermediates = the rest of the
// chain the client sent, KeyUsages = client auth): a path from the leaf to a certificate of the
// pool in which every certificate is signed by the next (the signature checked with the next one's
// public key, not only the names), every certificate is within its validity period, every issuer
// below the root is a CA, and every certificate with extended key usages allows client auth.
// The chain a client sends is only a bag of candidate intermediates: its order and its names are
// the client's choice, so neither is trusted. Each pool is judged alone, so a certificate that a
// client CA signed can never pass as one a front-proxy CA signed because both sit in one TLS `ca`.
import type { X509Certificate } from 'node:crypto';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';
/** Certificates between the leaf and the root at most (Go allows any; client chains are short). */
const MAX_INTERMEDIATES = 4;

export interface VerifiedChain {
  /** When the first certificate of the path expires (ms since the epoch): judge again after it. */
  notAfter: number;
}

function validAt(c: X509Certificate, now: number): boolean {
  return Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
}

/** Extended key usages, when the certificate has them, must allow client auth. */
function allowsClientAuth(c: X509Certificate): boolean {
  const ekus = c.keyUsage as string[] | undefined;
  return !ekus || ekus.length === 0 || ekus.includes(CLIENT_AUTH) || ekus.includes(ANY_EXTENDED_KEY_USAGE);
}

/**
 * Whether `issuer` issued `child`: names and key identifiers agree and the issuer may sign
 * certificates (OpenSSL's X509_check_issued), and the signature verifies with its public key.
 */
function signedBy(child: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return child.checkIssued(issuer) && child.verify(issuer.publicKey);
  } catch {
    return false; // a key type or signature the runtime cannot check proves nothing
  }
}

/**
 * A verified path from `leaf` to one of `roots`, using only `candidates` (what the client sent)
 * as intermediates; undefined when there is none.
 */
export function verifyClientChain(leaf: X509Certificate, candidates: readonly X509Certificate[], roots: readonly X509Certificate[],
  now = Date.now()): VerifiedChain | undefined {
  if (roots.length === 0 || !validAt(leaf, now) || !allowsClientAuth(leaf)) return undefined;
  const rootPrints = new Set(roots.map((r) => r.fingerprint256));
  // What the client sent may include the roots themselves (they are found in `roots`).
  const intermediates = candidates.filter((c) => !rootPrints.has(c.fingerprint256) && c.fingerprint256 !== leaf.fingerprint256);
  const walk = (cert: X509Certificate, notAfter: number, used: ReadonlySet<string>): VerifiedChain | undefined => {
    for (const root of roots) {
      if (validAt(root, now) && signedBy(cert, root)) return { notAfter: Math.min(notAfter, Date.parse(root.validTo)) };
    }
    if (used.size >= MAX_INTERMEDIATES) return undefined;
    for (const next of intermediates) {
      if (used.has(next.fingerprint256) || !next.ca || !validAt(next, now) || !allowsClientAuth(next) || !signedBy(cert, next)) continue;
      const found = walk(next, Math.min(notAfter, Date.parse(next.validTo)), new Set([...used, next.fingerprint256]));
      if (found) return found;
    }
    return undefined;
  };
  return walk(leaf, Date.parse(leaf.validTo), new Set());
}
