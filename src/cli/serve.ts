// The process wiring of `ksview serve` (the cli room; the HTTP app itself is
// src/apiserver/app.ts): the connection to the WDS (and the ITS), the authentication
// configuration the WDS publishes (re-read every minute; the TLS client CAs follow),
// authentication, authorization, the serving certificate, the denatured kinds' CRDs, optional
// registration, the app and its upgrade passthrough listening, and the placement controllers
// under leader election. Resolves once listening; `close()` stops everything it started.
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import { retryUntilDone } from '../kube/wait.js';
import { ensureCRDs, ITS_CRD_FILES, WDS_CRD_FILES } from '../controllers/crds.js';
import { ensureItsAdmission } from '../controllers/its-admission.js';
import { LeaderElector } from '../kube/leader-election.js';
import { PlacementController } from '../controllers/placement/controller.js';
import { StatusController } from '../controllers/status/controller.js';
import { CombinedStatuses } from '../controllers/status/combined-statuses.js';
import { ClusterHealthController } from '../controllers/cluster-health.js';
import { DenaturedRegistry } from '../storage/denatured-registry.js';
import { ProtobufDecoder } from '../storage/protobuf-decoder.js';
import { NativeCode } from '../storage/native-code.js';
import { UserError } from '../util/user-error.js';
import type { ServiceAccountRef } from '../kube/service-account-ref.js';
import { TemplateExpander } from '../controllers/template-expander.js';
import { DEFAULT_DENATURED, DEFAULT_HIDDEN, KindCategories, type GroupResource } from '../storage/kind-categories.js';
import { closeUpstream, upstreamFromKubeconfig, upstreamRequest, type Upstream } from '../kube/upstream.js';
import { loadAuthnConfig, type AuthnConfig } from '../apiserver/authn-config.js';
import { Authenticator, tokenReviewer } from '../apiserver/authn.js';
import { Authorizer } from '../apiserver/authz.js';
import { register } from '../apiserver/registration.js';
import { buildApp } from '../apiserver/app.js';
import { viewRoot } from '../apiserver/view-group.js';
import { ensureServingCert } from '../apiserver/serving-cert.js';
import { handleUpgrades } from '../apiserver/upgrade-proxy.js';
import { DEFAULT_REQUEST_LIMITS, RequestLimits, type RequestLimitsOptions } from '../apiserver/request-limits.js';

export interface ServeOptions {
  wdsKubeconfig: string;
  wdsContext?: string;
  wdsName: string;
  bindAddress: string;
  port: number;
  certDir: string;
  register: boolean;
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
}

export interface RunningServer {
  app: FastifyInstance;
  up: Upstream;
  url: string;
  viewPath: string;
  close(): Promise<void>;
}

