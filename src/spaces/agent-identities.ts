// The ITS identities of the local agents. Each agent reaches its1 with a client certificate of its1's
// CA, never the admin kubeconfig, and holds exactly the rights of the shipped RBAC: a pull agent
// the per-cluster chart file agent/its-rbac.yaml rendered for its cluster (OCM's identity: user
// `system:open-cluster-management:<cluster>:ksview-agent` in the groups
// `system:open-cluster-management:<cluster>` and `…:managed-clusters`, the group the manifest
// binds); the push agent agent/push-rbac.yaml and, per cluster it serves, agent/push-mailbox-rbac.yaml
// (files of charts/kubestellar-view/files/, what the chart's `its` and `agent.push` parts install)
// (their ServiceAccount subject replaced by this certificate's user: the push agent runs beside
// its1 as a process, not as a pod). So every test with agents runs them with what a real ITS grants.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CHART_FILES_DIR, chartFile } from '../util/chart-files.js';
import { renderKubeconfig, type KubeconfigEntry } from './kubeconfig.js';
import type { SpaceLayout, SpacesLayout } from './layout.js';
import { ensureClientCert, readAdminCredentials } from './space-pki.js';

/** The fleet ID the push agent writes into each WEC's lease ConfigMap. */
export const LOCAL_FLEET_ID = 'ksview-local-spaces';
/** OCM's prefix of agent users and groups, and the group every agent is in. */
export const OCM_SUBJECT_PREFIX = 'system:open-cluster-management:';
export const OCM_MANAGED_CLUSTERS_GROUP = `${OCM_SUBJECT_PREFIX}managed-clusters`;
/** The agent-name part of a pull agent's user. */
export const PULL_AGENT_NAME = 'ksview-agent';

export interface AgentIdentity {
  /** Files and kubeconfig context: `agent-<cluster>`, `agent-push`. */
  name: string;
  user: string;
  groups: string[];
}

const wecsOf = (layout: SpacesLayout) => layout.spaces.filter((s) => s.role === 'wec');
export const itsOf = (layout: SpacesLayout): SpaceLayout => layout.spaces.find((s) => s.role === 'its')!;

/** wec1 is pulled by its own agent; every other WEC is pushed to by one agent beside its1. */
export function pullWecs(layout: SpacesLayout): SpaceLayout[] {
  return wecsOf(layout).slice(0, 1);
}
export function pushWecs(layout: SpacesLayout): SpaceLayout[] {
  return wecsOf(layout).slice(1);
}

/** A pull agent's identity, as OCM's registration names its agents. */
export function pullAgentIdentity(cluster: string): AgentIdentity {
  return {
    name: `agent-${cluster}`,
    user: `${OCM_SUBJECT_PREFIX}${cluster}:${PULL_AGENT_NAME}`,
    groups: [`${OCM_SUBJECT_PREFIX}${cluster}`, OCM_MANAGED_CLUSTERS_GROUP],
  };
}

/** The push agent's identity: one user, bound by the push manifests' rules. */
export function pushAgentIdentity(fleetID = LOCAL_FLEET_ID): AgentIdentity {
  return { name: 'agent-push', user: `kubestellar-view:agent-push:${fleetID}`, groups: [] };
}

export function agentIdentities(layout: SpacesLayout): AgentIdentity[] {
  return [...pullWecs(layout).map((w) => pullAgentIdentity(w.name)), ...(pushWecs(layout).length > 0 ? [pushAgentIdentity()] : [])];
}

/** The kubeconfig of an agent's identity towards its1. */
export const agentKubeconfigPath = (layout: SpacesLayout, id: AgentIdentity): string => path.join(itsOf(layout).dir, 'agents', `${id.name}.kubeconfig`);

/** Kubeconfig entries (context `its1-<name>`) of every agent identity, made if missing. */
export async function agentKubeconfigEntries(layout: SpacesLayout): Promise<KubeconfigEntry[]> {
  const its = itsOf(layout);
  const { ca } = readAdminCredentials(its.dir);
  return Promise.all(agentIdentities(layout).map(async (id) => {
    const pair = await ensureClientCert(its.dir, id.name, id.user, id.groups);
    return { name: `${its.name}-${id.name}`, user: id.name, server: `https://127.0.0.1:${its.apiserverPort}`, caPem: ca, certPem: pair.certPem, keyPem: pair.keyPem };
  }));
}

/** Writes each agent's kubeconfig (its certificate made once, like the rest of the PKI). */
export async function ensureAgentIdentities(layout: SpacesLayout): Promise<void> {
  const entries = await agentKubeconfigEntries(layout);
  const ids = agentIdentities(layout);
  mkdirSync(path.join(itsOf(layout).dir, 'agents'), { recursive: true, mode: 0o700 });
  entries.forEach((e, i) => writeFileSync(agentKubeconfigPath(layout, ids[i]!), renderKubeconfig([e]), { mode: 0o600 }));
}

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; subjects?: unknown[]; [k: string]: unknown };

const RBAC_COLLECTIONS: Record<string, string> = { Role: 'roles', RoleBinding: 'rolebindings', ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings' };

/** The API path of one RBAC object (for server-side apply). */
export function rbacPath(o: Manifest): string {
  const collection = RBAC_COLLECTIONS[o.kind];
  if (!collection) throw new Error(`not an RBAC kind: ${o.kind}`);
  return `/apis/rbac.authorization.k8s.io/v1/${o.metadata.namespace ? `namespaces/${o.metadata.namespace}/` : ''}${collection}/${o.metadata.name}`;
}

/**
 * A shipped RBAC file (under charts/kubestellar-view/files/), with CLUSTER_NAME replaced and, when `subjects` is
 * given, every binding's subjects replaced by them; nothing else changes.
 */
export function renderRbac(file: string, cluster?: string, subjects?: object[]): Manifest[] {
  let text = readFileSync(chartFile(file), 'utf8');
  if (cluster !== undefined) text = text.replaceAll('CLUSTER_NAME', cluster);
  if (text.includes('CLUSTER_NAME')) throw new Error(`${path.join(CHART_FILES_DIR, file)} is per cluster: name one`);
  return YAML.parseAllDocuments(text).map((d) => d.toJSON() as Manifest).filter((o) => o !== null)
    .map((o) => (subjects && 'subjects' in o ? { ...o, subjects } : o));
}

const userSubject = (id: AgentIdentity) => [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: id.user }];

/** What lets the spaces' push agent read `cluster`'s kubeconfig Secret (what the hub admin applies with it). */
export function pushMailboxRbac(cluster: string, id = pushAgentIdentity()): Manifest[] {
  return renderRbac('agent/push-mailbox-rbac.yaml', cluster, userSubject(id));
}

/**
 * Every RBAC object the local agents' identities are bound by in its1: the shipped files, nothing
 * added here. A right the agents come to need (e.g. TokenReview/SubjectAccessReview for delegated
 * authentication of their endpoints) goes into those manifests, and so reaches these agents too.
 */
export function agentRbacObjects(layout: SpacesLayout): Manifest[] {
  const out: Manifest[] = [];
  for (const wec of pullWecs(layout)) out.push(...renderRbac('agent/its-rbac.yaml', wec.name));
  const pushed = pushWecs(layout);
  if (pushed.length > 0) {
    out.push(...renderRbac('agent/push-rbac.yaml', undefined, userSubject(pushAgentIdentity())));
    for (const wec of pushed) out.push(...pushMailboxRbac(wec.name));
  }
  return out;
}
