// `ksview agent` flag mistakes: one line, non-zero exit, nothing started.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/main.js';
import { checkAgentFlags, endpointTls, runAgentCommand, type AgentFlags } from '../../src/cli/run-agent.js';
import { createCA, issueCert } from '../../src/kube/pki.js';

async function run(args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => { err += s; return true; }) as typeof process.stderr.write;
  try {
    const code = await main(['node', 'ksview', 'agent', ...args]);
    return { code, err };
  } finally {
    process.stderr.write = write;
  }
}

const base: AgentFlags = { fleetId: 'ksview', port: 0, bindAddress: '127.0.0.1', healthInterval: 5000 };

t.test('mode rules', async (t) => {
  t.throws(() => checkAgentFlags({ ...base, cluster: 'wec1', wecKubeconfig: 'w' }), /--its-kubeconfig/);
  t.throws(() => checkAgentFlags({ ...base, itsKubeconfig: 'i', wecKubeconfig: 'w' }), /--cluster/);
  // Pull mode without --wec-kubeconfig: the pod's in-cluster configuration (below).
  t.match(checkAgentFlags({ ...base, itsKubeconfig: 'i', cluster: 'wec1' }), { mode: 'pull' });
  t.throws(() => checkAgentFlags({ ...base, push: true, itsKubeconfig: 'i', cluster: 'wec1' }), /--cluster is for pull mode/);
  t.throws(() => checkAgentFlags({ ...base, push: true, itsKubeconfig: 'i', wecKubeconfig: 'w' }), /--wec-kubeconfig is for pull mode/);
  t.throws(() => checkAgentFlags({ ...base, itsKubeconfig: 'i', cluster: 'wec1', wecKubeconfig: 'w', insecureKubeconfigExec: true }), /--insecure-kubeconfig-exec is for push mode/);
  t.match(checkAgentFlags({ ...base, push: true, itsKubeconfig: 'i', insecureKubeconfigExec: true }), { mode: 'push' });
  t.match(checkAgentFlags({ ...base, itsKubeconfig: 'i', cluster: 'wec1', wecKubeconfig: 'w' }), { mode: 'pull', agentID: 'ksview-agent-wec1' });
  t.match(checkAgentFlags({ ...base, push: true, itsKubeconfig: 'i', fleetId: 'f1' }), { mode: 'push', fleetID: 'f1' });
});

t.test('command line mistakes are one line and a non-zero exit', async (t) => {
  for (const [args, want] of [
    [['--cluster', 'wec1', '--wec-kubeconfig', 'w'], /--its-kubeconfig/],
    [['--its-kubeconfig', '/nonexistent/its.kubeconfig', '--cluster', 'wec1', '--wec-kubeconfig', '/nonexistent/w'], /kubeconfig \/nonexistent\/its.kubeconfig/],
    [['--push', '--its-kubeconfig', 'i', '--cluster', 'wec1'], /pull mode/],
    [['--its-kubeconfig', 'i', '--cluster', 'wec1', '--wec-kubeconfig', 'w', '--insecure-kubeconfig-exec'], /--insecure-kubeconfig-exec is for push mode/],
    [['--cluster', 'Not_A_Label'], /--cluster/],
    [['--push', '--its-kubeconfig', 'i', '--health-interval', 'soon'], /--health-interval/],
    [['--port', '70000'], /--port/],
    [['--its-kubconfig', 'x'], /unknown option/],
  ] as [string[], RegExp][]) {
    const { code, err } = await run(args);
    t.not(code, 0, args.join(' '));
    t.match(err, want, args.join(' '));
    t.equal(err.trim().split('\n').length, 1, `one line: ${err.trim()}`);
  }
});

t.test('pull mode without --wec-kubeconfig outside a pod: a UserError naming the flag', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-cli-'));
  const its = path.join(dir, 'its');
  writeFileSync(its, ['apiVersion: v1', 'kind: Config', 'current-context: its',
    'clusters: [{name: its, cluster: {server: "https://127.0.0.1:1"}}]', 'users: [{name: u, user: {token: t}}]',
    'contexts: [{name: its, context: {cluster: its, user: u}}]', ''].join('\n'));
  const saved = process.env.KUBERNETES_SERVICE_HOST;
  delete process.env.KUBERNETES_SERVICE_HOST;
  t.teardown(() => { if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved; });
  await t.rejects(runAgentCommand({ ...base, itsKubeconfig: its, cluster: 'wec1' }, { createWorker: () => { throw new Error('never'); } }),
    { name: 'UserError', message: /not running in a pod .*give --wec-kubeconfig/ });
});

t.test('an unusable kubeconfig is a UserError before anything starts', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-cli-'));
  const bad = path.join(dir, 'bad');
  writeFileSync(bad, 'apiVersion: v1\nkind: Config\n');
  await t.rejects(runAgentCommand({ ...base, push: true, itsKubeconfig: bad }, { createWorker: () => { throw new Error('never'); } }),
    { name: 'UserError', message: /defines no contexts/ });
});

t.test('the endpoints\' TLS files: both or neither, readable, a certificate and its own key, a bundle with a CA', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-cli-'));
  const ca = await createCA('ca');
  const a = await issueCert(ca, { commonName: 'agent', dnsNames: ['localhost'], usages: ['server'] });
  const b = await issueCert(ca, { commonName: 'other', dnsNames: ['localhost'], usages: ['server'] });
  const file = (name: string, text: string) => { const f = path.join(dir, name); writeFileSync(f, text); return f; };
  const cert = file('tls.crt', a.certPem);
  const key = file('tls.key', a.keyPem);
  const otherKey = file('other.key', b.keyPem);
  const caFile = file('ca.crt', ca.certPem);
  t.same(endpointTls(base), {}, 'neither: self-signed, client CAs from the cluster');
  t.same(endpointTls({ ...base, tlsCertFile: cert, tlsPrivateKeyFile: key, clientCaFile: caFile }), { servingCert: a, clientCA: ca.certPem });
  for (const [flags, want] of [
    [{ tlsCertFile: cert }, /^--tls-cert-file and --tls-private-key-file go together/],
    [{ tlsPrivateKeyFile: key }, /^--tls-cert-file and --tls-private-key-file go together/],
    [{ tlsCertFile: path.join(dir, 'missing.crt'), tlsPrivateKeyFile: key }, /^--tls-cert-file .*missing\.crt: no such file or folder$/],
    [{ tlsCertFile: key, tlsPrivateKeyFile: key }, /^--tls-cert-file .*tls\.key: not a PEM certificate$/],
    [{ tlsCertFile: cert, tlsPrivateKeyFile: cert }, /^--tls-private-key-file .*tls\.crt: not a PEM private key$/],
    [{ tlsCertFile: cert, tlsPrivateKeyFile: otherKey }, /^--tls-private-key-file .*other\.key is not the key of --tls-cert-file .*tls\.crt$/],
    [{ clientCaFile: cert }, /^--client-ca-file .*tls\.crt: no CA certificate in it$/],
  ] as Array<[Partial<AgentFlags>, RegExp]>) {
    t.throws(() => endpointTls({ ...base, ...flags }), { name: 'UserError', message: want }, JSON.stringify(flags));
  }
  const { code, err } = await run(['--cluster', 'wec1', '--its-kubeconfig', 'i', '--wec-kubeconfig', 'w', '--tls-cert-file', cert]);
  t.not(code, 0);
  t.equal(err.trim().split('\n').length, 1, `one line: ${err.trim()}`);
});
