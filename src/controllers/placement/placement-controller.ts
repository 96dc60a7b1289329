// The placement controller of one WDS: BindingPolicies resolved into ManifestWorks in the ITS.
// This file is the wiring: informers over the workload (./workload-watch.ts: every workload
// resource, rediscovered every 10 s so CRDs that come and go start and stop theirs), the BindingPolicies and
// CustomTransforms of the WDS, and the ManagedClusters and ManifestWorks (this WDS's and the
// others') in the ITS; their handlers only turn changes into queue keys (../model/keys.ts) on one
// WorkQueue, which workers hand to ./reconcile.ts. What queues what:
// - a workload object → its own key (its Namespace is queued by reconciliation, only when what the
//   object adds to it changes), unless only its status, resourceVersion or the status controller's
//   marks changed; a Namespace whose labels changed → also every object in it;
// - a policy → its key; a new generation or a deletion → every object's key;
// - a CustomTransform or a ManagedCluster → every object's key; a ConfigMap of the ITS namespace
//   customization-properties (a cluster's template properties) → every object's key;
// - one of this WDS's works changed by someone else (not the echo of our own write; of a status
//   write by an agent, only one that changes which manifests failed to apply) → the key of the
//   object it carries; another WDS's work → the keys of the object of that identity.
// CRDs of the WDS are watched only to rediscover at once when one changes (else every 10 s).
// Reads and writes use the server's own identity. Every replica resolves (and serves Bindings);
// only the elected leader (setLeading, from ../../kube/leader-election.ts) writes.
import type { UpsyncClusterStatus } from '../../kube/upsync-api.js';
import type { ServiceAccountRef } from '../model/executor.js';
import { isDeepStrictEqual } from 'node:util';
import { Informer } from '../../kube/informer.js';
import type { Upstream } from '../../kube/upstream.js';
import { runWorkers, WorkQueue } from '../../kube/work-queue.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import { WDS_LABEL, type ManifestWork } from '../model/wrapping.js';
import { CLUSTERS, POLICIES, TRANSFORMS, WORKS, type BindingPolicy, type CustomTransform, type ManagedCluster } from '../model/api.js';
import type { Binding, BindingView } from './bindings.js';
import { decodeKey, encodeKey, policyKey, SOURCE_ANNOTATION, type ObjectKey, type QueueKey } from '../model/keys.js';
import type { StatusSources } from '../model/sent.js';
import { PROPERTIES_NAMESPACE, type Expander, type PropertyConfigMap } from './desired.js';
import { CLEANUP_FINALIZER } from './policy-status.js';
import { Reconciler, type DenaturedValidator } from './reconcile.js';
import { WorkloadCaches } from './workload.js';
import { WorkloadWatch } from './workload-watch.js';
import { isBundle, manifestsOf, slimWork, sourcesOf, WORK_INDEXERS } from './works.js';
import type { BundleLimits } from './bundles.js';
import { workChangeConcernsObject } from './apply-failures.js';
import { conflictCopy } from './conflicts.js';
import { objectOutcome } from './destination-state.js';

export { CLEANUP_FINALIZER, SOURCE_ANNOTATION };

export interface PlacementOptions {
  wdsName: string;
  wds: Upstream;
  its: Upstream;
  cats: KindCategories;
  /** Go's text/template for objects asking for template expansion (./template-expander.ts). */
  templates?: Expander;
  /** Kubernetes' validation of denatured objects before they are sent (./reconcile.ts). */
  validate?: DenaturedValidator;
  /** The executor of the works of policies naming none (../model/executor.ts; absent: the agents' own rights). */
  defaultExecutor?: ServiceAccountRef;
  /** How objects are packed into works (`--max-objects-per-work`, `--max-bytes-per-work`; absent: a work per object). */
  bundleLimits?: BundleLimits;
  workers?: number;
  log: (msg: string) => void;
}

/** A work's outcome compared apart from its cluster's readiness (cluster changes are heard on their own). */
const CLUSTER_UP = { ready: true } as const;
/** How long changes of a policy's Binding are gathered before its status is computed again. */
const POLICY_STATUS_COALESCE_MS = 200;
/** The pause between looks at policy status is at least this many times what the last look cost. */
const POLICY_STATUS_COST_FACTOR = 10;

