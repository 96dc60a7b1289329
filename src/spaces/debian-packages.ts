// Commands the project needs from Debian packages (buildah, binutils' strip, umoci, runc...):
// found on PATH, or installed with apt-get when missing and we are root, or one UserError line
// naming the packages to install. The same rule etcd-server follows in binaries.ts.
import { spawnSync } from 'node:child_process';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';

export interface DebianCommand {
  /** The command looked up on PATH. */
  command: string;
  /** The Debian package that installs it. */
  pkg: string;
}

export function which(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v "$0"`, cmd], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

/** The absolute path of each command, installing the missing ones' packages (`why` says for what). */
export function ensureDebianCommands(needed: DebianCommand[], why: string, progress: Progress): Record<string, string> {
  const missing = needed.filter((n) => !which(n.command));
  if (missing.length > 0) {
    const pkgs = [...new Set(missing.map((m) => m.pkg))];
    const what = `${missing.map((m) => m.command).join(', ')} (Debian: ${pkgs.join(' ')})`;
    if (process.getuid?.() !== 0 || !which('apt-get')) {
      throw new UserError(`${why} needs ${what}: install with apt-get install --no-install-recommends ${pkgs.join(' ')}`);
    }
    progress.step(`installing Debian's ${pkgs.join(', ')} (apt-get) for ${why}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () => spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...pkgs], { env, encoding: 'utf8' });
    let r = install();
    if (r.status !== 0) {
      // A fresh machine's package lists may be stale or empty: refresh once and retry.
      spawnSync('apt-get', ['update', '-q'], { env, stdio: 'ignore' });
      r = install();
    }
    const still = missing.filter((m) => !which(m.command));
    if (r.status !== 0 || still.length > 0) {
      const last = (r.stderr || r.stdout || '').trim().split('\n').pop();
      throw new UserError(`${why} needs ${what}: apt-get install ${pkgs.join(' ')} failed: ${last}`);
    }
  }
  return Object.fromEntries(needed.map((n) => [n.command, which(n.command)!]));
}
