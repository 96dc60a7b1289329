// Reconciliation of one queue key, over caches only (Stores: the controller's informers fill them,
// unit tests fill them directly) and the two upstreams it writes to.
// An object: resolve its clusters (a Namespace also goes wherever an object in it is actually sent,
// see ./namespace-reach.ts), compute the work it wants in each (./desired.ts: strip, transform,
// expand templates, wrap); template expansion failures freeze the failing policies' works in that
// cluster (./expansion-failures.ts); report to the selecting policies what they should know
// (./object-report.ts: expansion and wrap errors, WDS conflicts, manifests a cluster's agent could not apply
// (./apply-failures.ts), more than one cluster for a singleton, an object written straight to the
// WDS or shadowing such one); a denatured object that is no valid object of its kind (Kubernetes'
// validation never ran on it in the WDS: stored around the view, say before its admission webhook)
// is held back like a frozen work — its works stay as they are, none is created — and its
// policies say why; record its placement for the Bindings;
// a cluster where its work's name is held by a work that is not this WDS's is not written either,
// and its policies say why (./object-works.ts);
// then — the leader only — apply the works that differ from what was last written and delete this
// object's works in the clusters it no longer goes to (frozen ones stay) and under other names
// (./object-works.ts).
// A policy: its finalizer and status (./policy-status.ts), the leader only. Standbys resolve too,
// so their Bindings are current and a new leader starts from warm caches.
import type { Store } from '../../kube/informer.js';
import type { Upstream } from '../../kube/upstream.js';
import { SOURCE_GENERATION_ANNOTATION } from '../../kube/ocm-api.js';
import { resolve, type Cluster, type Policy, type Resolution, type WorkloadRef } from '../model/resolution.js';
import { policyLabel, type ManifestWork, type ObjectIdentity } from '../model/wrapping.js';
import type { BindingPolicy, CustomTransform, ManagedCluster, WorkloadObject } from '../model/api.js';
import { Bindings } from './bindings.js';
import { Conflicts } from './conflicts.js';
import { desiredWorks, expandsTemplates, type DesiredSources, type Expander, type PropertyConfigMap } from './desired.js';
import { ObjectEvents } from './events.js';
import { ExpansionFailures } from './expansion-failures.js';
import { describeObject, encodeKey, namespaceKey, SOURCE_ANNOTATION, type ObjectKey, type QueueKey, type ResourceRef } from '../model/keys.js';
import { NamespaceReach, type Reach } from './namespace-reach.js';
import { PolicyStatus, selectorErrors } from './policy-status.js';
import { clusterReadiness, objectOutcome } from './destination-state.js';
import type { SentObject } from '../model/sent.js';
import type { WorkloadCaches } from './workload.js';
import { Works } from './works.js';
import { refuseTakenNames, writeObjectWorks } from './object-works.js';
import { Bundles, DEFAULT_BUNDLE_LIMITS, type BundleLimits } from './bundles.js';
import { executorErrors, type ServiceAccountRef } from '../model/executor.js';
import { ObjectReporter, sendersTo } from './object-report.js';

/** What reconciliation reads. */
export interface PlacementCaches {
  policies: Store<BindingPolicy>;
  transforms: Store<CustomTransform>;
  clusters: Store<ManagedCluster>;
  /** ConfigMaps of the ITS namespace customization-properties (template properties per cluster). */
  properties: Store<PropertyConfigMap>;
  /** This WDS's ManifestWorks (made with Works.newStore, for its indexes). */
  works: Store<ManifestWork>;
  workload: WorkloadCaches;
}

/**
 * Kubernetes' verdict on a denatured object (its stored form) before it is sent: why it is no valid
 * object of its kind, or undefined when it is; throws when it cannot tell (tried again later).
 */
export type DenaturedValidator = (id: ObjectIdentity, stored: WorkloadObject) => Promise<string | undefined>;

export interface ReconcilerOptions {
  wdsName: string;
  wds: Upstream;
  its: Upstream;
  caches: PlacementCaches;
  /** Go's text/template (absent: objects asking for expansion fail to expand, and say why). */
  templates?: Expander;
  /** Validation of denatured objects (absent: they are sent unvalidated; ksview serve always gives one). */
  validate?: DenaturedValidator;
  /** The executor of the works of policies that name none (`ksview serve --default-executor`; absent: none). */
  defaultExecutor?: ServiceAccountRef;
  /** How objects are packed into works (`--max-objects-per-work`, `--max-bytes-per-work`; absent: a work per object). */
  bundleLimits?: BundleLimits;
  /** Queues a key (after a delay, when given). */
  enqueue: (k: QueueKey, afterMs?: number) => void;
  log: (msg: string) => void;
}

