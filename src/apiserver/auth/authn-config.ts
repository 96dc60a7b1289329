// The authentication configuration an aggregated API server takes from its kube-apiserver: the
// ConfigMap kube-system/extension-apiserver-authentication, which names the client CA, the
// front-proxy (request header) CA, the CNs allowed to assert users, and the header names.
import { X509Certificate } from 'node:crypto';
import { upstreamJson, type Upstream } from '../../kube/upstream.js';

export interface AuthnConfig {
  clientCAs: X509Certificate[];
  requestHeaderCAs: X509Certificate[];
  /** Empty: any CN signed by a request header CA may assert users. */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  /** PEM of every CA, for the TLS server's `ca` so client certs are requested and checked. */
  caBundlePem: string;
}

const parseList = (s: string | undefined): string[] => {
  if (!s) return [];
  try {
    const v = JSON.parse(s) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
};

export function splitPemBundle(pem: string | undefined): string[] {
  return (pem ?? '').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

export function parseAuthnConfig(data: Record<string, string>): AuthnConfig {
  const clientPems = splitPemBundle(data['client-ca-file']);
  const requestHeaderPems = splitPemBundle(data['requestheader-client-ca-file']);
  return {
    clientCAs: clientPems.map((p) => new X509Certificate(p)),
    requestHeaderCAs: requestHeaderPems.map((p) => new X509Certificate(p)),
    allowedNames: parseList(data['requestheader-allowed-names']),
    usernameHeaders: parseList(data['requestheader-username-headers']).map((h) => h.toLowerCase()),
    groupHeaders: parseList(data['requestheader-group-headers']).map((h) => h.toLowerCase()),
    extraHeaderPrefixes: parseList(data['requestheader-extra-headers-prefix']).map((h) => h.toLowerCase()),
    caBundlePem: [...clientPems, ...requestHeaderPems].join('\n'),
  };
}

export async function loadAuthnConfig(up: Upstream): Promise<AuthnConfig> {
  const cm = await upstreamJson<{ data?: Record<string, string> }>(up, 'GET',
    '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
  return parseAuthnConfig(cm.data ?? {});
}
