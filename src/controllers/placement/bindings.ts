// The virtual Bindings: one per BindingPolicy, KubeStellar's shape, computed on each read from
// what reconciliation recorded (for each placed object: identity, resourceVersion, selecting
// policies) and from the caches (the policy; the clusters its selectors pick). Never stored. The
// Bindings' resourceVersion grows with every change; subscribers hear which policy's Binding may
// have changed.
import { EventEmitter } from 'node:events';
import type { Store } from '../../kube/informer.js';
import type { KubeObject } from '../../kube/objects.js';
import { policyClusters, type Modulation } from '../resolution.js';
import type { ObjectIdentity } from '../wrapping.js';
import type { BindingPolicy, ManagedCluster } from './api.js';

/** What reconciliation records of a placed object. */
export interface Placement {
  id: ObjectIdentity;
  resourceVersion: string;
  /** The policies selecting it, sorted. */
  policies: string[];
  /** Each selecting policy's modulation of it (shown per object in that policy's Binding). */
  modulations: Record<string, Modulation>;
}

interface WorkloadEntry {
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name: string;
  resourceVersion: string;
}

export interface Binding extends KubeObject {
  metadata: { name: string; uid?: string; creationTimestamp?: unknown; resourceVersion: string; generation?: number };
  spec: { workload: { clusterScope: WorkloadEntry[]; namespaceScope: WorkloadEntry[] }; destinations: { clusterId: string }[] };
  status: { observedGeneration?: number; errors?: string[] };
}

export class Bindings {
  /** source key → placement, for objects some policy selects. */
  private readonly placed = new Map<string, Placement>();
  private readonly events = new EventEmitter();
  private rv = 1;

  constructor(private readonly policies: Store<BindingPolicy>, private readonly clusters: Store<ManagedCluster>) {
    this.events.setMaxListeners(0); // one per open watch of bindings
  }

  /** Records an object's placement (undefined: no policy selects it, or it is gone). */
  record(source: string, entry: Placement | undefined): void {
    const before = this.placed.get(source);
    if (JSON.stringify(before) === JSON.stringify(entry)) return;
    if (entry) this.placed.set(source, entry);
    else this.placed.delete(source);
    for (const p of new Set([...(before?.policies ?? []), ...(entry?.policies ?? [])])) this.touch(p);
  }

  /** That policy's Binding may have changed. */
  touch(policy: string): void {
    this.rv++;
    this.events.emit('change', policy);
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  /** Calls `cb(policyName)` whenever that policy's Binding may have changed; returns the unsubscriber. */
  onChange(cb: (policy: string) => void): () => void {
    this.events.on('change', cb);
    return () => { this.events.off('change', cb); };
  }

  /** The Binding of one BindingPolicy, or undefined when there is no such policy. */
  binding(name: string): Binding | undefined {
    const p = this.policies.get('', name);
    if (!p) return undefined;
    const clusterScope: WorkloadEntry[] = [];
    const namespaceScope: WorkloadEntry[] = [];
    for (const e of this.placed.values()) {
      if (!e.policies.includes(name)) continue;
      const ref = { group: e.id.group, version: e.id.version, resource: e.id.resource };
      if (e.id.namespace) namespaceScope.push({ ...ref, namespace: e.id.namespace, name: e.id.name, resourceVersion: e.resourceVersion });
      else clusterScope.push({ ...ref, name: e.id.name, resourceVersion: e.resourceVersion });
    }
    const order = (a: WorkloadEntry, b: WorkloadEntry) => `${a.group}/${a.resource}/${a.namespace ?? ''}/${a.name}`.localeCompare(`${b.group}/${b.resource}/${b.namespace ?? ''}/${b.name}`);
    let destinations: string[] = [];
    try {
      destinations = policyClusters(p.spec ?? {}, this.clusters.list().map((c) => ({ name: c.metadata.name, labels: c.metadata.labels ?? {} })));
    } catch { /* a malformed selector selects nothing; status.errors says why */ }
    return {
      apiVersion: 'view.kubestellar.io/v1alpha1', kind: 'Binding',
      metadata: { name, uid: p.metadata.uid, creationTimestamp: p.metadata.creationTimestamp, resourceVersion: this.resourceVersion(), generation: p.metadata.generation },
      spec: { workload: { clusterScope: clusterScope.sort(order), namespaceScope: namespaceScope.sort(order) }, destinations: destinations.map((clusterId) => ({ clusterId })) },
      status: { observedGeneration: p.metadata.generation, ...(p.status?.errors ? { errors: p.status.errors } : {}) },
    };
  }

  /** Every Binding, by name. */
  list(): Binding[] {
    return this.policies.list().map((p) => this.binding(p.metadata.name)).filter((b): b is Binding => b !== undefined)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }
}
