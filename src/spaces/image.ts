// `make image`: the OCI image of kubestellar-view, built with Debian's buildah FROM scratch (no
// registry holds a base image here, and a scratch image has no shell to attack). The root
// filesystem is assembled in a staging folder, then copied in one layer:
//   /usr/bin/node + the shared libraries `ldd` lists and the loader    the runtime (stripped)
//   /app/{package.json,build-info.json,bin/ksview.js,dist/src,manifests/{crds,its}}   the project
//   /app/node_modules                           `npm ci --omit=dev`, without types, maps, tests
//   /app/bin/ksview-{native,protojson,gotemplate}   the Go helpers (binaries.ts's cache)
//   /etc/{passwd,group,nsswitch.conf}, /etc/ssl/certs/ca-certificates.crt, /tmp (1777)
// Entrypoint `/usr/bin/node /app/bin/ksview.js`, USER 65532:65532, HOME=TMPDIR=/tmp: with a
// read-only root, /tmp (an emptyDir in a pod) is the only place anything is written.
// Reproducible, as reproducible-builds.org asks: every time is the commit's (SOURCE_DATE_EPOCH),
// every mode is normalized, owners are 0:0, nothing names the staging path; so two builds of
// one commit give one digest (test/integration/image.test.ts checks it).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync,
  renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';
import { repoRoot } from '../util/repo-root.js';
import { BUILD_INFO_FILE, gitState, type BuildInfo } from '../util/build-info.js';
import { ensureGoHelpers } from './binaries.js';
import { ensureDebianCommands } from './debian-packages.js';

export const IMAGE_REPOSITORY = 'docker.io/kubestellar/kubestellar-view';
const SOURCE = 'https://github.com/kubestellar/kubestellar-view';
export const IMAGE_UID = 65532;
/** Where the image's files live; the chart and the real nodes name them. */
export const IMAGE_PATHS = {
  app: '/app',
  node: '/usr/bin/node',
  native: '/app/bin/ksview-native',
  protojson: '/app/bin/ksview-protojson',
  gotemplate: '/app/bin/ksview-gotemplate',
  tmp: '/tmp',
} as const;

export interface ImageOptions {
  cacheDir: string;
  progress: Progress;
  /** The staging folder (default dist/image); its path never reaches the image. */
  stagingDir?: string;
}

export interface BuiltImage extends BuildInfo {
  /** Fully qualified, e.g. docker.io/kubestellar/kubestellar-view:0.1.0 */
  name: string;
  /** dist/kubestellar-view-<version>.oci.tar */
  archive: string;
  /** The image manifest's digest (sha256:…), what a registry would show. */
  digest: string;
}

/** Where `make image` writes the archive of a version. */
export const imageArchive = (version: string, root = repoRoot()): string =>
  path.join(root, 'dist', `kubestellar-view-${version}.oci.tar`);

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) {
    const detail = (r.stderr || r.stdout || r.error?.message || '').trim().split('\n').slice(-2).join(' | ');
    throw new UserError(`${path.basename(cmd)} ${args[0]} failed: ${detail}`);
  }
  return r.stdout;
}

/** Modes as the image wants them, whatever the umask of the checkout or of npm: 0755 or 0644. */
function normalizeModes(dir: string): void {
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) normalizeModes(p);
    else if (e.isFile()) chmodSync(p, statSync(p).mode & 0o111 ? 0o755 : 0o644);
  }
}

/** Removes what a package ships for its authors, never what it loads: types, source maps, tests. */
function pruneNodeModules(dir: string): void {
  const AUTHOR_DIRS = new Set(['test', 'tests', '__tests__', 'benchmark', 'benchmarks', 'example', 'examples', '.github']);
  const walk = (d: string, packageRoot: boolean) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        // Only at a package's root: yaml's dist/doc, say, is code.
        if (packageRoot && AUTHOR_DIRS.has(e.name)) rmSync(p, { recursive: true });
        else if (e.name === 'node_modules') walkModules(p);
        else walk(p, false);
      } else if (/\.(d\.[cm]?ts|map|md|[cm]?ts|bare)$/.test(e.name) && !/^licen[cs]e/i.test(e.name)) {
        // .bare: prebuilt addons for the Bare runtime (bare-url's), which Node never loads.
        rmSync(p);
      }
    }
  };
  const walkModules = (nm: string) => {
    rmSync(path.join(nm, '.bin'), { recursive: true, force: true });
    for (const e of readdirSync(nm, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const p = path.join(nm, e.name);
      if (e.name.startsWith('@')) for (const s of readdirSync(p)) walk(path.join(p, s), true);
      else walk(p, true);
    }
  };
  walkModules(dir);
}

