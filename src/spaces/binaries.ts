// The binaries local spaces run: kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// built from their Go modules (wrapper modules under build/), and etcd from Debian's etcd-server.
// Built binaries are cached outside the repo, keyed by module version and a digest of the
// wrapper module's own files, so only the first run (and a change to our Go helpers) builds; a
// build shows its progress, and a missing toolchain is one clear error. The Go tests of our
// helpers are compiled the same way (`go test -c`, for the test suite only), so running them
// compiles nothing.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';
import { repoRoot } from '../util/repo-root.js';

export interface Binaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kwok: string;
  protojson: string;
  gotemplate: string;
  native: string;
}

export interface GoBuild {
  /** Folder under build/ holding the wrapper module. */
  module: string;
  /** Name of its cache entry when not the module's (two builds of one module). */
  cacheName?: string;
  /** The module whose version keys the cache. */
  requires: string;
  packages: Record<string, string>;
  ldflags: (version: string) => string[];
  /** The packages' test binaries (`go test -c`, each named `<last path element>.test`) instead of their commands. */
  tests?: boolean;
}

const KUBERNETES: GoBuild = {
  module: 'kubernetes',
  requires: 'k8s.io/kubernetes',
  packages: {
    'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
    'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
    'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
    // ksview serve's decoder of protobuf bodies for denatured kinds (build/kubernetes/ksview-protojson).
    'ksview-protojson': 'kubestellar-view/build/kubernetes/ksview-protojson',
    // ksview serve's expander of KubeStellar templates with Go's text/template (build/kubernetes/ksview-gotemplate).
    'ksview-gotemplate': 'kubestellar-view/build/kubernetes/ksview-gotemplate',
    // ksview serve's registries of the denatured kinds: Kubernetes' own code (build/kubernetes/ksview-native).
    'ksview-native': 'kubestellar-view/build/kubernetes/ksview-native',
  },
  // Without these the binaries report v0.0.0-master, and 1.33 derives its emulation version and
  // feature defaults from the binary version.
  ldflags: (version) => {
    const [, major, minor] = /^v(\d+)\.(\d+)\./.exec(version) ?? [];
    const vars: Record<string, string> = {
      gitVersion: version,
      gitMajor: major ?? '',
      gitMinor: minor ?? '',
      gitTreeState: 'clean',
      buildDate: '1970-01-01T00:00:00Z',
    };
    return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
      Object.entries(vars).map(([k, v]) => `-X ${pkg}.${k}=${v}`),
    );
  },
};

/**
 * The real nodes' kubelet and kube-proxy (`spaces up --real-nodes`): the same wrapper module,
 * version and ldflags as kube-apiserver, sharing its Go build cache, but a cache entry of their
 * own so a kwok-only start never builds them.
 */
const KUBERNETES_NODE: GoBuild = {
  module: 'kubernetes',
  cacheName: 'kubernetes-node',
  requires: 'k8s.io/kubernetes',
  packages: {
    kubelet: 'k8s.io/kubernetes/cmd/kubelet',
    'kube-proxy': 'k8s.io/kubernetes/cmd/kube-proxy',
  },
  ldflags: KUBERNETES.ldflags,
};

/**
 * The compiled Go tests of ksview-native (Kubernetes' escalation checks with a fake WDS): the
 * same module, version and sources as the helper, a cache entry of their own, built for the test
 * suite only. Compiling them needs client-go's fake clientsets, minutes on a cold Go cache.
 */
const KUBERNETES_TESTS: GoBuild = {
  module: 'kubernetes',
  cacheName: 'kubernetes-tests',
  requires: 'k8s.io/kubernetes',
  packages: { 'ksview-native.test': 'kubestellar-view/build/kubernetes/ksview-native' },
  ldflags: KUBERNETES.ldflags,
  tests: true,
};

const KWOK: GoBuild = {
  module: 'kwok',
  requires: 'sigs.k8s.io/kwok',
  packages: { kwok: 'sigs.k8s.io/kwok/cmd/kwok' },
  ldflags: (version) => [`-X sigs.k8s.io/kwok/pkg/consts.Version=${version.replace(/^v/, '')}`],
};

export function defaultCacheDir(env = process.env): string {
  if (env.KSVIEW_CACHE_DIR) return env.KSVIEW_CACHE_DIR;
  const cacheHome = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'kubestellar-view');
}

/** The version of `requires` that the wrapper module pins, read from its go.mod. */
export function pinnedVersion(build: GoBuild): string {
  const goMod = readFileSync(path.join(repoRoot(), 'build', build.module, 'go.mod'), 'utf8');
  const escaped = build.requires.replace(/[.]/g, '\\.');
  const m = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!m) throw new Error(`build/${build.module}/go.mod does not require ${build.requires}`);
  return m[1]!;
}

