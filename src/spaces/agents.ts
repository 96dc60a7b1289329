// The WEC side of the local spaces: the inventory in its1, written as its hub admin (one accepted
// ManagedCluster and one mailbox namespace per WEC, a `<wec>-kubeconfig` Secret in each
// push-served mailbox with the Role that lets the push agent read it, and the agents' shipped
// RBAC: ./agent-identities.ts), a pull `ksview agent` for wec1 and one push agent beside its1 for
// the other WECs, each with its own ITS identity. The command lines are pure functions
// (unit-tested); starting reuses a live agent, or replaces it when `restart` is set so tests run
// the code just built. KSVIEW_SPACES_NO_AGENTS=1 skips the agents (not the inventory).
// Each agent serves its endpoints over HTTPS with a certificate from the CA of the space it
// delegates their authentication to (pull: its WEC; push: the ITS; component-certs.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../util/progress.js';
import { UserError } from '../util/user-error.js';
import { closeUpstream, serverSideApply, upstreamFromKubeconfig } from '../kube/upstream.js';
import { waitFor, type ProbeResult } from '../kube/wait.js';
import { probeAgent } from './agent-endpoints.js';
import { agentServingFiles, ensureAgentServingCert } from './component-certs.js';
import {
  agentKubeconfigPath, agentRbacObjects, itsOf, LOCAL_FLEET_ID, pullAgentIdentity, pullWecs, pushAgentIdentity, pushWecs, rbacPath,
} from './agent-identities.js';
import { probeHttp } from './health.js';
import type { SpaceLayout, SpacesLayout } from './layout.js';
import { portFree } from './ports.js';
import { isRunning, logTail, runsWith, startDetached, stopAll, waitReady } from './processes.js';
import { repoRoot } from '../util/repo-root.js';
import { readState, writeState } from './state.js';

export const INVENTORY_FIELD_MANAGER = 'ksview-spaces';

/**
 * V8 flags of an agent process. A young generation of 2 MB semi-spaces (16 MB by default) is
 * collected more often but keeps the agent's resident memory down (docs/agent.md, "Memory": ≤ 150 MB with 1,000
 * objects applied); measured in docs/benchmarks.md. the chart's agent parts set the same in NODE_OPTIONS.
 */
export const AGENT_NODE_FLAGS = ['--max-semi-space-size=2'];
/**
 * Environment of an agent process: glibc's malloc makes an arena per thread (libuv's pool, V8's
 * workers), and under load their freed-but-kept memory is most of a Node process's non-heap RSS.
 */
export const AGENT_ENV: Record<string, string> = { MALLOC_ARENA_MAX: '2' };

export interface AgentCommand {
  /** Process name in the spaces' state: `<space>/<component>`. */
  name: string;
  port: number;
  /** Arguments after `node`. */
  args: string[];
  /** The WECs this agent serves. */
  wecs: string[];
  /** The space its endpoints delegate authentication and authorization to; its CA signs their certificate. */
  delegate: SpaceLayout;
  /** The file name of that certificate in the space's PKI. */
  servingName: string;
}

const kubeconfigOf = (s: SpaceLayout) => path.join(s.dir, 'kubeconfig');
const wecsOf = (layout: SpacesLayout) => layout.spaces.filter((s) => s.role === 'wec');

export function agentCommands(layout: SpacesLayout, ksviewJs = path.join(repoRoot(), 'bin', 'ksview.js')): AgentCommand[] {
  const its = itsOf(layout);
  const out: AgentCommand[] = [];
  const tls = (delegate: SpaceLayout, servingName: string) => {
    const f = agentServingFiles(delegate.dir, servingName);
    return ['--tls-cert-file', f.cert, '--tls-private-key-file', f.key];
  };
  // With real nodes wec1's pull agent runs as a pod (the chart's agent.pull); its ITS identity is still made.
  for (const wec of layout.realNodes ? [] : pullWecs(layout)) {
    out.push({
      name: `${wec.name}/ksview-agent`, port: layout.pullAgentPort, wecs: [wec.name], delegate: wec, servingName: 'ksview-agent',
      args: [...AGENT_NODE_FLAGS, ksviewJs, 'agent', '--cluster', wec.name, '--its-kubeconfig', agentKubeconfigPath(layout, pullAgentIdentity(wec.name)),
        '--wec-kubeconfig', kubeconfigOf(wec), '--port', String(layout.pullAgentPort), ...tls(wec, 'ksview-agent')],
    });
  }
  const pushed = pushWecs(layout);
  if (pushed.length > 0) {
    out.push({
      name: `${its.name}/ksview-agent-push`, port: layout.pushAgentPort, wecs: pushed.map((s) => s.name), delegate: its, servingName: 'ksview-agent-push',
      args: [...AGENT_NODE_FLAGS, ksviewJs, 'agent', '--push', '--its-kubeconfig', agentKubeconfigPath(layout, pushAgentIdentity()),
        '--fleet-id', LOCAL_FLEET_ID, '--port', String(layout.pushAgentPort), ...tls(its, 'ksview-agent-push')],
    });
  }
  return out;
}

/**
 * The objects `up` writes into the ITS as its hub admin: per WEC its accepted ManagedCluster and
 * mailbox; for pushed WECs their Secrets; then the agents' RBAC (a mailbox's Role after the mailbox).
 */
