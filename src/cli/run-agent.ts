// `ksview agent` once its flags are parsed (./agent-command.ts): checks the flags and kubeconfigs
// (a mistake is one line and a non-zero exit, before anything starts), then starts the pull or
// push front (src/agent/agent-process.ts), which runs until the command closes it. Runtime trouble (ITS or WEC unreachable, credentials rejected) never ends the process:
// it is logged once and /readyz says it. The endpoints' TLS files are read here too: a missing,
// unreadable or mismatched one is a one-line error naming the file.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { CreateWorker } from '../agent/shared/worker-factory.js';
import { ClusterAgent } from '../agent/cluster-agent.js';
import { ApplyEngine } from '../agent/apply/apply-engine.js';
import type { EngineLog } from '../agent/apply/apply-manifest.js';
import { createAgentMetrics, type AgentMetrics } from '../agent/shared/agent-metrics.js';
import { stderrLog, type AgentLog } from '../agent/shared/log.js';
import { parseCABundle } from '../kube/client-ca.js';
import type { KeyPair } from '../kube/pki.js';
import { inClusterUpstream } from '../kube/in-cluster-config.js';
import { upstreamFromKubeconfig } from '../kube/upstream.js';
import { DEFAULT_ITS_MAX_IN_FLIGHT, RequestLimiter } from '../kube/request-limiter.js';
import { fsProblem } from '../util/fs-error.js';
import { UserError } from '../util/user-error.js';

/** What `ksview agent`'s flags parse into (commander's attribute names), the options of runAgentCommand. */
export interface AgentFlags {
  push?: boolean;
  cluster?: string;
  itsKubeconfig?: string;
  itsContext?: string;
  /** The bound on this agent's requests to the ITS (../kube/request-limiter.ts). */
  maxItsRequestsInflight?: number;
  wecKubeconfig?: string;
  wecContext?: string;
  fleetId: string;
  agentId?: string;
  port: number;
  bindAddress: string;
  healthInterval: number;
  /** The endpoints' serving certificate and key (PEM files); both or neither (self-signed). */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Client CAs for client certificates (PEM file); default: the delegate's extension-apiserver-authentication ConfigMap. */
  clientCaFile?: string;
  /** Push mode: run exec/auth-provider plugins of the kubeconfigs in the fleet's Secrets. */
  insecureKubeconfigExec?: boolean;
}

export interface AgentInvocation {
  mode: 'pull' | 'push';
  cluster?: string;
  agentID: string;
  fleetID: string;
}

/** The flag rules that commander cannot say: which flags each mode needs or refuses. */
export function checkAgentFlags(f: AgentFlags): AgentInvocation {
  if (!f.itsKubeconfig) throw new UserError("required option '--its-kubeconfig <file>' not specified");
  if (f.push) {
    if (f.cluster) throw new UserError('--cluster is for pull mode: with --push every cluster with a <cluster>-kubeconfig Secret in its mailbox namespace is served');
    if (f.wecKubeconfig) throw new UserError("--wec-kubeconfig is for pull mode: with --push each WEC's kubeconfig is read from its Secret <cluster>-kubeconfig in the ITS");
    return { mode: 'push', agentID: f.agentId ?? `ksview-push-${f.fleetId}-${hostname()}`, fleetID: f.fleetId };
  }
  if (f.insecureKubeconfigExec) throw new UserError('--insecure-kubeconfig-exec is for push mode: in pull mode the WEC kubeconfig is your own file, and its plugins run');
  if (!f.cluster) throw new UserError("required option '--cluster <name>' not specified (or --push for push mode)");
  return { mode: 'pull', cluster: f.cluster, agentID: f.agentId ?? `ksview-agent-${f.cluster}`, fleetID: f.fleetId };
}

function readPem(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`${flag} ${file}: ${fsProblem(err)}`);
  }
}

