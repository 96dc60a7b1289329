// The workload informers of the placement controller: one per workload resource of the WDS
// (../model/workload-resources.ts), rediscovered every REDISCOVER_MS, and at once when a CRD of the
// WDS changes, so CRDs that come and go start and stop theirs. Each informer fills its Store in
// the workload caches (./workload.ts) and only turns changes into queue keys: an object's own key
// unless only its status, resourceVersion or the status controller's marks changed; for a
// Namespace whose labels changed, every object in it. Whoever else listens (the status
// controller) hears every change (`heard`).
import { aggregatedDiscoveryOf } from '../../kube/discovery.js';
import { Informer, withoutManagedFields, type ChangeType } from '../../kube/informer.js';
import type { KubeList, KubeObject } from '../../kube/objects.js';
import { groupVersionPath } from '../../kube/request-info.js';
import { upstreamJson, type Upstream } from '../../kube/upstream.js';
import { TimeoutError, withTimeout } from '../../kube/wait.js';
import { DENATURED_FROM_LABEL } from '../../storage/crd-schema.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import type { WorkloadObject } from '../model/api.js';
import { NAMESPACES, resourceKey, type ObjectKey, type ResourceRef } from '../model/keys.js';
import { EXECUTING_COUNT_LABEL, RETURNED_FROM_ANNOTATION } from '../model/marks.js';
import { workloadResources, type WorkloadResource } from '../model/workload-resources.js';
import { WORKLOAD_INDEXERS, type WorkloadCaches } from './workload.js';

const REDISCOVER_MS = 10_000;
/** After a CRD changes: soon, once the burst of its events (created, names accepted, Established) is over. */
const CRD_REDISCOVER_MS = 200;
const WORKLOAD_SYNC_TIMEOUT_MS = 60_000;

export interface WorkloadWatchOptions {
  wds: Upstream;
  cats: KindCategories;
  /** The caches the informers' Stores join. */
  workload: WorkloadCaches;
  /** Queues an object's key for placement. */
  enqueue: (k: ObjectKey) => void;
  /** Every change of a workload object (the status controller listens). */
  heard: (k: ObjectKey) => void;
  /** A resource is no longer watched. */
  forgetResource: (r: ResourceRef) => void;
  log: (msg: string) => void;
}

const labelsOf = (o: KubeObject | undefined) => JSON.stringify(o?.metadata?.labels ?? {});

/** What placement reads of an object: all but status, resourceVersion, managedFields and the status controller's marks. */
function placementView(o: WorkloadObject): string {
  const { status: _status, ...rest } = o as WorkloadObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, labels, annotations, ...meta } = o.metadata;
  const { [EXECUTING_COUNT_LABEL]: _count, ...otherLabels } = labels ?? {};
  const { [RETURNED_FROM_ANNOTATION]: _from, ...otherAnnotations } = annotations ?? {};
  return JSON.stringify({ ...rest, metadata: { ...meta, labels: otherLabels, annotations: otherAnnotations } });
}

export class WorkloadWatch {
  private readonly workloadInformers = new Map<string, Informer<WorkloadObject>>();
  /** CRDs of the WDS: a new one's resource is watched at once, not at the next rediscovery. */
  private readonly crds: Informer<KubeObject>;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;

  constructor(private readonly options: WorkloadWatchOptions) {
    this.crds = new Informer<KubeObject>(options.wds, {
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', metadataOnly: true, onError: (err) => options.log(`placement: customresourcedefinitions: ${err.message}`),
      onChange: () => {
        if (this.soon) clearTimeout(this.soon);
        this.soon = setTimeout(() => this.rediscoverInBackground(), CRD_REDISCOVER_MS);
      },
    });
  }

  /** Watches the CRDs, discovers the workload resources once (their informers started), then every REDISCOVER_MS. */
  async start(): Promise<void> {
    this.crds.start();
    await this.rediscover();
    this.timer = setInterval(() => this.rediscoverInBackground(), REDISCOVER_MS);
  }

