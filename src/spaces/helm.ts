// Helm (helm.sh/helm/v3, the version build/helm pins), the tool that installs and checks
// charts/kubestellar-view. Built once from the Go module proxy and cached like the spaces'
// binaries (./binaries.ts: keyed by version and a digest of the wrapper module, progress while it
// builds, one clear error without Go). Used by the chart's tests, the lead's end-to-end test and
// `make` targets; ksview itself never runs helm for a user.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../util/progress.js';
import { silentProgress } from '../util/progress.js';
import { repoRoot } from '../util/repo-root.js';
import { defaultCacheDir, goBuild, pinnedVersion, type GoBuild } from './binaries.js';

/**
 * The Kubernetes minor helm was built against, as helm's own Makefile derives it from the
 * k8s.io/client-go it requires (v0.N.x → 1.N): what `helm lint` and `helm template` assume as the
 * cluster's version when none is given (.Capabilities.KubeVersion) and the API deprecations lint checks.
 */
function helmKubeVersion(): { major: string; minor: string } {
  const goMod = readFileSync(path.join(repoRoot(), 'build', 'helm', 'go.mod'), 'utf8');
  const m = /^\s*k8s\.io\/client-go\s+v0\.(\d+)\./m.exec(goMod);
  if (!m) throw new Error('build/helm/go.mod does not require k8s.io/client-go');
  return { major: '1', minor: m[1]! };
}

const HELM: GoBuild = {
  module: 'helm',
  requires: 'helm.sh/helm/v3',
  packages: { helm: 'helm.sh/helm/v3/cmd/helm' },
  // The -X flags of helm's Makefile: without them `helm version` says v3.22 with no patch, and
  // lint/template assume Kubernetes 1.20. gitCommit stays empty: the module proxy's zip has no
  // commit (helm prints it empty, as for any build outside its git tree).
  ldflags: (version) => {
    const k8s = helmKubeVersion();
    return [
      `-X helm.sh/helm/v3/internal/version.version=${version}`,
      '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
      ...['pkg/lint/rules', 'pkg/chartutil'].flatMap((pkg) => [
        `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=${k8s.major}`,
        `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${k8s.minor}`,
      ]),
    ];
  },
};

export const helmVersion = (): string => pinnedVersion(HELM);

/** The `helm` binary, built on first use (a few minutes with a cold Go cache) and cached. */
export async function ensureHelm(cacheDir = defaultCacheDir(), progress: Progress = silentProgress): Promise<string> {
  return path.join(await goBuild(HELM, cacheDir, progress), 'helm');
}
