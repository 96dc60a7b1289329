// The process wiring of `ksview agent` (the CLI parses and checks the flags: src/cli/run-agent.ts):
// - runPullAgent: one cluster; the agent opens every connection itself (ITS and WEC); Registration
//   runs, and the ClusterWorker starts once the hub accepts the cluster (and stops if it stops).
// - runPushAgent: a PushSupervisor serves every accepted cluster with a `<cluster>-kubeconfig` Secret.
// Both serve the endpoints and keep readiness current with a periodic probe of the ITS (and, in
// pull mode, the WEC): wrong or expired credentials are one log line and /readyz false, never a
// crash; everything keeps retrying. `close()` stops all.
// The endpoints are HTTPS (the configured serving certificate, else a self-signed one) and
// delegate authentication and authorization to the cluster the agent already talks to with its own
// credentials, as kubelet does to its cluster: the pull agent to its WEC, the push agent to the ITS.
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { fixedClientCAs, publishedClientCAs } from '../kube/client-ca.js';
import { DelegatedAuth } from '../kube/delegated-auth.js';
import { hubHash, MANAGEDCLUSTERS_PATH } from '../kube/ocm-api.js';
import { selfSignedServingCert, type KeyPair } from '../kube/pki.js';
import type { Upstream } from '../kube/upstream.js';
import type { ClusterWorker, PlacedResource } from './shared/contract.js';
import { buildEndpoints } from './endpoints/endpoints.js';
import { errorLine, type AgentLog } from './shared/log.js';
import type { AgentMetrics } from './shared/agent-metrics.js';
import { PushSupervisor } from './push-supervisor.js';
import { Registration, type RegistrationOptions } from './registration/cluster-registration.js';
import { checkIts, checkWec } from './registration/wec-health.js';
import type { CreateWorker, RegistrationLike } from './shared/worker-factory.js';

export interface CommonAgentOptions {
  its: Upstream;
  /** The hub's server URL as the ITS kubeconfig names it (hubHash of AppliedManifestWorks). */
  itsServer: string;
  agentID: string;
  metrics: AgentMetrics;
  createWorker: CreateWorker;
  log: AgentLog;
  /** Endpoints: port (0 = any; undefined = none) on bindAddress (default 127.0.0.1). */
  port?: number;
  bindAddress?: string;
  /** How often readiness is probed (default 5 s). */
  probeMs?: number;
  /** The endpoints' serving certificate (--tls-cert-file, --tls-private-key-file); self-signed when absent. */
  servingCert?: KeyPair;
  /** Client CAs for client certificates, PEM (--client-ca-file); default: the delegate's kube-system/extension-apiserver-authentication. */
  clientCA?: string;
}

export interface PullAgentOptions extends CommonAgentOptions {
  cluster: string;
  wec: Upstream;
  createRegistration?: (o: RegistrationOptions) => RegistrationLike;
}

export interface PushAgentOptions extends CommonAgentOptions {
  fleetID: string;
  healthIntervalMs?: number;
  /** Run credential plugins of the Secrets' kubeconfigs (--insecure-kubeconfig-exec). */
  allowCredentialPlugins?: boolean;
}

export interface RunningAgent {
  app: FastifyInstance;
  /** https://host:port of the endpoints ('' when not listening). */
  url: string;
  readiness(): string[];
  workers(): ClusterWorker[];
  close(): Promise<void>;
}

/** A periodic check whose last answer is kept; a change is logged once. */
class Probe {
  last: string | undefined = 'not checked yet';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  constructor(private readonly name: string, private readonly fn: () => Promise<string | undefined>, private readonly everyMs: number, private readonly log: AgentLog) {}
  start(): void { void this.tick(); }
  private async tick(): Promise<void> {
    let now: string | undefined;
    try { now = await this.fn(); } catch (err) { now = errorLine(err); }
    if (now !== this.last) this.log(now ? `not ready: ${now}` : `${this.name} ready`);
    this.last = now;
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.everyMs);
  }
  stop(): void { this.stopped = true; clearTimeout(this.timer); }
}

async function listen(app: FastifyInstance, o: CommonAgentOptions): Promise<string> {
  if (o.port === undefined) return '';
  return app.listen({ port: o.port, host: o.bindAddress ?? '127.0.0.1' });
}

/** The certificate the endpoints serve when none is configured: for this host, loopback and the bind address. */
async function servingCertOf(o: CommonAgentOptions): Promise<KeyPair> {
  if (o.servingCert) return o.servingCert;
  const host = hostname();
  const bind = o.bindAddress ?? '127.0.0.1';
  const ips = ['127.0.0.1', ...(isIP(bind) && bind !== '0.0.0.0' && bind !== '::' && bind !== '127.0.0.1' ? [bind] : [])];
  return selfSignedServingCert(host, ['localhost', host], ips);
}