export const kubernetesVersion = (): string => pinnedVersion(KUBERNETES);

/**
 * A digest of the wrapper module's own files (go.mod, go.sum, our Go helpers' sources): the cache
 * is keyed by it too, so a change to one of our Go helpers (ksview-*) builds them anew.
 */
function ownSourcesDigest(build: GoBuild): string {
  const root = path.join(repoRoot(), 'build', build.module);
  const files = (readdirSync(root, { recursive: true, encoding: 'utf8' }) as string[])
    .filter((f) => f === 'go.mod' || f === 'go.sum' || f.endsWith('.go')).sort();
  const h = createHash('sha256');
  for (const f of files) h.update(f).update('\0').update(readFileSync(path.join(root, f))).update('\0');
  return h.digest('hex').slice(0, 12);
}

/** Where one Go build's binaries are cached: module, pinned version, digest of our own sources. */
const buildDir = (build: GoBuild, cacheDir: string): string =>
  path.join(cacheDir, 'bin', `${build.cacheName ?? build.module}-${pinnedVersion(build)}-${ownSourcesDigest(build)}`);

const kubernetesBin = (cacheDir: string, name: string): string => path.join(buildDir(KUBERNETES, cacheDir), name);

/**
 * In a checkout, where ensureBinaries puts a Go helper (it may not be built yet); in a copy
 * without build/ (the image), the helper shipped beside bin/ksview.js (/app/bin).
 */
function helperPath(cacheDir: string, name: string): string {
  const checkout = existsSync(path.join(repoRoot(), 'build', KUBERNETES.module, 'go.mod'));
  return checkout ? kubernetesBin(cacheDir, name) : path.join(repoRoot(), 'bin', name);
}

/** The ksview-protojson serve runs by default. */
export const protojsonPath = (cacheDir: string): string => helperPath(cacheDir, 'ksview-protojson');

/** The ksview-native serve runs by default. */
export const nativeCodePath = (cacheDir: string): string => helperPath(cacheDir, 'ksview-native');

/** The ksview-gotemplate serve runs by default. */
export const gotemplatePath = (cacheDir: string): string => helperPath(cacheDir, 'ksview-gotemplate');

function which(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

export async function goBuild(build: GoBuild, cacheDir: string, progress: Progress): Promise<string> {
  const version = pinnedVersion(build);
  const outDir = buildDir(build, cacheDir);
  const names = Object.keys(build.packages);
  if (names.every((n) => existsSync(path.join(outDir, n)))) return outDir;

  const go = which('go');
  if (!go) {
    throw new UserError(
      `the Go toolchain (go) is not on PATH: it is needed once to build ${names.join(', ')} ${version}; install Go 1.24 or newer`,
    );
  }
  const tmpDir = `${outDir}.partial-${process.pid}`;
  rmSync(tmpDir, { recursive: true, force: true });
  mkdirSync(tmpDir, { recursive: true });
  progress.step(`building ${names.join(', ')} ${version} from Go modules (first run only; minutes)`);

  // A test binary's build says nothing per package unless asked for its commands (-x): a compile
  // is then a line naming the package (-p); `go build -v` names each package it compiles.
  const args = [
    ...(build.tests ? ['test', '-c', '-x'] : ['build', '-v']), '-trimpath', '-buildvcs=false',
    '-ldflags', ['-s', '-w', ...build.ldflags(version)].join(' '),
    '-o', tmpDir + path.sep, ...Object.values(build.packages),
  ];
  const compiledPackage = build.tests ? (line: string) => /\/compile .*?-p (\S+)/.exec(line)?.[1] : (line: string) => line;
  const started = Date.now();
  const { code, tail } = await runGo(go, args, path.join(repoRoot(), 'build', build.module), compiledPackage,
    (compiled, last) => progress.step(`  ${build.cacheName ?? build.module}: ${compiled} packages compiled after ${Math.round((Date.now() - started) / 1000)}s (last: ${last})`));
  if (code !== 0) {
    rmSync(tmpDir, { recursive: true, force: true });
    throw new UserError(`go build of ${names.join(', ')} ${version} failed: ${tail.slice(-3).join(' | ')}`);
  }
  rmSync(outDir, { recursive: true, force: true });
  renameSync(tmpDir, outDir);
  progress.step(`built ${names.join(', ')} ${version} in ${Math.round((Date.now() - started) / 1000)}s`);
  return outDir;
}

/**
 * Runs go in `moduleDir`, counting the packages it compiles (`compiledPackage` of each line of its
 * stderr, undefined for other lines) and reporting the count every 15 s; the exit code and the
 * last lines of stderr (the error, on failure).
 */
async function runGo(go: string, args: string[], moduleDir: string, compiledPackage: (line: string) => string | undefined,
  report: (compiled: number, last: string) => void): Promise<{ code: number; tail: string[] }> {
  let compiled = 0;
  let last = '';
  const tail: string[] = [];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(go, args, {
      cwd: moduleDir,
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const timer = setInterval(() => report(compiled, last), 15_000);
    child.stderr.setEncoding('utf8');
    let buffered = '';
    child.stderr.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        const pkg = compiledPackage(line);
        if (pkg !== undefined) {
          compiled++;
          last = pkg;
        }
        tail.push(line.slice(0, 500));
        if (tail.length > 20) tail.shift();
      }
    });
    child.on('error', (err) => { clearInterval(timer); reject(err); });
    child.on('close', (c) => { clearInterval(timer); resolve(c ?? 1); });
  });
  return { code, tail };
}

