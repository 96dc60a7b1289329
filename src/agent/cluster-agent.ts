// The work controller of one cluster (ClusterWorker): started by the pull or push front, it
// - makes sure the WEC serves AppliedManifestWorks (creates OCM's CRD when absent, waits Established);
// - watches the cluster's mailbox namespace of the ITS (ManifestWorks only there) and queues work
//   names (never objects) for a few workers running WorkReconciler;
// - after the first list, queues the works of AppliedManifestWorks of our hub whose ManifestWork
//   is gone (deleted while the agent was down), which the reconciler then cleans;
// - watches what was applied (AppliedWatcher): drift or deletion by someone else → re-apply;
//   status changes → observe → coalesced status write; a resync every resyncMs is the backstop;
// - beside it, once the WEC answers, the cluster's upsync (./upsync/upsync-agent.ts: UpsyncRequests
//   in the mailbox → copies of WEC objects as UpsyncedObjects), stopped with it.
// When the ITS is unreachable, the informer keeps its cache, so nothing applied is touched; it
// re-lists on reconnect and the differences are queued.
import { sourceGenerationsOf } from './status/workstatus.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { CRDS_PATH, waitForEstablished } from '../kube/crd-established.js';
import { Informer } from '../kube/informer.js';
import { carriedByLiveWork } from './apply/handover.js';
import { MANIFEST_WORK_FINALIZER, manifestWorksPath, type ManifestWork } from '../kube/ocm-api.js';
import { expectOk, upstreamRequest, type Upstream } from '../kube/upstream.js';
import { WorkQueue, runWorkers } from '../kube/work-queue.js';
import { repoRoot } from '../util/repo-root.js';
import type { ClusterWorker, PlacedResource, WorkApplier } from './shared/contract.js';
import type { AgentMetrics } from './shared/agent-metrics.js';
import { AppliedWorks } from './apply/applied-works.js';
import { AppliedWatcher, classify, type AppliedEvent, type AppliedRef, type InformerFactory } from './status/applied-watcher.js';
import { StatusWriter } from './status/work-status-writer.js';
import { WorkReconciler } from './apply/work-reconciler.js';
import { gvrKey } from '../kube/resource-path.js';
import type { RestMapper } from './shared/rest-mapper.js';
import { UpsyncAgent } from './upsync/upsync-agent.js';

export const APPLIED_MANIFESTWORK_CRD_FILE = 'work.open-cluster-management.io_appliedmanifestworks.yaml';

/** Works reconciled at once per cluster: each waits on a few round trips to the ITS and the WEC. */
export const DEFAULT_WORKERS = 16;

export interface ClusterAgentOptions {
  cluster: string;
  its: Upstream;
  wec: Upstream;
  hubHash: string;
  agentID: string;
  applier: WorkApplier;
  metrics: AgentMetrics;
  log: (msg: string) => void;
  /** Backstop resync of every work (default 5 min). */
  resyncMs?: number;
  /** Workers of the queue (default 4). */
  workers?: number;
  /** Status write debounce (default 100 ms). */
  statusDebounceMs?: number;
  /** Tests: informers of applied objects (default: real informers on the WEC). */
  appliedInformers?: InformerFactory;
}

/** Creates the AppliedManifestWork CRD in the WEC when absent and waits until it is Established. */
export async function ensureAppliedWorkCRD(wec: Upstream, timeoutMs = 60_000): Promise<void> {
  const crd = YAML.parse(readFileSync(path.join(repoRoot(), 'manifests', 'crds', APPLIED_MANIFESTWORK_CRD_FILE), 'utf8')) as { metadata: { name: string } };
  const got = await upstreamRequest(wec, 'GET', `${CRDS_PATH}/${crd.metadata.name}`);
  if (got.status === 404) {
    expectOk(await upstreamRequest(wec, 'POST', CRDS_PATH, { body: crd }), `create CRD ${crd.metadata.name}`, [409]);
  } else {
    expectOk(got, `get CRD ${crd.metadata.name}`);
  }
  await waitForEstablished(wec, [crd.metadata.name], timeoutMs);
}

export class ClusterAgent implements ClusterWorker {
  readonly cluster: string;
  private readonly queue = new WorkQueue();
  private readonly works: Informer<ManifestWork>;
  private readonly applied: AppliedWorks;
  private readonly watcher: AppliedWatcher;
  readonly status: StatusWriter;
  private readonly reconciler: WorkReconciler;
  readonly upsync: UpsyncAgent;
  /** resourceVersion of each object as we last applied it: its own watch event is not drift. */
  private readonly ownRv = new Map<string, string>();
  private stopped = false;
  private started = false;
  private wecOk = false;
  private wecUnreachable: string | undefined;
  private resync: NodeJS.Timeout | undefined;
  private gauge: NodeJS.Timeout | undefined;
  private loops: Promise<void> | undefined;

