// kubestellar-view installed into the real-node spaces as a platform team installs it into its own
// clusters (README, "Install into your cluster"): the image imported into the nodes' containerd
// (no registry here), then the chart part by part, each into the cluster it belongs to —
//   wds        → wds1   the server's RBAC there, bound to the identity of its WDS kubeconfig
//   its        → its1   placement's rights there, bound to the identity of its ITS kubeconfig
//   server     → host1  namespace kubestellar-view (Pod Security `restricted` enforced)
//   agent.pull → wec1   namespace ksview-agent (`restricted` enforced)
// with the kubeconfig Secrets the server and the agent are given: identities of the spaces' PKI
// (never an admin's) and the address pods dial (./pod-access.ts). Once the server pods have
// installed the ITS's CRDs, the spaces do what their hub admin does (./agents.ts: the accepted
// ManagedClusters, mailboxes, the agents' ITS rights from the same chart files) and start the push
// agent of the other WECs; so the `its` part grants placement only, and the agent part leaves the
// WECs' executors to the spaces (./wec-executors.ts, the same chart file). Resolves when wds1
// says the APIService is Available and the agent is ready; `helm upgrade --install` makes a
// second run an upgrade.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeUpstream, serverSideApply, upstreamFromKubeconfig, upstreamJson, type Upstream } from '../kube/upstream.js';
import { waitFor } from '../kube/wait.js';
import type { Progress } from '../util/progress.js';
import { repoRoot } from '../util/repo-root.js';
import { UserError } from '../util/user-error.js';
import { agentKubeconfigPath, pullAgentIdentity } from './agent-identities.js';
import { ensureAgents, ensureInventory } from './agents.js';
import { ensureHelm } from './helm.js';
import type { SpacesLayout } from './layout.js';
import { nodeLayouts } from './node-layout.js';
import { importImage } from './node-images.js';
import { podKubeconfigOf, renderPodKubeconfig, type PodIdentity } from './pod-access.js';
import { apiServiceAvailable, APISERVICE_NAME } from './view-server.js';

export const SERVER_NAMESPACE = 'kubestellar-view';
export const AGENT_NAMESPACE = 'ksview-agent';
/** The releases, by part: name, space, namespace. */
export const RELEASES = {
  wds: { name: 'kubestellar-view-wds', space: 'wds1', namespace: SERVER_NAMESPACE },
  its: { name: 'kubestellar-view-its', space: 'its1', namespace: SERVER_NAMESPACE },
  server: { name: 'kubestellar-view', space: 'host1', namespace: SERVER_NAMESPACE },
  agent: { name: 'kubestellar-view-agent', space: 'wec1', namespace: AGENT_NAMESPACE },
} as const;
/** The server's Deployment in host1 (the chart's full name of release `kubestellar-view`). */
export const SERVER_DEPLOYMENT = 'kubestellar-view';

/** The server's identities: a user of wds1's CA and one of its1's, bound by the wds and its parts. */
const SERVER_WDS_IDENTITY: PodIdentity = { user: 'kubestellar-view:server:wds1', groups: [], file: 'kubestellar-view-server' };
const SERVER_ITS_IDENTITY: PodIdentity = { user: 'kubestellar-view:placement:wds1', groups: [], file: 'kubestellar-view-placement' };
const userSubject = (id: PodIdentity) => [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: id.user }];

export type TlsChoice = { type: 'helm' } | { type: 'existingSecret'; secret: string };

export interface InClusterOptions {
  layout: SpacesLayout;
  cacheDir: string;
  progress: Progress;
  /** The image `make image` built (./image.ts): its fully qualified name and OCI archive. */
  image: { name: string; archive: string };
  tls?: TlsChoice;
  /** More values of the server release (e.g. server.podAnnotations to roll the pods). */
  serverValues?: Record<string, unknown>;
  timeoutMs?: number;
}

const HELM_TIMEOUT_MS = 180_000;

/** `helm upgrade --install` of one part; its values as a file (JSON is YAML). */
export async function helmPart(o: { layout: SpacesLayout; cacheDir: string; progress: Progress },
  release: { name: string; space: string; namespace: string }, values: Record<string, unknown>): Promise<void> {
  const helm = await ensureHelm(o.cacheDir, o.progress);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-helm-'));
  const valuesFile = path.join(dir, 'values.json');
  writeFileSync(valuesFile, JSON.stringify(values), { mode: 0o600 });
  const args = ['upgrade', '--install', release.name, path.join(repoRoot(), 'charts', 'kubestellar-view'),
    '--kubeconfig', o.layout.kubeconfigPath, '--kube-context', release.space, '--namespace', release.namespace,
    '--values', valuesFile, '--timeout', `${HELM_TIMEOUT_MS / 1000}s`];
  try {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve, reject) => {
      const child = spawn(helm, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
      child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c ?? 1, output }));
    });
    if (code !== 0) throw new UserError(`helm install of ${release.name} into ${release.space}: ${output.trim().split('\n').slice(-3).join(' | ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  o.progress.step(`helm: ${release.name} installed into ${release.space}/${release.namespace}`);
}

/** A namespace whose pods Pod Security `restricted` judges (enforce, audit, warn). */
async function restrictedNamespace(up: Upstream, name: string): Promise<void> {
  const labels = Object.fromEntries(['enforce', 'audit', 'warn'].flatMap((m) => [
    [`pod-security.kubernetes.io/${m}`, 'restricted'], [`pod-security.kubernetes.io/${m}-version`, 'latest']]));
  await serverSideApply(up, `/api/v1/namespaces/${name}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }, 'ksview-spaces');
}

