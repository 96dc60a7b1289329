// The image of `make image` (src/spaces/image.ts), as a user and a pod would see it:
// - reproducible: two builds of the same commit, from two staging folders (one with a fresh
//   `npm ci`), give one manifest digest;
// - run as a pod runs it, with no Docker engine: the OCI archive unpacked by umoci into a runtime
//   bundle and run by runc, the image's own entrypoint and user (UID 65532), the root filesystem
//   read-only, all capabilities dropped, only /tmp writable. `ksview --version` prints the version
//   and the commit; `ksview serve` against wds1 of the test spaces starts (its Go helper
//   ksview-native on a socket under /tmp, its certificate made in /tmp) and answers /readyz.
// Needs root (buildah, runc) and Debian's buildah, umoci and runc (installed when missing): else
// the test is skipped, saying why.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildImage, IMAGE_UID, type BuiltImage } from '../../src/spaces/image.js';
import { defaultCacheDir } from '../../src/spaces/binaries.js';
import { ensureDebianCommands } from '../../src/spaces/debian-packages.js';
import { gitState } from '../../src/util/build-info.js';
import { silentProgress } from '../../src/util/progress.js';
import { repoRoot } from '../../src/util/repo-root.js';
import { kcOk, waitUntil } from '../fixtures/spaces.js';

interface RuntimeSpec {
  process: { args: string[]; env: string[]; user: { uid: number; gid: number }; terminal: boolean; capabilities?: Record<string, string[]> };
  root: { path: string; readonly?: boolean };
  mounts: { destination: string; type: string; source: string; options?: string[] }[];
  linux: { namespaces: { type: string }[] };
}

function tools(): Record<string, string> | string {
  if (process.getuid?.() !== 0) return 'the image build and runc need root';
  try {
    return ensureDebianCommands([
      { command: 'buildah', pkg: 'buildah' }, { command: 'umoci', pkg: 'umoci' }, { command: 'runc', pkg: 'runc' },
    ], 'the image test', silentProgress);
  } catch (err) {
    return (err as Error).message;
  }
}

const found = tools();
const skip = typeof found === 'string' ? found : false;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    }).on('error', reject);
  });
}

