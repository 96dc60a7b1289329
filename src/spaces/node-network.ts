// The network of the real nodes (addresses: ./node-layout.ts). Per node: a network namespace, a
// veth link to the host (the host end with route_localnet, so the DNAT below may send to
// loopback), a route on the host to the node's pod subnet, forwarding on inside the namespace
// (the bridge CNI plugin makes the pods' bridge there). For all nodes of these spaces: one nat
// chain `KSVIEW-<port base>`, jumped to from PREROUTING for packets entering through the nodes'
// links, DNATing 10.X.0.1 to 127.0.0.1 (same port): pods and kubelets reach the kube-apiservers,
// which keep listening on loopback only (nothing is exposed on the machine's own network, and
// every host-side kubeconfig stays https://127.0.0.1:<port>).
// Setup is idempotent (a second `up` finds everything in place); teardown is planned from what
// the machine holds (./node-cleanup.ts).
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

/** The iptables rules of the DNAT to the kube-apiservers (nat table), as `iptables` argument lists. */
export function dnatRules(portBase: number, hostVethPrefix: string): { jump: string[]; rule: string[] } {
  const chain = dnatChain(portBase);
  return {
    jump: ['PREROUTING', '-i', `${hostVethPrefix}+`, '-m', 'comment', '--comment', `ksview spaces ${portBase}: pods to kube-apiservers`, '-j', chain],
    rule: [chain, '-d', `${podApiserverAddress(portBase)}/32`, '-p', 'tcp', '-j', 'DNAT', '--to-destination', '127.0.0.1'],
  };
}

/** The host veths of these spaces all start with this (see hostVeth in ./node-layout.ts). */
export const hostVethPrefix = (portBase: number): string => `ksv${portBase}h`;

export function ensureApiserverDnat(portBase: number): void {
  const chain = dnatChain(portBase);
  const { jump, rule } = dnatRules(portBase, hostVethPrefix(portBase));
  if (run('iptables', ['-t', 'nat', '-S', chain]).status !== 0) must('iptables', ['-t', 'nat', '-N', chain], 'creating the DNAT chain');
  if (run('iptables', ['-t', 'nat', '-C', ...rule]).status !== 0) must('iptables', ['-t', 'nat', '-A', ...rule], 'the DNAT to the kube-apiservers');
  if (run('iptables', ['-t', 'nat', '-C', ...jump]).status !== 0) must('iptables', ['-t', 'nat', '-A', ...jump], 'the jump to the DNAT chain');
}

const linkExists = (name: string, netns?: string) =>
  run('ip', [...(netns ? ['-n', netns] : []), 'link', 'show', name]).status === 0;

/** A route on the host to `subnet` that is not ours: another network would be shadowed. */
export function foreignRoute(routes: string, subnet: string, hostVeth: string): string | undefined {
  const line = routes.split('\n').find((l) => l.startsWith(`${subnet} `) || l.startsWith(`${subnet.replace(/\/24$/, '')} `));
  return line && !line.includes(` dev ${hostVeth}`) ? line.trim() : undefined;
}

export function ensureNodeNetwork(n: NodeLayout): void {
  const clash = foreignRoute(run('ip', ['-4', 'route', 'show']).stdout, n.podSubnet, n.hostVeth);
  if (clash) throw new UserError(`the machine already routes ${n.podSubnet} (${clash}): the real node ${n.name} needs that subnet; choose another --port-base`);
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
