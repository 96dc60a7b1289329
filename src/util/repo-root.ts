// The project's root folder (where package.json and build/ live), found from this module's own
// location so it works from src/ (tests) and from dist/ (the installed command); and the version
// that package.json declares, which `ksview --version` prints.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface PackageJson { name?: string; version?: string }

let cached: { dir: string; pkg: PackageJson } | undefined;

function findRoot(): { dir: string; pkg: PackageJson } {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
      if (pkg.name === 'kubestellar-view') {
        cached = { dir, pkg };
        return cached;
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the kubestellar-view project root');
    dir = parent;
  }
}

export function repoRoot(): string {
  return findRoot().dir;
}

export function projectVersion(): string {
  return findRoot().pkg.version ?? 'unknown';
}