/** The endpoints' TLS material from the flags, checked: a certificate, its own key, a CA bundle with a CA in it. */
export function endpointTls(f: AgentFlags): { servingCert?: KeyPair; clientCA?: string } {
  if (!!f.tlsCertFile !== !!f.tlsPrivateKeyFile) throw new UserError('--tls-cert-file and --tls-private-key-file go together (neither: a self-signed certificate)');
  const out: { servingCert?: KeyPair; clientCA?: string } = {};
  if (f.tlsCertFile && f.tlsPrivateKeyFile) {
    const certPem = readPem('--tls-cert-file', f.tlsCertFile);
    const keyPem = readPem('--tls-private-key-file', f.tlsPrivateKeyFile);
    let cert: X509Certificate;
    try { cert = new X509Certificate(certPem); } catch { throw new UserError(`--tls-cert-file ${f.tlsCertFile}: not a PEM certificate`); }
    let key;
    try { key = createPrivateKey(keyPem); } catch { throw new UserError(`--tls-private-key-file ${f.tlsPrivateKeyFile}: not a PEM private key`); }
    if (!cert.checkPrivateKey(key)) throw new UserError(`--tls-private-key-file ${f.tlsPrivateKeyFile} is not the key of --tls-cert-file ${f.tlsCertFile}`);
    out.servingCert = { certPem, keyPem };
  }
  if (f.clientCaFile) {
    const pem = readPem('--client-ca-file', f.clientCaFile);
    if (parseCABundle(pem).length === 0) throw new UserError(`--client-ca-file ${f.clientCaFile}: no CA certificate in it`);
    out.clientCA = pem;
  }
  return out;
}

/** The engine's structured lines as one log line each: `apply failed work=w ordinal=1 status=409 message="…"`. */
function engineLog(log: (line: string) => void): EngineLog {
  const line = (msg: string, fields?: Record<string, unknown>) =>
    log(fields ? `${msg} ${Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' && /[\s"]/.test(v) ? JSON.stringify(v) : String(v)}`).join(' ')}` : msg);
  return { info: line, warn: line };
}

/** The real worker: a ClusterAgent driving an ApplyEngine on the cluster's WEC. */
const realWorkerFactory = (metrics: AgentMetrics): CreateWorker =>
  (o) => new ClusterAgent({ ...o, applier: new ApplyEngine({ wec: o.wec, log: engineLog(o.log) }), metrics });

export async function runAgentCommand(f: AgentFlags, deps: { log?: AgentLog; createWorker?: CreateWorker } = {}): Promise<() => Promise<void>> {
  const inv = checkAgentFlags(f);
  const log = deps.log ?? stderrLog;
  const tls = endpointTls(f);
  // Unusable kubeconfigs are the user's to fix now: UserErrors naming the file.
  const its = await upstreamFromKubeconfig(f.itsKubeconfig!, f.itsContext);
  its.limiter = new RequestLimiter({ maxInFlight: f.maxItsRequestsInflight ?? DEFAULT_ITS_MAX_IN_FLIGHT });
  // Pull mode without --wec-kubeconfig: the WEC is the cluster the pod runs in (client-go's
  // in-cluster configuration: the Service's IP from the environment, no cluster DNS needed).
  const wec = inv.mode !== 'pull' ? undefined
    : f.wecKubeconfig ? await upstreamFromKubeconfig(f.wecKubeconfig, f.wecContext) : (await inClusterUpstream(process.env, undefined, '--wec-kubeconfig')).up;
  const metrics = createAgentMetrics();
  const createWorker = deps.createWorker ?? realWorkerFactory(metrics);
  const { runPullAgent, runPushAgent } = await import('../agent/agent-process.js');
  const common = { its, itsServer: its.origin + its.basePath, agentID: inv.agentID, metrics, createWorker, log, port: f.port, bindAddress: f.bindAddress, ...tls };
  let agent;
  try {
    agent = inv.mode === 'pull'
      ? await runPullAgent({ ...common, cluster: inv.cluster!, wec: wec! })
      : await runPushAgent({ ...common, fleetID: inv.fleetID, healthIntervalMs: f.healthInterval, allowCredentialPlugins: f.insecureKubeconfigExec === true });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new UserError(`port ${f.port} on ${f.bindAddress} is already in use`);
    if (e.syscall === 'listen') throw new UserError(`cannot listen on ${f.bindAddress}:${f.port}: ${e.message}`);
    throw err;
  }
  log(`ksview agent (${inv.mode}${inv.cluster ? ` ${inv.cluster}` : `, fleet ${inv.fleetID}`}, agent ID ${inv.agentID}): endpoints on ${agent.url}`);
  return () => agent.close();
}
