// The spaces' etcd answers only clients with a certificate of its own CA: a local user without one
// (curl as `nobody`, as a security review did) reads nothing over plain HTTP or TLS, nor with
// another CA's certificate, and cannot read the keys; the kube-apiservers, which hold the client
// certificate, still store and read objects.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import t from 'tap';
import { etcdPkiFiles } from '../../src/spaces/component-certs.js';
import { spacePkiFiles } from '../../src/spaces/space-pki.js';
import { kcOk, layout, testNamespace } from '../fixtures/spaces.js';

const pki = etcdPkiFiles(layout.dir);
const port = layout.etcdClientPort;
const isRoot = process.getuid?.() === 0;
// As the review did: another local user. Without root, the test's own user (it holds no certificate either).
const asLocalUser = (cmd: string[]) => (isRoot ? ['runuser', '-u', 'nobody', '--', ...cmd] : cmd);

/** A range read of every key of its1 in etcd's JSON gateway; the exit code and the body. */
function readIts1(extra: string[], user = true): { status: number; body: string } {
  const key = Buffer.from('/ksview/its1/').toString('base64');
  const end = Buffer.from('/ksview/its10').toString('base64');
  const cmd = ['curl', '-s', '-m', '10', '-X', 'POST', '-d', JSON.stringify({ key, range_end: end, limit: 1, keys_only: true }), ...extra];
  const argv = user ? asLocalUser(cmd) : cmd;
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  return { status: r.status ?? 1, body: r.stdout };
}

t.test('etcd refuses a client without a certificate of its CA', async (t) => {
  const plain = readIts1([`http://127.0.0.1:${port}/v3/kv/range`]);
  t.not(plain.status, 0, 'plain HTTP: no answer');
  t.notMatch(plain.body, /kvs|header/);
  const noCert = readIts1(['-k', `https://127.0.0.1:${port}/v3/kv/range`]);
  t.not(noCert.status, 0, 'TLS without a client certificate: refused in the handshake');
  t.notMatch(noCert.body, /kvs|header/);
  const admin = spacePkiFiles(layout.spaces.find((s) => s.name === 'wec1')!.dir);
  const otherCA = readIts1(['-k', '--cert', admin.adminCert, '--key', admin.adminKey, `https://127.0.0.1:${port}/v3/kv/range`], false);
  t.not(otherCA.status, 0, 'a certificate of another CA (wec1\'s admin, system:masters there): refused');
  // The same request with the kube-apiservers' certificate is answered: etcd is there, and it is the certificate that counts.
  const withCert = readIts1(['--cacert', pki.caCert, '--cert', pki.apiserverClientCert, '--key', pki.apiserverClientKey, `https://127.0.0.1:${port}/v3/kv/range`], false);
  t.equal(withCert.status, 0, 'with the etcd CA\'s client certificate: answered');
  t.match(JSON.parse(withCert.body), { kvs: [{ key: /.+/ }] });
});

t.test('the etcd keys are readable by their owner only', async (t) => {
  for (const f of [pki.caKey, pki.serverKey, pki.peerKey, pki.apiserverClientKey, pki.healthcheckClientKey]) {
    t.equal(statSync(f).mode & 0o777, 0o600, `${f}: 0600`);
    if (isRoot) t.not(spawnSync('runuser', ['-u', 'nobody', '--', 'cat', f]).status, 0, `nobody cannot read ${f}`);
  }
});

t.test('the kube-apiservers still store and read through etcd', async (t) => {
  const ns = testNamespace(t, ['wds1', 'its1', 'wec1'], 'etcd');
  for (const space of ['wds1', 'its1', 'wec1']) {
    kcOk(space, ['-n', ns, 'create', 'configmap', 'stored', `--from-literal=space=${space}`]);
    t.equal(kcOk(space, ['-n', ns, 'get', 'configmap', 'stored', '-o', 'jsonpath={.data.space}']), space, `${space}: written and read`);
  }
});
