// PKI made with node-forge: certificate authorities and the certificates they sign (serving
// certificates with SANs, client certificates with a CN and organizations), written as PEM; and
// the self-signed serving certificate a server makes for itself when it is given none.
// Key generation goes through node-forge's native path (Node's crypto), so a whole space's PKI
// takes well under a second.
import forge from 'node-forge';

const { pki, md } = forge;

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertRequest {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses; a serving certificate needs at least one. */
  dnsNames?: string[];
  ipAddresses?: string[];
  /** 'server', 'client' or both; a CA ignores this. */
  usages: Array<'server' | 'client'>;
  validDays?: number;
}

function generateKeys(): Promise<forge.pki.rsa.KeyPair> {
  return new Promise((resolve, reject) =>
    pki.rsa.generateKeyPair({ bits: 2048, workers: -1 }, (err, keys) => (err ? reject(err) : resolve(keys))),
  );
}

function randomSerial(): string {
  // Positive 16-byte serial: the high bit is cleared so DER does not read it as negative.
  const bytes = forge.random.getBytesSync(16);
  const hex = forge.util.bytesToHex(bytes);
  return (parseInt(hex[0]!, 16) & 0x7).toString(16) + hex.slice(1);
}

function validity(cert: forge.pki.Certificate, days: number): void {
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 5 * 60 * 1000); // tolerate small clock skew
  cert.validity.notAfter = new Date(now + days * 24 * 3600 * 1000);
}

/**
 * Names as UTF8String, as Go's crypto/x509 writes them: forge's default, PrintableString, cannot
 * hold '@' (a self-signed CN `<host>@<time>`) or '_', and Go refuses such a certificate outright
 * (kubelet's HTTPS probes: "invalid PrintableString"), even when it does not verify it.
 */
function subject(commonName: string, organizations: string[] = []): forge.pki.CertificateField[] {
  // forge's typings call it a Class; x509.js uses it as the ASN.1 type of the value.
  const utf8 = forge.asn1.Type.UTF8 as unknown as forge.asn1.Class;
  return [
    ...organizations.map((o) => ({ shortName: 'O', value: o, valueTagClass: utf8 })),
    { shortName: 'CN', value: commonName, valueTagClass: utf8 },
  ];
}

export async function createCA(commonName: string, validDays = 3650): Promise<KeyPair> {
  const keys = await generateKeys();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  validity(cert, validDays);
  const attrs = subject(commonName);
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, md.sha256.create());
  return { certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey) };
}

export async function issueCert(ca: KeyPair, req: CertRequest): Promise<KeyPair> {
  const caCert = pki.certificateFromPem(ca.certPem);
  const caKey = pki.privateKeyFromPem(ca.keyPem);
  const keys = await generateKeys();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  validity(cert, req.validDays ?? 825);
  cert.setSubject(subject(req.commonName, req.organizations));
  cert.setIssuer(caCert.subject.attributes);
  const altNames = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(req.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    {
      name: 'extKeyUsage',
      serverAuth: req.usages.includes('server'),
      clientAuth: req.usages.includes('client'),
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ];
  if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames });
  cert.setExtensions(extensions);
  cert.sign(caKey, md.sha256.create());
  return { certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey) };
}

/** An RSA key pair for signing service-account tokens: private and public key in PEM. */
export async function createSigningKey(): Promise<{ privatePem: string; publicPem: string }> {
  const keys = await generateKeys();
  return { privatePem: pki.privateKeyToPem(keys.privateKey), publicPem: pki.publicKeyToPem(keys.publicKey) };
}

/**
 * A serving certificate for a server that was given none, as Kubernetes components make one
 * (client-go's GenerateSelfSignedCertKey: a CA of its own, `<host>-ca@<unix time>`, signing the
 * serving certificate): clients that want to verify it pin that CA (`caPem`).
 */
export async function selfSignedServingCert(host: string, dnsNames: string[], ipAddresses: string[]): Promise<KeyPair & { caPem: string }> {
  const ca = await createCA(`${host}-ca@${Math.floor(Date.now() / 1000)}`, 365);
  const serving = await issueCert(ca, { commonName: `${host}@${Math.floor(Date.now() / 1000)}`, dnsNames, ipAddresses, usages: ['server'], validDays: 365 });
  return { ...serving, caPem: ca.certPem };
}
