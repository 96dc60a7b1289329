import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import t from 'tap';
import forge from 'node-forge';
import { createCA, createSigningKey, issueCert, selfSignedServingCert } from '../../src/kube/pki.js';

t.test('a CA signs serving and client certificates that chain to it', async (t) => {
  const ca = await createCA('test-ca');
  const caCert = new X509Certificate(ca.certPem);
  t.ok(caCert.ca, 'CA has basicConstraints cA');
  t.ok(caCert.verify(caCert.publicKey), 'CA is self-signed');

  const serving = await issueCert(ca, {
    commonName: 'svc', dnsNames: ['svc.ns.svc', 'localhost'], ipAddresses: ['127.0.0.1'], usages: ['server'],
  });
  const cert = new X509Certificate(serving.certPem);
  t.notOk(cert.ca, 'leaf is not a CA');
  t.ok(cert.verify(caCert.publicKey), 'signed by the CA');
  t.ok(cert.checkIssued(caCert), 'issuer matches the CA subject');
  t.equal(cert.checkHost('svc.ns.svc'), 'svc.ns.svc', 'SAN DNS name');
  t.equal(cert.checkIP('127.0.0.1'), '127.0.0.1', 'SAN IP');
  t.equal(cert.checkHost('other.ns.svc'), undefined, 'no other name');
  t.same(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth only');
  t.ok(cert.checkPrivateKey(createPrivateKey(serving.keyPem)), 'key matches cert');

  const client = await issueCert(ca, { commonName: 'admin', organizations: ['system:masters'], usages: ['client'] });
  const c = new X509Certificate(client.certPem);
  t.match(c.subject, /O=system:masters/);
  t.match(c.subject, /CN=admin/);
  t.same(c.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'clientAuth only');
  t.not(c.serialNumber, cert.serialNumber, 'serials differ');
});

t.test('a signing key pair for service-account tokens', async (t) => {
  const k = await createSigningKey();
  t.ok(createPublicKey(k.publicPem).equals(createPublicKey(createPrivateKey(k.privatePem))));
});

t.test('names are UTF8Strings, as Go writes them: Go refuses a PrintableString holding "@"', async (t) => {
  // selfSignedServingCert's CN is `<host>@<time>`, as client-go's; kubelet's HTTPS probes parse it.
  const { certPem, caPem } = await selfSignedServingCert('agent-pod', ['localhost'], ['127.0.0.1']);
  for (const [what, pem] of [['serving certificate', certPem], ['its CA', caPem]] as const) {
    const cert = forge.pki.certificateFromPem(pem);
    const cn = cert.subject.getField('CN') as { value: string; valueTagClass: number };
    t.match(cn.value, /@/, `${what}: the CN holds "@"`);
    t.equal(cn.valueTagClass, forge.asn1.Type.UTF8, `${what}: encoded as UTF8String`);
  }
});