export function inventoryObjects(layout: SpacesLayout, readKubeconfig = (s: SpaceLayout) => readFileSync(kubeconfigOf(s), 'utf8')): Array<{ path: string; obj: object }> {
  const out: Array<{ path: string; obj: object }> = [];
  for (const wec of wecsOf(layout)) {
    out.push({
      path: `/api/v1/namespaces/${wec.name}`,
      obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: wec.name } },
    });
    out.push({
      path: `/apis/cluster.open-cluster-management.io/v1/managedclusters/${wec.name}`,
      // The labels the demo's BindingPolicy selects on; acceptance is the hub's half of the double opt-in.
      obj: {
        apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster',
        metadata: { name: wec.name, labels: { name: wec.name, 'location-group': 'edge' } },
        spec: { hubAcceptsClient: true },
      },
    });
  }
  for (const wec of pushWecs(layout)) {
    // The WEC's admin kubeconfig: local spaces have no cheaper identity; charts/kubestellar-view/files/agent/ shows
    // the least-privilege RBAC a real WEC grants instead.
    out.push({
      path: `/api/v1/namespaces/${wec.name}/secrets/${wec.name}-kubeconfig`,
      obj: {
        apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
        metadata: { name: `${wec.name}-kubeconfig`, namespace: wec.name },
        stringData: { kubeconfig: readKubeconfig(wec) },
      },
    });
  }
  for (const obj of agentRbacObjects(layout)) out.push({ path: rbacPath(obj), obj });
  return out;
}

export async function ensureInventory(layout: SpacesLayout, progress: Progress, timeoutMs = 60_000): Promise<void> {
  const up = await upstreamFromKubeconfig(kubeconfigOf(itsOf(layout)));
  let result;
  try {
    // The ManagedCluster CRD is installed by `ksview serve` (placement) shortly after it starts: a
    // 404 until it is Established is retried, in order (a Secret's namespace before the Secret).
    result = await waitFor(async () => {
      try {
        for (const { path: p, obj } of inventoryObjects(layout)) await serverSideApply(up, p, obj, INVENTORY_FIELD_MANAGER);
        return { ok: true, detail: '' };
      } catch (err) {
        return { ok: false, detail: (err as Error).message };
      }
    }, timeoutMs, 500);
  } finally {
    await closeUpstream(up);
  }
  if (!result.ok) throw new UserError(`its1 inventory not written after ${Math.round(timeoutMs / 1000)}s: ${result.detail.slice(0, 300)}`);
  progress.step(`its1: ManagedClusters ${wecsOf(layout).map((s) => s.name).join(', ')} accepted, with their mailboxes`);
}

export async function ensureAgents(layout: SpacesLayout, progress: Progress,
  opts: { restart?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  if ((opts.env ?? process.env).KSVIEW_SPACES_NO_AGENTS === '1') {
    progress.step('agents skipped (KSVIEW_SPACES_NO_AGENTS=1)');
    return;
  }
  for (const cmd of agentCommands(layout)) {
    await ensureAgentServingCert(cmd.delegate.dir, cmd.servingName);
    await ensureNodeProcess(layout, progress, cmd.name, cmd.args, cmd.port,
      { ...opts, env: { ...(opts.env ?? process.env), ...AGENT_ENV }, probe: () => probeAgent(cmd, '/healthz') });
    progress.step(`${cmd.name} serving ${cmd.wecs.join(', ')} (endpoints on https://127.0.0.1:${cmd.port}, authenticated by ${cmd.delegate.name})`);
  }
}

/**
 * Runs one of our Node processes (serve, agents) as a recorded process of the spaces: reuses a live
 * one unless `restart` or it runs with other arguments (an older version's), checks its port, waits
 * for its /healthz (`probe`; default plain HTTP); when it exits, the error carries the end of its log.
 */
export async function ensureNodeProcess(layout: SpacesLayout, progress: Progress, name: string, args: string[],
  port: number, opts: { restart?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv; probe?: () => Promise<ProbeResult> } = {}): Promise<void> {
  const state = readState(layout.statePath);
  if (!state) throw new UserError(`no spaces in ${layout.dir}: run 'ksview spaces up'`);
  let rec = state.processes.find((p) => p.name === name);
  if (rec && isRunning(rec) && (opts.restart || !runsWith(rec, process.execPath, args))) await stopAll([rec]);
  if (!rec || !isRunning(rec)) {
    // A process just stopped may still hold its port for a moment (its memory goes before its files).
    const free = await waitFor(async () => ({ ok: await portFree(port), detail: 'in use' }), 5_000, 100);
    if (!free.ok) throw new UserError(`port ${port} on 127.0.0.1 (for ${name}) is already in use`);
    rec = startDetached(name, process.execPath, args, path.join(layout.dir, 'logs', `${name.replace('/', '-')}.log`), opts.env);
    const now = readState(layout.statePath) ?? state;
    now.processes = [...now.processes.filter((p) => p.name !== name), rec];
    writeState(layout.statePath, now);
    progress.step(`started ${name} (pid ${rec.pid}) on 127.0.0.1:${port}`);
  }
  const started = rec;
  try {
    await waitReady(name, started, opts.probe ?? (() => probeHttp(port, '/healthz')), opts.timeoutMs ?? 60_000);
  } catch (err) {
    if (isRunning(started)) throw err;
    // It exited: what it said last is the reason (a bad flag, an unknown subcommand, a refused kubeconfig).
    throw new UserError(`${name} exited; log ${started.log}:\n${logTail(started.log, 8)}`);
  }
}