  constructor(private readonly options: ClusterAgentOptions) {
    this.cluster = options.cluster;
    const { cluster, metrics } = options;
    this.works = new Informer<ManifestWork>(options.its, {
      path: manifestWorksPath(cluster),
      onChange: (t, w, old) => {
        if (t !== 'MODIFIED' || needsReconcile(w, old)) {
          this.queue.add(w.metadata.name);
          // A work added, changed or gone may be (or stop being) the carrier a handover waits for.
          this.reconciler.retryAwaiting(w.metadata.name);
        }
        else if (sourceGenerationsOf(w) !== sourceGenerationsOf(old)) this.status.refresh(w.metadata.name);
        metrics.works.set({ cluster }, this.works.store.size);
      },
      onError: (err) => options.log(`${cluster}: mailbox watch: ${err.message}`),
    });
    this.applied = new AppliedWorks(options.wec, options.hubHash, options.agentID);
    this.status = new StatusWriter({
      cluster, its: options.its, applier: options.applier, debounceMs: options.statusDebounceMs,
      work: (n) => this.works.get(cluster, n),
      onError: (where, err) => {
        metrics.errors.inc({ cluster, where });
        options.log(`${cluster}: ${where}: ${(err as Error).message}`);
      },
    });
    this.watcher = new AppliedWatcher(options.wec, (e) => this.onApplied(e), options.appliedInformers);
    this.reconciler = new WorkReconciler({
      cluster, its: options.its, wec: options.wec, applier: options.applier, applied: this.applied, status: this.status, watcher: this.watcher,
      work: (n) => this.works.get(cluster, n),
      enqueueAfter: (n, ms) => this.queue.addAfter(n, ms),
      metrics, log: options.log,
      noteApplied: (ref, rv) => this.noteApplied(ref, rv),
      carriedByWork: (r, releasing) => carriedByLiveWork(this.works.store.list(), releasing, r, (n) => this.status.resultsOf(n)),
    });
    this.upsync = new UpsyncAgent({
      cluster, its: options.its, wec: options.wec, resyncMs: options.resyncMs, log: options.log,
      // The ApplyEngine's mapper when there is one: one discovery cache of the WEC per cluster.
      mapper: (options.applier as { mapper?: RestMapper }).mapper,
      onError: (where) => metrics.errors.inc({ cluster, where }),
    });
  }

  /** Starts in the background (the WEC or the ITS may not answer yet); ready() says when it is serving. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.loops = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearInterval(this.gauge);
    this.works.stop();
    this.watcher.stop();
    this.status.stop();
    this.queue.shutDown();
    await Promise.all([this.loops, this.upsync.stop()]);
  }

  ready(): boolean {
    return this.works.hasSynced && this.wecOk && !this.wecUnreachable && this.watcher.synced();
  }

  setWecUnreachable(reason: string | undefined): void {
    this.wecUnreachable = reason;
    this.status.setUnreachable(reason);
  }

  placed(): PlacedResource[] {
    return this.status.placed();
  }

  private async run(): Promise<void> {
    const { cluster, log, metrics } = this.options;
    // The WEC side first: without AppliedManifestWorks nothing can be applied safely.
    for (let backoff = 1000; !this.stopped; backoff = Math.min(backoff * 2, 30_000)) {
      try {
        await ensureAppliedWorkCRD(this.options.wec);
        await this.applied.load();
        this.wecOk = true;
        break;
      } catch (err) {
        metrics.errors.inc({ cluster, where: 'apply' });
        log(`${cluster}: WEC not ready: ${(err as Error).message}`);
        await sleep(backoff);
      }
    }
    if (this.stopped) return;
    this.works.start();
    this.upsync.start();
    const workers = runWorkers(this.queue, this.options.workers ?? DEFAULT_WORKERS, (k) => this.reconciler.reconcile(k), (k, err) => {
      metrics.errors.inc({ cluster, where: 'apply' });
      log(`${cluster}/${k}: ${(err as Error).message}`);
    });
    this.gauge = setInterval(() => metrics.queueDepth.set({ cluster }, this.queue.length), 1000);
    await Promise.race([this.works.synced, workers]);
    if (this.stopped) return workers;
    // AppliedManifestWorks whose ManifestWork went while we were away: the reconciler cleans them.
    for (const amw of this.applied.list()) {
      if (!this.works.get(cluster, amw.spec.manifestWorkName)) this.queue.add(amw.spec.manifestWorkName);
    }
    this.resync = setInterval(() => {
      for (const w of this.works.list()) this.queue.add(w.metadata.name);
    }, this.options.resyncMs ?? 300_000);
    return workers;
  }

  private noteApplied(ref: AppliedRef, rv: string | undefined): void {
    const k = ownRvKey(gvrKey(ref), ref.namespace, ref.name);
    if (rv) this.ownRv.set(k, rv);
    else this.ownRv.delete(k);
  }

  private onApplied(e: AppliedEvent): void {
    const rv = e.obj.metadata?.resourceVersion;
    const key = ownRvKey(e.gvr, e.obj.metadata?.namespace ?? '', e.obj.metadata?.name ?? '');
    const ours = rv !== undefined && this.ownRv.get(key) === rv;
    if (e.type === 'DELETED') this.ownRv.delete(key); // gone: its last version is nothing to remember
    const drift = classify(e) === 'drift' && !ours;
    for (const { work, ordinal } of e.works) {
      this.reconciler.observed(work, ordinal, e.obj, drift || e.type === 'DELETED');
      if (drift) this.queue.add(work);
      else this.status.observe(work, ordinal, e.type === 'DELETED' ? undefined : e.obj);
    }
  }
}

/** An applied object's key in ownRv: its resource (gvrKey) and namespace/name. */
const ownRvKey = (gvr: string, namespace: string, name: string): string => `${gvr}|${namespace}/${name}`;

/**
 * Whether a work's change asks for a reconcile: its spec (generation), its deletion, or our
 * finalizer taken off. Our own writes (the finalizer added, status) change none of these, so they
 * do not apply the work a second time; a re-list's unchanged copy does not either (the periodic
 * resync is the backstop).
 */
export function needsReconcile(w: ManifestWork, old: ManifestWork | undefined): boolean {
  if (!old) return true;
  const ours = (x: ManifestWork) => (x.metadata.finalizers ?? []).includes(MANIFEST_WORK_FINALIZER);
  return w.metadata.generation !== old.metadata.generation || w.metadata.generation === undefined
    || w.metadata.uid !== old.metadata.uid
    || !!w.metadata.deletionTimestamp !== !!old.metadata.deletionTimestamp || (ours(old) && !ours(w));
}
