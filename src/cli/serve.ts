// The process wiring of `ksview serve` (the cli room; the HTTP app itself is
// src/apiserver/app.ts): the connection to the WDS (and the ITS), the authentication
// configuration the WDS publishes (re-read every minute; the TLS client CAs follow),
// authentication, authorization, the serving certificate, the denatured kinds' CRDs, optional
// registration, the app and its upgrade passthrough listening, and the controllers
// (src/controllers/hub.ts: placement and the other ITS controllers, the hosted endpoints mirror,
// leader-elected under one Lease). Resolves
// once listening; `close()` stops everything it started; `shutdown()` is the graceful way
// (SIGTERM): readiness off and the Lease released at once, serving on for the delay, then the
// listener drained (src/apiserver/graceful-shutdown.ts), then close().
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import { withTimeout } from '../kube/wait.js';
import { ControllerHub } from '../controllers/hub.js';
import type { UpsyncLimits } from '../controllers/upsync/desired-requests.js';
import { DEFAULT_UPSYNC_MAX_OBJECT_BYTES, DEFAULT_UPSYNC_MAX_OBJECTS } from '../kube/upsync-api.js';
import { DenaturedRegistry } from '../storage/denatured-registry.js';
import { ProtobufDecoder } from '../storage/protobuf-decoder.js';
import { NativeCode } from '../storage/native-code.js';
import { UserError } from '../util/user-error.js';
import type { ServiceAccountRef } from '../kube/service-account-ref.js';
import { DEFAULT_DENATURED, DEFAULT_HIDDEN, KindCategories, type GroupResource } from '../storage/kind-categories.js';
import { closeUpstream, upstreamFromKubeconfig, upstreamRequest, type Upstream } from '../kube/upstream.js';
import { DEFAULT_ITS_MAX_IN_FLIGHT, RequestLimiter } from '../kube/request-limiter.js';
import type { BundleLimits } from '../controllers/placement/bundles.js';
import { loadAuthnConfig, type AuthnConfig } from '../apiserver/auth/authn-config.js';
import { Authenticator, tokenReviewer } from '../apiserver/auth/authn.js';
import { Authorizer } from '../apiserver/auth/authz.js';
import { register } from '../apiserver/wds-registration.js';
import { buildApp } from '../apiserver/app.js';
import { viewRoot } from '../apiserver/groups/view-group.js';
import { ensureServingCert } from '../apiserver/serving-cert.js';
import { handleUpgrades } from '../apiserver/view/upgrade-proxy.js';
import { DEFAULT_REQUEST_LIMITS, RequestLimits, type RequestLimitsOptions } from '../apiserver/http/request-limits.js';
import { GracefulShutdown } from '../apiserver/graceful-shutdown.js';
import { inClusterUpstream } from '../kube/in-cluster-config.js';
import { SERVICE_PORT_NAME } from '../apiserver/wds-registration.js';

/** /readyz asks the WDS again after this long; its answer (the kubelet probes every 2 s) is bounded by the next. */
const WDS_RECHECK_MS = 2000;
const WDS_PROBE_TIMEOUT_MS = 3000;
/** Not ready once the WDS has not answered 200 for this long (kubelet's failureThreshold adds its own). */
const WDS_GRACE_MS = 10_000;

export interface ServeOptions {
  wdsKubeconfig: string;
  wdsContext?: string;
  wdsName: string;
  bindAddress: string;
  port: number;
  certDir: string;
  register: boolean;
  /**
   * Hosted registration (--register-endpoints-from NAMESPACE/SERVICE): the server runs as pods in a
   * hosting cluster; the leader mirrors into the WDS's Service the endpoints of this Service of the
   * hosting cluster. With `register`, that Service is written without selector (else it is the
   * admin's, and only the endpoints are written).
   */
  registerEndpointsFrom?: { namespace: string; name: string };
  /** kubeconfig of the hosting cluster (default: the pod's in-cluster configuration). */
  hostingKubeconfig?: string;
  namespace: string;
  service: string;
  externalName: string;
  /** ksview-protojson, the decoder of protobuf delete options for denatured kinds (absent: they are 415). */
  protobufDecoder?: string;
  /** ksview-native, Kubernetes' own registries of the denatured kinds (required when there are any). */
  nativeCode?: string;
  /**
   * ksview-gotemplate, the expander of KubeStellar templates for the placement controllers
   * (missing: an object asking for expansion is reported as an error, not sent).
   */
  templateExpander?: string;
  /** kubeconfig of the ITS: with it, the placement controllers run (BindingPolicies → ManifestWorks). */
  itsKubeconfig?: string;
  /** The bound on the controllers' requests to the ITS (../kube/request-limiter.ts). */
  itsMaxInFlight?: number;
  /** How objects are packed into works (../controllers/placement/bundles.ts; absent: a work per object). */
  bundleLimits?: BundleLimits;
  itsContext?: string;
  /** The denatured kinds (default: DEFAULT_DENATURED). */
  denatured?: readonly GroupResource[];
  /** What users may hold open at once (default: DEFAULT_REQUEST_LIMITS). */
  limits?: RequestLimitsOptions;
  /**
   * The WEC ServiceAccount the works of policies naming no executor are applied as
   * (--default-executor NS/NAME; absent: the agents' own rights, said in each policy's status).
   */
  defaultExecutor?: ServiceAccountRef;
  /** Bounds of upsync per (cluster, policy) (default: DEFAULT_UPSYNC_MAX_OBJECTS, DEFAULT_UPSYNC_MAX_OBJECT_BYTES). */
  upsyncLimits?: UpsyncLimits;
}

