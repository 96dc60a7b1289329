// The network of the real nodes (addresses: ./node-layout.ts). Per node: a network namespace, a
// veth link to the host (the host end with route_localnet, so the DNAT below may send to
// loopback), a route on the host to the node's pod subnet, forwarding on inside the namespace
// (the bridge CNI plugin makes the pods' bridge there). For all nodes of these spaces, packets
// entering through the nodes' links (`-i ksv<port base>h+`):
//  - nat chain `KSVIEW-<port base>` (from PREROUTING) DNATs 10.X.0.1:<p> to 127.0.0.1:<p> for
//    the spaces' kube-apiserver ports p only: pods and kubelets reach the kube-apiservers, which
//    keep listening on loopback only (every host-side kubeconfig stays https://127.0.0.1:<port>);
//  - raw chain `KSVIEW-<port base>` (from PREROUTING, first, before conntrack and NAT) drops
//    whatever else is addressed to 10.X.0.1 and anything addressed to 127.0.0.0/8: with
//    route_localnet on, loopback would otherwise be reachable from the nodes, and with it every
//    service on the machine that listens on 127.0.0.1 only (agents, kube-controller-managers, ...).
// Both chains are written whole with `iptables-restore --noflush` (declaring a chain flushes
// it: the new rules replace the old ones in one commit, as kube-proxy does), so a later `up`
// with more spaces' ports rewrites them. Setup is idempotent (a second `up` finds everything in
// place); teardown is planned from what the machine holds (./node-cleanup.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { UserError } from '../util/user-error.js';
import { dnatChain, podApiserverAddress, type NodeLayout } from './node-layout.js';

export interface CommandResult { status: number; stdout: string; stderr: string }

export function run(cmd: string, args: string[]): CommandResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? r.error.message : '') };
}

function must(cmd: string, args: string[], what: string): string {
  const r = run(cmd, args);
  if (r.status !== 0) throw new UserError(`${what} failed: ${cmd} ${args.join(' ')}: ${r.stderr.trim().split('\n').pop()}`);
  return r.stdout;
}

export const netnsPath = (netns: string): string => `/run/netns/${netns}`;

/** Runs `args` inside the node's network namespace (and only that namespace: mounts stay the host's). */
export const inNetns = (netns: string, args: string[]): string[] => [`--net=${netnsPath(netns)}`, '--', ...args];

/** The jumps (PREROUTING of the nat and raw tables) into these spaces' chains, as `iptables` argument lists. */
export function dnatJumps(portBase: number): { nat: string[]; raw: string[] } {
  const jump = (what: string) => ['PREROUTING', '-i', `${hostVethPrefix(portBase)}+`, '-m', 'comment', '--comment', `ksview spaces ${portBase}: ${what}`, '-j', dnatChain(portBase)];
  return { nat: jump('pods to kube-apiservers'), raw: jump('nodes reach no other loopback service') };
}

/**
 * The `iptables-restore --noflush` input writing both chains whole: the DNAT of each
 * kube-apiserver port (nat), and (raw, before NAT) those ports let through, the rest of
 * 10.X.0.1 and all of 127.0.0.0/8 dropped.
 */
export function dnatRestoreInput(portBase: number, apiserverPorts: readonly number[]): string {
  const chain = dnatChain(portBase);
  const dst = `${podApiserverAddress(portBase)}/32`;
  const ports = [...new Set(apiserverPorts)].sort((a, b) => a - b);
  if (ports.length === 0) throw new Error('no kube-apiserver port to DNAT');
  const toPort = (p: number) => ['-d', dst, '-p', 'tcp', '-m', 'tcp', '--dport', String(p)];
  return [
    '*nat',
    `:${chain} - [0:0]`,
    ...ports.map((p) => ['-A', chain, ...toPort(p), '-j', 'DNAT', '--to-destination', '127.0.0.1'].join(' ')),
    'COMMIT',
    '*raw',
    `:${chain} - [0:0]`,
    ...ports.map((p) => ['-A', chain, ...toPort(p), '-j', 'RETURN'].join(' ')),
    ['-A', chain, '-d', dst, '-j', 'DROP'].join(' '),
    ['-A', chain, '-d', '127.0.0.0/8', '-j', 'DROP'].join(' '),
    'COMMIT',
    '',
  ].join('\n');
}

/** The host veths of these spaces all start with this (see hostVeth in ./node-layout.ts). */
export const hostVethPrefix = (portBase: number): string => `ksv${portBase}h`;