/** A policy as its spec and metadata say, without its status (and what every write changes). */
function withoutStatus(p: BindingPolicy): string {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = p.metadata;
  return JSON.stringify({ ...p, metadata, status: undefined });
}

/** Whether two views of a manifest carry the same status feedback (the works' cache shares equal ones). */
function sameFeedback(a: ManifestWork | undefined, b: ManifestWork | undefined): boolean {
  const fa = a?.status?.resourceStatus?.manifests?.[0]?.statusFeedback;
  const fb = b?.status?.resourceStatus?.manifests?.[0]?.statusFeedback;
  return fa === fb || isDeepStrictEqual(fa, fb);
}

export class PlacementController {
  private readonly queue = new WorkQueue();
  private readonly workload = new WorkloadCaches();
  private readonly policyStatusDue = new Set<string>();
  private policyStatusTimer: NodeJS.Timeout | undefined;
  private readonly policies: Informer<BindingPolicy>;
  private readonly transforms: Informer<CustomTransform>;
  private readonly clusters: Informer<ManagedCluster>;
  private readonly properties: Informer<PropertyConfigMap>;
  private readonly works: Informer<ManifestWork>;
  private readonly otherWorks: Informer<ManifestWork>;
  private readonly reconciler: Reconciler;
  private readonly policyGenerations = new Map<string, number>();
  /** The informers of every workload resource, rediscovered as CRDs come and go. */
  private readonly watch: WorkloadWatch;
  private workersDone: Promise<void> | undefined;
  /** Who hears of workload object changes besides placement (the status controller). */
  private readonly objectListeners = new Set<(k: ObjectKey) => void>();
  /** The status controller's: an object's status carried in a bundled work changed. */
  private readonly workReportListeners = new Set<(source: string) => void>();

