// Open Cluster Management's own work agent (`work agent` of open-cluster-management.io/ocm, the
// version build/ocm pins), the peer `ksview agent` must be interchangeable with. Used by the
// benches and one integration test only; ksview never runs it for a user. Built once from the Go
// module proxy and cached like the spaces' binaries (./binaries.ts), started as a child process
// with OCM's default intervals and its log in a file, and stopped by its pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Progress } from '../util/progress.js';
import { freeLoopbackPort } from './ports.js';
import { repoRoot } from '../util/repo-root.js';
import { UserError } from '../util/user-error.js';
import { goBuild, pinnedVersion, type GoBuild } from './binaries.js';

const OCM: GoBuild = {
  module: 'ocm',
  requires: 'open-cluster-management.io/ocm',
  packages: { work: 'open-cluster-management.io/ocm/cmd/work' },
  // What `work --version` and the agent's user agent report.
  ldflags: (version) => [`-X open-cluster-management.io/ocm/pkg/version.versionFromGit=${version}`],
};

export const ocmVersion = (): string => pinnedVersion(OCM);

/** The `work` binary (OCM's work agent is its `agent` subcommand), built on first use. */
export async function ensureOcmWorkAgent(cacheDir: string, progress: Progress): Promise<string> {
  return path.join(await goBuild(OCM, cacheDir, progress), 'work');
}

/** The AppliedManifestWork CRD file of open-cluster-management.io/api at the version ocm pins. */
export function appliedManifestWorkCrdFile(): string {
  const r = spawnSync('go', ['mod', 'download', '-json', 'open-cluster-management.io/api'], {
    cwd: path.join(repoRoot(), 'build', 'ocm'), encoding: 'utf8', env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  if (r.status !== 0) throw new UserError(`go mod download open-cluster-management.io/api failed: ${(r.stderr || r.stdout).trim().split('\n').pop()}`);
  const dir = (JSON.parse(r.stdout) as { Dir: string }).Dir;
  return path.join(dir, 'work', 'v1', '0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml');
}

/**
 * OCM's agent records what it applied in AppliedManifestWorks in the WEC and will not start its
 * controllers without their CRD: install OCM's own (server-side, so a structurally identical one
 * installed by ksview's agent is merged, not fought over).
 */
export function installAppliedManifestWorkCrd(wecKubeconfig: string, context?: string): void {
  const args = [...(context ? ['--context', context] : []), 'apply', '--server-side', '--force-conflicts',
    '--field-manager', 'ksview-ocm-peer', '-f', appliedManifestWorkCrdFile()];
  const r = spawnSync('kubectl', args, { encoding: 'utf8', env: { ...process.env, KUBECONFIG: wecKubeconfig } });
  if (r.status !== 0) throw new UserError(`installing the AppliedManifestWork CRD failed: ${r.stderr.trim()}`);
  const w = spawnSync('kubectl', [...(context ? ['--context', context] : []), 'wait', '--for=condition=Established', '--timeout=60s',
    'crd/appliedmanifestworks.work.open-cluster-management.io'], { encoding: 'utf8', env: { ...process.env, KUBECONFIG: wecKubeconfig } });
  if (w.status !== 0) throw new UserError(`the AppliedManifestWork CRD is not Established: ${w.stderr.trim()}`);
}

export interface OcmWorkAgentOptions {
  binary: string;
  /** The ManagedCluster name: the agent reads ManifestWorks in this namespace of the hub. */
  cluster: string;
  /** Kubeconfig of the hub (the ITS); its current context is used. */
  hubKubeconfig: string;
  /** Kubeconfig of the WEC; its current context is used. */
  wecKubeconfig: string;
  /** Where its log goes (appended). */
  log: string;
  /** OCM's `--agent-id` (default: the hub hash, as OCM does). */
  agentId?: string;
  /** Extra flags (e.g. `--status-sync-interval`); none by default: OCM's own defaults. */
  extraArgs?: string[];
  /** Loopback port of its metrics/health server (startOcmWorkAgent picks a free one). */
  listenPort?: number;
}

export interface OcmWorkAgent {
  pid: number;
  args: string[];
  /** TERM, then KILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
  exited(): boolean;
}

/** The command line of OCM's work agent for one cluster (pull mode: the hub's kube driver). */
export function ocmWorkAgentArgs(o: Omit<OcmWorkAgentOptions, 'binary' | 'log'>): string[] {
  return [
    'agent',
    `--spoke-cluster-name=${o.cluster}`,
    // The kube workload source reads ManifestWorks from the hub through this kubeconfig;
    // --hub-kubeconfig is what the registration side would use, so set both alike.
    `--workload-source-config=${o.hubKubeconfig}`,
    `--hub-kubeconfig=${o.hubKubeconfig}`,
    `--kubeconfig=${o.wecKubeconfig}`,
    ...(o.agentId ? [`--agent-id=${o.agentId}`] : []),
    // One agent per cluster here, so no election; library-go's metrics/health server on a free
    // loopback port instead of 0.0.0.0:8443, so two agents can run side by side.
    '--disable-leader-election',
    // Not port 0: library-go then leaves its serving config unset and the agent panics at start
    // (nil SecureServing in serving.ToServerConfig, library-go of OCM v1.2.0).
    `--listen=127.0.0.1:${o.listenPort ?? 8443}`,
    '--namespace=default',
    ...(o.extraArgs ?? []),
  ];
}

/** Starts OCM's work agent as a child of this process (it ends with it). */
export async function startOcmWorkAgent(o: OcmWorkAgentOptions): Promise<OcmWorkAgent> {
  const args = ocmWorkAgentArgs({ ...o, listenPort: o.listenPort ?? await freeLoopbackPort() });
  const fd = openSync(o.log, 'a');
  let child: ChildProcess;
  try {
    child = spawn(o.binary, args, { stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new UserError(`could not start ${o.binary}`);
  let done = false;
  const closed = new Promise<void>((resolve) => child.on('exit', () => { done = true; resolve(); }));
  child.on('error', () => { done = true; });
  return {
    pid: child.pid,
    args,
    exited: () => done,
    async stop(graceMs = 10_000) {
      if (done) return;
      child.kill('SIGTERM');
      if (await Promise.race([closed.then(() => true), sleep(graceMs).then(() => false)])) return;
      child.kill('SIGKILL');
      await closed;
    },
  };
}
