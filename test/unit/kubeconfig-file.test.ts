// A kubeconfig a user names is loaded, or refused with one line that names the file and says what
// is wrong with it (the CLI prints that line; test/integration/cli-errors.test.ts runs the command).
// One the fleet supplies (a push agent's Secret) runs no credential plugin unless the operator
// allowed plugins, and reads no local file.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { KubeconfigRefused, loadKubeconfig, loadKubeconfigText } from '../../src/kube/kubeconfig-file.js';
import { UserError } from '../../src/util/user-error.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-kubeconfig-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string | object): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : YAML.stringify(content));
  return file;
}

function kubeconfig(edit: (kc: Record<string, any>) => void = () => {}): Record<string, any> {
  const kc: Record<string, any> = {
    apiVersion: 'v1', kind: 'Config', 'current-context': 'a',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443/prefix', 'certificate-authority-data': Buffer.from('CA').toString('base64') } }],
    users: [{ name: 'u', user: { token: 'secret' } }],
    contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }, { name: 'b', context: { cluster: 'c', user: 'u' } }],
  };
  edit(kc);
  return kc;
}

async function refusal(file: string, context?: string): Promise<string> {
  try {
    await loadKubeconfig(file, context);
  } catch (err) {
    if (err instanceof UserError) return err.message;
    throw err;
  }
  throw new Error(`${file} was accepted`);
}

t.test('a usable kubeconfig: server, CA and token of the chosen context', async (t) => {
  const loaded = await loadKubeconfig(write('good', kubeconfig()), 'b');
  t.equal(loaded.server.href, 'https://127.0.0.1:6443/prefix');
  t.equal(String(loaded.https.ca), 'CA');
  t.equal((loaded.https.headers as Record<string, string>).Authorization, 'Bearer secret');
});

t.test('every way a kubeconfig is unusable is one line naming the file', async (t) => {
  const cases: Array<[string, string, string | undefined, RegExp]> = [
    ['missing', path.join(dir, 'missing'), undefined, /^kubeconfig .*missing: no such file or folder$/],
    ['a folder', dir, undefined, /^kubeconfig .* it is a folder, not a file$/],
    ['empty', write('empty', '  \n'), undefined, /^kubeconfig .*empty is empty$/],
    ['not YAML', write('broken', 'clusters: [\n'), undefined, /^kubeconfig .*broken is not YAML: .* \(line 2\)$/],
    ['a YAML scalar', write('scalar', 'hello\n'), undefined, /^kubeconfig .*scalar is not a kubeconfig/],
    ['YAML of something else', write('deployment', { kind: 'Deployment', spec: {} }), undefined, /^kubeconfig .*deployment is not a kubeconfig: it defines no contexts$/],
    ['a cluster without server', write('noserver', kubeconfig((kc) => { delete kc.clusters[0].cluster.server; })), undefined, /^kubeconfig .*noserver: clusters\[0\]\.cluster\.server is missing$/],
    ['no current context', write('nocurrent', kubeconfig((kc) => { delete kc['current-context']; })), undefined, /has no current-context: set one or name a context \(its contexts: a, b\)$/],
    ['a current context not defined', write('stale', kubeconfig((kc) => { kc['current-context'] = 'gone'; })), undefined, /its current-context "gone" is not defined \(its contexts: a, b\)$/],
    ['an unknown context', write('good2', kubeconfig()), 'prod', /^kubeconfig .*good2 has no context "prod" \(its contexts: a, b\)$/],
    ['a context naming no cluster', write('nocluster', kubeconfig((kc) => { kc.contexts[0].context.cluster = 'x'; })), undefined, /context "a" names cluster "x", which it does not define$/],
    ['a context naming no user', write('nouser', kubeconfig((kc) => { kc.contexts[0].context.user = 'x'; })), undefined, /context "a" names user "x", which it does not define$/],
    ['a server that is no URL', write('badurl', kubeconfig((kc) => { kc.clusters[0].cluster.server = 'wds1:6443'; })), undefined, /cluster "c" has server "wds1:6443", which is not an https:\/\/ URL$/],
    ['plain http, TLS checked', write('http', kubeconfig((kc) => { kc.clusters[0].cluster.server = 'http://127.0.0.1:8080'; })), undefined, /^kubeconfig .*http: cluster "c" has server "http:\/\/127.0.0.1:8080": HTTP protocol is not allowed unless insecure-skip-tls-verify is true$/],
    ['a CA file that is missing', write('cafile', kubeconfig((kc) => {
      delete kc.clusters[0].cluster['certificate-authority-data'];
      kc.clusters[0].cluster['certificate-authority'] = 'no-such-ca.crt';
    })), undefined, /^kubeconfig .*cafile: .*no-such-ca\.crt/],
  ];
  for (const [what, file, context, pattern] of cases) {
    const message = await refusal(file, context);
    t.match(message, pattern, what);
    t.notMatch(message, /\n/, `${what}: one line`);
  }
});