/** etcd from Debian's etcd-server package, installed with apt-get when missing and we are root. */
function ensureEtcd(progress: Progress): string {
  const found = which('etcd');
  if (found) return found;
  if (process.getuid?.() !== 0 || !which('apt-get')) {
    throw new UserError("etcd is not on PATH: install Debian's etcd-server package (apt-get install etcd-server)");
  }
  progress.step("installing Debian's etcd-server (apt-get)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '-q', 'etcd-server'], { env, encoding: 'utf8' });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-q'], { env, stdio: 'ignore' });
    r = spawnSync('apt-get', ['install', '-y', '-q', 'etcd-server'], { env, encoding: 'utf8' });
  }
  const installed = which('etcd');
  if (r.status !== 0 || !installed) {
    const last = (r.stderr || r.stdout || '').trim().split('\n').pop();
    throw new UserError(`apt-get install etcd-server failed: ${last}`);
  }
  return installed;
}

/** ksview serve's Go helpers (the image ships them), built with the Kubernetes binaries when absent. */
export async function ensureGoHelpers(cacheDir: string, progress: Progress): Promise<Pick<Binaries, 'native' | 'protojson' | 'gotemplate'>> {
  const kubeDir = await goBuild(KUBERNETES, cacheDir, progress);
  return {
    native: path.join(kubeDir, 'ksview-native'),
    protojson: path.join(kubeDir, 'ksview-protojson'),
    gotemplate: path.join(kubeDir, 'ksview-gotemplate'),
  };
}

/** Every binary local spaces need, building or installing what is missing. */
export async function ensureBinaries(cacheDir: string, progress: Progress): Promise<Binaries> {
  const etcd = ensureEtcd(progress);
  const kubeDir = await goBuild(KUBERNETES, cacheDir, progress);
  const kwokDir = await goBuild(KWOK, cacheDir, progress);
  return {
    etcd,
    kubeApiserver: path.join(kubeDir, 'kube-apiserver'),
    kubeControllerManager: path.join(kubeDir, 'kube-controller-manager'),
    kubeScheduler: path.join(kubeDir, 'kube-scheduler'),
    kwok: path.join(kwokDir, 'kwok'),
    protojson: path.join(kubeDir, 'ksview-protojson'),
    gotemplate: path.join(kubeDir, 'ksview-gotemplate'),
    native: path.join(kubeDir, 'ksview-native'),
  };
}

/**
 * ksview-native's compiled Go tests (the test suite's: KUBERNETES_TESTS above), built when
 * missing. Run the binary in build/kubernetes/ksview-native, as `go test` would.
 */
export async function ensureGoHelperTests(cacheDir: string, progress: Progress): Promise<{ native: string }> {
  return { native: path.join(await goBuild(KUBERNETES_TESTS, cacheDir, progress), 'ksview-native.test') };
}

/** Where ensureGoHelperTests puts ksview-native's compiled tests (they may not be built yet). */
export const nativeCodeTestsPath = (cacheDir: string): string => path.join(buildDir(KUBERNETES_TESTS, cacheDir), 'ksview-native.test');

export interface NodeBinaries {
  kubelet: string;
  kubeProxy: string;
}

/** kubelet and kube-proxy of the pinned k8s.io/kubernetes, built when missing (real nodes only). */
export async function ensureNodeBinaries(cacheDir: string, progress: Progress): Promise<NodeBinaries> {
  const dir = await goBuild(KUBERNETES_NODE, cacheDir, progress);
  return { kubelet: path.join(dir, 'kubelet'), kubeProxy: path.join(dir, 'kube-proxy') };
}
