// The configuration files of one real node, rendered as pure functions of its layout (unit-tested):
// containerd's (own root, state and socket; CRI with runc, the self-built pause image as sandbox
// image, `restrict_oom_score_adj` because this machine's root lacks CAP_SYS_RESOURCE), the CNI
// network (bridge + host-local on the node's own subnet, IPAM reservations in the node's folder),
// kubelet's KubeletConfiguration and kube-proxy's KubeProxyConfiguration.
import YAML from 'yaml';
import type { NodeLayout } from './node-layout.js';

export const CNI_BIN_DIR = '/usr/lib/cni';

/** TOML strings: JSON's escaping is a subset TOML accepts for basic strings. */
const q = (s: string) => JSON.stringify(s);

export function containerdConfig(n: NodeLayout, sandboxImage: string): string {
  return `# containerd of the real node ${n.name} (ksview spaces up --real-nodes)
version = 2
root = ${q(n.containerdRoot)}
state = ${q(n.containerdState)}
# Snapshotters this machine cannot use only fill the log.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = ${q(n.containerdSocket)}

[ttrpc]
  address = ${q(`${n.containerdSocket}.ttrpc`)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(`${n.containerdRoot}/opt`)}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(sandboxImage)}
  # Without CAP_SYS_RESOURCE runc cannot lower a sandbox's oom_score_adj below its own.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # kubelet's cgroupDriver is cgroupfs (no systemd on these machines).
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(CNI_BIN_DIR)}
    conf_dir = ${q(n.cniConfDir)}
    max_conf_num = 1
`;
}

/** The CNI network list: a bridge in the node's namespace, its gateway the pods' default route. */
export function cniConfList(n: NodeLayout): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: n.cniNetwork,
    plugins: [
      {
        type: 'bridge',
        bridge: n.bridge,
        isGateway: true,
        // No masquerade: pods are reached at their own IPs from the host (the aggregator, tests).
        ipMasq: false,
        // A pod that reaches itself through a Service.
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: n.podSubnet, gateway: n.bridgeGateway }]],
          routes: [{ dst: '0.0.0.0/0' }],
          // Not /var/lib/cni/networks: the reservations are the node's, removed with it.
          dataDir: n.ipamDir,
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  }, null, 2);
}

export interface KubeletConfigInput {
  clientCaFile: string;
}

export function kubeletConfig(n: NodeLayout, input: KubeletConfigInput): string {
  return YAML.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // containerd 1.6 cannot report its cgroup driver, and there is no systemd here.
    cgroupDriver: 'cgroupfs',
    // Every pod cgroup under one root of this node's own: `down` finds and removes them all.
    cgroupRoot: n.cgroupRoot,
    containerRuntimeEndpoint: `unix://${n.containerdSocket}`,
    // Its API only on the node's own address (in its namespace), for kube-apiserver's logs/exec.
    address: n.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: input.clientCaFile },
    },
    authorization: { mode: 'Webhook' },
    podLogsDir: n.podLogsDir,
    failSwapOn: false,
    // The images are imported, never pulled: image GC must not delete them on a full disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // A small shared machine: evict only when really out of room.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    // No cluster DNS in the local spaces: clients use the kube-apiservers' IPs.
    resolvConf: '/etc/resolv.conf',
    serializeImagePulls: false,
    maxPods: 110,
  });
}

export function kubeProxyConfig(n: NodeLayout, mode: 'iptables' | 'nftables'): string {
  return YAML.stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: n.kubeProxyKubeconfig },
    hostnameOverride: n.name,
    mode,
    clusterCIDR: n.podSubnet,
    // NodePorts on the node's own address only (in its namespace: eth0), not on every address.
    nodePortAddresses: ['primary'],
    // Inside the node's namespace: these ports are the node's own.
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    // 0 leaves the kernel's conntrack settings alone: they are the host's (not the node
    // namespace's) and root here lacks CAP_SYS_RESOURCE to change them.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  });
}

export function kubeletArgs(n: NodeLayout): string[] {
  return [
    `--config=${n.kubeletConfig}`,
    `--kubeconfig=${n.kubeletKubeconfig}`,
    `--root-dir=${n.kubeletRoot}`,
    `--cert-dir=${n.kubeletCertDir}`,
    `--hostname-override=${n.name}`,
    `--node-ip=${n.nodeIp}`,
    `--node-labels=kubestellar.io/space=${n.space}`,
  ];
}

export function kubeProxyArgs(n: NodeLayout): string[] {
  return [`--config=${n.kubeProxyConfig}`];
}

export function containerdArgs(n: NodeLayout): string[] {
  return ['--config', n.containerdConfig];
}