/**
 * The endpoints, guarded by `delegate` (the cluster asked who a caller is and what they may):
 * HTTPS when they listen. Closing the app stops the client-CA refresh too.
 */
async function serveEndpoints(o: CommonAgentOptions, delegate: Upstream, readiness: () => string[], placed: () => PlacedResource[]): Promise<FastifyInstance> {
  const clientCAs = o.clientCA !== undefined ? fixedClientCAs(o.clientCA) : publishedClientCAs(delegate, o.log);
  const https = o.port === undefined ? undefined : await servingCertOf(o);
  const app = buildEndpoints({ registry: o.metrics.registry, readiness, placed, auth: new DelegatedAuth(delegate, clientCAs), log: o.log, https });
  app.addHook('onClose', async () => clientCAs.stop());
  return app;
}

export async function runPullAgent(o: PullAgentOptions): Promise<RunningAgent> {
  const log: AgentLog = (line) => o.log(line);
  let worker: ClusterWorker | undefined;
  let chain = Promise.resolve();
  let stopped = false;
  const reconcile = (accepted: boolean) => {
    chain = chain.then(async () => {
      if (accepted && !stopped && !worker) {
        worker = o.createWorker({ cluster: o.cluster, its: o.its, wec: o.wec, hubHash: hubHash(o.itsServer), agentID: o.agentID, log });
        if (wecDown) worker.setWecUnreachable(wecDown);
        await worker.start().catch((err: unknown) => log(`[${o.cluster}] worker did not start: ${errorLine(err)}`));
      } else if ((!accepted || stopped) && worker) {
        const w = worker;
        worker = undefined;
        await w.stop().catch((err: unknown) => log(`[${o.cluster}] worker stop: ${errorLine(err)}`));
      }
    });
  };
  const reg = (o.createRegistration ?? ((ro) => new Registration(ro)))({ cluster: o.cluster, its: o.its, wec: o.wec, log, onAccepted: reconcile });
  const probeMs = o.probeMs ?? 5000;
  const itsProbe = new Probe('ITS', () => checkIts(o.its, `${MANAGEDCLUSTERS_PATH}/${o.cluster}`), probeMs, log);
  // The WEC's answer also reaches the worker: while it is silent, works report Available=Unknown.
  let wecDown: string | undefined;
  const wecProbe = new Probe('WEC', async () => {
    const r = await checkWec(o.wec);
    if (r !== wecDown) { wecDown = r; worker?.setWecUnreachable(r); }
    return r && `WEC ${r}`;
  }, probeMs, log);
  const readiness = () => {
    const out = [itsProbe.last, wecProbe.last].filter((x): x is string => !!x);
    if (!reg.isAccepted()) out.push(`cluster ${o.cluster} is not accepted by the hub yet (spec.hubAcceptsClient)`);
    else if (worker && !worker.ready()) out.push(`cluster ${o.cluster}: worker not synced yet`);
    return out;
  };
  // As kubelet: callers are who the WEC says they are, and may what the WEC's RBAC grants them.
  const app = await serveEndpoints(o, o.wec, readiness, () => worker?.placed() ?? []);
  const url = await listen(app, o);
  itsProbe.start();
  wecProbe.start();
  reg.start();
  return {
    app, url, readiness,
    workers: () => (worker ? [worker] : []),
    async close() {
      stopped = true;
      itsProbe.stop();
      wecProbe.stop();
      await reg.stop();
      reconcile(false);
      await chain;
      await app.close();
    },
  };
}

export async function runPushAgent(o: PushAgentOptions): Promise<RunningAgent> {
  const sup = new PushSupervisor({
    its: o.its, fleetID: o.fleetID, agentID: o.agentID, hubHash: hubHash(o.itsServer),
    createWorker: o.createWorker, log: o.log, healthIntervalMs: o.healthIntervalMs, allowCredentialPlugins: o.allowCredentialPlugins,
  });
  // What the agent reads cluster-wide: the ManagedClusters (Secrets only in the mailboxes it is granted).
  const itsProbe = new Probe('ITS', () => checkIts(o.its, `${MANAGEDCLUSTERS_PATH}?limit=1`), o.probeMs ?? 5000, o.log);
  // Push readiness is the ITS only: one bad WEC must not make the whole fleet agent unready.
  const readiness = () => (itsProbe.last ? [itsProbe.last] : []);
  // Beside the ITS: the ITS says who callers are and what they may.
  const app = await serveEndpoints(o, o.its, readiness, () => sup.placed());
  app.get('/clusters', async () => ({ items: sup.states().map((s) => ({ cluster: s.cluster, serving: !!s.worker, ready: s.worker?.ready() ?? false, problem: s.problem })) }));
  const url = await listen(app, o);
  itsProbe.start();
  sup.start();
  return {
    app, url, readiness,
    workers: () => sup.workers(),
    async close() {
      itsProbe.stop();
      await sup.stop();
      await app.close();
    },
  };
}