/** Writes both chains and their jumps (the raw one first in PREROUTING: no earlier ACCEPT skips it). */
export function ensureApiserverDnat(portBase: number, apiserverPorts: readonly number[]): void {
  const r = spawnSync('iptables-restore', ['-w', '--noflush'], { input: dnatRestoreInput(portBase, apiserverPorts), encoding: 'utf8' });
  if (r.status !== 0) throw new UserError(`the DNAT to the kube-apiservers failed: iptables-restore: ${(r.stderr ?? r.error?.message ?? '').trim().split('\n').pop()}`);
  const { nat, raw } = dnatJumps(portBase);
  if (run('iptables', ['-t', 'raw', '-C', ...raw]).status !== 0) must('iptables', ['-t', 'raw', '-I', ...raw], 'the jump to the loopback guard');
  if (run('iptables', ['-t', 'nat', '-C', ...nat]).status !== 0) must('iptables', ['-t', 'nat', '-A', ...nat], 'the jump to the DNAT chain');
}

const linkExists = (name: string, netns?: string) =>
  run('ip', [...(netns ? ['-n', netns] : []), 'link', 'show', name]).status === 0;

/** A route on the host to `subnet` that is not ours: another network would be shadowed. */
export function foreignRoute(routes: string, subnet: string, hostVeth: string): string | undefined {
  const line = routes.split('\n').find((l) => l.startsWith(`${subnet} `) || l.startsWith(`${subnet.replace(/\/24$/, '')} `));
  return line && !line.includes(` dev ${hostVeth}`) ? line.trim() : undefined;
}

/** Refuses (one line) a pod subnet the machine already routes elsewhere: checked before anything is made. */
export function checkNodeRoutes(nodes: readonly NodeLayout[]): void {
  const routes = run('ip', ['-4', 'route', 'show']).stdout;
  for (const n of nodes) {
    const clash = foreignRoute(routes, n.podSubnet, n.hostVeth);
    if (clash) throw new UserError(`the machine already routes ${n.podSubnet} (${clash}): the real node ${n.name} needs that subnet; choose another --port-base`);
  }
}

export function ensureNodeNetwork(n: NodeLayout): void {
  if (!existsSync(netnsPath(n.netns))) must('ip', ['netns', 'add', n.netns], `the network namespace of ${n.name}`);
  if (!linkExists(n.hostVeth)) {
    must('ip', ['link', 'add', n.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n.netns], `the link of ${n.name}`);
  }
  const hasAddr = (out: string, addr: string) => out.includes(` ${addr}/`);
  if (!hasAddr(run('ip', ['-4', '-o', 'addr', 'show', 'dev', n.hostVeth]).stdout, n.hostAddress)) {
    must('ip', ['addr', 'add', `${n.hostAddress}/30`, 'dev', n.hostVeth], `the host address of ${n.name}`);
  }
  must('ip', ['link', 'set', n.hostVeth, 'up'], `the link of ${n.name}`);
  // Packets DNATed to 127.0.0.1 arrive on this link: not martians here.
  writeFileSync(`/proc/sys/net/ipv4/conf/${n.hostVeth}/route_localnet`, '1');
  if (!hasAddr(run('ip', ['-n', n.netns, '-4', '-o', 'addr', 'show', 'dev', 'eth0']).stdout, n.nodeIp)) {
    must('ip', ['-n', n.netns, 'addr', 'add', `${n.nodeIp}/30`, 'dev', 'eth0'], `the address of ${n.name}`);
  }
  must('ip', ['-n', n.netns, 'link', 'set', 'lo', 'up'], `the loopback of ${n.name}`);
  must('ip', ['-n', n.netns, 'link', 'set', 'eth0', 'up'], `the link of ${n.name}`);
  must('ip', ['-n', n.netns, 'route', 'replace', 'default', 'via', n.hostAddress], `the default route of ${n.name}`);
  must('ip', ['route', 'replace', n.podSubnet, 'via', n.nodeIp, 'dev', n.hostVeth], `the route to the pods of ${n.name}`);
  // Forwarding in the node's namespace only (the host's own setting is not touched): bridge ↔ link.
  must('nsenter', inNetns(n.netns, ['sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']), `forwarding in ${n.name}`);
  // Bridged pod-to-pod traffic through a Service needs kube-proxy's rules: br_netfilter, per namespace.
  run('nsenter', inNetns(n.netns, ['sh', '-c', 'echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables']));
}
