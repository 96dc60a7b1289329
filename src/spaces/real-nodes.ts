// The real nodes of `ksview spaces up --real-nodes`: one in the hosting space host1, one in wec1.
// Each is a network namespace (./node-network.ts) running its own containerd, a kubelet and a
// kube-proxy (kubelet and kube-proxy built from the same k8s.io/kubernetes as kube-apiserver),
// registered with its space's kube-apiserver as `system:node:<node>` (group system:nodes) with a
// client certificate of the space's PKI; those two spaces authorize with Node,RBAC and admit with
// NodeRestriction, as kubeadm's clusters do (./components.ts), so a kubelet gets only what its
// own pods need. kube-proxy is `system:kube-proxy`, bound by Kubernetes' own bootstrap policy to
// `system:node-proxier`. Both images (./node-images.ts) are imported into each containerd.
// `down` (./node-cleanup.ts) removes everything the nodes made and restores kubelet's sysctls.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../util/progress.js';
import { UserError } from '../util/user-error.js';
import { waitFor } from '../kube/wait.js';
import type { NodeBinaries } from './binaries.js';
import { renderKubeconfig } from './kubeconfig.js';
import type { SpacesLayout } from './layout.js';
import { cgroupHierarchies } from './node-cleanup.js';
import {
  cniConfList, containerdArgs, containerdConfig, kubeletArgs, kubeletConfig, kubeProxyArgs, kubeProxyConfig,
} from './node-config.js';
import { ensureNodeImages, importImage, PAUSE_IMAGE } from './node-images.js';
import { nodeLayouts, portBaseOf, type NodeLayout } from './node-layout.js';
import { checkNodeRoutes, ensureApiserverDnat, ensureNodeNetwork, inNetns, run } from './node-network.js';
import { podServerUrl } from './pod-access.js';
import { logTail, type ProcessRecord } from './processes.js';
import { ensureClientCert, spacePkiFiles } from './space-pki.js';

export const CONTAINERD = '/usr/bin/containerd';
export const NSENTER = '/usr/bin/nsenter';

/** Starts (or reuses) a recorded process, `wrapper` exec'ing it elsewhere (here: in the node's namespace); stops one. */
export interface Starter {
  start(name: string, binary: string, args: string[], wrapper: string[]): Promise<ProcessRecord>;
  stop(name: string): Promise<void>;
}

/** kube-proxy's mode: iptables when iptables works in the node's namespace, else nftables. */
function proxyMode(n: NodeLayout): 'iptables' | 'nftables' {
  return run(NSENTER, inNetns(n.netns, ['iptables', '-t', 'nat', '-S'])).status === 0 ? 'iptables' : 'nftables';
}

/**
 * How many host processes' CPU weight a node's cgroup has. A real node's pods share its CPUs with
 * each other and the node's reserved daemons; here the node's cgroup competes with every host
 * process (the spaces' control planes, the tests), each weighing as one: with the default weight,
 * at a load of 14 the node's pods together got about 0.13 of a CPU, and a server pod taking the
 * lead answered nothing for 20 s (its readiness and its Lease lost, requests through the
 * aggregator timing out). Measured in the in-cluster test's rolling update.
 */
const NODE_CPU_WEIGHT_OF_PROCESSES = 16;

/** The node cgroup's CPU weight: v1's cpu.shares (default 1024) or v2's cpu.weight (default 100). */
function cpuWeightFiles(dir: string): Array<[string, string]> {
  const weights: Array<[string, number]> = [['cpu.shares', 1024 * NODE_CPU_WEIGHT_OF_PROCESSES], ['cpu.weight', 100 * NODE_CPU_WEIGHT_OF_PROCESSES]];
  return weights.map(([f, v]): [string, string] => [path.join(dir, f), String(v)]).filter(([file]) => existsSync(file));
}

