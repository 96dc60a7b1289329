// Reconciliation of one queue key, over caches only (Stores: the controller's informers fill them,
// unit tests fill them directly) and the two upstreams it writes to.
// An object: resolve its clusters (a Namespace also goes wherever an object in it goes, see
// ./namespace-reach.ts), strip it, apply the CustomTransforms for its kind, expand templates per
// cluster, wrap one ManifestWork per cluster; report wrapping errors and WDS conflicts to the
// selecting policies; record its placement for the Bindings; then — the leader only — apply the
// works that differ from what was last written and delete this object's works in other clusters.
// A policy: its finalizer and status (./policy-status.ts), the leader only. Standbys resolve too,
// so their Bindings are current and a new leader starts from warm caches.
import type { Store } from '../../kube/informer.js';
import type { JsonObject } from '../../kube/objects.js';
import type { Upstream } from '../../kube/upstream.js';
import { resolve, type Cluster, type Modulation, type Policy, type Resolution, type WorkloadRef } from '../resolution.js';
import {
  applyRemovals, clusterProperties, EXPAND_TEMPLATES_ANNOTATION, expandTemplates, manifestWork, manifestWorkName, stripServerFields, WrapError,
  type ManifestWork,
} from '../wrapping.js';
import type { BindingPolicy, CustomTransform, ManagedCluster } from './api.js';
import { Bindings } from './bindings.js';
import { Conflicts } from './conflicts.js';
import { encodeKey, namespaceKey, SOURCE_ANNOTATION, type ObjectKey, type QueueKey, type ResourceRef } from './keys.js';
import { NamespaceReach, type Reach } from './namespace-reach.js';
import { PolicyStatus, selectorErrors } from './policy-status.js';
import type { SentObject, WorkloadCaches } from './workload.js';
import { Works } from './works.js';

/** What reconciliation reads. */
export interface PlacementCaches {
  policies: Store<BindingPolicy>;
  transforms: Store<CustomTransform>;
  clusters: Store<ManagedCluster>;
  /** This WDS's ManifestWorks (made with Works.newStore, for its indexes). */
  works: Store<ManifestWork>;
  workload: WorkloadCaches;
}

export interface ReconcilerOptions {
  wdsName: string;
  wds: Upstream;
  its: Upstream;
  caches: PlacementCaches;
  /** Queues a key (after a delay, when given). */
  enqueue: (k: QueueKey, afterMs?: number) => void;
  log: (msg: string) => void;
}

const reachOf = (r: Resolution): Reach => ({ clusters: r.clusters, policies: r.policies });

const modulationsOf = (r: Resolution): Record<string, Modulation> => Object.fromEntries(Object.entries(r.byPolicy)
  .map(([p, m]) => [p, { createOnly: m.createOnly, wantSingletonReportedState: m.wantSingletonReportedState, wantMultiWECReportedState: m.wantMultiWECReportedState, statusCollectors: m.statusCollectors }]));

export class Reconciler {
  readonly works: Works;
  readonly conflicts: Conflicts;
  readonly bindings: Bindings;
  private readonly status: PolicyStatus;
  private readonly reach = new NamespaceReach();
  private leader = false;

  constructor(private readonly o: ReconcilerOptions) {
    const c = o.caches;
    this.works = new Works(o.its, c.works, `kubestellar-view-${o.wdsName}`);
    this.conflicts = new Conflicts(o.wds, o.wdsName, o.log);
    this.bindings = new Bindings(c.policies, c.clusters);
    this.status = new PolicyStatus(o.wds, c.policies, this.works, o.enqueue);
  }

  get leading(): boolean {
    return this.leader;
  }

  /** Only the leader writes. A new leader forgets what it wrote before: the ITS may have changed since. */
  set leading(leading: boolean) {
    if (leading && !this.leader) this.works.forgetWrites();
    this.leader = leading;
  }

  async reconcile(k: QueueKey): Promise<void> {
    if (k.kind === 'object') return this.reconcileObject(k);
    if (this.leader) await this.status.reconcile(k.name);
  }

  /**
   * What resolution reads changed (a policy, a CustomTransform, a cluster, leadership): every
   * object is queued again, and what each recorded for its Namespace is stale until then, so a
   * Namespace reconciled before its objects resolves them afresh instead of using old records.
   */
  resolutionInputsChanged(): void {
    this.reach.clear();
  }

  /** A resource is no longer watched: its objects reach no Namespace any more. */
  forgetResource(r: ResourceRef): void {
    for (const ns of this.reach.forgetResource(r)) this.o.enqueue(namespaceKey(ns));
  }

