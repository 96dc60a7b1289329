// What `ksview --version` prints: package.json's version and the commit it was built from. In the
// image, `/app/build-info.json` (written when the image is built: the image has no git) says it;
// in a git checkout, git does. A tree with changes not committed gets the suffix `-dirty` (as
// Kubernetes' gitVersion does), so an image built from one says so in its tag and its version.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectVersion, repoRoot } from './repo-root.js';

export interface BuildInfo {
  /** package.json's version, `-dirty` appended when the tree had uncommitted changes. */
  version: string;
  /** The full commit hash, or `unknown` outside a checkout and the image. */
  commit: string;
  dirty: boolean;
}

/** The file the image build writes at the project root (/app in the image). */
export const BUILD_INFO_FILE = 'build-info.json';

export interface GitState { commit: string; dirty: boolean; commitEpoch: number }

/** HEAD of the checkout at `dir`, whether anything differs from it (untracked files too), and its commit time. */
export function gitState(dir: string): GitState | undefined {
  const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  const head = git('log', '-1', '--format=%H %ct');
  if (head.status !== 0) return undefined;
  const [commit, epoch] = head.stdout.trim().split(' ');
  const status = git('status', '--porcelain');
  if (status.status !== 0 || !commit) return undefined;
  return { commit, dirty: status.stdout.trim() !== '', commitEpoch: Number(epoch) };
}

export function buildInfo(root = repoRoot()): BuildInfo {
  const file = path.join(root, BUILD_INFO_FILE);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as BuildInfo;
  const git = gitState(root);
  const dirty = git?.dirty ?? false;
  return { version: `${projectVersion()}${dirty ? '-dirty' : ''}`, commit: git?.commit ?? 'unknown', dirty };
}

/** The line `ksview --version` prints, e.g. `0.1.0 commit 2504097…` or `0.1.0-dirty commit 2504097…`. */
export function versionLine(info = buildInfo()): string {
  return `${info.version} commit ${info.commit}`;
}
