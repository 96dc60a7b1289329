// The command line as a new user meets it. Bad input to `ksview` gives one clear line on stderr and
// a non-zero exit, never a stack trace: unknown flags and commands, bad values, kubeconfigs that
// are not usable, servers that do not answer or refuse the credentials, bad folders, a port
// already taken, no Go toolchain when a build is needed. And `--version` and `--help` say what holds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import YAML from 'yaml';
import { ksview, type RunResult } from '../fixtures/ksview.js';
import { layout } from '../fixtures/spaces.js';
import { testSpacesOptions } from '../fixtures/spaces-options.js';

function oneLineError(t: Test, r: RunResult, pattern: RegExp, what: string): void {
  t.equal(r.signal, null, `${what}: ends by itself`);
  t.not(r.status, 0, `${what}: non-zero exit`);
  const lines = r.stderr.trim().split('\n');
  t.equal(lines.length, 1, `${what}: one line (${r.stderr.trim()})`);
  t.match(lines[0], pattern, `${what}: says what is wrong`);
  t.notMatch(r.stderr, /\n\s+at |Error: .*\n/, `${what}: no stack trace`);
}

function tmpDir(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A loopback port on which nothing listens (it was just released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A kubeconfig with one context, `ctx`, for a server at `server` with a bearer token. */
function kubeconfigFor(server: string, edit: (kc: Record<string, unknown>) => void = () => {}): string {
  const kc: Record<string, unknown> = {
    apiVersion: 'v1', kind: 'Config', 'current-context': 'ctx',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'not-a-token' } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
  };
  edit(kc);
  return YAML.stringify(kc);
}

const spaceKubeconfig = (name: string) => path.join(layout.spaces.find((s) => s.name === name)!.dir, 'kubeconfig');

t.test('an unknown flag', async (t) => {
  oneLineError(t, ksview(['spaces', 'up', '--bogus']), /unknown option '--bogus'/, 'unknown flag');
});

t.test('an unknown command', async (t) => {
  oneLineError(t, ksview(['spaces', 'sideways']), /unknown command 'sideways'/, 'unknown command');
});

t.test('a bad number', async (t) => {
  oneLineError(t, ksview(['spaces', 'up', '--wecs', 'many']), /--wecs.*whole number/, 'bad --wecs');
  oneLineError(t, ksview(['spaces', 'up', '--wdss', '0']), /--wdss.*whole number from 1 to 5/, 'bad --wdss');
  oneLineError(t, ksview(['spaces', 'up', '--port-base', '80']), /--port-base.*whole number from 1024/, 'low port');
});

t.test('a port already taken', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const dir = path.join(tmpDir(t), 'spaces');
  const r = ksview(['spaces', 'up', '--dir', dir, '--port-base', String(port), '--wecs', '0']);
  oneLineError(t, r, new RegExp(`port ${port} .*already in use`), 'port taken');
  const status = ksview(['spaces', 'status', '--dir', dir]);
  t.notMatch(status.stdout, /ok/, 'nothing was left running');
  ksview(['spaces', 'down', '--dir', dir]);
});

t.test('no Go toolchain when the binaries must be built', async (t) => {
  const dir = tmpDir(t);
  // PATH without Go, and an empty binary cache, so ksview has to build and cannot.
  const pathWithoutGo = (process.env.PATH ?? '').split(':').filter((p) => !p.includes('/go')).join(':');
  const env = { ...process.env, PATH: pathWithoutGo, KSVIEW_CACHE_DIR: path.join(dir, 'cache') };
  const r = ksview(['spaces', 'up', '--dir', path.join(dir, 'spaces'), '--wecs', '0', '--port-base', '19900'], env);
  oneLineError(t, r, /Go toolchain \(go\) is not on PATH/, 'missing go');
});

t.test('kubeconfig and status before any up', async (t) => {
  const dir = path.join(tmpDir(t), 'none');
  oneLineError(t, ksview(['kubeconfig', '--dir', dir]), /no kubeconfig in .*ksview spaces up/, 'kubeconfig');
  oneLineError(t, ksview(['spaces', 'status', '--dir', dir]), /no spaces in/, 'status');
});

t.test('--version prints the version of package.json and the commit, -dirty when the tree has changes', async (t) => {
  const r = ksview(['--version']);
  t.equal(r.status, 0, 'exit 0');
  const root = path.resolve(import.meta.dirname, '..', '..');
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const head = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['-C', root, 'status', '--porcelain'], { encoding: 'utf8' }).trim() !== '';
  t.equal(r.stdout.trim(), `${pkg.version}${dirty ? '-dirty' : ''} commit ${head}`, 'the version and the commit');
});

t.test('serve --help shows the --denatured default as the list the flag takes', async (t) => {
  const r = ksview(['serve', '--help']);
  t.equal(r.status, 0, 'exit 0');
  const help = r.stdout.replace(/\s+/g, ' ');
  t.match(help, /--denatured <resources>.*\(default: mutatingwebhookconfigurations\.admissionregistration\.k8s\.io,[a-z0-9.,]*clusterroles\.rbac\.authorization\.k8s\.io,[a-z0-9.,]*,serviceaccounts\)/,
    'comma-separated <resource>.<group>, core kinds bare');
  t.notMatch(help, /"group"/, 'no JSON');
});