/** kubelet's cgroupRoot must exist, in every hierarchy (cpuset's needs its cpus and mems set), with the node's CPU weight. */
function ensureCgroupRoot(n: NodeLayout): void {
  for (const h of cgroupHierarchies()) {
    const dir = path.join(h, n.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      const file = path.join(dir, f);
      if (existsSync(file) && readFileSync(file, 'utf8').trim() === '') writeFileSync(file, readFileSync(path.join(h, f), 'utf8').trim());
    }
    for (const [file, value] of cpuWeightFiles(dir)) writeFileSync(file, value);
  }
}

/**
 * Writes a file only when its content changes: kube-proxy exits when its configuration file is
 * rewritten (it watches it), so a second `up` must leave the running one's file alone.
 */
function writeIfChanged(file: string, content: string, mode = 0o644): boolean {
  if (existsSync(file) && readFileSync(file, 'utf8') === content) return false;
  writeFileSync(file, content, { mode });
  return true;
}

/** Writes the node's files; true when kube-proxy's configuration changed (a running one must be restarted). */
async function writeNodeFiles(layout: SpacesLayout, n: NodeLayout): Promise<boolean> {
  const space = layout.spaces.find((s) => s.name === n.space)!;
  const pki = spacePkiFiles(space.dir);
  for (const d of [n.dir, path.dirname(n.containerdConfig), path.dirname(n.containerdSocket), n.cniConfDir, n.ipamDir, n.kubeletRoot, n.kubeletCertDir, n.podLogsDir]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
  }
  writeIfChanged(n.containerdConfig, containerdConfig(n, PAUSE_IMAGE));
  writeIfChanged(path.join(n.cniConfDir, '10-ksview.conflist'), cniConfList(n));
  writeIfChanged(n.kubeletConfig, kubeletConfig(n, { clientCaFile: pki.caCert }));
  const proxyChanged = writeIfChanged(n.kubeProxyConfig, kubeProxyConfig(n, proxyMode(n)));
  const ca = readFileSync(pki.caCert, 'utf8');
  const server = podServerUrl(layout, n.space);
  // The node's identity, as the Node authorizer and NodeRestriction know nodes.
  const kubelet = await ensureClientCert(space.dir, `kubelet-${n.name}`, `system:node:${n.name}`, ['system:nodes']);
  writeIfChanged(n.kubeletKubeconfig, renderKubeconfig([{ name: n.space, user: `system:node:${n.name}`, server, caPem: ca, certPem: kubelet.certPem, keyPem: kubelet.keyPem }]), 0o600);
  // Bound to system:node-proxier by Kubernetes' bootstrap RBAC policy.
  const proxy = await ensureClientCert(space.dir, 'kube-proxy', 'system:kube-proxy', []);
  writeIfChanged(n.kubeProxyKubeconfig, renderKubeconfig([{ name: n.space, user: 'system:kube-proxy', server, caPem: ca, certPem: proxy.certPem, keyPem: proxy.keyPem }]), 0o600);
  return proxyChanged;
}

/** Waits until containerd answers on its socket. */
async function waitContainerd(n: NodeLayout, timeoutMs: number): Promise<void> {
  const r = await waitFor(async () => {
    const v = run('ctr', ['--address', n.containerdSocket, 'version']);
    return { ok: v.status === 0, detail: v.stderr.trim().split('\n').pop() ?? '' };
  }, timeoutMs, 100);
  if (!r.ok) throw new UserError(`containerd of ${n.name} does not answer on ${n.containerdSocket} after ${timeoutMs / 1000}s: ${r.detail}`);
}

/**
 * Starts every real node of `layout` (network, cgroup root, containerd, images, kubelet,
 * kube-proxy) and waits until each Node is Ready. Idempotent: what runs is reused.
 */
