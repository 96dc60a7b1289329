// The two small images of the real nodes, built with buildah FROM scratch (no registry is
// reachable, no base image) and imported into each node's containerd directly:
// - the pod sandbox's pause (build/node-images/pause.c, gcc -static): containerd's sandbox_image;
// - ksview-httpd: busybox-static's httpd serving one page on :8080 as UID 65532, so a workload on a
//   real node has a real readiness probe (the demo's nginx stands for it where containers run).
// Both fully qualified (docker.io/library/…): a short name is imported as written and kubelet
// would not find it. Built once per content (the cache key is a digest of their inputs), with
// fixed timestamps, into an OCI archive in the cache; buildah keeps its storage in the cache too,
// apart from any other buildah user on the machine. buildImage is the one builder: the project's
// main image (build/image/) may share it later.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../util/progress.js';
import { repoRoot } from '../util/repo-root.js';
import { UserError } from '../util/user-error.js';

export const PAUSE_IMAGE = 'docker.io/library/ksview-pause:1.0';
export const HTTPD_IMAGE = 'docker.io/library/ksview-httpd:1.0';
/** The port ksview-httpd serves its page on (GET / answers 200: a readiness probe's target). */
export const HTTPD_PORT = 8080;
export const HTTPD_UID = 65532;

export interface ImageSpec {
  /** Fully qualified name the archive carries. */
  name: string;
  /** Files to put in the image: path in the image → file on this machine. */
  files: Record<string, string>;
  /** Files written from text: path in the image → content. */
  texts?: Record<string, string>;
  entrypoint: string[];
  user: string;
  ports?: number[];
}

function must(cmd: string, args: string[], what: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new UserError(`${what} failed: ${(r.stderr || r.stdout || String(r.error)).trim().split('\n').pop()}`);
  return r.stdout;
}

/** A digest of everything that makes the image: the archive is rebuilt only when it changes. */
export function imageDigestKey(spec: ImageSpec, read: (f: string) => Buffer = readFileSync): string {
  const h = createHash('sha256').update(JSON.stringify({ ...spec, files: Object.keys(spec.files).sort() }));
  for (const k of Object.keys(spec.files).sort()) h.update(k).update('\0').update(read(spec.files[k]!)).update('\0');
  return h.digest('hex').slice(0, 16);
}

/** Builds `spec` FROM scratch into an OCI archive in the cache (once per content); returns its path. */
export function buildImage(spec: ImageSpec, cacheDir: string, progress: Progress): string {
  const dir = path.join(cacheDir, 'images');
  const base = spec.name.replace(/^.*\//, '').replace(':', '-');
  const archive = path.join(dir, `${base}-${imageDigestKey(spec)}.oci.tar`);
  if (existsSync(archive)) return archive;
  mkdirSync(dir, { recursive: true });
  progress.step(`building the image ${spec.name} (buildah, FROM scratch)`);
  const storage = ['--root', path.join(dir, 'buildah-storage'), '--runroot', path.join(dir, 'buildah-run'), '--storage-driver', 'vfs'];
  const bud = (args: string[], what: string) => must('buildah', [...storage, ...args], what);
  const ctr = bud(['from', '--name', `ksview-${base}-${process.pid}`, 'scratch'], 'buildah from scratch').trim();
  const staging = path.join(dir, `staging-${process.pid}`);
  try {
    for (const [dest, src] of Object.entries(spec.files)) bud(['copy', '--chmod', '0755', ctr, src, dest], `copying ${src} into ${spec.name}`);
    if (spec.texts) {
      rmSync(staging, { recursive: true, force: true });
      mkdirSync(staging, { recursive: true });
      for (const [dest, text] of Object.entries(spec.texts)) {
        const local = path.join(staging, dest.replace(/\//g, '_'));
        writeFileSync(local, text);
        bud(['copy', '--chmod', '0644', ctr, local, dest], `copying ${dest} into ${spec.name}`);
      }
    }
    bud(['config', '--entrypoint', JSON.stringify(spec.entrypoint), '--cmd', '', '--user', spec.user,
      '--os', 'linux', '--arch', 'amd64', '--workingdir', '/',
      ...(spec.ports ?? []).flatMap((p) => ['--port', `${p}/tcp`]), ctr], `configuring ${spec.name}`);
    const partial = `${archive}.partial-${process.pid}`;
    // A fixed timestamp: the same inputs make the same layers and config.
    bud(['commit', '--format', 'oci', '--timestamp', '0', '--rm', ctr, `oci-archive:${partial}:${spec.name}`], `committing ${spec.name}`);
    renameSync(partial, archive);
  } finally {
    spawnSync('buildah', [...storage, 'rm', ctr], { stdio: 'ignore' });
    rmSync(staging, { recursive: true, force: true });
  }
  return archive;
}

/** The static pause binary, compiled once into the cache from build/node-images/pause.c. */
function pauseBinary(cacheDir: string): string {
  const src = path.join(repoRoot(), 'build', 'node-images', 'pause.c');
  const digest = createHash('sha256').update(readFileSync(src)).digest('hex').slice(0, 12);
  const out = path.join(cacheDir, 'images', `pause-${digest}`);
  if (existsSync(out)) return out;
  mkdirSync(path.dirname(out), { recursive: true });
  must('gcc', ['-static', '-O2', '-s', '-o', `${out}.tmp`, src], 'compiling pause (gcc -static)');
  renameSync(`${out}.tmp`, out);
  return out;
}

export function pauseImageSpec(cacheDir: string): ImageSpec {
  return { name: PAUSE_IMAGE, files: { '/pause': pauseBinary(cacheDir) }, entrypoint: ['/pause'], user: '65535:65535' };
}

export function httpdImageSpec(): ImageSpec {
  return {
    name: HTTPD_IMAGE,
    files: { '/bin/busybox': '/bin/busybox' },
    texts: { '/www/index.html': 'ksview-httpd: served by a real container\n' },
    // -f: foreground (PID 1); -v: log requests; -h: the page's folder. Writes nothing (read-only root fs).
    entrypoint: ['/bin/busybox', 'httpd', '-f', '-v', '-p', String(HTTPD_PORT), '-h', '/www'],
    user: `${HTTPD_UID}:${HTTPD_UID}`,
    ports: [HTTPD_PORT],
  };
}

/** Both node images, built if needed: [pause, httpd] archives. */
export function ensureNodeImages(cacheDir: string, progress: Progress): string[] {
  return [buildImage(pauseImageSpec(cacheDir), cacheDir, progress), buildImage(httpdImageSpec(), cacheDir, progress)];
}

/** Imports an OCI archive into a node's containerd (namespace k8s.io, where kubelet's images live). */
export function importImage(containerdSocket: string, archive: string): void {
  must('ctr', ['--address', containerdSocket, '-n', 'k8s.io', 'images', 'import', archive], `importing ${path.basename(archive)}`);
}