/** Production node_modules for the lockfile, kept in the staging folder while the lockfile is unchanged. */
function productionModules(root: string, npmDir: string, progress: Progress): string {
  const stampOf = createHash('sha256').update(process.version).update('\0')
    .update(readFileSync(path.join(root, 'package.json'))).update('\0')
    .update(readFileSync(path.join(root, 'package-lock.json'))).digest('hex');
  const stamp = path.join(npmDir, '.stamp');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === stampOf) return path.join(npmDir, 'node_modules');
  progress.step('npm ci --omit=dev for the image');
  rmSync(npmDir, { recursive: true, force: true });
  mkdirSync(npmDir, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(root, f), path.join(npmDir, f));
  // No package of ours needs an install script (none has one); --ignore-scripts keeps it so.
  run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: npmDir });
  pruneNodeModules(path.join(npmDir, 'node_modules'));
  writeFileSync(stamp, stampOf);
  return path.join(npmDir, 'node_modules');
}

/** The files `ldd` says the runtime loads, the dynamic loader included. */
function sharedLibraries(binary: string): string[] {
  const out = run('ldd', [binary]);
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  if (!libs.some((l) => l.includes('ld-linux'))) throw new UserError(`ldd ${binary} names no dynamic loader: ${out.trim()}`);
  return libs;
}

function copyInto(rootfs: string, dest: string, src: string): void {
  const target = path.join(rootfs, dest);
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(realpathSync(src), target);
}

const PASSWD = 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnonroot:x:65532:\n';
// glibc's default without the file puts DNS before /etc/hosts; distroless ships the same line.
const NSSWITCH = 'hosts: files dns\n';