  constructor(private readonly options: PlacementOptions) {
    const everything = () => this.enqueueAll();
    const onError = (what: string) => (err: Error) => options.log(`placement: ${what}: ${err.message}`);
    this.policies = new Informer<BindingPolicy>(options.wds, {
      path: POLICIES, onError: onError('bindingpolicies'),
      onChange: (type, p, old) => {
        const name = p.metadata.name;
        // A status write (ours, mostly) needs no new look at the policy; its Binding, which shows
        // the policy's conditions, is refreshed without queueing the policy's status again.
        if (type === 'MODIFIED' && old && withoutStatus(old) === withoutStatus(p)) {
          this.reconciler.bindings.touch(name, true);
          return;
        }
        this.enqueue(policyKey(name));
        this.reconciler.bindings.touch(name);
        // A status write (ours) changes no resolution: only a new generation or a deletion does.
        const generation = type === 'DELETED' || p.metadata.deletionTimestamp ? -1 : Number(p.metadata.generation ?? 0);
        if (this.policyGenerations.get(name) === generation) return;
        if (generation < 0) this.policyGenerations.delete(name);
        else this.policyGenerations.set(name, generation);
        everything();
      },
    });
    this.transforms = new Informer<CustomTransform>(options.wds, { path: TRANSFORMS, onChange: everything, onError: onError('customtransforms') });
    this.clusters = new Informer<ManagedCluster>(options.its, {
      path: CLUSTERS, onError: onError('managedclusters'),
      onChange: () => {
        for (const p of this.policies.list()) this.reconciler.bindings.touch(p.metadata.name);
        everything();
      },
    });
    // A cluster's template properties: the objects expanded for it expand anew.
    this.properties = new Informer<PropertyConfigMap>(options.its, {
      path: `/api/v1/namespaces/${PROPERTIES_NAMESPACE}/configmaps`, onError: onError('customization-properties configmaps'),
      onChange: everything,
    });
    // A work changed or deleted by someone else, or left by an object deleted while this server
    // was down: its source object is reconciled again; so is one whose cluster's agent reports a
    // different set of manifests it could not apply (other status writes change nothing here).
    this.works = new Informer<ManifestWork>(options.its, {
      path: WORKS, labelSelector: `${WDS_LABEL}=${options.wdsName}`, indexers: WORK_INDEXERS, transform: slimWork, onError: onError('manifestworks'),
      onChange: (type, w, old) => {
        // The objects it carries now and carried before (a bundle's may differ: ./bundles.ts), by their place in each.
        const now = sourcesOf(w);
        const before = old ? sourcesOf(old) : [];
        const sources = [...new Set([...now, ...before])];
        const nowAt = new Map(now.map((s, i) => [s, i]));
        const beforeAt = new Map(before.map((s, i) => [s, i]));
        const nowViews = manifestsOf(w);
        const beforeViews = old ? manifestsOf(old) : [];
        // How an object fares there changed: its policies' Bindings and Ready conditions follow.
        for (const sourceKey of sources) {
          const a = beforeViews[beforeAt.get(sourceKey) ?? -1];
          const b = nowViews[nowAt.get(sourceKey) ?? -1];
          if (type === 'DELETED' || !a || !b || !isDeepStrictEqual(objectOutcome(a, CLUSTER_UP), objectOutcome(b, CLUSTER_UP))) {
            for (const p of this.reconciler.bindings.placement(sourceKey)?.policies ?? []) this.reconciler.bindings.touch(p);
          }
          // The status it carries for the object (a bundle's feedback) changed: the status controller reads it again.
          if (this.workReportListeners.size > 0 && (isBundle(w) || (old && isBundle(old))) && (type === 'DELETED' || !sameFeedback(a, b))) {
            for (const l of this.workReportListeners) l(sourceKey);
          }
        }
        // Whether it is the echo of our own write is known once that write is answered (a bundle's
        // echo taken for someone else's change would reconcile its 100 objects again, each on 1,000 clusters).
        const decide = () => {
          this.reconciler.works.noteChange(type, w, old);
          if (!workChangeConcernsObject(type, w, old, type !== 'DELETED' && this.reconciler.works.isEcho(w))) return;
          for (const sourceKey of sources) {
            const source = decodeKey(sourceKey);
            if (source?.kind === 'object') this.enqueue(source);
          }
        };
        const writing = type === 'DELETED' ? undefined : this.reconciler.works.writing(w.metadata.namespace, w.metadata.name);
        if (writing) void writing.then(decide);
        else decide();
      },
    });
    // Other WDSs' works: the same object sent to one cluster by two WDSs is a conflict to report.
    this.otherWorks = new Informer<ManifestWork>(options.its, {
      path: WORKS, labelSelector: `${WDS_LABEL}!=${options.wdsName}`, transform: conflictCopy, onError: onError('manifestworks of other WDSs'),
      onChange: (type, w) => {
        for (const id of this.reconciler.conflicts.index(type === 'DELETED', w)) {
          if (!id.resource || !id.name) continue;
          for (const k of this.workload.keysFor({ group: id.group ?? '', resource: id.resource }, id.namespace ?? '', id.name)) this.enqueue(k);
        }
      },
    });
    this.watch = new WorkloadWatch({
      wds: options.wds, cats: options.cats, workload: this.workload, log: options.log,
      enqueue: (k) => this.enqueue(k),
      heard: (k) => { for (const l of this.objectListeners) l(k); },
      forgetResource: (r) => this.reconciler.forgetResource(r),
    });
    this.reconciler = new Reconciler({
      wdsName: options.wdsName, wds: options.wds, its: options.its, log: options.log,
      caches: { policies: this.policies.store, transforms: this.transforms.store, clusters: this.clusters.store, properties: this.properties.store, works: this.works.store, workload: this.workload },
      templates: options.templates, validate: options.validate, defaultExecutor: options.defaultExecutor, bundleLimits: options.bundleLimits,
      enqueue: (k, afterMs) => this.enqueue(k, afterMs),
    });
    // A Binding that may have changed (its objects, its clusters, how they fare): its policy's
    // status (Ready, per-cluster counts) is looked at again, once per POLICY_STATUS_COALESCE_MS:
    // placing 1,000 objects in 10 clusters changes it 10,000 times, and each look reads them all.
    // The pause grows with what a look costs (at most a tenth of the thread's time): at 1,000
    // clusters a look reads 100,000 (object, cluster) states.
    this.reconciler.bindings.onChange((p, statusOnly) => {
      if (statusOnly) return;
      this.policyStatusDue.add(p);
      this.policyStatusTimer ??= setTimeout(() => {
        this.policyStatusTimer = undefined;
        for (const name of this.policyStatusDue) this.enqueue(policyKey(name));
        this.policyStatusDue.clear();
      }, Math.max(POLICY_STATUS_COALESCE_MS, POLICY_STATUS_COST_FACTOR * this.reconciler.policyStatusCostMs));
    });
  }

