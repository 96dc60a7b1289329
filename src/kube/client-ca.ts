// The client CAs a server that delegates authentication trusts for client certificates, as
// k8s.io/apiserver's DelegatingAuthenticationOptions finds them: a PEM bundle the operator gives
// (`--client-ca-file`), else the `client-ca-file` that kube-apiserver publishes in
// kube-system/extension-apiserver-authentication for exactly this purpose, read with the server's
// own credentials and re-read every minute (CAs rotate). While none is known (the ConfigMap cannot
// be read: no rights, cluster down), no client certificate is accepted; the last good pool is kept
// through a failed re-read. Only certificates that are CAs (basicConstraints cA) enter a pool.
import { X509Certificate } from 'node:crypto';
import { upstreamJson, type Upstream } from './upstream.js';

export const AUTHENTICATION_CONFIGMAP_PATH = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';

/** The CA certificates of a PEM bundle; anything else in it (a leaf, garbage) is left out. */
export function parseCABundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const out: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      const cert = new X509Certificate(block);
      if (cert.ca) out.push(cert);
    } catch { /* not a certificate: trusted for nothing */ }
  }
  return out;
}

export interface ClientCASource {
  /** The CAs trusted now (empty: no client certificate is accepted). */
  current(): readonly X509Certificate[];
  stop(): void;
}

/** A fixed bundle (`--client-ca-file`). */
export function fixedClientCAs(pem: string): ClientCASource {
  const cas = parseCABundle(pem);
  return { current: () => cas, stop: () => {} };
}

/**
 * The delegate cluster's published client CA, read now and every `everyMs`. `log` hears of each
 * change of state once (read, or why not).
 */
export function publishedClientCAs(up: Upstream, log: (line: string) => void, everyMs = 60_000): ClientCASource {
  let cas: readonly X509Certificate[] = [];
  let said = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const say = (line: string) => { if (line !== said) log(line); said = line; };
  const read = async () => {
    try {
      const cm = await upstreamJson<{ data?: Record<string, string> }>(up, 'GET', AUTHENTICATION_CONFIGMAP_PATH);
      const found = parseCABundle(cm.data?.['client-ca-file'] ?? '');
      if (found.length > 0) {
        cas = found;
        say(`client certificates: trusting the ${found.length} client CA(s) of kube-system/extension-apiserver-authentication`);
      } else {
        say(`client certificates: kube-system/extension-apiserver-authentication has no client-ca-file; ${cas.length > 0 ? 'keeping the last one' : 'none accepted'}`);
      }
    } catch (err) {
      say(`client certificates: cannot read kube-system/extension-apiserver-authentication (${(err as Error).message.split('\n')[0]!.slice(0, 200)}); ${cas.length > 0 ? 'keeping the last client CAs' : 'none accepted until it can be read'}`);
    }
    if (!stopped) timer = setTimeout(() => void read(), everyMs);
  };
  void read();
  return {
    current: () => cas,
    stop() { stopped = true; clearTimeout(timer); },
  };
}