  private async reconcileObject(k: ObjectKey): Promise<void> {
    const { caches, wdsName } = this.o;
    const source = encodeKey(k);
    const found = caches.workload.find(k);
    const resolveRef = this.resolver();
    const resolution = found ? resolveRef(found.ref) : undefined;
    if (k.namespace && this.reach.record(k, resolution && reachOf(resolution))) this.o.enqueue(namespaceKey(k.namespace));

    const selecting = resolution?.policies ?? [];
    let desired = new Map<string, ManifestWork>();
    const errors = new Map<string, string[]>();
    const addError = (policy: string, message: string) => errors.set(policy, [...(errors.get(policy) ?? []), message]);
    if (found && resolution) {
      const clusters = new Set(resolution.clusters);
      const policyNames = new Set(resolution.policies);
      if (found.id.group === '' && found.id.resource === 'namespaces') {
        const inner = this.reach.union(caches.workload.keysInNamespace(found.id.name), (ik) => {
          const o = caches.workload.find(ik);
          return o && reachOf(resolveRef(o.ref));
        });
        for (const c of inner.clusters) clusters.add(c);
        for (const p of inner.policies) policyNames.add(p);
      }
      // Most objects go nowhere: they are not copied and stripped for nothing.
      if (clusters.size > 0) desired = this.wrap(found, clusters, [...policyNames].sort(), resolution.createOnly, addError);
      for (const cluster of desired.keys()) {
        const others = this.conflicts.otherWDSs(cluster, found.id);
        if (others.length === 0) continue;
        const what = `${found.id.resource}${found.id.group ? `.${found.id.group}` : ''} ${found.id.namespace ? `${found.id.namespace}/` : ''}${found.id.name}`;
        const message = `conflict: cluster ${cluster} also receives ${what} from WDS ${others.join(', ')}`;
        for (const p of selecting) addError(p, message);
        if (this.leader) {
          await this.conflicts.announce(cluster, found.id, others, selecting.map((name) => ({ name, uid: caches.policies.get('', name)?.metadata.uid })), message);
        }
      }
    }
    this.status.recordErrors(source, errors);

    const workName = manifestWorkName(wdsName, found?.id ?? { ...k.resource, namespace: k.namespace, name: k.name, group: caches.workload.nativeGroupOf(k.resource) });
    this.bindings.record(source, found && selecting.length > 0 ? { id: found.id, resourceVersion: found.native.metadata.resourceVersion ?? '', policies: selecting, modulations: modulationsOf(resolution!) } : undefined);
    for (const work of desired.values()) work.metadata.annotations = { [SOURCE_ANNOTATION]: source };
    if (!this.leader) return;
    for (const [cluster, work] of desired) await this.works.apply(cluster, work);
    for (const cluster of this.works.clustersOf(workName)) {
      if (!desired.has(cluster)) await this.works.delete(cluster, workName);
    }
  }

  /** Resolution of objects against the live, well-formed policies and the clusters, as they are now. */
  private resolver(): (ref: WorkloadRef) => Resolution {
    const { caches } = this.o;
    const policies = caches.policies.list().filter((p) => !p.metadata.deletionTimestamp)
      .map((p): Policy => ({ name: p.metadata.name, spec: p.spec ?? {} })).filter((p) => selectorErrors(p).length === 0);
    const clusters = caches.clusters.list().map((c): Cluster => ({ name: c.metadata.name, labels: c.metadata.labels ?? {} }));
    return (ref) => resolve(ref, ref.namespace ? caches.workload.namespaceLabels(ref.namespace) ?? {} : undefined, policies, clusters);
  }

  /** The work carrying the object to each cluster; a cluster it cannot be wrapped for is an error of each policy. */
  private wrap(found: SentObject, clusters: Iterable<string>, policies: readonly string[], createOnly: boolean,
    addError: (policy: string, message: string) => void): Map<string, ManifestWork> {
    const { caches, wdsName } = this.o;
    let manifest = stripServerFields(found.native, found.id);
    for (const t of caches.transforms.list()) {
      if ((t.spec?.apiGroup ?? '') === found.id.group && t.spec?.resource === found.id.resource) manifest = applyRemovals(manifest, t.spec?.remove ?? []);
    }
    const expand = found.native.metadata.annotations?.[EXPAND_TEMPLATES_ANNOTATION] === 'true';
    const out = new Map<string, ManifestWork>();
    for (const cluster of clusters) {
      try {
        const mc = caches.clusters.get('', cluster);
        const content = expand ? expandTemplates(manifest, clusterProperties({ name: cluster, labels: mc?.metadata.labels, annotations: mc?.metadata.annotations })) as JsonObject : manifest;
        out.set(cluster, manifestWork(content, { wds: wdsName, cluster, id: found.id, policies, createOnly }));
      } catch (err) {
        if (!(err instanceof WrapError)) throw err;
        for (const p of policies) addError(p, `${cluster}: ${err.message}`);
      }
    }
    return out;
  }
}
