// The PKI of one space, as files in <space>/pki: cluster CA, kube-apiserver serving cert,
// admin client cert (system:masters), service-account signing keys, and the front-proxy CA and
// client cert the aggregation layer uses to call aggregated API servers. Made once; `up` again
// reuses what is there, so kubeconfigs handed out stay valid. Other client certificates of a
// space's CA (the agents' own identities in its1) are made the same way, once, by name.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCA, createSigningKey, issueCert, type KeyPair } from '../kube/pki.js';

export interface SpacePkiFiles {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

/** The CN kube-apiserver presents to aggregated servers, and the only one they should trust. */
export const FRONT_PROXY_CLIENT_CN = 'front-proxy-client';

export function spacePkiFiles(spaceDir: string): SpacePkiFiles {
  const p = (f: string) => path.join(spaceDir, 'pki', f);
  return {
    caCert: p('ca.crt'), caKey: p('ca.key'),
    servingCert: p('apiserver.crt'), servingKey: p('apiserver.key'),
    adminCert: p('admin.crt'), adminKey: p('admin.key'),
    saKey: p('sa.key'), saPub: p('sa.pub'),
    frontProxyCaCert: p('front-proxy-ca.crt'), frontProxyCaKey: p('front-proxy-ca.key'),
    frontProxyClientCert: p('front-proxy-client.crt'), frontProxyClientKey: p('front-proxy-client.key'),
  };
}

function write(file: string, pem: string): void {
  writeFileSync(file, pem, { mode: 0o600 });
}

function writePair(certFile: string, keyFile: string, pair: KeyPair): void {
  write(certFile, pair.certPem);
  write(keyFile, pair.keyPem);
}

function readPair(certFile: string, keyFile: string): KeyPair {
  return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
}

/** The kube-apiserver's serving certificate: loopback, the `kubernetes` Service, and `extraIps`. */
async function issueServing(ca: KeyPair, f: SpacePkiFiles, extraIps: readonly string[]): Promise<void> {
  writePair(f.servingCert, f.servingKey, await issueCert(ca, {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local'],
    ipAddresses: ['127.0.0.1', '10.96.0.1', ...extraIps],
    usages: ['server'],
  }));
  write(servingSansFile(f), JSON.stringify(extraIps));
}

const servingSansFile = (f: SpacePkiFiles) => f.servingCert.replace(/\.crt$/, '.extra-ips');

/**
 * `extraIps`: more addresses the serving certificate must carry (with real nodes, the address pods
 * dial: ./node-layout.ts). When they change, only the serving certificate is made anew.
 */
export async function ensureSpacePki(spaceName: string, spaceDir: string, extraIps: readonly string[] = []): Promise<SpacePkiFiles> {
  const f = spacePkiFiles(spaceDir);
  // The last file written: when it exists, the whole set does.
  if (existsSync(f.frontProxyClientKey)) {
    const had = existsSync(servingSansFile(f)) ? readFileSync(servingSansFile(f), 'utf8') : '[]';
    if (had !== JSON.stringify(extraIps)) await issueServing(readPair(f.caCert, f.caKey), f, extraIps);
    return f;
  }
  mkdirSync(path.dirname(f.caCert), { recursive: true, mode: 0o700 });

  const ca = await createCA(`${spaceName}-ca`);
  writePair(f.caCert, f.caKey, ca);
  await issueServing(ca, f, extraIps);
  writePair(f.adminCert, f.adminKey, await issueCert(ca, {
    commonName: 'kubernetes-admin', organizations: ['system:masters'], usages: ['client'],
  }));
  const sa = await createSigningKey();
  write(f.saKey, sa.privatePem);
  write(f.saPub, sa.publicPem);
  const fpCa = await createCA(`${spaceName}-front-proxy-ca`);
  writePair(f.frontProxyCaCert, f.frontProxyCaKey, fpCa);
  writePair(f.frontProxyClientCert, f.frontProxyClientKey, await issueCert(fpCa, {
    commonName: FRONT_PROXY_CLIENT_CN, usages: ['client'],
  }));
  return f;
}

/**
 * A client certificate of the space's CA for `commonName` (the user) in `organizations` (its
 * groups), kept as `<space>/pki/clients/<file>.crt|.key`: made once, reused after (a changed
 * subject makes a new one).
 */
export async function ensureClientCert(spaceDir: string, file: string, commonName: string, organizations: string[]): Promise<KeyPair> {
  const f = spacePkiFiles(spaceDir);
  const dir = path.join(path.dirname(f.caCert), 'clients');
  const certFile = path.join(dir, `${file}.crt`);
  const keyFile = path.join(dir, `${file}.key`);
  const subjectFile = path.join(dir, `${file}.subject`);
  const subject = JSON.stringify({ commonName, organizations });
  if (existsSync(keyFile) && existsSync(subjectFile) && readFileSync(subjectFile, 'utf8') === subject) return readPair(certFile, keyFile);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = await issueCert(readPair(f.caCert, f.caKey), { commonName, organizations, usages: ['client'] });
  writePair(certFile, keyFile, pair);
  write(subjectFile, subject);
  return pair;
}

export function readAdminCredentials(spaceDir: string): { ca: string; client: KeyPair } {
  const f = spacePkiFiles(spaceDir);
  return { ca: readFileSync(f.caCert, 'utf8'), client: readPair(f.adminCert, f.adminKey) };
}