export async function serve(o: ServeOptions): Promise<RunningServer> {
  const up = await upstreamFromKubeconfig(o.wdsKubeconfig, o.wdsContext);
  let authnConfig: AuthnConfig = await loadAuthnConfig(up);
  const cert = await ensureServingCert(o.certDir, o.service, o.namespace);
  const authenticator = new Authenticator(() => authnConfig, tokenReviewer(up));
  const authorizer = new Authorizer(up);
  const limits = new RequestLimits(o.limits ?? DEFAULT_REQUEST_LIMITS);
  const denaturedKinds = o.denatured ?? DEFAULT_DENATURED;
  const cats = new KindCategories(DEFAULT_HIDDEN, denaturedKinds);
  const log = {
    info: (m: string) => process.stderr.write(`ksview serve: ${m}\n`),
    error: (m: string) => process.stderr.write(`ksview serve: ${m}\n`),
  };
  if (denaturedKinds.length > 0 && !o.nativeCode) throw new UserError('denatured kinds need ksview-native: pass --native-code <path>');
  // ksview-native asks the WDS (as this server) about RBAC escalation: SubjectAccessReviews and informers of its RBAC.
  const native = new NativeCode(o.nativeCode ?? '', log, { kubeconfig: o.wdsKubeconfig, context: o.wdsContext });
  if (denaturedKinds.length > 0) await native.start();
  const denatured = new DenaturedRegistry(up, denaturedKinds, log, native);

  let readyUntil = 0;
  const ready = async () => {
    if (!denatured.ready) return false;
    if (Date.now() < readyUntil) return true;
    try {
      const res = await upstreamRequest(up, 'GET', '/readyz');
      if (res.status === 200) readyUntil = Date.now() + 2000;
      return res.status === 200;
    } catch {
      return false;
    }
  };

  const its = o.itsKubeconfig ? await upstreamFromKubeconfig(o.itsKubeconfig, o.itsContext) : undefined;
  const templates = its && o.templateExpander ? new TemplateExpander(o.templateExpander) : undefined;
  const placement = its
    ? new PlacementController({
      wdsName: o.wdsName, wds: up, its, cats, templates, defaultExecutor: o.defaultExecutor, log: (m) => process.stderr.write(`ksview serve: ${m}\n`),
      // A denatured object is sent only once Kubernetes' validation of its kind accepts it.
      validate: async (id, stored) => {
        const store = denatured.storeFor(id.group, id.resource);
        if (!store) throw new Error(`${id.resource}.${id.group}: denatured kinds are not ready yet`);
        return store.invalidity(stored, id.version);
      },
    })
    : undefined;
  // The WECs' reported state returned into the WDS objects (singleton and multi-WEC status).
  const status = placement && its
    ? new StatusController({ wds: up, its, sources: placement.statusSources(), log: (m) => process.stderr.write(`ksview serve: ${m}\n`) })
    : undefined;
  // The virtual CombinedStatuses (StatusCollectors over the same WorkStatuses), served by the app.
  const combined = placement && status
    ? new CombinedStatuses({
      wds: up, sources: placement.statusSources(), workStatuses: status.workStatuses.store,
      onObjectReportChange: (cb) => status.onReportChange(cb), log: (m) => process.stderr.write(`ksview serve: ${m}\n`),
    })
    : undefined;
  // Mailbox namespaces of accepted clusters and their lease-based availability (OCM's hub duties).
  const health = its ? new ClusterHealthController({ its, log: (m) => process.stderr.write(`ksview serve: ${m}\n`) }) : undefined;
  const protobuf = o.protobufDecoder && existsSync(o.protobufDecoder) ? new ProtobufDecoder(o.protobufDecoder) : undefined;
  const app = await buildApp({
    wdsName: o.wdsName, up, cats, denatured, protobuf, bindings: placement, combinedStatuses: combined,
    validateCollector: combined ? (sc) => combined.validate(sc) : undefined, servingCertPem: cert.certPem, servingKeyPem: cert.keyPem,
    authnConfig: () => authnConfig, authenticator, authorizer, ready, limits, log: log.error,
  });
  handleUpgrades(app.server, { root: viewRoot(o.wdsName), up, cats, authenticator, limits });
  await app.listen({ host: o.bindAddress, port: o.port });

  const refresh = setInterval(() => {
    loadAuthnConfig(up).then((next) => {
      if (next.caBundlePem !== authnConfig.caBundlePem) {
        (app.server as import('node:https').Server).setSecureContext({ key: cert.keyPem, cert: cert.certPem, ca: next.caBundlePem });
      }
      authnConfig = next;
    }).catch(() => { /* keep the last good configuration */ });
  }, 60_000);
  refresh.unref();

  if (o.register) {
    await register(up, { namespace: o.namespace, service: o.service, externalName: o.externalName, port: o.port, caBundlePem: cert.caPem, admission: combined !== undefined,
      policyAdmission: placement !== undefined, denaturedAdmission: denaturedKinds.length > 0 });
  }
  // After registration, which grants the CRD rules; until this sync the view answers 503 for
  // denatured kinds and /readyz is not ready.
  await denatured.start();
  let elector: LeaderElector | undefined;
  if (placement && its) {
    await ensureCRDs(up, WDS_CRD_FILES);
    // The ITS may be restarting while this server starts: placement waits for it, the view does not.
    let lastError = '';
    // With the CRDs, the ManagedCluster admission policy: no agent accepts or relabels itself.
    await retryUntilDone(async () => { await ensureCRDs(its, ITS_CRD_FILES); await ensureItsAdmission(its); }, (err) => {
      const line = (err as Error).message.split('\n')[0]!;
      if (line !== lastError) process.stderr.write(`ksview serve: ITS CRDs not ensured yet (retrying): ${line}\n`);
      lastError = line;
    });
    await placement.start();
    await status?.start();
    await combined?.start();
    await health?.start();
    // Replicas of the server for one WDS: one Lease decides which one writes.
    elector = new LeaderElector(up, {
      namespace: o.namespace, name: `kubestellar-view-placement-${o.wdsName}`,
      onStartedLeading: () => { placement.setLeading(true); status?.setLeading(true); combined?.setLeading(true); health?.setLeading(true); },
      onStoppedLeading: () => { placement.setLeading(false); status?.setLeading(false); combined?.setLeading(false); health?.setLeading(false); },
      log: (m) => process.stderr.write(`ksview serve: ${m}\n`),
    });
    elector.start();
  }
  return {
    app, up, url: `https://${o.bindAddress}:${o.port}`, viewPath: viewRoot(o.wdsName),
    async close() {
      clearInterval(refresh);
      denatured.stop();
      await elector?.stop();
      combined?.stop();
      await status?.stop();
      await placement?.stop();
      await health?.stop();
      templates?.close();
      if (its) await closeUpstream(its);
      protobuf?.close();
      await app.close();
      await native.close();
      await closeUpstream(up);
    },
  };
}
