// The placement controller of one WDS: BindingPolicies resolved into ManifestWorks in the ITS.
// Informers watch the workload (./workload-resources.ts, rediscovered every 10 s so CRDs that
// come and go start and stop theirs), the BindingPolicies and CustomTransforms of the WDS, and
// the ManagedClusters and this WDS's ManifestWorks in the ITS. Changes queue keys (never
// objects) on one WorkQueue: an object's key (and its Namespace's), or every object's when a
// policy, transform or cluster changes. Reconciling an object: resolve its clusters (a
// Namespace also goes wherever an object in it goes), wrap it for each, server-side apply the
// works that differ from what was last written, delete this object's works in other clusters.
// Errors of a policy (bad selectors, template or size errors of the objects it selects) go to its
// status.errors. Reads and writes use the server's own identity. Every replica resolves (and
// serves Bindings); only the elected leader (./leader-election.ts) writes.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { aggregatedDiscoveryOf } from '../kube/discovery.js';
import { DENATURED_FROM_LABEL } from '../storage/crd-schema.js';
import { NATIVE_NAME_ANNOTATION, storedName, toNative } from '../storage/denatured-translation.js';
import type { KindCategories } from '../storage/kind-categories.js';
import { upstreamJson, upstreamRequest, type Upstream } from '../kube/upstream.js';
import { Informer, type KubeObj } from '../kube/informer.js';
import { LabelSelectorError, validateLabelSelector } from '../kube/label-selector.js';
import { policyClusters, resolve, type Policy, type WorkloadRef } from './resolution.js';
import { runWorkers, WorkQueue } from '../kube/work-queue.js';
import { isSystemObject, workloadResources, type WorkloadResource } from './workload-resources.js';
import {
  applyRemovals, clusterProperties, EXPAND_TEMPLATES_ANNOTATION, expandTemplates, manifestWork, manifestWorkName, policyLabel, stripServerFields,
  WDS_LABEL, WrapError, type ObjectIdentity,
} from './wrapping.js';

const POLICIES = '/apis/control.kubestellar.io/v1alpha1/bindingpolicies';
const TRANSFORMS = '/apis/control.kubestellar.io/v1alpha1/customtransforms';
const CLUSTERS = '/apis/cluster.open-cluster-management.io/v1/managedclusters';
const WORKS = '/apis/work.open-cluster-management.io/v1/manifestworks';
const REDISCOVER_MS = 10_000;
/** On each ManifestWork: the queue key of the object it carries. */
export const SOURCE_ANNOTATION = 'view.kubestellar.io/source';
/** On each BindingPolicy while the controllers run: its deletion waits until its works are gone. */
export const CLEANUP_FINALIZER = 'control.kubestellar.io/placement-cleanup';

export interface PlacementOptions {
  wdsName: string;
  wds: Upstream;
  its: Upstream;
  cats: KindCategories;
  workers?: number;
  log: (msg: string) => void;
}

const resourceKey = (r: { group: string; version: string; resource: string }) => `${r.group}|${r.version}|${r.resource}`;

export class PlacementController {
  private readonly queue = new WorkQueue();
  private readonly informers = new Map<string, { res: WorkloadResource; informer: Informer }>();
  private readonly policies: Informer;
  private readonly transforms: Informer;
  private readonly clusters: Informer;
  private readonly works: Informer;
  private readonly otherWorks: Informer;
  /** other WDS's work (namespace/name) → identity key; identity key → work → its WDS. */
  private readonly otherWorkIdentity = new Map<string, string>();
  private readonly otherWorksByIdentity = new Map<string, Map<string, string>>();
  /** Conflicts already announced by an Event (identity key + WDSs). */
  private readonly announced = new Set<string>();
  private readonly policyGenerations = new Map<string, number>();
  /** work namespace/name → hash of what this controller last applied. */
  private readonly written = new Map<string, string>();
  /** work namespace/name → resourceVersion of this controller's last write of it. */
  private readonly ownWrites = new Map<string, string>();
  /** policy → object key → errors found while wrapping that object. */
  private readonly objectErrors = new Map<string, Map<string, string[]>>();
  private readonly fieldManager: string;
  /** source key → the object's identity, resourceVersion and the policies selecting it (for Bindings). */
  private readonly placed = new Map<string, { id: ObjectIdentity; resourceVersion: string; policies: string[] }>();
  private readonly bindingEvents = new EventEmitter();
  private bindingRV = 1;
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private workersDone: Promise<void> | undefined;

