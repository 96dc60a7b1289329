// The controllers of one `ksview serve`, started, stopped and led as one. Contract:
// - With an ITS: placement (BindingPolicies → ManifestWorks), status (the WECs' state returned into
//   the WDS objects), the CombinedStatuses (and those over upsynced objects), upsync (the requests in
//   the mailboxes, the copies the agents write back) and cluster health (mailboxes, leases). They are
//   made at once, so the app can serve what they hold (bindings, combinedStatuses, upsynced,
//   validateCollector) before they start.
// - Hosted registration: the endpoints mirror, which keeps the WDS Service's endpoints those of the
//   server's pods in the hosting cluster.
// - start(): one Lease per WDS (in the WDS, named as when only placement used it) decides which
//   replica writes. The mirror leads as soon as the Lease is held: the view's routing must not wait
//   for the ITS. The ITS controllers first ensure the CRDs (WDS, then ITS with its admission
//   policies, retried while the ITS is restarting), start in order, and only then lead.
// - releaseLeadership(): the Lease given up at once (graceful shutdown), so another replica leads on
//   its next try rather than after the Lease expires.
// - stop(): everything it started, in reverse dependency order; it closes the ITS and hosting
//   connections it was given and the template expander it made.
import { LeaderElector } from '../kube/leader-election.js';
import { closeUpstream, type Upstream } from '../kube/upstream.js';
import { retryUntilDone } from '../kube/wait.js';
import type { KindCategories } from '../storage/kind-categories.js';
import { ClusterHealthController } from './clusters/cluster-health.js';
import { EndpointsMirror, type MirrorTarget } from './hosting/endpoints-mirror.js';
import { ensureCRDs, ITS_CRD_FILES, WDS_CRD_FILES } from './install/controller-crds.js';
import { ensureItsAdmission } from './install/its-admission.js';
import type { ServiceAccountRef } from './model/executor.js';
import type { BundleLimits } from './placement/bundles.js';
import { PlacementController } from './placement/placement-controller.js';
import type { DenaturedValidator } from './placement/reconcile.js';
import { TemplateExpander } from './placement/template-expander.js';
import { CombinedStatuses } from './status/combined-statuses.js';
import { StatusController } from './status/status-controller.js';
import { UpsyncCombinedStatuses, withUpsyncCombined } from './status/upsync-combined-statuses.js';
import type { UpsyncLimits } from './upsync/desired-requests.js';
import { UpsyncRequestController } from './upsync/request-controller.js';
import { UpsyncedCache } from './upsync/upsynced-cache.js';

/** Hosted registration: the hosting cluster (closed by the hub) and what its endpoints mirror copies. */
export interface HostedMirror {
  hosting: { up: Upstream; stop(): void };
  /** The Service of the hosting cluster whose endpoints are mirrored. */
  source: { namespace: string; service: string };
  /** The WDS's Service that receives them. */
  target: MirrorTarget;
  /** The server's own port, which the hosting Service targets. */
  serverPort: number;
}

export interface ControllerHubOptions {
  wdsName: string;
  wds: Upstream;
  /** The ITS (its request limiter set): with it, the ITS controllers run. Closed by the hub. */
  its?: Upstream;
  cats: KindCategories;
  /** ksview-gotemplate (absent: an object asking for expansion is reported as an error, not sent). */
  templateExpander?: string;
  /** Kubernetes' verdict on a denatured object before placement sends it. */
  validate: DenaturedValidator;
  /** The executor of the works of policies naming none (absent: the agents' own rights). */
  defaultExecutor?: ServiceAccountRef;
  /** How objects are packed into works (absent: a work per object). */
  bundleLimits?: BundleLimits;
  upsyncLimits: UpsyncLimits;
  hosted?: HostedMirror;
  /** The namespace of the Lease in the WDS. */
  leaseNamespace: string;
  log: (msg: string) => void;
}

/** The controllers that run only with an ITS. */
interface ItsControllers {
  its: Upstream;
  templates: TemplateExpander | undefined;
  placement: PlacementController;
  status: StatusController;
  combined: CombinedStatuses;
  upsyncRequests: UpsyncRequestController;
  upsynced: UpsyncedCache;
  upsyncCombined: UpsyncCombinedStatuses;
  health: ClusterHealthController;
}

export class ControllerHub {
  private readonly wdsName: string;
  private readonly wds: Upstream;
  private readonly leaseNamespace: string;
  private readonly log: (msg: string) => void;
  private readonly controllers: ItsControllers | undefined;
  private readonly hosting: HostedMirror['hosting'] | undefined;
  private readonly mirror: EndpointsMirror | undefined;
  private elector: LeaderElector | undefined;
  /** The ITS controllers lead only once started. */
  private started = false;

  constructor(options: ControllerHubOptions) {
    this.wdsName = options.wdsName;
    this.wds = options.wds;
    this.leaseNamespace = options.leaseNamespace;
    this.log = options.log;
    this.controllers = options.its ? itsControllers(options, options.its) : undefined;
    this.hosting = options.hosted?.hosting;
    const hosted = options.hosted;
    this.mirror = hosted
      ? new EndpointsMirror({ hosting: hosted.hosting.up, source: hosted.source, wds: options.wds, target: hosted.target, serverPort: hosted.serverPort, log: options.log })
      : undefined;
  }

  /** The virtual Bindings (with an ITS). */
  get bindings(): PlacementController | undefined {
    return this.controllers?.placement;
  }

  /** The CombinedStatuses, over WDS objects and upsynced ones (with an ITS). */
  get combinedStatuses(): ReturnType<typeof withUpsyncCombined> | undefined {
    const c = this.controllers;
    return c ? withUpsyncCombined(c.combined, c.upsyncCombined) : undefined;
  }