/** The image's root filesystem, in `rootfs` (made anew). */
async function assembleRootfs(root: string, rootfs: string, info: BuildInfo, opts: ImageOptions, strip: string): Promise<void> {
  const { progress } = opts;
  rmSync(rootfs, { recursive: true, force: true });
  mkdirSync(rootfs, { recursive: true });
  const app = path.join(rootfs, 'app');

  if (!existsSync(path.join(root, 'dist', 'src', 'cli', 'main.js'))) {
    throw new UserError('the project is not built (no dist/src/cli/main.js): run make build first');
  }
  const helpers = await ensureGoHelpers(opts.cacheDir, progress);
  const modules = productionModules(root, path.join(opts.stagingDir!, 'npm'), progress);

  // The runtime: the node that runs this build, stripped of its symbols (13 MB nobody reads).
  const node = realpathSync(process.execPath);
  mkdirSync(path.join(rootfs, 'usr', 'bin'), { recursive: true });
  run(strip, ['-o', path.join(rootfs, IMAGE_PATHS.node), node]);
  for (const lib of sharedLibraries(node)) copyInto(rootfs, lib, lib);

  copyInto(rootfs, '/etc/ssl/certs/ca-certificates.crt', '/etc/ssl/certs/ca-certificates.crt');
  writeFileSync(path.join(rootfs, 'etc', 'passwd'), PASSWD);
  writeFileSync(path.join(rootfs, 'etc', 'group'), GROUP);
  writeFileSync(path.join(rootfs, 'etc', 'nsswitch.conf'), NSSWITCH);

  // The project: what `ksview` loads at run time, nothing of the tests or benches.
  copyInto(rootfs, '/app/package.json', path.join(root, 'package.json'));
  copyInto(rootfs, '/app/bin/ksview.js', path.join(root, 'bin', 'ksview.js'));
  // Only what compiles from today's sources: dist/ is not cleaned by tsc, and a file left there by
  // another branch must not reach an image whose version says which commit it is.
  const distSrc = path.join(root, 'dist', 'src');
  cpSync(distSrc, path.join(app, 'dist', 'src'), {
    recursive: true,
    filter: (src) => statSync(src).isDirectory()
      || (src.endsWith('.js') && existsSync(path.join(root, 'src', path.relative(distSrc, src)).replace(/\.js$/, '.ts'))),
  });
  // Read at run time: the CRDs the controllers and agents install, the ITS admission policies.
  cpSync(path.join(root, 'manifests', 'crds'), path.join(app, 'manifests', 'crds'), { recursive: true });
  cpSync(path.join(root, 'manifests', 'its'), path.join(app, 'manifests', 'its'), { recursive: true });
  cpSync(modules, path.join(app, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  copyInto(rootfs, IMAGE_PATHS.native, helpers.native);
  copyInto(rootfs, IMAGE_PATHS.protojson, helpers.protojson);
  copyInto(rootfs, IMAGE_PATHS.gotemplate, helpers.gotemplate);
  writeFileSync(path.join(app, BUILD_INFO_FILE), `${JSON.stringify(info)}\n`);

  normalizeModes(rootfs);
  mkdirSync(path.join(rootfs, 'tmp'));
  chmodSync(path.join(rootfs, 'tmp'), 0o1777);
}

/** The manifest digest of the only image in an OCI archive (its index.json). */
export function archiveDigest(archive: string): string {
  const index = JSON.parse(run('tar', ['-xOf', archive, 'index.json'])) as { manifests: { digest: string }[] };
  if (index.manifests.length !== 1) throw new Error(`${archive} holds ${index.manifests.length} images, not one`);
  return index.manifests[0]!.digest;
}

export async function buildImage(opts: ImageOptions): Promise<BuiltImage> {
  const root = repoRoot();
  const staging = opts.stagingDir ?? path.join(root, 'dist', 'image');
  const o = { ...opts, stagingDir: staging };
  const tools = ensureDebianCommands([
    { command: 'buildah', pkg: 'buildah' },
    { command: 'strip', pkg: 'binutils' },
    { command: 'ldd', pkg: 'libc-bin' },
    { command: 'git', pkg: 'git' },
  ], 'make image', opts.progress);
  if (!existsSync('/etc/ssl/certs/ca-certificates.crt')) ensureDebianCommands([{ command: 'update-ca-certificates', pkg: 'ca-certificates' }], 'make image', opts.progress);

  const git = gitState(root);
  if (!git) throw new UserError(`make image needs a git checkout (the image records its commit): ${root} is not one`);
  const pkgVersion = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const info: BuildInfo = { version: `${pkgVersion}${git.dirty ? '-dirty' : ''}`, commit: git.commit, dirty: git.dirty };
  // The commit's time stands for every time in the image, unless SOURCE_DATE_EPOCH says otherwise.
  const epoch = Number(process.env.SOURCE_DATE_EPOCH || git.commitEpoch);
  if (!Number.isInteger(epoch) || epoch < 0) throw new UserError(`SOURCE_DATE_EPOCH must be seconds since 1970, not ${process.env.SOURCE_DATE_EPOCH}`);

  const rootfs = path.join(staging, 'rootfs');
  opts.progress.step(`assembling the image's files in ${rootfs}`);
  await assembleRootfs(root, rootfs, info, o, tools.strip!);

  // buildah keeps its own storage under the cache (vfs: no overlay mounts to leak), apart
  // from any other buildah user of this machine.
  const storage = [
    '--root', path.join(opts.cacheDir, 'buildah', 'storage'),
    '--runroot', path.join(opts.cacheDir, 'buildah', 'run'),
    '--storage-driver', 'vfs',
  ];
  const buildah = (...args: string[]) => run(tools.buildah!, [...storage, ...args]).trim();
  const name = `${IMAGE_REPOSITORY}:${info.version}`;
  const archive = imageArchive(info.version, root);
  const partial = `${archive}.partial-${process.pid}`; // concurrent builds (two test files) never share one
  opts.progress.step(`buildah: ${name}`);
  const ctr = buildah('from', '--name', `ksview-image-${process.pid}`, 'scratch');
  try {
    buildah('copy', '--chown', '0:0', ctr, `${rootfs}/`, '/');
    const created = new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
    buildah('config',
      '--entrypoint', JSON.stringify([IMAGE_PATHS.node, '/app/bin/ksview.js']),
      '--user', `${IMAGE_UID}:${IMAGE_UID}`,
      '--workingdir', IMAGE_PATHS.app,
      '--created-by', 'make image (src/spaces/image.ts)',
      '--env', 'PATH=/usr/bin:/app/bin',
      '--env', `HOME=${IMAGE_PATHS.tmp}`,
      '--env', `TMPDIR=${IMAGE_PATHS.tmp}`,
      '--os', 'linux', '--arch', process.arch === 'x64' ? 'amd64' : process.arch,
      '--label', `org.opencontainers.image.title=kubestellar-view`,
      '--label', `org.opencontainers.image.version=${info.version}`,
      '--label', `org.opencontainers.image.revision=${info.commit}`,
      '--label', `org.opencontainers.image.source=${SOURCE}`,
      '--label', `org.opencontainers.image.created=${created}`,
      '--label', 'org.opencontainers.image.licenses=Apache-2.0',
      ctr);
    mkdirSync(path.dirname(archive), { recursive: true });
    rmSync(partial, { force: true });
    opts.progress.step(`buildah commit → ${archive}`);
    buildah('commit', '--quiet', '--format', 'oci', '--disable-compression=false', '--timestamp', String(epoch), '--identity-label=false',
      ctr, `oci-archive:${partial}:${name}`);
    renameSync(partial, archive);
  } finally {
    spawnSync(tools.buildah!, [...storage, 'rm', ctr], { stdio: 'ignore' });
    rmSync(partial, { force: true });
  }
  return { ...info, name, archive, digest: archiveDigest(archive) };
}

/** Sizes for the report: the archive (compressed layers) and the unpacked root filesystem. */
export function imageSizes(archive: string, rootfs: string): { archiveBytes: number; unpackedBytes: number } {
  let unpacked = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else unpacked += lstatSync(p).size;
    }
  };
  walk(rootfs);
  return { archiveBytes: statSync(archive).size, unpackedBytes: unpacked };
}
