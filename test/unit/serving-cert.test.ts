// The serving certificate folder (--cert-dir): a Kubernetes TLS Secret plus ca.crt, mounted as the
// kubelet mounts it (each key a symlink into a ..data folder), is used as it is and never written;
// one that is not acceptable is a one-line error saying why when the folder cannot be written.
import t from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureServingCert } from '../../src/apiserver/serving-cert.js';
import { createCA, issueCert, type KeyPair } from '../../src/kube/pki.js';

let ca: KeyPair;
t.before(async () => { ca = await createCA('test-serving-ca'); });

/** A folder as the kubelet mounts a Secret: `..data/<key>` files, `<key>` symlinks to them. */
function secretMount(t: { teardown(fn: () => void): void }, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ksview-cert-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, '..2026_11_26'));
  symlinkSync('..2026_11_26', path.join(dir, '..data'));
  for (const [k, v] of Object.entries(files)) {
    writeFileSync(path.join(dir, '..2026_11_26', k), v);
    symlinkSync(path.join('..data', k), path.join(dir, k));
  }
  return dir;
}

const serving = (dnsNames: string[]) => issueCert(ca, { commonName: dnsNames[0]!, dnsNames, usages: ['server'] });

t.test('a mounted TLS Secret with ca.crt naming the Service: used as it is, nothing written', async (t) => {
  const cert = await serving(['ksview.kubestellar-view.svc', 'ksview.kubestellar-view.svc.cluster.local', 'localhost']);
  const dir = secretMount(t, { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem, 'ca.crt': ca.certPem });
  const before = readdirSync(dir).sort();
  const got = await ensureServingCert(dir, 'ksview', 'kubestellar-view');
  t.equal(got.certPem, cert.certPem);
  t.equal(got.caPem, ca.certPem, 'the caBundle of the APIService and webhooks is the mounted ca.crt');
  t.same(readdirSync(dir).sort(), before, 'nothing written');
});

t.test('hosted: localhost is not required', async (t) => {
  const cert = await serving(['ksview.kubestellar-view.svc', 'ksview.kubestellar-view.svc.cluster.local']);
  const dir = secretMount(t, { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem, 'ca.crt': ca.certPem });
  t.equal((await ensureServingCert(dir, 'ksview', 'kubestellar-view', { localhost: false })).certPem, cert.certPem);
});

t.test('not acceptable and not writable: one line saying why', async (t) => {
  const wrong = await serving(['other.kubestellar-view.svc']);
  const dir = secretMount(t, { 'tls.crt': wrong.certPem, 'tls.key': wrong.keyPem, 'ca.crt': ca.certPem });
  // A folder it cannot write (root ignores modes, so not a read-only volume: a folder where ca.crt would go).
  rmSync(path.join(dir, 'ca.crt'));
  mkdirSync(path.join(dir, 'ca.crt'));
  await t.rejects(ensureServingCert(dir, 'ksview', 'kubestellar-view', { localhost: false }), {
    name: 'UserError',
    message: `--cert-dir ${dir}: tls.crt lacks the DNS name(s) ksview.kubestellar-view.svc, ksview.kubestellar-view.svc.cluster.local, and a new one cannot be written there: it is a folder, not a file`,
  });
});

t.test('a TLS Secret without ca.crt: the caBundle would be unknown', async (t) => {
  const cert = await serving(['ksview.kubestellar-view.svc', 'ksview.kubestellar-view.svc.cluster.local']);
  const dir = secretMount(t, { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem });
  await t.rejects(ensureServingCert(dir, 'ksview', 'kubestellar-view', { localhost: false }), { name: 'UserError', message: /no ca\.crt/ });
});