  /**
   * Waits (a bounded time: a resource that cannot be listed must not stop placement) until the
   * workload caches are complete: a Namespace reconciled before the objects in it were listed
   * would take its works back from clusters they still reach.
   */
  async synced(): Promise<void> {
    const informers = [...this.workloadInformers.values()];
    try {
      await withTimeout(Promise.all(informers.map((i) => i.synced)), WORKLOAD_SYNC_TIMEOUT_MS);
    } catch (err) {
      if (!(err instanceof TimeoutError)) throw err;
      this.options.log(`placement: ${informers.filter((i) => !i.hasSynced).length} workload resources not listed after ${WORKLOAD_SYNC_TIMEOUT_MS / 1000} s; reconciling anyway`);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.crds.stop();
    for (const informer of this.workloadInformers.values()) informer.stop();
  }

  /** rediscover() off the caller's path: a failure is logged, the next round tries again. */
  private rediscoverInBackground(): void {
    this.rediscover().catch((err) => this.options.log(`placement: discovery: ${(err as Error).message}`));
  }

  /** Every workload resource has an informer; resources that went away lose theirs. */
  private async rediscover(): Promise<void> {
    const [[core, groups], crds] = await Promise.all([
      aggregatedDiscoveryOf(this.options.wds),
      upstreamJson<KubeList>(this.options.wds, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=${encodeURIComponent(DENATURED_FROM_LABEL)}`),
    ]);
    const from = new Map<string, string>();
    for (const crd of crds.items) {
      const label = crd.metadata?.labels?.[DENATURED_FROM_LABEL] ?? '';
      const plural = (crd.spec as { names?: { plural?: string } } | undefined)?.names?.plural;
      const dot = label.indexOf('.');
      if (dot > 0 && plural) from.set(plural, label.slice(dot + 1) === 'core' ? '' : label.slice(dot + 1));
    }
    const wanted = workloadResources([core, groups], this.options.cats, (plural) => from.get(plural));
    const keys = new Set(wanted.map(resourceKey));
    for (const res of this.options.workload.resources()) {
      if (keys.has(resourceKey(res))) continue;
      this.workloadInformers.get(resourceKey(res))?.stop();
      this.workloadInformers.delete(resourceKey(res));
      this.options.workload.remove(res);
      this.options.forgetResource(res);
    }
    for (const res of wanted) {
      if (this.options.workload.has(res)) continue;
      const informer = this.workloadInformer(res);
      this.workloadInformers.set(resourceKey(res), informer);
      this.options.workload.add(res, informer.store);
      informer.start();
    }
  }

  /** The informer of one workload resource: it queues keys, nothing else (it runs on the view's event loop). */
  private workloadInformer(res: WorkloadResource): Informer<WorkloadObject> {
    const path = `${groupVersionPath(res.group, res.version)}/${res.resource}`;
    const isNamespaces = resourceKey(res) === resourceKey(NAMESPACES);
    return new Informer<WorkloadObject>(this.options.wds, {
      // Nothing here reads managedFields (works are made of stripped copies): not kept.
      path, indexers: WORKLOAD_INDEXERS, transform: withoutManagedFields,
      onChange: (type: ChangeType, obj, old) => {
        const key = this.options.workload.keyOf(res, obj);
        // A change of status alone (the status controller's returned status and marks) sends nothing new.
        if (type !== 'MODIFIED' || !old || placementView(old) !== placementView(obj)) this.options.enqueue(key);
        this.options.heard(key);
        // Namespace selectors read a Namespace's labels: the objects in it resolve anew.
        if (isNamespaces && type === 'MODIFIED' && labelsOf(old) !== labelsOf(obj)) {
          for (const k of this.options.workload.keysInNamespace(obj.metadata.name)) this.options.enqueue(k);
        }
      },
      onError: (err) => this.options.log(`placement: ${path}: ${err.message}`),
    });
  }
}