t.test('static credentials: files relative to the kubeconfig, token file, basic auth, skipped TLS check', async (t) => {
  writeFileSync(path.join(dir, 'client.crt'), 'CERT');
  writeFileSync(path.join(dir, 'client.key'), 'KEY');
  writeFileSync(path.join(dir, 'ca.crt'), 'CAFILE');
  writeFileSync(path.join(dir, 'token'), 'from-file\n');
  const files = await loadKubeconfig(write('files', kubeconfig((kc) => {
    delete kc.clusters[0].cluster['certificate-authority-data'];
    kc.clusters[0].cluster['certificate-authority'] = 'ca.crt';
    kc.clusters[0].cluster['tls-server-name'] = 'kube-apiserver';
    kc.users[0].user = { 'client-certificate': 'client.crt', 'client-key': 'client.key' };
  })));
  t.equal(String(files.https.ca), 'CAFILE');
  t.equal(String(files.https.cert), 'CERT');
  t.equal(String(files.https.key), 'KEY');
  t.equal(files.https.headers, undefined, 'no Authorization header with a client certificate');
  t.equal(files.cluster.tlsServerName, 'kube-apiserver');
  t.equal(files.https.rejectUnauthorized, true);

  const tokenFile = await loadKubeconfig(write('tokenfile', kubeconfig((kc) => { kc.users[0].user = { tokenFile: 'token' }; })));
  t.equal((tokenFile.https.headers as Record<string, string>).Authorization, 'Bearer from-file');

  const basic = await loadKubeconfig(write('basic', kubeconfig((kc) => { kc.users[0].user = { username: 'admin', password: 'pw' }; })));
  t.equal((basic.https.headers as Record<string, string>).Authorization, `Basic ${Buffer.from('admin:pw').toString('base64')}`);

  const insecure = await loadKubeconfig(write('insecure', kubeconfig((kc) => {
    kc.clusters[0].cluster = { server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true };
  })));
  t.equal(insecure.cluster.skipTLSVerify, true);
  t.equal(insecure.https.rejectUnauthorized, false);
  t.equal(insecure.server.protocol, 'http:');
});

t.test('an exec credential plugin is run', async (t) => {
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec' } });
  const loaded = await loadKubeconfig(write('exec', kubeconfig((kc) => {
    kc.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', `echo '${credential}'`], interactiveMode: 'Never' } };
  })));
  t.equal((loaded.https.headers as Record<string, string>).Authorization, 'Bearer from-exec');
});

t.test('a kubeconfig from the fleet runs no plugin and reads no local file; nothing of it is used', async (t) => {
  const marker = path.join(dir, 'ran');
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec' } });
  const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', `touch ${marker}; echo '${credential}'`], interactiveMode: 'Never' };
  const fleet = { allowCredentialPlugins: false };
  const refusal = async (kc: object, policy = fleet): Promise<KubeconfigRefused> => {
    try {
      await loadKubeconfigText(YAML.stringify(kc), 'secret wec9/wec9-kubeconfig', policy);
    } catch (err) {
      if (err instanceof KubeconfigRefused) return err;
      throw err;
    }
    throw new Error('accepted');
  };
  const execKc = kubeconfig((kc) => { kc.users[0].user = { exec }; });
  const e = await refusal(execKc);
  t.equal(e.message, 'kubeconfig secret wec9/wec9-kubeconfig: user "u" has an exec credential plugin (command "sh"); a kubeconfig from the fleet runs no plugin (the operator\'s --insecure-kubeconfig-exec allows it)');
  t.ok(e instanceof UserError, 'a one-line UserError');
  t.notOk(existsSync(marker), 'the command did not run');
  // A user the context does not name is refused too: the file is refused, not a path through it.
  t.match((await refusal(kubeconfig((kc) => { kc.users.push({ name: 'other', user: { exec } }); }))).message, /user "other" has an exec credential plugin/);
  t.match((await refusal(kubeconfig((kc) => { kc.users[0].user = { 'auth-provider': { name: 'oidc', config: {} } }; }))).message,
    /user "u" has an auth-provider credential plugin \("oidc"\)/);
  t.notOk(existsSync(marker));

  for (const [where, edit, field] of [
    ['a token file', (kc: Record<string, any>) => { kc.users[0].user = { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }; }, /user "u" names the local file tokenFile "\/var\/run\/secrets\/kubernetes.io\/serviceaccount\/token"; a kubeconfig from the fleet must embed it \(token\)/],
    ['a client key file', (kc: Record<string, any>) => { kc.users[0].user = { 'client-certificate-data': 'eA==', 'client-key': '/etc/ssl/private/key.pem' }; }, /names the local file client-key .*\(client-key-data\)/],
    ['a CA file', (kc: Record<string, any>) => { kc.clusters[0].cluster = { server: 'https://127.0.0.1:6443', 'certificate-authority': '/etc/kubernetes/pki/ca.crt' }; }, /cluster "c" names the local file certificate-authority/],
  ] as const) {
    t.match((await refusal(kubeconfig(edit))).message, field, where);
    t.match((await refusal(kubeconfig(edit), { allowCredentialPlugins: true })).message, field, `${where}, even with plugins allowed`);
  }

  const allowed = await loadKubeconfigText(YAML.stringify(execKc), 'secret wec9/wec9-kubeconfig', { allowCredentialPlugins: true });
  t.equal((allowed.https.headers as Record<string, string>).Authorization, 'Bearer from-exec', 'plugins run when the operator allows them');
  t.ok(existsSync(marker));
  const embedded = await loadKubeconfigText(YAML.stringify(kubeconfig()), 'secret wec9/wec9-kubeconfig', fleet);
  t.equal((embedded.https.headers as Record<string, string>).Authorization, 'Bearer secret', 'embedded credentials are fine');
});