const describe = describeObject;

export { WRITES_PER_OBJECT } from './object-works.js';

export class Reconciler {
  readonly works: Works;
  readonly bundles: Bundles;
  readonly conflicts: Conflicts;
  readonly bindings: Bindings;
  /** What the selecting policies are told of an object, and its works' executors. */
  private readonly reporter: ObjectReporter;
  readonly status: PolicyStatus;
  /** What computing an object's works reads (the caches, the template expander). */
  private readonly sources: DesiredSources;
  private readonly reach = new NamespaceReach();
  private readonly expansion = new ExpansionFailures();
  /** Objects asking for template expansion whose failures are recorded under the current inputs. */
  private readonly evaluated = new Set<string>();
  private leader = false;

  constructor(private readonly options: ReconcilerOptions) {
    const c = options.caches;
    const limits = options.bundleLimits ?? DEFAULT_BUNDLE_LIMITS;
    this.conflicts = new Conflicts();
    this.works = new Works(options.its, c.works, `kubestellar-view-${options.wdsName}`, options.wdsName, limits.objects > 1, (cluster, name) => this.conflicts.ownerOf(cluster, name));
    this.bundles = new Bundles(options.wdsName, this.works, limits, options.log);
    this.bindings = new Bindings(c.policies, c.clusters, {
      outcome: (cluster, id) => objectOutcome(this.works.carrying(cluster, id), clusterReadiness(c.clusters.get('', cluster))),
      readiness: (cluster) => clusterReadiness(c.clusters.get('', cluster)),
    });
    this.status = new PolicyStatus(options.wds, c.policies, this.works, this.bindings, options.enqueue, options.defaultExecutor);
    this.sources = { ...c, wdsName: options.wdsName, templates: options.templates };
    this.reporter = new ObjectReporter({
      wdsName: options.wdsName, works: this.works, conflicts: this.conflicts, events: new ObjectEvents(options.wds, options.wdsName, options.log),
      policies: c.policies, defaultExecutor: options.defaultExecutor, leading: () => this.leader,
    });
  }

  get leading(): boolean {
    return this.leader;
  }

  /** What the last look at a policy's status cost (ms), to pace the next. */
  get policyStatusCostMs(): number {
    return this.status.lastCostMs;
  }

  /** Only the leader writes. A new leader forgets what it wrote before: the ITS may have changed since. */
  set leading(leading: boolean) {
    // The bundles' state and scheduled writes are the leader's only: dropped either way.
    if (leading !== this.leader) this.bundles.forget();
    if (leading && !this.leader) {
      this.works.forgetWrites();
      this.status.forgetWrites();
    }
    this.leader = leading;
  }

  /**
   * What returning an object's status found wrong, per selecting policy (the status controller's:
   * a cluster's report refused or capped, the WDS refusing the status returned), shown in those
   * policies' status.errors beside what placing it found.
   */
  recordStatusErrors(source: string, byPolicy: ReadonlyMap<string, string[]>): void {
    this.status.recordErrors(`status ${source}`, byPolicy);
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
    this.evaluated.clear();
  }

  /** A resource is no longer watched: its objects reach no Namespace any more. */
  forgetResource(r: ResourceRef): void {
    for (const ns of this.reach.forgetResource(r)) this.options.enqueue(namespaceKey(ns));
  }

