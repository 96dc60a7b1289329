// What the machine needs before real nodes start: root, and Debian's packages (containerd, runc,
// CNI plugins, iptables, conntrack and nftables for kube-proxy, buildah and busybox-static for the images, gcc
// and libc6-dev for the static pause), installed with apt-get when missing (as etcd is), or one
// line naming what is missing. And the sysctls the nodes change (kubelet at start; the inotify
// instances we raise), recorded before the first node starts so `down` puts them back.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../util/progress.js';
import { UserError } from '../util/user-error.js';

export interface HostRequirement {
  /** The Debian package that provides it. */
  pkg: string;
  /** A file that exists once the package is installed. */
  file: string;
}

export const HOST_REQUIREMENTS: readonly HostRequirement[] = [
  { pkg: 'containerd', file: '/usr/bin/containerd' },
  { pkg: 'containerd', file: '/usr/bin/ctr' },
  { pkg: 'runc', file: '/usr/sbin/runc' },
  { pkg: 'containernetworking-plugins', file: '/usr/lib/cni/bridge' },
  { pkg: 'iptables', file: '/usr/sbin/iptables' },
  { pkg: 'conntrack', file: '/usr/sbin/conntrack' },
  // kube-proxy's nftables mode, when iptables does not work in a node's namespace.
  { pkg: 'nftables', file: '/usr/sbin/nft' },
  { pkg: 'iproute2', file: '/usr/sbin/ip' },
  { pkg: 'util-linux', file: '/usr/bin/nsenter' },
  { pkg: 'buildah', file: '/usr/bin/buildah' },
  { pkg: 'busybox-static', file: '/bin/busybox' },
  { pkg: 'gcc', file: '/usr/bin/gcc' },
  { pkg: 'libc6-dev', file: '/usr/include/signal.h' },
];

/** The packages whose files are missing, each once, in the order above. */
export function missingPackages(exists: (file: string) => boolean, reqs: readonly HostRequirement[] = HOST_REQUIREMENTS): string[] {
  return [...new Set(reqs.filter((r) => !exists(r.file)).map((r) => r.pkg))];
}

/** busybox (not busybox-static) is linked dynamically: the image needs the static one. */
function busyboxIsStatic(): boolean {
  const head = readFileSync('/bin/busybox').subarray(0, 4096).toString('latin1');
  return !head.includes('/lib64/ld-linux') && !head.includes('ld-linux-x86-64');
}

