// What `spaces down` removes of the real nodes, planned from what the machine holds (facts read
// from /proc, /run/netns, /sys/fs/cgroup, iptables) by a pure function (unit-tested), then done:
// the pods' processes (every process in the nodes' cgroup roots) and containerd's shims (by
// their -address) killed; every mount under the nodes' folders and the pods' network namespaces
// (`cni-*` holding an address of one of these nodes' own /24 pod subnets: never the whole
// 10.X.0.0/16, whose X other port bases share) unmounted, deepest first; the nodes' network
// namespaces (their links go with them), the host ends of the links, the nat and raw chains
// `KSVIEW-<port base>` and their jumps,
// the cgroups (deepest first, in every hierarchy), containerd's CNI results of the nodes'
// networks. The sysctls kubelet changed are restored by the caller from the recorded values.
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { dnatChain, type NodeLayout } from './node-layout.js';
import { dnatJumps, netnsPath, run } from './node-network.js';

export interface MachineFacts {
  /** Mount points (from /proc/self/mountinfo). */
  mounts: string[];
  /** Network namespaces in /run/netns with their IPv4 addresses. */
  netns: Array<{ name: string; addrs: string[] }>;
  /** Host links by name. */
  links: string[];
  /** Whether the chain `KSVIEW-<port base>` exists, per table. */
  chainExists: { nat: boolean; raw: boolean };
  /** Existing cgroup folders under the nodes' cgroup roots, every hierarchy. */
  cgroupDirs: string[];
  /** Files in containerd's CNI cache (/var/lib/cni/results). */
  cniResults: string[];
  /** pid → command line (argv) of every process. */
  processes: Array<{ pid: number; argv: string[] }>;
  /** pids in the nodes' cgroups. */
  cgroupPids: number[];
}

export type CleanupStep =
  | { kind: 'kill'; pid: number; why: string }
  | { kind: 'umount'; path: string }
  | { kind: 'run'; cmd: string; args: string[] }
  | { kind: 'rmdir'; path: string }
  | { kind: 'rm'; path: string };

export const CNI_RESULTS_DIR = '/var/lib/cni/results';
const CGROUP_ROOT = '/sys/fs/cgroup';

/** Whether an IPv4 address is in a CIDR. */
export function inCidr(addr: string, cidr: string): boolean {
  const [net, bits] = cidr.split('/');
  const n = (a: string) => a.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(addr) / size) === Math.floor(n(net!) / size);
}

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
const depth = (p: string) => p.split('/').length;

export function planNodeCleanup(nodes: NodeLayout[], portBase: number, facts: MachineFacts): CleanupStep[] {
  const steps: CleanupStep[] = [];
  const sockets = new Set(nodes.map((n) => n.containerdSocket));
  for (const pid of [...new Set(facts.cgroupPids)].sort((a, b) => a - b)) steps.push({ kind: 'kill', pid, why: 'a pod process of a real node' });
  for (const p of facts.processes) {
    const i = p.argv.indexOf('-address');
    if (p.argv[0]?.includes('containerd-shim') && i >= 0 && sockets.has(p.argv[i + 1] ?? '')) {
      steps.push({ kind: 'kill', pid: p.pid, why: `a shim of ${p.argv[i + 1]}` });
    }
  }
  // A pod's namespace holds an address of its node's own /24; 10.X.0.0/16 is shared with other
  // port bases (X = 160 + ⌊port base / 100⌋ mod 80) and maybe other runtimes.
  const podNetns = facts.netns.filter((ns) => ns.name.startsWith('cni-') && ns.addrs.some((a) => nodes.some((n) => inCidr(a, n.podSubnet))))
    .map((ns) => netnsPath(ns.name));
  const mounts = facts.mounts.filter((m) => nodes.some((n) => under(m, n.dir)) || podNetns.includes(m))
    .sort((a, b) => depth(b) - depth(a) || b.localeCompare(a));
  // A path mounted twice is unmounted twice.
  for (const m of mounts) steps.push({ kind: 'umount', path: m });
  for (const p of podNetns) steps.push({ kind: 'rm', path: p });
  for (const n of nodes) {
    // Deleting one end of the link deletes both; then the namespace.
    if (facts.links.includes(n.hostVeth)) steps.push({ kind: 'run', cmd: 'ip', args: ['link', 'delete', n.hostVeth] });
    if (facts.netns.some((ns) => ns.name === n.netns)) steps.push({ kind: 'run', cmd: 'ip', args: ['netns', 'delete', n.netns] });
  }
  // Exactly what ensureApiserverDnat added: the jump, then the chain (flushed, then deleted), per table.
  const jumps = dnatJumps(portBase);
  for (const table of ['nat', 'raw'] as const) {
    if (!facts.chainExists[table]) continue;
    steps.push({ kind: 'run', cmd: 'iptables', args: ['-t', table, '-D', ...jumps[table]] });
    steps.push({ kind: 'run', cmd: 'iptables', args: ['-t', table, '-F', dnatChain(portBase)] });
    steps.push({ kind: 'run', cmd: 'iptables', args: ['-t', table, '-X', dnatChain(portBase)] });
  }
  for (const d of [...facts.cgroupDirs].sort((a, b) => depth(b) - depth(a) || b.localeCompare(a))) steps.push({ kind: 'rmdir', path: d });
  for (const n of nodes) steps.push({ kind: 'rm', path: path.dirname(n.containerdSocket) });
  for (const f of facts.cniResults) {
    if (nodes.some((n) => f.startsWith(`${n.cniNetwork}-`))) steps.push({ kind: 'rm', path: path.join(CNI_RESULTS_DIR, f) });
  }
  return steps;
}