  private async reconcileObject(k: ObjectKey): Promise<void> {
    const { caches } = this.options;
    const source = encodeKey(k);
    const found = caches.workload.find(k);
    if (found && encodeKey(found.key) !== source) {
      // Another resource holds this identity now (the view's twin of an object written natively,
      // or the reverse): its key carries the identity; this one records nothing.
      this.record(k, source, undefined, [], new Map(), undefined);
      this.recordExpansion(source, undefined, new Map(), () => undefined);
      this.options.enqueue(found.key);
      return;
    }
    const resolveRef = this.resolver();
    await this.evaluateExpansions(resolveRef);
    const resolution = found ? resolveRef(found.ref) : undefined;
    const selecting = resolution?.policies ?? [];
    const id = found?.id ?? { ...k.resource, namespace: k.namespace, name: k.name, group: caches.workload.nativeGroupOf(k.resource) };
    const errors = new Map<string, string[]>();
    const addError = (policy: string, message: string) => errors.set(policy, [...(errors.get(policy) ?? []), message]);
    let desired = new Map<string, ManifestWork>();
    const kept = new Set<string>();
    if (found && resolution) {
      const clusters = new Set(resolution.clusters);
      const policyNames = new Set(resolution.policies);
      // Clusters a Namespace goes to only because objects in it go there (never deleted there).
      const implied = new Set<string>();
      if (found.id.group === '' && found.id.resource === 'namespaces') {
        const inner = this.reach.union(caches.workload.keysInNamespace(found.id.name), (ik) => this.unrecordedReach(ik, resolveRef));
        for (const c of inner.clusters) if (!clusters.has(c)) implied.add(c);
        for (const c of inner.clusters) clusters.add(c);
        for (const p of inner.policies) policyNames.add(p);
      }
      // Most objects go nowhere: they are not copied, stripped nor validated for nothing.
      const invalid = clusters.size > 0 ? await this.invalidity(found) : undefined;
      const d = clusters.size > 0 && invalid === undefined
        ? await desiredWorks(this.sources, found, [...clusters].sort(), [...policyNames].sort(), resolution.createOnly, implied) : undefined;
      desired = d?.works ?? desired;
      for (const [cluster, message] of d?.wrapErrors ?? []) for (const p of policyNames) addError(p, `${cluster}: ${message}`);
      this.recordExpansion(source, resolution, d?.expansionErrors ?? new Map(), addError);
      for (const cluster of d ? new Set([...clusters, ...this.works.clustersOf(id)]) : []) {
        if (!this.frozen(cluster, id, resolution)) continue;
        desired.delete(cluster);
        if (this.works.carrying(cluster, id)) kept.add(cluster);
      }
      if (invalid !== undefined) {
        for (const p of policyNames) addError(p, `${describe(found.id)} is not sent: ${invalid}`);
        for (const cluster of this.works.clustersOf(id)) if (clusters.has(cluster)) kept.add(cluster);
      }
      this.reporter.applyExecutors(found, desired, kept, resolution, policyNames, addError);
      refuseTakenNames(this.works, found.id, desired, kept, (cluster, why) => {
        for (const p of sendersTo(resolution, cluster, policyNames)) addError(p, `conflict: ${describe(found.id)} is not sent to cluster ${cluster}: ${why}`);
      });
      await this.reporter.report(found, resolution, desired, addError);
      this.reporter.reportApplyFailures(found, desired, kept, resolution, policyNames, addError);
    } else {
      this.recordExpansion(source, undefined, new Map(), addError);
    }
    if (found && expandsTemplates(found)) this.evaluated.add(source);
    else this.evaluated.delete(source);
    this.record(k, source, found, selecting, errors, resolution && { clusters: [...desired.keys(), ...kept].sort(), policies: selecting });
    if (found && resolution && selecting.length > 0) {
      this.bindings.record(source, { id: found.id, resourceVersion: found.native.metadata.resourceVersion ?? '', policies: selecting, modulations: resolution.byPolicy });
    }
    // The source generation lets the agents report which WDS generation they hold (returned observedGeneration).
    const generation = found?.native.metadata.generation;
    const annotations = { [SOURCE_ANNOTATION]: source, ...(generation !== undefined ? { [SOURCE_GENERATION_ANNOTATION]: String(generation) } : {}) };
    for (const work of desired.values()) work.metadata.annotations = { ...annotations };
    if (!this.leader) return;
    await writeObjectWorks(this.works, this.bundles, id, desired, kept);
  }

  /**
   * Records the expansion failures of the objects asking for expansion that were not evaluated yet,
   * so that no sibling is written to a cluster its policy is frozen in just because it was
   * reconciled first (KubeStellar computes a Binding's works all at once).
   */
  private async evaluateExpansions(resolveRef: (ref: WorkloadRef) => Resolution): Promise<void> {
    const { caches } = this.options;
    for (const k of caches.workload.templatedKeys()) {
      const source = encodeKey(k);
      if (this.evaluated.has(source)) continue;
      const o = caches.workload.find(k);
      if (!o || encodeKey(o.key) !== source) continue;
      const r = resolveRef(o.ref);
      const d = r.clusters.length > 0 ? await desiredWorks(this.sources, o, r.clusters, r.policies, r.createOnly) : undefined;
      this.recordExpansion(source, r, d?.expansionErrors ?? new Map(), () => undefined);
      this.evaluated.add(source);
    }
  }