/** Root, then the packages, installed when missing and possible; a UserError (one line) otherwise. */
export function ensureNodeHost(progress: Progress): void {
  if (process.getuid?.() !== 0) {
    throw new UserError('--real-nodes needs root (kubelet, containerd and network namespaces); run as root or without --real-nodes (kwok)');
  }
  const exists = (f: string) => existsSync(f) && (f !== '/bin/busybox' || busyboxIsStatic());
  const missing = missingPackages(exists);
  if (missing.length === 0) return;
  const aptGet = '/usr/bin/apt-get';
  if (!existsSync(aptGet)) {
    throw new UserError(`--real-nodes needs Debian's packages ${missing.join(', ')}: install them (no apt-get here)`);
  }
  progress.step(`installing Debian's ${missing.join(', ')} for the real nodes (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another apt-get on the machine (another engineer, CI) holds the lock for a while: wait for it.
  const install = () => spawnSync(aptGet, ['install', '-y', '-q', '--no-install-recommends', '-o', 'DPkg::Lock::Timeout=300', ...missing], { env, encoding: 'utf8' });
  let r = install();
  if (r.status !== 0) {
    spawnSync(aptGet, ['update', '-q', '-o', 'DPkg::Lock::Timeout=300'], { env, stdio: 'ignore' });
    r = install();
  }
  const still = missingPackages(exists);
  if (r.status !== 0 || still.length > 0) {
    const last = (r.stderr || r.stdout || '').trim().split('\n').pop();
    throw new UserError(`apt-get install ${missing.join(' ')} failed (still missing: ${still.join(', ') || 'none'}): ${last}`);
  }
}

/**
 * The sysctls the nodes change, recorded before and restored by `down`: those kubelet sets at start
 * (setupKernelTunables), and the inotify instances per user, which we raise (below).
 */
export const NODE_SYSCTLS = ['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops', 'fs.inotify.max_user_instances'] as const;

/**
 * Every containerd's CRI plugin and every kubelet watch files with inotify; Linux's default of 128
 * instances per user is soon spent on a machine running many processes as root ("failed to create
 * fsnotify watcher: too many open files"): raised to `min`, as kind's known-issues page advises.
 */
export const INOTIFY_MIN_INSTANCES = 1024;

export function raiseInotifyInstances(): void {
  const file = sysctlFile('fs.inotify.max_user_instances');
  if (Number(readFileSync(file, 'utf8').trim()) < INOTIFY_MIN_INSTANCES) writeFileSync(file, String(INOTIFY_MIN_INSTANCES));
}

const sysctlFile = (key: string) => `/proc/sys/${key.replace(/\./g, '/')}`;

export function readSysctls(keys: readonly string[] = NODE_SYSCTLS): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, readFileSync(sysctlFile(k), 'utf8').trim()]));
}

/**
 * Of recorded values (state.json, /run/ksview/sysctls.json: files others may have written), only
 * the known keys (NODE_SYSCTLS) with integer values: `down` runs as root and must never write a
 * sysctl a file names (kernel.core_pattern would run any program as root). The rest is ignored,
 * and said (`ignored`, one entry per key).
 */
export function knownSysctls(values: unknown): { values: Record<string, string>; ignored: string[] } {
  const known = new Set<string>(NODE_SYSCTLS);
  const out: Record<string, string> = {};
  const ignored: string[] = [];
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return { values: out, ignored: values === undefined ? [] : ['(not an object)'] };
  for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
    const value = typeof v === 'number' ? String(v) : v;
    if (known.has(k) && typeof value === 'string' && /^-?\d{1,10}$/.test(value.trim())) out[k] = value.trim();
    else ignored.push(k);
  }
  return { values: out, ignored };
}

/** Writes back recorded values (known keys only: knownSysctls); returns the keys it could not write. */
export function restoreSysctls(values: Record<string, string>): string[] {
  const failed: string[] = [];
  for (const [k, v] of Object.entries(knownSysctls(values).values)) {
    try {
      if (readFileSync(sysctlFile(k), 'utf8').trim() !== v) writeFileSync(sysctlFile(k), v);
    } catch {
      failed.push(k);
    }
  }
  return failed;
}

/**
 * Several real-node spaces may run on one machine (a user's, the tests'), and the sysctls are the
 * machine's: the first to start records them as they were in /run/ksview/sysctls.json (tmpfs: a
 * reboot resets both), and the last to stop (no other node's folder left in /run/ksview) restores
 * them. Otherwise one `down` would undo what another's running kubelets set, or record their values
 * as the machine's.
 */
export const MACHINE_RUN_DIR = '/run/ksview';
const machineRecord = path.join(MACHINE_RUN_DIR, 'sysctls.json');

/** The machine's values before any real node changed them: recorded now if no real node runs. */
export function recordMachineSysctls(): Record<string, string> {
  if (existsSync(machineRecord)) {
    const had = knownSysctls(JSON.parse(readFileSync(machineRecord, 'utf8'))).values;
    // A key this version adds that the record lacks: as it is now.
    return { ...readSysctls(), ...had };
  }
  mkdirSync(MACHINE_RUN_DIR, { recursive: true, mode: 0o755 });
  const now = readSysctls();
  writeFileSync(machineRecord, JSON.stringify(now));
  return now;
}

/** Whether other real nodes still run: node folders (`<port base>-<space>`) of other spaces in /run/ksview. */
export function otherNodesRun(ours: readonly string[]): boolean {
  if (!existsSync(MACHINE_RUN_DIR)) return false;
  return readdirSync(MACHINE_RUN_DIR).some((d) => /^\d+-/.test(d) && !ours.includes(path.join(MACHINE_RUN_DIR, d)));
}

/**
 * Restores the machine's recorded values (else `fallback`, state.json's) when no other real node
 * runs: known keys with integer values only (knownSysctls); the keys not written, and those ignored.
 */
export function restoreMachineSysctls(ours: readonly string[], fallback: unknown): { restored: boolean; failed: string[]; ignored: string[] } {
  if (otherNodesRun(ours)) return { restored: false, failed: [], ignored: [] };
  let recorded: unknown = fallback;
  if (existsSync(machineRecord)) {
    try { recorded = JSON.parse(readFileSync(machineRecord, 'utf8')); } catch { /* unreadable: state.json's */ }
  }
  const { values, ignored } = knownSysctls(recorded);
  const failed = restoreSysctls(values);
  if (failed.length === 0) rmSync(machineRecord, { force: true });
  return { restored: true, failed, ignored };
}