// ---- reading the facts -----------------------------------------------------------------------

/** Mount points, unescaped (mountinfo writes a space as \040). */
export function parseMountinfo(text: string): string[] {
  return text.split('\n').filter(Boolean).map((l) => l.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
}

/** The cgroup hierarchies mounted under /sys/fs/cgroup (v1 controllers, unified). */
export function cgroupHierarchies(): string[] {
  if (!existsSync(CGROUP_ROOT)) return [];
  const mounts = new Set(parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')));
  if (mounts.has(CGROUP_ROOT) && existsSync(path.join(CGROUP_ROOT, 'cgroup.controllers'))) return [CGROUP_ROOT];
  return readdirSync(CGROUP_ROOT).map((d) => path.join(CGROUP_ROOT, d)).filter((d) => mounts.has(d));
}

function walkDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(...walkDirs(path.join(dir, e.name)));
  return out;
}

export function readMachineFacts(nodes: NodeLayout[], portBase: number): MachineFacts {
  const netnsNames = existsSync('/run/netns') ? readdirSync('/run/netns') : [];
  const netns = netnsNames.map((name) => ({
    name,
    addrs: name.startsWith('cni-')
      ? [...run('ip', ['-n', name, '-4', '-o', 'addr', 'show']).stdout.matchAll(/inet (\d+\.\d+\.\d+\.\d+)\//g)].map((m) => m[1]!)
      : [],
  }));
  const links = run('ip', ['-o', 'link', 'show']).stdout.split('\n').map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1]).filter((x): x is string => !!x);
  const cgroupDirs = cgroupHierarchies().flatMap((h) => nodes.flatMap((n) => walkDirs(path.join(h, n.cgroupRoot))));
  const cgroupPids = cgroupDirs.flatMap((d) => {
    try { return readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number); } catch { return []; }
  });
  const processes = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try { return [{ pid: Number(d), argv: readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter(Boolean) }]; } catch { return []; }
  });
  return {
    mounts: parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')),
    netns,
    links,
    chainExists: {
      nat: run('iptables', ['-t', 'nat', '-S', dnatChain(portBase)]).status === 0,
      raw: run('iptables', ['-t', 'raw', '-S', dnatChain(portBase)]).status === 0,
    },
    cgroupDirs,
    cniResults: existsSync(CNI_RESULTS_DIR) ? readdirSync(CNI_RESULTS_DIR) : [],
    processes,
    cgroupPids,
  };
}

/** Does the steps; returns what failed (one line each). Kills first, then waits for them to go. */
export async function runCleanup(steps: CleanupStep[]): Promise<string[]> {
  const failed: string[] = [];
  const killed: number[] = [];
  for (const s of steps.filter((x) => x.kind === 'kill')) {
    try { process.kill(s.pid, 'SIGKILL'); killed.push(s.pid); } catch { /* gone already */ }
  }
  const deadline = Date.now() + 10_000;
  while (killed.some((p) => existsSync(`/proc/${p}`) && !zombie(p)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const s of steps) {
    if (s.kind === 'umount') {
      const r = run('umount', ['--lazy', s.path]);
      if (r.status !== 0 && !/not mounted|no mount point/.test(r.stderr)) failed.push(`umount ${s.path}: ${r.stderr.trim()}`);
    } else if (s.kind === 'run') {
      const r = run(s.cmd, s.args);
      // Gone already (with its namespace, or by an earlier `down`): nothing left to remove.
      if (r.status !== 0 && !/Cannot find device|No such file|does not exist/.test(r.stderr)) failed.push(`${s.cmd} ${s.args.join(' ')}: ${r.stderr.trim()}`);
    } else if (s.kind === 'rmdir') {
      // A cgroup goes once its last process has: retry for a moment.
      let ok = false;
      for (let i = 0; i < 50 && !ok; i++) {
        try { rmdirSync(s.path); ok = true; } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') ok = true;
          else await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (!ok) failed.push(`rmdir ${s.path}`);
    } else if (s.kind === 'rm') {
      try { if (existsSync(s.path)) rmSync(s.path, { force: true, recursive: statSync(s.path).isDirectory() }); } catch (err) { failed.push(`rm ${s.path}: ${(err as Error).message}`); }
    }
  }
  return failed;
}

function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}