  /** Why a denatured object may not be sent (its stored form unreadable, or invalid for its kind), or undefined. */
  private async invalidity(found: SentObject): Promise<string | undefined> {
    if (found.unreadable !== undefined) return `its stored form cannot be read: ${found.unreadable} (written around the view)`;
    if (!found.denatured || !this.options.validate) return undefined;
    return this.options.validate(found.id, found.stored);
  }

  /** What an object (not reconciled since the records were cleared) adds to its Namespace. */
  private unrecordedReach(k: ObjectKey, resolveRef: (ref: WorkloadRef) => Resolution): Reach | undefined {
    const o = this.options.caches.workload.find(k);
    if (!o) return undefined;
    const r = resolveRef(o.ref);
    // An object expanded per cluster may fail to expand: until it is reconciled it counts only
    // where its works already are, so its Namespace never goes anywhere on its own.
    // Nor does one a frozen policy holds back.
    const existing = this.works.clustersOf(o.id);
    const clusters = expandsTemplates(o) ? existing.filter((c) => r.clusters.includes(c))
      : r.clusters.filter((c) => existing.includes(c) || !this.frozenBySelection(c, r));
    return { clusters, policies: r.policies };
  }

  /** Records an object's outcome: its errors per policy, its reach into its Namespace, its Binding entry (cleared here). */
  private record(k: ObjectKey, source: string, found: SentObject | undefined, selecting: readonly string[], errors: ReadonlyMap<string, string[]>, reach: Reach | undefined): void {
    this.status.recordErrors(source, errors);
    if (k.namespace && this.reach.record(k, reach)) this.options.enqueue(namespaceKey(k.namespace));
    if (!found || selecting.length === 0) this.bindings.record(source, undefined);
  }

  /**
   * Records where the object fails to expand, per selecting policy and cluster; reports each
   * policy's first failing destination (as KubeStellar's Binding does); a policy whose frozen
   * clusters changed gets its other objects reconciled again.
   */
  private recordExpansion(source: string, resolution: Resolution | undefined, failed: ReadonlyMap<string, readonly string[]>,
    addError: (policy: string, message: string) => void): void {
    const byPolicy = new Map<string, Map<string, string>>();
    for (const [policy, m] of Object.entries(resolution?.byPolicy ?? {})) {
      const mine = m.clusters.filter((c) => failed.has(c));
      if (mine.length === 0) continue;
      byPolicy.set(policy, new Map(mine.map((c) => [c, failed.get(c)!.join('; ')])));
      for (const message of failed.get(mine[0]!)!) addError(policy, message);
    }
    if (this.expansion.record(source, byPolicy).size > 0) {
      for (const key of this.options.caches.workload.allKeys()) if (encodeKey(key) !== source) this.options.enqueue(key);
    }
  }

  /** Whether a policy sending the object to the cluster (as resolved now) fails to expand something there. */
  private frozenBySelection(cluster: string, resolution: Resolution): boolean {
    return Object.entries(resolution.byPolicy).some(([policy, m]) => m.clusters.includes(cluster) && this.expansion.failing(policy, cluster));
  }

  /** Whether the object's work in a cluster is frozen: a policy sending it there (now, or when the work was written) fails to expand something there. */
  private frozen(cluster: string, id: ObjectIdentity, resolution: Resolution): boolean {
    if (this.frozenBySelection(cluster, resolution)) return true;
    const labels = this.works.carrying(cluster, id)?.metadata.labels ?? {};
    return this.expansion.failingIn(cluster).some((p) => labels[policyLabel(p)] !== undefined);
  }

  /** Resolution of objects against the live, well-formed policies and the clusters, as they are now. */
  private resolver(): (ref: WorkloadRef) => Resolution {
    const { caches } = this.options;
    const policies = caches.policies.list().filter((p) => !p.metadata.deletionTimestamp)
      .map((p): Policy => ({ name: p.metadata.name, spec: p.spec ?? {} }))
      // A policy naming a malformed executor selects nothing: it must not fall back to the agent's rights.
      .filter((p) => selectorErrors(p).length === 0 && executorErrors(p.spec).length === 0);
    const clusters = caches.clusters.list().map((c): Cluster => ({ name: c.metadata.name, labels: c.metadata.labels ?? {} }));
    return (ref) => resolve(ref, ref.namespace ? caches.workload.namespaceLabels(ref.namespace) ?? {} : undefined, policies, clusters);
  }
}