export async function ensureRealNodes(layout: SpacesLayout, bins: NodeBinaries, cacheDir: string,
  starter: Starter, progress: Progress, timeoutMs: number): Promise<NodeLayout[]> {
  const nodes = nodeLayouts(layout);
  const archives = ensureNodeImages(cacheDir, progress);
  // A subnet routed elsewhere is refused before anything (a chain, a namespace) is made.
  checkNodeRoutes(nodes);
  // Every space's kube-apiserver is reachable from pods at 10.X.0.1 (./pod-access.ts), nothing else.
  ensureApiserverDnat(portBaseOf(layout), layout.spaces.map((s) => s.apiserverPort));
  await Promise.all(nodes.map(async (n) => {
    ensureNodeNetwork(n);
    ensureCgroupRoot(n);
    // kube-proxy exits by itself when its file changes: stopped first, so it is started again below.
    if (await writeNodeFiles(layout, n)) await starter.stop(`${n.space}/kube-proxy`);
    const wrap = [NSENTER, ...inNetns(n.netns, [])];
    const start = starter.start;
    await start(`${n.space}/containerd`, CONTAINERD, containerdArgs(n), wrap);
    await waitContainerd(n, timeoutMs);
    for (const a of archives) importImage(n.containerdSocket, a);
    progress.step(`${n.name}: containerd ready, images imported (${n.podSubnet}, node IP ${n.nodeIp})`);
    await start(`${n.space}/kubelet`, bins.kubelet, kubeletArgs(n), wrap);
    await start(`${n.space}/kube-proxy`, bins.kubeProxy, kubeProxyArgs(n), wrap);
  }));
  const { KubeConfig, CoreV1Api } = await import('@kubernetes/client-node');
  await Promise.all(nodes.map(async (n) => {
    const space = layout.spaces.find((s) => s.name === n.space)!;
    const kc = new KubeConfig();
    kc.loadFromFile(path.join(space.dir, 'kubeconfig'));
    const core = kc.makeApiClient(CoreV1Api);
    const started = Date.now();
    const r = await waitFor(async () => {
      try {
        const node = await core.readNode({ name: n.name });
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        return { ok: ready?.status === 'True', detail: ready ? `${ready.reason}: ${ready.message}` : 'no Ready condition yet' };
      } catch (err) {
        return { ok: false, detail: `not registered yet (${(err as { code?: number }).code ?? (err as Error).message})` };
      }
    }, timeoutMs, 250);
    if (!r.ok) {
      // The kubelet's last error says why more often than the node's absence does.
      const kubeletLog = path.join(layout.dir, 'logs', `${n.space}-kubelet.log`);
      const lastError = logTail(kubeletLog, 400).split('\n').reverse().find((l) => /^[EF]\d{4} /.test(l));
      throw new UserError(`node ${n.name} is not Ready after ${timeoutMs / 1000}s (${r.detail.slice(0, 200)})${lastError ? `; kubelet: ${lastError.slice(0, 400)}` : ''}; logs in ${path.join(layout.dir, 'logs')}`);
    }
    progress.step(`${n.name} Ready in ${((Date.now() - started) / 1000).toFixed(1)}s (kube-proxy: ${proxyMode(n)} mode)`);
  }));
  return nodes;
}

/** Ready or not, per node, as its space's kube-apiserver says (never throws). */
export async function nodeReady(layout: SpacesLayout, n: NodeLayout): Promise<{ ok: boolean; detail: string }> {
  try {
    const { KubeConfig, CoreV1Api } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromFile(path.join(layout.spaces.find((s) => s.name === n.space)!.dir, 'kubeconfig'));
    const node = await kc.makeApiClient(CoreV1Api).readNode({ name: n.name });
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    return { ok: ready?.status === 'True', detail: `node ${n.name} ${ready?.status === 'True' ? 'Ready' : `not Ready (${ready?.reason ?? 'no condition'})`}` };
  } catch (err) {
    return { ok: false, detail: `node ${n.name}: ${(err as Error).message.slice(0, 120)}` };
  }
}