/** The port of the WDS's Service in hosted mode (the APIService and webhooks name it; the mirrored endpoints carry the pods' port). */
export const HOSTED_SERVICE_PORT = 443;

/** How long requests in flight may take to finish once the listener stops (kube-apiserver's request timeout). */
export const DRAIN_GRACE_MS = 60_000;

export interface RunningServer {
  app: FastifyInstance;
  up: Upstream;
  url: string;
  viewPath: string;
  /** Whether this replica holds the Lease (no leader election: undefined). */
  isLeader(): boolean | undefined;
  close(): Promise<void>;
  /**
   * SIGTERM: /readyz fails and the Lease is released at once, requests are served for `delayMs`,
   * then the listener stops and requests in flight finish (at most `graceMs`), then close().
   */
  shutdown(delayMs: number, graceMs?: number): Promise<void>;
}

export async function serve(o: ServeOptions): Promise<RunningServer> {
  const hosted = o.registerEndpointsFrom !== undefined;
  const up = await upstreamFromKubeconfig(o.wdsKubeconfig, o.wdsContext);
  // Hosted: the cluster the pods run in, read for the endpoints of our Service there.
  const hosting = o.registerEndpointsFrom
    ? (o.hostingKubeconfig ? { up: await upstreamFromKubeconfig(o.hostingKubeconfig), stop: () => undefined } : await inClusterUpstream())
    : undefined;
  const authn = { config: await loadAuthnConfig(up) };
  // Hosted, only the names the aggregator and in-cluster clients use are required (no one dials localhost).
  const cert = await ensureServingCert(o.certDir, o.service, o.namespace, { localhost: !hosted });
  const authenticator = new Authenticator(() => authn.config, tokenReviewer(up));
  const authorizer = new Authorizer(up);
  const limits = new RequestLimits(o.limits ?? DEFAULT_REQUEST_LIMITS);
  const denaturedKinds = o.denatured ?? DEFAULT_DENATURED;
  const cats = new KindCategories(DEFAULT_HIDDEN, denaturedKinds);
  const log = {
    info: (m: string) => process.stderr.write(`ksview serve: ${m}\n`),
    error: (m: string) => process.stderr.write(`ksview serve: ${m}\n`),
  };
  if (denaturedKinds.length > 0 && !o.nativeCode) throw new UserError('denatured kinds need ksview-native: pass --ksview-native <path>');
  // ksview-native asks the WDS (as this server) about RBAC escalation: SubjectAccessReviews and informers of its RBAC.
  const native = new NativeCode(o.nativeCode ?? '', log, { kubeconfig: o.wdsKubeconfig, context: o.wdsContext });
  if (denaturedKinds.length > 0) await native.start();
  const denatured = new DenaturedRegistry(up, denaturedKinds, log, native);
  let gate: GracefulShutdown | undefined;
  const ready = wdsReadiness(up, () => denatured.ready);

  const its = o.itsKubeconfig ? await upstreamFromKubeconfig(o.itsKubeconfig, o.itsContext) : undefined;
  if (its) its.limiter = new RequestLimiter({ maxInFlight: o.itsMaxInFlight ?? DEFAULT_ITS_MAX_IN_FLIGHT });
  const hub = new ControllerHub({
    wdsName: o.wdsName, wds: up, its, cats, templateExpander: o.templateExpander,
    defaultExecutor: o.defaultExecutor, bundleLimits: o.bundleLimits, log: log.info, leaseNamespace: o.namespace,
    upsyncLimits: o.upsyncLimits ?? { maxObjects: DEFAULT_UPSYNC_MAX_OBJECTS, maxObjectBytes: DEFAULT_UPSYNC_MAX_OBJECT_BYTES },
    // A denatured object is sent only once Kubernetes' validation of its kind accepts it.
    validate: async (id, stored) => {
      const store = denatured.storeFor(id.group, id.resource);
      if (!store) throw new Error(`${id.resource}.${id.group}: denatured kinds are not ready yet`);
      return store.invalidity(stored, id.version);
    },
    // Hosted: the leader keeps the WDS Service's endpoints those of our pods in the hosting cluster.
    hosted: hosting && o.registerEndpointsFrom && {
      hosting, source: { namespace: o.registerEndpointsFrom.namespace, service: o.registerEndpointsFrom.name },
      target: { namespace: o.namespace, service: o.service, portName: SERVICE_PORT_NAME }, serverPort: o.port,
    },
  });
  const protobuf = o.protobufDecoder && existsSync(o.protobufDecoder) ? new ProtobufDecoder(o.protobufDecoder) : undefined;
  const app = await buildApp({
    wdsName: o.wdsName, up, cats, denatured, protobuf, bindings: hub.bindings, combinedStatuses: hub.combinedStatuses, upsynced: hub.upsynced,
    validateCollector: hub.validateCollector, servingCertPem: cert.certPem, servingKeyPem: cert.keyPem,
    authnConfig: () => authn.config, authenticator, authorizer, ready, limits, log: log.error,
    shuttingDown: () => gate?.shuttingDown === true,
  });
  gate = new GracefulShutdown(app.server);
  handleUpgrades(app.server, { root: viewRoot(o.wdsName), up, cats, authenticator, limits });
  await app.listen({ host: o.bindAddress, port: o.port });
  const refresh = keepAuthnFresh(up, app, cert, authn);

  if (o.register) {
    await register(up, {
      namespace: o.namespace, service: o.service, externalName: o.externalName, port: hosted ? HOSTED_SERVICE_PORT : o.port, caBundlePem: cert.caPem, hosted,
      admission: hub.placing, policyAdmission: hub.placing, denaturedAdmission: denaturedKinds.length > 0,
    });
  }
  // After registration, which grants the CRD rules; until this sync the view answers 503 for
  // denatured kinds and /readyz is not ready.
  await denatured.start();
  await hub.start();
  let closed: Promise<void> | undefined;
  return {
    app, up, url: `https://${o.bindAddress}:${o.port}`, viewPath: viewRoot(o.wdsName),
    isLeader: () => hub.isLeader(),
    async shutdown(delayMs, graceMs = DRAIN_GRACE_MS) {
      gate!.begin();
      log.info(`shutting down: not ready${hub.isLeader() ? ', leadership released' : ''}; serving ${delayMs / 1000} s more`);
      // Released at once: another replica leads on its next try, not after the Lease expires.
      await hub.releaseLeadership().catch((err: Error) => log.error(`leader election: releasing the Lease: ${err.message.split('\n')[0]}`));
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const { cut } = await gate!.drain(graceMs);
      if (cut > 0) log.info(`shutdown: ${cut} connection(s) still open after ${graceMs / 1000} s were closed`);
      closed ??= closeAll();
      await closed;
    },
    close() {
      closed ??= closeAll();
      return closed;
    },
  };
  async function closeAll(): Promise<void> {
    clearInterval(refresh);
    denatured.stop();
    await hub.stop();
    protobuf?.close();
    await app.close();
    await native.close();
    await closeUpstream(up);
  }
}