t.test('make image: reproducible, and runs read-only as UID 65532', { skip }, async (t) => {
  const bin = found as Record<string, string>;
  const work = mkdtempSync(path.join(os.tmpdir(), 'ksview-image-test-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const cacheDir = defaultCacheDir();

  let first!: BuiltImage;
  await t.test('two builds of one commit give one digest', async (t) => {
    let started = Date.now();
    first = await buildImage({ cacheDir, progress: silentProgress, stagingDir: path.join(work, 'staging-a') });
    t.comment(`first build: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    started = Date.now();
    const second = await buildImage({ cacheDir, progress: silentProgress, stagingDir: path.join(work, 'staging-b') });
    t.comment(`second build (fresh npm ci): ${((Date.now() - started) / 1000).toFixed(1)} s`);
    t.match(first.digest, /^sha256:[0-9a-f]{64}$/, 'a manifest digest');
    t.equal(second.digest, first.digest, 'the same digest');
    const git = gitState(repoRoot())!;
    const pkg = JSON.parse(readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { version: string };
    const version = `${pkg.version}${git.dirty ? '-dirty' : ''}`;
    t.equal(first.name, `docker.io/kubestellar/kubestellar-view:${version}`, 'fully qualified name, -dirty from a changed tree');
    t.equal(path.relative(repoRoot(), first.archive), `dist/kubestellar-view-${version}.oci.tar`, 'the archive');
    t.equal(first.commit, git.commit, 'the commit');
  });
  if (!first) return;

  // The archive is an OCI layout in a tar: umoci makes a runtime bundle of it, as a container
  // runtime would (rootfs + config.json from the image's entrypoint, env, user).
  const layout = path.join(work, 'layout');
  const bundle = path.join(work, 'bundle');
  mkdirSync(layout);
  spawnSync('tar', ['-xf', first.archive, '-C', layout]);
  const unpack = spawnSync(bin.umoci!, ['unpack', '--image', `${layout}:${first.name}`, bundle], { encoding: 'utf8' });
  t.equal(unpack.status, 0, `umoci unpack ${unpack.stderr.trim()}`);
  const spec = JSON.parse(readFileSync(path.join(bundle, 'config.json'), 'utf8')) as RuntimeSpec;
  t.same(spec.process.user, { uid: IMAGE_UID, gid: IMAGE_UID }, 'the image runs as 65532:65532');
  t.same(spec.process.args, ['/usr/bin/node', '/app/bin/ksview.js'], 'the entrypoint is ksview');
  t.ok(spec.process.env.includes('TMPDIR=/tmp') && spec.process.env.includes('HOME=/tmp'), 'HOME and TMPDIR are /tmp');
  t.notOk(existsSync(path.join(bundle, 'rootfs', 'bin', 'sh')) || existsSync(path.join(bundle, 'rootfs', 'usr', 'bin', 'sh')), 'no shell');
  t.equal(readFileSync(path.join(bundle, 'rootfs', 'etc', 'passwd'), 'utf8').match(/^nonroot:x:65532:65532:/m)?.length, 1, 'a passwd entry for 65532');

  // What a restricted pod gets: read-only root, no capabilities, a writable /tmp (here a folder of
  // ours owned by 65532, standing for the chart's emptyDir, so the test sees what lands there).
  const tmp = path.join(work, 'tmp');
  mkdirSync(tmp);
  chownSync(tmp, IMAGE_UID, IMAGE_UID);
  chmodSync(tmp, 0o700);
  let n = 0;
  const runInImage = (args: string[], hostNetwork = false) => {
    const s = structuredClone(spec);
    s.process.args = [...spec.process.args, ...args];
    s.process.terminal = false;
    s.root.readonly = true;
    for (const k of Object.keys(s.process.capabilities ?? {})) s.process.capabilities![k] = [];
    s.mounts.push({ destination: '/tmp', type: 'bind', source: tmp, options: ['rbind', 'rw', 'nosuid', 'nodev'] });
    // The serve check reaches wds1 on the host's loopback: no network namespace of its own.
    if (hostNetwork) s.linux.namespaces = s.linux.namespaces.filter((ns) => ns.type !== 'network');
    writeFileSync(path.join(bundle, 'config.json'), JSON.stringify(s));
    const id = `ksview-image-test-${process.pid}-${n++}`;
    return { id, argv: ['--root', path.join(work, 'runc'), 'run', '--bundle', bundle, id] };
  };

  await t.test('ksview --version in the image prints the version and the commit', async (t) => {
    const r = spawnSync(bin.runc!, runInImage(['--version']).argv, { encoding: 'utf8', timeout: 60_000 });
    t.equal(r.status, 0, `exit 0 ${r.stderr.trim()}`);
    t.equal(r.stdout.trim(), `${first.version} commit ${first.commit}`, 'version and commit');
  });

  await t.test('ksview serve in the image answers /readyz, its Go helper on a socket under /tmp', async (t) => {
    writeFileSync(path.join(tmp, 'kubeconfig'), kcOk('wds1', ['config', 'view', '--raw', '--minify', '--flatten', '--context', 'wds1']));
    chownSync(path.join(tmp, 'kubeconfig'), IMAGE_UID, IMAGE_UID);
    const port = await freePort();
    const { id, argv } = runInImage(['serve', '--wds-kubeconfig', '/tmp/kubeconfig', '--wds-name', 'wds1',
      '--bind-address', '127.0.0.1', '--port', String(port), '--cert-dir', '/tmp/serving-cert'], true);
    const child = spawn(bin.runc!, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-4000); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    t.teardown(async () => {
      spawnSync(bin.runc!, ['--root', path.join(work, 'runc'), 'kill', id, 'KILL'], { stdio: 'ignore' });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      spawnSync(bin.runc!, ['--root', path.join(work, 'runc'), 'delete', '--force', id], { stdio: 'ignore' });
    });
    let ended: number | null | undefined;
    void exited.then((c) => { ended = c; });
    const status = await waitUntil('serve in the image to answer /readyz 200', async () => {
      if (ended !== undefined) throw new Error(`serve exited ${ended}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
      const caFile = path.join(tmp, 'serving-cert', 'ca.crt');
      if (!existsSync(caFile)) return undefined;
      // The certificate it made in /tmp, verified: localhost is one of its names.
      return new Promise<number | undefined>((resolve) => {
        https.get({ host: 'localhost', port, path: '/readyz', ca: readFileSync(caFile), timeout: 5_000 }, (res) => {
          res.resume();
          resolve(res.statusCode === 200 ? 200 : undefined);
        }).on('error', () => resolve(undefined));
      });
    }, 120_000, 500);
    t.equal(status, 200, '/readyz 200');
    const nativeDirs = readdirSync(tmp).filter((d) => d.startsWith('ksview-native-'));
    t.equal(nativeDirs.length, 1, 'ksview-native made its folder in /tmp');
    t.ok(nativeDirs[0] && existsSync(path.join(tmp, nativeDirs[0], 'sock')), 'and its socket there');
  });
});