t.test('serve: flags a new user gets wrong', async (t) => {
  oneLineError(t, ksview(['serve']), /required option '--wds-kubeconfig <file>' not specified/, 'no --wds-kubeconfig');
  oneLineError(t, ksview(['serve', '--wds-kubconfig', 'x']), /unknown option '--wds-kubconfig' \(did you mean --wds-kubeconfig\?\)/,
    'a typo in a flag is named before the missing flag');
  oneLineError(t, ksview(['srve']), /unknown command 'srve' \(did you mean serve\?\)/, 'a typo in a command');
  const kc = spaceKubeconfig('wds1');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--port', '0']), /--port.*'0' is invalid.*whole number from 1 to 65535/, 'port 0');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--bind-address', 'localhost:8443']), /--bind-address.*must be an IP address/, 'bind address');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--wds-name', 'WDS_1']), /--wds-name.*must be a DNS label/, 'wds name');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--denatured', 'ClusterRoles']),
    /--denatured.*"ClusterRoles" is not <resource>\.<group>/, 'denatured kind');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--cert-dir', '/etc/hostname/certs']), /--cert-dir.*\/etc\/hostname is a file, not a folder/, 'cert dir');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--default-executor', 'default-executor']),
    /--default-executor.*must be NAMESPACE\/NAME of a ServiceAccount \("default-executor" has no single "\/" between the namespace and the name\)/, 'executor without namespace');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', kc, '--default-executor', 'team.a/deployer']),
    /--default-executor.*serviceAccount\.namespace: Invalid value: "team\.a"/, 'executor namespace not a DNS label');
});

// Every other way a kubeconfig is unusable: test/unit/kubeconfig-file.test.ts.
t.test('serve: a kubeconfig that is not usable', async (t) => {
  const dir = tmpDir(t);
  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    writeFileSync(f, text);
    return f;
  };
  const server = 'https://127.0.0.1:6443';
  const cases: Array<[string, string[], RegExp]> = [
    ['missing file', ['--wds-kubeconfig', path.join(dir, 'nope')], /kubeconfig .*nope: no such file/],
    ['a folder', ['--wds-kubeconfig', dir], /kubeconfig .* is a folder, not a file/],
    ['not YAML', ['--wds-kubeconfig', file('broken', 'clusters: [\n')], /kubeconfig .*broken is not YAML: .*\(line \d+\)/],
    ['YAML that is no kubeconfig', ['--wds-kubeconfig', file('other', 'kind: Deployment\nspec: {}\n')], /kubeconfig .*other is not a kubeconfig/],
    ['no current context', ['--wds-kubeconfig', file('nocurrent', kubeconfigFor(server, (kc) => { delete kc['current-context']; }))],
      /kubeconfig .*nocurrent has no current-context.*\(its contexts: ctx\)/],
    ['a context that does not exist', ['--wds-kubeconfig', file('good', kubeconfigFor(server)), '--wds-context', 'prod'],
      /kubeconfig .*good has no context "prod" \(its contexts: ctx\)/],
    ['an unusable ITS kubeconfig, the WDS being fine', ['--wds-kubeconfig', spaceKubeconfig('wds1'), '--its-kubeconfig', path.join(dir, 'its')],
      /kubeconfig .*its: no such file/],
  ];
  for (const [what, args, pattern] of cases) oneLineError(t, ksview(['serve', ...args]), pattern, what);
});

t.test('serve: a server that does not answer, or refuses the credentials', async (t) => {
  const dir = tmpDir(t);
  const refused = path.join(dir, 'refused');
  const port = await closedPort();
  writeFileSync(refused, kubeconfigFor(`https://127.0.0.1:${port}`));
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', refused]),
    new RegExp(`cannot reach the WDS at https://127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`), 'nothing listens');
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', spaceKubeconfig('wds1'), '--its-kubeconfig', refused]),
    /cannot reach the ITS at .*ECONNREFUSED/, 'the ITS, not the WDS, is named');

  // Accepts connections and never answers (spawnSync blocks this process: the kernel accepts).
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => silent.close());
  const mute = path.join(dir, 'mute');
  writeFileSync(mute, kubeconfigFor(`https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`));
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', mute], process.env, 60_000), /cannot reach the WDS at .*(no answer within|Timeout)/, 'silence');

  // The test WDS with a token it does not know.
  const wds = YAML.parse(readFileSync(spaceKubeconfig('wds1'), 'utf8')) as { users: Array<{ user: unknown }> };
  wds.users[0]!.user = { token: 'not-a-token' };
  const stranger = path.join(dir, 'stranger');
  writeFileSync(stranger, YAML.stringify(wds));
  oneLineError(t, ksview(['serve', '--wds-kubeconfig', stranger]), /the WDS at .* does not accept the credentials of kubeconfig .*stranger \(401/, 'bad token');
});

t.test('a --dir that cannot be a state folder', async (t) => {
  const file = '/etc/hostname';
  for (const args of [['spaces', 'up'], ['spaces', 'down'], ['kubeconfig']]) {
    oneLineError(t, ksview([...args, '--dir', path.join(file, 'spaces')]), /--dir.*\/etc\/hostname is a file, not a folder/, args.join(' '));
  }
  oneLineError(t, ksview(['kubeconfig', '--dir', testSpacesOptions().dir, '-o', path.join(tmpDir(t), 'no', 'such', 'kubeconfig')]),
    /cannot write .*kubeconfig: no such file or folder/, 'kubeconfig -o into a missing folder');
});