/**
 * /readyz: ready while the WDS answered its /readyz lately. A WDS slow for a few seconds (a loaded
 * machine) must not take every replica out of the endpoints at once, which would turn slow answers
 * into the aggregator's 503s for everyone; a WDS gone for WDS_GRACE_MS does.
 */
function wdsReadiness(up: Upstream, denaturedReady: () => boolean): () => Promise<boolean> {
  let lastOk = 0;
  return async () => {
    if (!denaturedReady()) return false;
    const now = Date.now();
    if (now - lastOk < WDS_RECHECK_MS) return true;
    try {
      const res = await withTimeout(upstreamRequest(up, 'GET', '/readyz'), WDS_PROBE_TIMEOUT_MS);
      if (res.status === 200) lastOk = Date.now();
    } catch { /* judged below */ }
    return lastOk > 0 && Date.now() - lastOk < WDS_GRACE_MS;
  };
}

/** Re-reads the authentication configuration the WDS publishes every minute; the TLS client CAs follow. */
function keepAuthnFresh(up: Upstream, app: FastifyInstance, cert: { keyPem: string; certPem: string }, authn: { config: AuthnConfig }): NodeJS.Timeout {
  const refresh = setInterval(() => {
    loadAuthnConfig(up).then((next) => {
      if (next.caBundlePem !== authn.config.caBundlePem) {
        (app.server as import('node:https').Server).setSecureContext({ key: cert.keyPem, cert: cert.certPem, ca: next.caBundlePem });
      }
      authn.config = next;
    }).catch(() => { /* keep the last good configuration */ });
  }, 60_000);
  refresh.unref();
  return refresh;
}