  constructor(private readonly o: PlacementOptions) {
    this.fieldManager = `kubestellar-view-${o.wdsName}`;
    const everything = () => this.enqueueAll();
    const onError = (what: string) => (err: Error) => o.log(`placement: ${what}: ${err.message}`);
    this.policies = new Informer(o.wds, {
      path: POLICIES, onError: onError('bindingpolicies'),
      onChange: (type, p) => {
        const name = p.metadata.name as string;
        this.queue.add(`p|${name}`);
        this.touchBinding(name);
        // A status write (ours) changes no resolution: only a new generation or a deletion does.
        const generation = type === 'DELETED' || p.metadata.deletionTimestamp ? -1 : Number(p.metadata.generation ?? 0);
        if (this.policyGenerations.get(name) === generation) return;
        if (generation < 0) this.policyGenerations.delete(name);
        else this.policyGenerations.set(name, generation);
        everything();
      },
    });
    this.transforms = new Informer(o.wds, { path: TRANSFORMS, onChange: everything, onError: onError('customtransforms') });
    this.clusters = new Informer(o.its, {
      path: CLUSTERS, onError: onError('managedclusters'),
      onChange: () => { for (const p of this.policies.list()) this.touchBinding(p.metadata.name); everything(); },
    });
    // A work changed or deleted by someone else, or left by an object deleted while this server
    // was down: its source object is reconciled again.
    this.works = new Informer(o.its, {
      path: WORKS, labelSelector: `${WDS_LABEL}=${o.wdsName}`, onError: onError('manifestworks'),
      onChange: (type, w) => {
        // The echo of our own write needs no second look.
        if (type !== 'DELETED' && this.ownWrites.get(`${w.metadata?.namespace}/${w.metadata?.name}`) === w.metadata?.resourceVersion) return;
        const source = w.metadata?.annotations?.[SOURCE_ANNOTATION];
        if (typeof source === 'string' && source.startsWith('o|')) this.queue.add(source);
      },
    });
    // Other WDSs' works: the same object sent to one cluster by two WDSs is a conflict to report.
    this.otherWorks = new Informer(o.its, {
      path: WORKS, labelSelector: `${WDS_LABEL}!=${o.wdsName}`, onError: onError('manifestworks of other WDSs'),
      onChange: (type, w) => this.indexOtherWork(type === 'DELETED', w),
    });
  }

