// Where the real nodes of `ksview spaces up --real-nodes` live: names, addresses and folders, as
// pure functions of the spaces' layout, so `up`, `down` and `status` agree without asking the
// machine. Several spaces folders may run real nodes on one machine at once (a user's, the tests'):
// every name and address here is derived from the port base, so theirs never meet.
//
// Each node is a network namespace of its own, as a kind node is a container: its containerd,
// kubelet and kube-proxy run inside it (entered with `nsenter --net`, so they share the host's
// mount namespace and kubelet's volume mounts are the ones containerd sees). kube-proxy rewrites
// its chains whole, so two kube-proxies in one network namespace would erase each other's rules.
//
// Addresses, all in 10.X.0.0/16 with X from the port base (160…239: clear of the services'
// 10.96/16 and kwok's 10.244/16):
//   10.X.0.1         the spaces' kube-apiservers as pods and nodes see them: traffic entering from
//                    a node's link to this address is DNATed to 127.0.0.1 (same port), so the
//                    kube-apiservers keep listening on loopback only (./node-network.ts).
//   10.X.(100+i).0/30  the link host ↔ node i: host end .1 (veth on the host), node end .2 (eth0
//                    in the node's namespace, the node's InternalIP).
//   10.X.i.0/24      node i's pods: bridge `ksv-br` in the node's namespace, gateway .1, host-local IPAM.
import path from 'node:path';
import type { SpacesLayout } from './layout.js';

export interface NodeLayout {
  /** The Node object's name: `<space>-node`. */
  name: string;
  space: string;
  /** 1, 2, …: host1 first, then wec1. */
  index: number;
  /** The network namespace (`ip netns`) the node's processes run in. */
  netns: string;
  /** The host end of the node's link. */
  hostVeth: string;
  /** The address of the host end of the link (the node's default gateway). */
  hostAddress: string;
  /** The node's InternalIP: the node end of its link, eth0 in its namespace. */
  nodeIp: string;
  /** Its pods' subnet (CIDR) and the bridge's address in it. */
  podSubnet: string;
  bridgeGateway: string;
  bridge: string;
  /** The CNI network's name (host-local's reservations, containerd's CNI cache). */
  cniNetwork: string;
  /** Every file the node writes, under its space's folder. */
  dir: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  containerdConfig: string;
  cniConfDir: string;
  ipamDir: string;
  kubeletRoot: string;
  kubeletCertDir: string;
  kubeletConfig: string;
  kubeletKubeconfig: string;
  podLogsDir: string;
  kubeProxyConfig: string;
  kubeProxyKubeconfig: string;
  /** kubelet's cgroupRoot (cgroupfs): every pod's cgroup is under it, in every hierarchy. */
  cgroupRoot: string;
}

/** The second octet of the nodes' 10.X.0.0/16, from the port base (160…239). */
export function nodeNetOctet(portBase: number): number {
  return 160 + (Math.floor(portBase / 100) % 80);
}

/** The address pods and nodes dial the spaces' kube-apiservers at (DNATed to 127.0.0.1). */
export function podApiserverAddress(portBase: number): string {
  return `10.${nodeNetOctet(portBase)}.0.1`;
}

/** Suffix naming these spaces' host-side things (veths, the iptables chain): the port base. */
const tag = (portBase: number) => `ksv${portBase}`;

/** The iptables chain (nat table) of these spaces' DNAT to the kube-apiservers. */
export const dnatChain = (portBase: number): string => `KSVIEW-${portBase}`;

/** The port base of a layout (etcd's client port is the first port). */
export const portBaseOf = (layout: SpacesLayout): number => layout.etcdClientPort;

/** The real nodes of these spaces: host1's first, then wec1's (none without `--real-nodes`). */
export function nodeLayouts(layout: SpacesLayout): NodeLayout[] {
  const portBase = portBaseOf(layout);
  const x = nodeNetOctet(portBase);
  const spaces = layout.spaces.filter((s) => s.realNode)
    .sort((a, b) => (a.role === 'host' ? 0 : 1) - (b.role === 'host' ? 0 : 1));
  return spaces.map((s, i): NodeLayout => {
    const index = i + 1;
    const dir = path.join(s.dir, 'node');
    const name = `${s.name}-node`;
    return {
      name,
      space: s.name,
      index,
      netns: `${tag(portBase)}-${s.name}`,
      // 15 characters at most (IFNAMSIZ): ksv16400h1 … ksv99999h9.
      hostVeth: `${tag(portBase)}h${index}`,
      hostAddress: `10.${x}.${100 + index}.1`,
      nodeIp: `10.${x}.${100 + index}.2`,
      podSubnet: `10.${x}.${index}.0/24`,
      bridgeGateway: `10.${x}.${index}.1`,
      bridge: 'ksv-br',
      cniNetwork: `${tag(portBase)}-${s.name}`,
      dir,
      containerdRoot: path.join(dir, 'containerd', 'root'),
      containerdState: path.join(dir, 'containerd', 'state'),
      // Not under the spaces' folder: a unix socket's path has at most 104 characters (and
      // containerd adds `.ttrpc`).
      containerdSocket: path.join(runDirOf(portBase, s.name), 'containerd.sock'),
      containerdConfig: path.join(dir, 'containerd', 'config.toml'),
      cniConfDir: path.join(dir, 'cni', 'net.d'),
      ipamDir: path.join(dir, 'cni', 'ipam'),
      kubeletRoot: path.join(dir, 'kubelet'),
      kubeletCertDir: path.join(dir, 'kubelet-pki'),
      kubeletConfig: path.join(dir, 'kubelet.yaml'),
      kubeletKubeconfig: path.join(dir, 'kubelet.kubeconfig'),
      podLogsDir: path.join(dir, 'pod-logs'),
      kubeProxyConfig: path.join(dir, 'kube-proxy.yaml'),
      kubeProxyKubeconfig: path.join(dir, 'kube-proxy.kubeconfig'),
      cgroupRoot: `/${tag(portBase)}-${s.name}`,
    };
  });
}

/** The node's folder for sockets, short enough for unix socket paths; removed by `down`. */
export const runDirOf = (portBase: number, space: string): string => `/run/ksview/${portBase}-${space}`;

/** The process names of one node, in start order. */
export const nodeProcessNames = (n: NodeLayout): string[] => [`${n.space}/containerd`, `${n.space}/kubelet`, `${n.space}/kube-proxy`];