async function kubeconfigSecret(up: Upstream, namespace: string, name: string, kubeconfig: string): Promise<void> {
  await serverSideApply(up, `/api/v1/namespaces/${namespace}/secrets/${name}`, {
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', stringData: { kubeconfig },
  }, 'ksview-spaces');
}

async function withSpace<T>(layout: SpacesLayout, space: string, fn: (up: Upstream) => Promise<T>): Promise<T> {
  const s = layout.spaces.find((x) => x.name === space);
  if (!s) throw new UserError(`no space ${space} in ${layout.dir}: start the spaces with 'ksview spaces up --real-nodes'`);
  const up = await upstreamFromKubeconfig(path.join(s.dir, 'kubeconfig'));
  try { return await fn(up); } finally { await closeUpstream(up); }
}

/** The image tag of a fully qualified name (docker.io/kubestellar/kubestellar-view:0.1.0 → 0.1.0). */
const tagOf = (name: string): { repository: string; tag: string } => {
  const i = name.lastIndexOf(':');
  return { repository: name.slice(0, i), tag: name.slice(i + 1) };
};

/** The server release's values for these spaces. */
export function serverValues(o: InClusterOptions): Record<string, unknown> {
  const tls = o.tls ?? { type: 'helm' };
  return {
    image: { ...tagOf(o.image.name), pullPolicy: 'Never' },
    wds: { kubeconfigSecret: 'ksview-wds-kubeconfig' },
    its: { kubeconfigSecret: 'ksview-its-kubeconfig' },
    tls: tls.type === 'existingSecret' ? { type: 'existingSecret', existingSecret: tls.secret } : { type: 'helm' },
    ...o.serverValues,
  };
}

export async function installInCluster(o: InClusterOptions): Promise<void> {
  const { layout, progress } = o;
  if (!layout.realNodes) throw new UserError(`the spaces in ${layout.dir} run no real nodes: 'ksview spaces up --real-nodes'`);
  for (const n of nodeLayouts(layout)) {
    importImage(n.containerdSocket, o.image.archive);
    progress.step(`${n.name}: ${o.image.name} imported`);
  }
  await withSpace(layout, RELEASES.wds.space, (up) => restrictedNamespace(up, SERVER_NAMESPACE));
  await withSpace(layout, RELEASES.its.space, (up) => restrictedNamespace(up, SERVER_NAMESPACE));
  await helmPart(o, RELEASES.wds, { server: { enabled: false }, wds: { enabled: true, subjects: userSubject(SERVER_WDS_IDENTITY), serviceAccount: { create: false } } });
  await helmPart(o, RELEASES.its, { server: { enabled: false }, its: { enabled: true, subjects: userSubject(SERVER_ITS_IDENTITY), serviceAccount: { create: false } } });

  const wdsKubeconfig = await renderPodKubeconfig(layout, 'wds1', SERVER_WDS_IDENTITY);
  const itsKubeconfig = await renderPodKubeconfig(layout, 'its1', SERVER_ITS_IDENTITY);
  await withSpace(layout, RELEASES.server.space, async (up) => {
    await restrictedNamespace(up, SERVER_NAMESPACE);
    await kubeconfigSecret(up, SERVER_NAMESPACE, 'ksview-wds-kubeconfig', wdsKubeconfig);
    await kubeconfigSecret(up, SERVER_NAMESPACE, 'ksview-its-kubeconfig', itsKubeconfig);
  });
  await helmPart(o, RELEASES.server, serverValues(o));
  const timeoutMs = o.timeoutMs ?? 180_000;
  await waitApiServiceAvailable(layout, timeoutMs);
  progress.step(`APIService ${APISERVICE_NAME} is Available in wds1, served by the pods in host1`);
  await ensureInventory(layout, progress, timeoutMs);
  await ensureAgents(layout, progress);

  const agentIts = podKubeconfigOf(layout, 'its1', agentKubeconfigPath(layout, pullAgentIdentity('wec1')));
  await withSpace(layout, RELEASES.agent.space, async (up) => {
    await restrictedNamespace(up, AGENT_NAMESPACE);
    await kubeconfigSecret(up, AGENT_NAMESPACE, 'ksview-agent-its-kubeconfig', agentIts);
  });
  await helmPart(o, RELEASES.agent, {
    server: { enabled: false },
    image: { ...tagOf(o.image.name), pullPolicy: 'Never' },
    agent: { pull: { enabled: true, cluster: 'wec1', executors: { create: false } } },
  });

  await waitDeploymentAvailable(layout, RELEASES.agent.space, AGENT_NAMESPACE, 'ksview-agent', timeoutMs);
  progress.step('the pull agent of wec1 is ready, as a pod in wec1');
}

export async function waitApiServiceAvailable(layout: SpacesLayout, timeoutMs: number): Promise<void> {
  const r = await withSpace(layout, 'wds1', (up) => waitFor(() => apiServiceAvailable(up), timeoutMs));
  if (!r.ok) throw new UserError(`APIService ${APISERVICE_NAME} is not Available in wds1: ${r.detail.slice(0, 200)}`);
}

export async function waitDeploymentAvailable(layout: SpacesLayout, space: string, namespace: string, name: string, timeoutMs: number): Promise<void> {
  const r = await withSpace(layout, space, (up) => waitFor(async () => {
    try {
      const d = await upstreamJson<{ spec?: { replicas?: number }; status?: { availableReplicas?: number; updatedReplicas?: number; replicas?: number } }>(
        up, 'GET', `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
      const want = d.spec?.replicas ?? 1;
      const s = d.status ?? {};
      return { ok: s.availableReplicas === want && s.updatedReplicas === want && s.replicas === want, detail: JSON.stringify(s) };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }, timeoutMs, 500));
  if (!r.ok) throw new UserError(`Deployment ${namespace}/${name} in ${space} is not available: ${r.detail.slice(0, 200)}`);
}