  /** The agents' copies of WEC objects (with an ITS). */
  get upsynced(): UpsyncedCache | undefined {
    return this.controllers?.upsynced;
  }

  /** StatusCollector admission (with an ITS). */
  get validateCollector(): CombinedStatuses['validate'] | undefined {
    const combined = this.controllers?.combined;
    return combined ? (sc) => combined.validate(sc) : undefined;
  }

  /** Whether the ITS controllers run (BindingPolicies and StatusCollectors then get their admission). */
  get placing(): boolean {
    return this.controllers !== undefined;
  }

  /** Whether this replica holds the Lease (no leader election: undefined). */
  isLeader(): boolean | undefined {
    return this.elector?.isLeader;
  }

  async start(): Promise<void> {
    const c = this.controllers;
    if (c || this.mirror) {
      this.elector = new LeaderElector(this.wds, {
        namespace: this.leaseNamespace, name: `kubestellar-view-placement-${this.wdsName}`,
        onStartedLeading: () => { this.mirror?.setLeading(true); if (this.started) this.setItsLeading(true); },
        onStoppedLeading: () => { this.mirror?.setLeading(false); if (this.started) this.setItsLeading(false); },
        log: this.log,
      });
      this.elector.start();
    }
    if (!c) return;
    await ensureCRDs(this.wds, WDS_CRD_FILES);
    let lastError = '';
    // With the CRDs, the ManagedCluster admission policy: no agent accepts or relabels itself.
    await retryUntilDone(async () => { await ensureCRDs(c.its, ITS_CRD_FILES); await ensureItsAdmission(c.its); }, (err) => {
      const line = (err as Error).message.split('\n')[0]!;
      if (line !== lastError) this.log(`ITS CRDs not ensured yet (retrying): ${line}`);
      lastError = line;
    });
    await c.placement.start();
    await c.status.start();
    await c.combined.start();
    await c.health.start();
    await c.upsyncRequests.start();
    await c.upsynced.start();
    c.upsyncCombined.start();
    this.started = true;
    if (this.elector?.isLeader) this.setItsLeading(true);
  }

  /** Gives the Lease up at once (it is not taken again). */
  async releaseLeadership(): Promise<void> {
    await this.elector?.stop();
  }

  async stop(): Promise<void> {
    await this.elector?.stop();
    this.mirror?.stop();
    this.hosting?.stop();
    if (this.hosting) await closeUpstream(this.hosting.up);
    const c = this.controllers;
    if (!c) return;
    c.combined.stop();
    await c.status.stop();
    await c.placement.stop();
    await c.health.stop();
    c.upsyncCombined.stop();
    c.upsynced.stop();
    await c.upsyncRequests.stop();
    c.templates?.close();
    await closeUpstream(c.its);
  }

  private setItsLeading(leading: boolean): void {
    const c = this.controllers!;
    c.placement.setLeading(leading); c.status.setLeading(leading); c.combined.setLeading(leading); c.health.setLeading(leading);
    c.upsyncRequests.setLeading(leading);
  }
}

/** The ITS controllers, wired to one another: status reads placement, upsync feeds the policies' status. */
function itsControllers(options: ControllerHubOptions, its: Upstream): ItsControllers {
  const { wdsName, wds, log } = options;
  const templates = options.templateExpander ? new TemplateExpander(options.templateExpander) : undefined;
  const placement = new PlacementController({
    wdsName, wds, its, cats: options.cats, templates, defaultExecutor: options.defaultExecutor, bundleLimits: options.bundleLimits, log,
    validate: options.validate,
  });
  // The WECs' reported state returned into the WDS objects (singleton and multi-WEC status).
  const status = new StatusController({ wds, its, sources: placement.statusSources(), log });
  // The virtual CombinedStatuses (StatusCollectors over the same WorkStatuses), served by the app.
  const combined = new CombinedStatuses({
    wds, sources: placement.statusSources(), reports: status.reports,
    onObjectReportChange: (cb) => status.onReportChange(cb), log,
  });
  // Upsync: the UpsyncRequests of the policies in the mailboxes, and the copies the agents write
  // back, which the view serves read-only.
  const upsyncRequests = new UpsyncRequestController({
    wdsName, its, sources: placement, log, limits: options.upsyncLimits,
    // Upsync reads the WEC with the executor's rights, as downsync writes with them.
    defaultExecutor: options.defaultExecutor,
  });
  const changed = placement.setUpsyncStatus((p) => upsyncRequests.statusOf(p));
  upsyncRequests.onRequestChange((p) => changed(p));
  const upsynced = new UpsyncedCache(wdsName, its, {
    request: (c, p) => upsyncRequests.request(c, p), list: () => upsyncRequests.requests.list(), onRequestChange: (cb) => upsyncRequests.onRequestChange(cb),
  }, log, options.upsyncLimits);
  // CombinedStatuses over upsynced objects (collectors named by policies' upsync clauses), served beside the others.
  const upsyncCombined = new UpsyncCombinedStatuses({
    policy: (n) => placement.policy(n), policyNames: () => placement.policyNames(), upsynced, pool: combined.pool,
    onPolicyChange: (cb) => placement.onBindingChange((p, statusOnly) => { if (!statusOnly) cb(p); }),
    collectors: {
      compile: (n) => combined.compile(n), onCollectorChange: (cb) => combined.onCollectorChange(cb),
      generation: (n) => { const g = combined.collectors.get('', n)?.metadata.generation; return g === undefined ? undefined : String(g); },
      spec: (n) => combined.collectors.get('', n)?.spec,
    },
  });
  // Mailbox namespaces of accepted clusters and their lease-based availability (OCM's hub duties).
  const health = new ClusterHealthController({ its, log });
  return { its, templates, placement, status, combined, upsyncRequests, upsynced, upsyncCombined, health };
}