  /**
   * Whether this replica writes (ManifestWorks, policy status): set by leader election. Becoming
   * leader reconciles everything again, from the ITS as it is now.
   */
  setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (!leading) return;
    this.written.clear();
    for (const p of this.policies.list()) this.queue.add(`p|${p.metadata.name}`);
    this.enqueueAll();
  }

  /** `<cluster>|<group>|<resource>|<namespace>|<name>` of the object a work carries. */
  private static identityKey(cluster: string, id: { group?: string; resource?: string; namespace?: string; name?: string }): string {
    return `${cluster}|${id.group ?? ''}|${id.resource ?? ''}|${id.namespace ?? ''}|${id.name ?? ''}`;
  }

  private indexOtherWork(deleted: boolean, w: KubeObj): void {
    const workKey = `${w.metadata?.namespace}/${w.metadata?.name}`;
    const previous = this.otherWorkIdentity.get(workKey);
    if (previous) this.otherWorksByIdentity.get(previous)?.delete(workKey);
    const rid = w.spec?.manifestConfigs?.[0]?.resourceIdentifier as KubeObj | undefined;
    const wds = String(w.metadata?.labels?.[WDS_LABEL] ?? '');
    if (!deleted && rid && wds) {
      const key = PlacementController.identityKey(w.metadata.namespace, rid);
      this.otherWorkIdentity.set(workKey, key);
      if (!this.otherWorksByIdentity.has(key)) this.otherWorksByIdentity.set(key, new Map());
      this.otherWorksByIdentity.get(key)!.set(workKey, wds);
    } else {
      this.otherWorkIdentity.delete(workKey);
    }
    // Our own object with that identity, if any, is reconciled again (conflict found or gone).
    const id = rid ?? {};
    for (const [k, { res }] of this.informers) {
      if (res.native.group === (id.group ?? '') && res.native.resource === id.resource) this.queue.add(`o|${k}|${id.namespace ?? ''}|${id.name}`);
    }
  }

  /** The other WDSs sending this object to this cluster. */
  private conflictingWDSs(cluster: string, id: ObjectIdentity): string[] {
    const works = this.otherWorksByIdentity.get(PlacementController.identityKey(cluster, id));
    return works ? [...new Set(works.values())].sort() : [];
  }

  async start(): Promise<void> {
    for (const i of [this.policies, this.transforms, this.clusters, this.works, this.otherWorks]) i.start();
    await this.rediscover();
    this.timer = setInterval(() => { this.rediscover().catch((err) => this.o.log(`placement: discovery: ${(err as Error).message}`)); }, REDISCOVER_MS);
    await Promise.all([this.policies.synced, this.transforms.synced, this.clusters.synced, this.works.synced, this.otherWorks.synced]);
    this.workersDone = runWorkers(this.queue, this.o.workers ?? 16, (key) => this.reconcile(key),
      (key, err) => this.o.log(`placement: ${key}: ${(err as Error).message}`));
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const i of [this.policies, this.transforms, this.clusters, this.works, this.otherWorks]) i.stop();
    for (const { informer } of this.informers.values()) informer.stop();
    this.queue.shutDown();
    await this.workersDone;
  }

  /** Every workload resource has an informer; resources that went away lose theirs. */
  private async rediscover(): Promise<void> {
    const [[core, groups], crds] = await Promise.all([
      aggregatedDiscoveryOf(this.o.wds),
      upstreamJson<{ items: KubeObj[] }>(this.o.wds, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=${encodeURIComponent(DENATURED_FROM_LABEL)}`),
    ]);
    const from = new Map<string, string>();
    for (const crd of crds.items) {
      const label = String(crd.metadata?.labels?.[DENATURED_FROM_LABEL] ?? '');
      const dot = label.indexOf('.');
      if (dot > 0) from.set(crd.spec?.names?.plural, label.slice(dot + 1) === 'core' ? '' : label.slice(dot + 1));
    }
    const wanted = workloadResources([core, groups], this.o.cats, (plural) => from.get(plural));
    const keys = new Set(wanted.map(resourceKey));
    for (const [k, { informer }] of this.informers) {
      if (!keys.has(k)) {
        informer.stop();
        this.informers.delete(k);
      }
    }
    for (const res of wanted) {
      const k = resourceKey(res);
      if (this.informers.has(k)) continue;
      const path = `${res.group === '' ? '/api' : `/apis/${res.group}`}/${res.version}/${res.resource}`;
      const informer = new Informer(this.o.wds, {
        path,
        onChange: (_t, obj) => {
          const ns = obj.metadata?.namespace ?? '';
          this.queue.add(`o|${k}|${ns}|${this.nativeName(res, obj)}`);
          if (ns) this.queue.add(`o|${resourceKey({ group: '', version: 'v1', resource: 'namespaces' })}||${ns}`);
        },
        onError: (err) => this.o.log(`placement: ${path}: ${err.message}`),
      });
      this.informers.set(k, { res, informer });
      informer.start();
    }
  }

  private enqueueAll(): void {
    for (const [k, { res, informer }] of this.informers) {
      for (const obj of informer.list()) this.queue.add(`o|${k}|${obj.metadata?.namespace ?? ''}|${this.nativeName(res, obj)}`);
    }
  }

  private async reconcile(key: string): Promise<void> {
    const [kind, ...rest] = key.split('|');
    if (kind === 'p') return this.reconcilePolicy(rest.join('|'));
    const [group, version, resource, namespace, name] = rest as [string, string, string, string, string];
    return this.reconcileObject({ group, version, resource }, namespace, name);
  }

  /** Keys carry native names (a deleted object's works are found by them); the cache has stored ones. */
  private nativeName(res: WorkloadResource, obj: KubeObj): string {
    if (res.group === res.native.group) return obj.metadata?.name;
    return obj.metadata?.annotations?.[NATIVE_NAME_ANNOTATION] ?? obj.metadata?.name;
  }

  private policyList(): Policy[] {
    return this.policies.list().filter((p) => !p.metadata?.deletionTimestamp).map((p) => ({ name: p.metadata.name, spec: p.spec ?? {} }));
  }

  /** The native form of a cached object and its identity, or undefined for objects never sent. */
  private workloadObject(res: WorkloadResource, obj: KubeObj): { id: ObjectIdentity; native: KubeObj; ref: WorkloadRef } | undefined {
    const native = res.group === res.native.group ? obj : toNative(obj, { group: res.native.group, version: res.version });
    if (isSystemObject(res.native, native)) return undefined;
    const id: ObjectIdentity = { group: res.native.group, version: res.version, resource: res.native.resource, namespace: native.metadata?.namespace ?? '', name: native.metadata?.name };
    return { id, native, ref: { group: id.group, resource: id.resource, namespace: id.namespace, name: id.name, labels: native.metadata?.labels ?? {} } };
  }

  private namespaceLabels(ns: string): Record<string, string> | undefined {
    return this.informers.get(resourceKey({ group: '', version: 'v1', resource: 'namespaces' }))?.informer.get('', ns)?.metadata?.labels;
  }

  private clustersOf(ref: WorkloadRef, policies: Policy[]): ReturnType<typeof resolve> {
    return resolve(ref, ref.namespace ? this.namespaceLabels(ref.namespace) ?? {} : undefined, policies, this.clusters.list().map((c) => ({ name: c.metadata.name, labels: c.metadata?.labels ?? {} })));
  }

  private async reconcileObject(r: { group: string; version: string; resource: string }, namespace: string, name: string): Promise<void> {
    const entry = this.informers.get(resourceKey(r));
    const denatured = entry !== undefined && entry.res.group !== entry.res.native.group;
    const cached = entry?.informer.get(namespace, denatured ? storedName(name) : name);
    const found = entry && cached ? this.workloadObject(entry.res, cached) : undefined;
    const objectKey = `${r.group}|${r.resource}|${namespace}|${name}`;
    const policies = this.policyList();
    const desired = new Map<string, KubeObj>();
    const errors = new Map<string, string[]>();
    let selecting: string[] = [];
    if (found) {
      const valid = policies.filter((p) => this.selectorErrors(p).length === 0);
      const resolution = this.clustersOf(found.ref, valid);
      const clusters = new Set(resolution.clusters);
      const policyNames = new Set(resolution.policies);
      selecting = resolution.policies;
      if (found.id.group === '' && found.id.resource === 'namespaces') {
        // A Namespace goes wherever an object in it goes.
        for (const { res, informer } of this.informers.values()) {
          if (!res.namespaced) continue;
          for (const o of informer.list()) {
            if (o.metadata?.namespace !== found.id.name) continue;
            const w = this.workloadObject(res, o);
            if (!w) continue;
            const inner = this.clustersOf(w.ref, valid);
            for (const c of inner.clusters) clusters.add(c);
            for (const p of inner.policies) policyNames.add(p);
          }
        }
      }
      let manifest = stripServerFields(found.native, found.id);
      for (const t of this.transforms.list()) {
        if ((t.spec?.apiGroup ?? '') === found.id.group && t.spec?.resource === found.id.resource) manifest = applyRemovals(manifest, t.spec?.remove ?? []);
      }
      const expand = found.native.metadata?.annotations?.[EXPAND_TEMPLATES_ANNOTATION] === 'true';
      for (const cluster of clusters) {
        try {
          const mc = this.clusters.get('', cluster);
          const content = expand ? expandTemplates(manifest, clusterProperties({ name: cluster, labels: mc?.metadata?.labels, annotations: mc?.metadata?.annotations })) as KubeObj : manifest;
          desired.set(cluster, manifestWork(content, { wds: this.o.wdsName, cluster, id: found.id, policies: [...policyNames].sort(), createOnly: resolution.createOnly }));
        } catch (err) {
          if (!(err instanceof WrapError)) throw err;
          for (const p of policyNames) errors.set(p, [...(errors.get(p) ?? []), `${cluster}: ${err.message}`]);
        }
      }
    }
    if (found) {
      for (const cluster of desired.keys()) {
        const others = this.conflictingWDSs(cluster, found.id);
        if (others.length === 0) continue;
        const what = `${found.id.resource}${found.id.group ? `.${found.id.group}` : ''} ${found.id.namespace ? `${found.id.namespace}/` : ''}${found.id.name}`;
        const message = `conflict: cluster ${cluster} also receives ${what} from WDS ${others.join(', ')}`;
        for (const p of selecting) errors.set(p, [...(errors.get(p) ?? []), message]);
        const announcement = `${PlacementController.identityKey(cluster, found.id)}|${others.join(',')}`;
        if (this.leading && !this.announced.has(announcement)) {
          this.announced.add(announcement);
          for (const p of selecting) await this.event(p, 'WDSConflict', message);
        }
      }
    }
    this.recordErrors(objectKey, errors);

    const workName = manifestWorkName(this.o.wdsName, found?.id ?? { ...r, namespace, name, group: this.nativeGroupOf(r) });
    const source = `o|${resourceKey(r)}|${namespace}|${name}`;
    this.recordPlacement(source, found && selecting.length > 0 ? { id: found.id, resourceVersion: found.native.metadata?.resourceVersion ?? '', policies: selecting } : undefined);
    for (const work of desired.values()) work.metadata.annotations = { [SOURCE_ANNOTATION]: source };
    // Only the leader writes; standbys keep their caches and Bindings current.
    if (!this.leading) return;
    for (const [cluster, work] of desired) await this.applyWork(cluster, work);
    for (const existing of this.works.list()) {
      if (existing.metadata?.name !== workName || desired.has(existing.metadata.namespace)) continue;
      await this.deleteWork(existing.metadata.namespace, workName);
    }
  }

  private recordPlacement(source: string, entry: { id: ObjectIdentity; resourceVersion: string; policies: string[] } | undefined): void {
    const before = this.placed.get(source);
    if (JSON.stringify(before) === JSON.stringify(entry)) return;
    if (entry) this.placed.set(source, entry);
    else this.placed.delete(source);
    for (const p of new Set([...(before?.policies ?? []), ...(entry?.policies ?? [])])) this.touchBinding(p);
  }

  private touchBinding(policy: string): void {
    this.bindingRV++;
    this.bindingEvents.emit('change', policy);
  }

  /** The resourceVersion of the bindings as a whole (it grows with every change). */
  bindingsResourceVersion(): string {
    return String(this.bindingRV);
  }

  /** Calls `cb(policyName)` whenever that policy's Binding may have changed; returns the unsubscriber. */
  onBindingChange(cb: (policy: string) => void): () => void {
    this.bindingEvents.on('change', cb);
    return () => { this.bindingEvents.off('change', cb); };
  }

  /** The Binding of one BindingPolicy (KubeStellar's shape), or undefined when there is no such policy. */
  binding(name: string): KubeObj | undefined {
    const p = this.policies.get('', name);
    if (!p) return undefined;
    const clusterScope: KubeObj[] = [];
    const namespaceScope: KubeObj[] = [];
    for (const e of this.placed.values()) {
      if (!e.policies.includes(name)) continue;
      const ref = { group: e.id.group, version: e.id.version, resource: e.id.resource };
      if (e.id.namespace) namespaceScope.push({ ...ref, namespace: e.id.namespace, name: e.id.name, resourceVersion: e.resourceVersion });
      else clusterScope.push({ ...ref, name: e.id.name, resourceVersion: e.resourceVersion });
    }
    const order = (a: KubeObj, b: KubeObj) => `${a.group}/${a.resource}/${a.namespace ?? ''}/${a.name}`.localeCompare(`${b.group}/${b.resource}/${b.namespace ?? ''}/${b.name}`);
    let destinations: string[] = [];
    try {
      destinations = policyClusters(p.spec ?? {}, this.clusters.list().map((c) => ({ name: c.metadata.name, labels: c.metadata?.labels ?? {} })));
    } catch { /* a malformed selector selects nothing; status.errors says why */ }
    return {
      apiVersion: 'view.kubestellar.io/v1alpha1', kind: 'Binding',
      metadata: { name, uid: p.metadata.uid, creationTimestamp: p.metadata.creationTimestamp, resourceVersion: this.bindingsResourceVersion(), generation: p.metadata.generation },
      spec: { workload: { clusterScope: clusterScope.sort(order), namespaceScope: namespaceScope.sort(order) }, destinations: destinations.map((clusterId) => ({ clusterId })) },
      status: { observedGeneration: p.metadata.generation, ...(p.status?.errors ? { errors: p.status.errors } : {}) },
    };
  }

  bindings(): KubeObj[] {
    return this.policies.list().map((p) => this.binding(p.metadata.name)!).filter(Boolean).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  private nativeGroupOf(r: { group: string; version: string; resource: string }): string {
    return this.informers.get(resourceKey(r))?.res.native.group ?? r.group;
  }

  private async applyWork(cluster: string, work: KubeObj): Promise<void> {
    const name = work.metadata.name as string;
    const body = JSON.stringify(work);
    const hash = createHash('sha256').update(body).digest('hex');
    const k = `${cluster}/${name}`;
    const live = this.works.get(cluster, name);
    if (this.written.get(k) === hash && live) return; // nothing would change
    const res = await upstreamRequest(this.o.its, 'PATCH', `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${name}?fieldManager=${this.fieldManager}&force=true`, {
      headers: { 'content-type': 'application/apply-patch+yaml' }, body: work,
    });
    if (res.status >= 300) throw new Error(`apply ManifestWork ${k}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    this.written.set(k, hash);
    this.ownWrites.set(k, (JSON.parse(res.body.toString('utf8')) as KubeObj).metadata?.resourceVersion);
  }

  private async setFinalizers(p: KubeObj, finalizers: string[]): Promise<void> {
    const res = await upstreamRequest(this.o.wds, 'PATCH', `${POLICIES}/${p.metadata.name}`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { finalizers, resourceVersion: p.metadata.resourceVersion } },
    });
    if (res.status === 409) throw new Error(`BindingPolicy ${p.metadata.name} changed meanwhile; retrying`);
    if (res.status >= 300 && res.status !== 404) throw new Error(`finalizers of BindingPolicy ${p.metadata.name}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
  }

  /** A Warning Event about a BindingPolicy in the WDS (namespace default: the policy is cluster-scoped). */
  private async event(policy: string, reason: string, message: string): Promise<void> {
    const p = this.policies.get('', policy);
    const now = new Date().toISOString();
    const res = await upstreamRequest(this.o.wds, 'POST', '/api/v1/namespaces/default/events', { body: {
      apiVersion: 'v1', kind: 'Event',
      metadata: { generateName: `${policy}.`, namespace: 'default' },
      involvedObject: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', name: policy, ...(p?.metadata?.uid ? { uid: p.metadata.uid } : {}) },
      reason, message, type: 'Warning', count: 1, firstTimestamp: now, lastTimestamp: now,
      source: { component: `kubestellar-view-${this.o.wdsName}` }, reportingComponent: `kubestellar-view-${this.o.wdsName}`,
    } });
    if (res.status >= 300) this.o.log(`placement: event for BindingPolicy ${policy}: ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
  }

  private async deleteWork(cluster: string, name: string): Promise<void> {
    const res = await upstreamRequest(this.o.its, 'DELETE', `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${name}`);
    if (res.status >= 300 && res.status !== 404) throw new Error(`delete ManifestWork ${cluster}/${name}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    this.written.delete(`${cluster}/${name}`);
    this.ownWrites.delete(`${cluster}/${name}`);
  }

  private selectorErrors(p: Policy): string[] {
    const errors: string[] = [];
    const check = (sel: unknown, path: string) => {
      try {
        validateLabelSelector((sel ?? {}) as never, path);
      } catch (err) {
        if (err instanceof LabelSelectorError) errors.push(err.message);
        else throw err;
      }
    };
    (p.spec.clusterSelectors ?? []).forEach((s, i) => check(s, `spec.clusterSelectors[${i}]`));
    (p.spec.downsync ?? []).forEach((c, i) => {
      (c.namespaceSelectors ?? []).forEach((s, j) => check(s, `spec.downsync[${i}].namespaceSelectors[${j}]`));
      (c.objectSelectors ?? []).forEach((s, j) => check(s, `spec.downsync[${i}].objectSelectors[${j}]`));
    });
    return errors;
  }

  private recordErrors(objectKey: string, byPolicy: Map<string, string[]>): void {
    const touched = new Set<string>(byPolicy.keys());
    for (const [policy, perObject] of this.objectErrors) if (perObject.has(objectKey)) touched.add(policy);
    for (const policy of touched) {
      const perObject = this.objectErrors.get(policy) ?? new Map<string, string[]>();
      const before = JSON.stringify(perObject.get(objectKey) ?? []);
      const now = byPolicy.get(policy) ?? [];
      if (now.length > 0) perObject.set(objectKey, now);
      else perObject.delete(objectKey);
      this.objectErrors.set(policy, perObject);
      if (before !== JSON.stringify(now)) this.queue.add(`p|${policy}`);
    }
  }

  /** status.errors and observedGeneration of one policy. */
  private async reconcilePolicy(name: string): Promise<void> {
    if (!this.leading) return;
    const p = this.policies.get('', name);
    if (!p) {
      this.objectErrors.delete(name);
      return;
    }
    const finalizers: string[] = p.metadata.finalizers ?? [];
    if (p.metadata.deletionTimestamp) {
      // Deleting: every object has been re-resolved without it; the finalizer goes once no work
      // of ours names the policy any more.
      if (!finalizers.includes(CLEANUP_FINALIZER)) return;
      if (this.works.list().some((w) => w.metadata?.labels && policyLabel(name) in w.metadata.labels)) {
        this.queue.addAfter(`p|${name}`, 500);
        return;
      }
      await this.setFinalizers(p, finalizers.filter((f) => f !== CLEANUP_FINALIZER));
      return;
    }
    if (!finalizers.includes(CLEANUP_FINALIZER)) await this.setFinalizers(p, [...finalizers, CLEANUP_FINALIZER]);
    const errors = [...this.selectorErrors({ name, spec: p.spec ?? {} })];
    for (const list of (this.objectErrors.get(name) ?? new Map()).values()) errors.push(...list);
    errors.sort();
    const status = p.status ?? {};
    if (status.observedGeneration === p.metadata.generation && JSON.stringify(status.errors ?? []) === JSON.stringify(errors)) return;
    const res = await upstreamRequest(this.o.wds, 'PATCH', `${POLICIES}/${name}/status`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { status: { observedGeneration: p.metadata.generation, errors: errors.length > 0 ? errors : null, conditions: status.conditions ?? [] } },
    });
    if (res.status >= 300 && res.status !== 404) throw new Error(`status of BindingPolicy ${name}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
  }
}