  /**
   * Whether this replica writes (ManifestWorks, policy status): set by leader election. Becoming
   * leader reconciles everything again, from the ITS as it is now.
   */
  setLeading(leading: boolean): void {
    if (leading === this.reconciler.leading) return;
    this.reconciler.leading = leading;
    if (!leading) return;
    for (const p of this.policies.list()) this.enqueue(policyKey(p.metadata.name));
    this.enqueueAll();
  }

  async start(): Promise<void> {
    const fixed = [this.policies, this.transforms, this.clusters, this.properties, this.works, this.otherWorks];
    for (const i of fixed) i.start();
    await this.watch.start();
    await Promise.all(fixed.map((i) => i.synced));
    await this.watch.synced();
    this.workersDone = runWorkers(this.queue, this.options.workers ?? 16, (key) => this.reconcile(key),
      (key, err) => this.options.log(`placement: ${key}: ${(err as Error).message}`));
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    this.watch.stop();
    if (this.policyStatusTimer) clearTimeout(this.policyStatusTimer);
    for (const i of [this.policies, this.transforms, this.clusters, this.properties, this.works, this.otherWorks]) i.stop();
    this.queue.shutDown();
    await this.workersDone;
  }

  /** Calls `cb(policyName, statusOnly)` whenever that policy's Binding may have changed (statusOnly: only its status); returns the unsubscriber. */
  onBindingChange(cb: (policy: string, statusOnly: boolean) => void): () => void {
    return this.reconciler.bindings.onChange(cb);
  }

  /** What the status controller reads: the workload caches and the recorded placements. */
  statusSources(): StatusSources {
    return {
      find: (k) => this.workload.find(k),
      stored: (k) => this.workload.stored(k),
      placement: (source) => this.reconciler.bindings.placement(source),
      keysFor: (native, namespace, name) => this.workload.keysFor(native, namespace, name),
      allKeys: () => this.workload.allKeys(),
      policy: (name) => this.policies.get('', name),
      recordStatusErrors: (source, byPolicy) => this.reconciler.recordStatusErrors(source, byPolicy),
      onPlacementChange: (cb) => this.reconciler.bindings.onPlacementChange(cb),
      onObjectChange: (cb) => {
        this.objectListeners.add(cb);
        return () => { this.objectListeners.delete(cb); };
      },
      bundleCarrying: (cluster, id) => this.reconciler.works.bundleCarrying(cluster, id),
      onWorkReport: (cb) => {
        this.workReportListeners.add(cb);
        return () => { this.workReportListeners.delete(cb); };
      },
    };
  }

  /** The Binding of one BindingPolicy (KubeStellar's shape; with a view, as one reader may see it), or undefined when there is no such policy. */
  binding(name: string, view?: BindingView): Binding | undefined {
    return this.reconciler.bindings.binding(name, view);
  }

  bindings(): Binding[] {
    return this.reconciler.bindings.list();
  }

  /** A BindingPolicy as cached (never to be mutated). */
  policy(name: string): BindingPolicy | undefined {
    return this.policies.get('', name);
  }

  policyNames(): string[] {
    return this.policies.list().map((p) => p.metadata.name);
  }

  /** Where policies' status.upsync comes from (the upsync controller); `changed(policy)` when one's may differ. */
  setUpsyncStatus(of: (policy: string) => UpsyncClusterStatus[]): (policy: string) => void {
    this.reconciler.status.upsyncOf = of;
    return (policy) => this.enqueue(policyKey(policy));
  }

  private enqueue(k: QueueKey, afterMs?: number): void {
    if (afterMs === undefined) this.queue.add(encodeKey(k));
    else this.queue.addAfter(encodeKey(k), afterMs);
  }

  /** Every object again: called when what resolution reads changed. */
  private enqueueAll(): void {
    this.reconciler.resolutionInputsChanged();
    for (const k of this.workload.allKeys()) this.enqueue(k);
  }

  private async reconcile(key: string): Promise<void> {
    const k = decodeKey(key);
    if (!k) throw new Error(`not a queue key: ${key}`);
    await this.reconciler.reconcile(k);
  }
}
