// Certificates of the local spaces' shared components, beside each space's own PKI (space-pki.ts):
// - etcd's, in <spaces dir>/etcd-pki, kubeadm's layout: an etcd CA of its own; etcd's serving
//   certificate for its client URL (server.crt) and for its peer URL (peer.crt, server and client
//   auth); the client certificate of the kube-apiservers (apiserver-etcd-client) and of the health
//   probes (healthcheck-client). etcd asks every client for a certificate of that CA
//   (--client-cert-auth), so a local user without these keys reads nothing from it.
// - each local agent's serving certificate, signed by the CA of the space it delegates to
//   (<space>/pki/<agent>-serving.crt), so the spaces' tools verify whom they talk to.
// Made once and reused; keys are written 0600 in folders made 0700.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCA, issueCert, type KeyPair } from '../kube/pki.js';
import { spacePkiFiles } from './space-pki.js';

export interface EtcdPkiFiles {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  peerCert: string;
  peerKey: string;
  /** The kube-apiservers' client certificate (--etcd-certfile). */
  apiserverClientCert: string;
  apiserverClientKey: string;
  /** The spaces' own probes of etcd's /health. */
  healthcheckClientCert: string;
  healthcheckClientKey: string;
}

export function etcdPkiFiles(spacesDir: string): EtcdPkiFiles {
  const p = (f: string) => path.join(spacesDir, 'etcd-pki', f);
  return {
    caCert: p('ca.crt'), caKey: p('ca.key'),
    serverCert: p('server.crt'), serverKey: p('server.key'),
    peerCert: p('peer.crt'), peerKey: p('peer.key'),
    apiserverClientCert: p('apiserver-etcd-client.crt'), apiserverClientKey: p('apiserver-etcd-client.key'),
    healthcheckClientCert: p('healthcheck-client.crt'), healthcheckClientKey: p('healthcheck-client.key'),
  };
}

function writePair(certFile: string, keyFile: string, pair: KeyPair): void {
  writeFileSync(certFile, pair.certPem, { mode: 0o600 });
  writeFileSync(keyFile, pair.keyPem, { mode: 0o600 });
}

const readPair = (certFile: string, keyFile: string): KeyPair => ({ certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') });

const LOOPBACK = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };

export async function ensureEtcdPki(spacesDir: string): Promise<EtcdPkiFiles> {
  const f = etcdPkiFiles(spacesDir);
  // The last file written: when it exists, the whole set does.
  if (existsSync(f.healthcheckClientKey)) return f;
  mkdirSync(path.dirname(f.caCert), { recursive: true, mode: 0o700 });
  const ca = await createCA('ksview-etcd-ca');
  writePair(f.caCert, f.caKey, ca);
  writePair(f.serverCert, f.serverKey, await issueCert(ca, { commonName: 'ksview-etcd', ...LOOPBACK, usages: ['server', 'client'] }));
  writePair(f.peerCert, f.peerKey, await issueCert(ca, { commonName: 'ksview-etcd', ...LOOPBACK, usages: ['server', 'client'] }));
  writePair(f.apiserverClientCert, f.apiserverClientKey, await issueCert(ca, { commonName: 'kube-apiserver-etcd-client', usages: ['client'] }));
  writePair(f.healthcheckClientCert, f.healthcheckClientKey, await issueCert(ca, { commonName: 'kube-etcd-healthcheck-client', usages: ['client'] }));
  return f;
}

/** The CA, certificate and key a probe of etcd presents. */
export function etcdProbeCredentials(spacesDir: string): { ca: string; client: KeyPair } {
  const f = etcdPkiFiles(spacesDir);
  return { ca: readFileSync(f.caCert, 'utf8'), client: readPair(f.healthcheckClientCert, f.healthcheckClientKey) };
}

export interface ServingFiles {
  cert: string;
  key: string;
}

/** Where the serving certificate of the local agent `agent` (e.g. `ksview-agent`) lives: in the PKI of the space it delegates to. */
export function agentServingFiles(spaceDir: string, agent: string): ServingFiles {
  const dir = path.dirname(spacePkiFiles(spaceDir).caCert);
  return { cert: path.join(dir, `${agent}-serving.crt`), key: path.join(dir, `${agent}-serving.key`) };
}

/** That certificate, for localhost and 127.0.0.1, signed by the space's CA; made once. */
export async function ensureAgentServingCert(spaceDir: string, agent: string): Promise<ServingFiles> {
  const f = agentServingFiles(spaceDir, agent);
  if (existsSync(f.key)) return f;
  const pki = spacePkiFiles(spaceDir);
  writePair(f.cert, f.key, await issueCert(readPair(pki.caCert, pki.caKey), { commonName: agent, ...LOOPBACK, usages: ['server'] }));
  return f;
}
