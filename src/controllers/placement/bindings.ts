// The virtual Bindings: one per BindingPolicy, computed on each read from what reconciliation
// recorded (for each placed object: identity, resourceVersion, selecting policies and each one's
// modulation) and from the caches (the policy; the clusters its selectors pick). Never stored.
//
// The shape is KubeStellar v0.29's Binding (api/control/v1alpha1/types.go of
// kubestellar/kubestellar: BindingSpec, DownsyncObjectClauses, Cluster/NamespaceScopeDownsyncClause
// with DownsyncModulation inline, BindingStatus), serialized as Go's encoding/json would: every
// `omitempty` field (createOnly, statusCollectors, wantSingletonReportedState,
// wantMultiWECReportedState, clusterScope, namespaceScope, destinations, errors) is absent when
// false or empty; status.observedGeneration always present. Its ownerReference names the policy as
// KubeStellar's binding controller does (controller: true, blockOwnerDeletion: false). The
// apiVersion is KubeStellar's; the view.kubestellar.io resource serves it under its own.
// A Binding may be computed for one reader (`view`, the server's answer to a user who may not read
// every object: src/apiserver/groups/bindings-resource.ts): the objects they may not get are left out of
// the workload and of every destination's counts and broken objects, and the policy's own status
// (errors, conditions) is left out unless they may get the policy.
// Subscribers hear which policy's Binding may have changed (the served resourceVersions are the
// view's own: src/apiserver/virtual/collection.ts); the counter here only tells this cache's
// versions apart.
import { EventEmitter } from 'node:events';
import type { Store } from '../../kube/informer.js';
import { stableUid, type KubeObject } from '../../kube/objects.js';
import { policyClusters, type Modulation } from '../model/resolution.js';
import type { ObjectIdentity } from '../model/wrapping.js';
import type { BindingPolicy, ManagedCluster } from '../model/api.js';
import type { Placement } from '../model/sent.js';
import { destinationStatuses, type DestinationStatus, type ObjectOutcome } from './destination-state.js';

export const BINDING_API_VERSION = 'control.kubestellar.io/v1alpha1';


/** KubeStellar's DownsyncModulation as JSON: each field only when set (Go's omitempty). */
export interface DownsyncModulation {
  createOnly?: true;
  statusCollectors?: string[];
  wantSingletonReportedState?: true;
  wantMultiWECReportedState?: true;
}

/** ClusterScopeDownsyncClause; a NamespaceScopeDownsyncClause adds `namespace`. */
export interface DownsyncClause extends DownsyncModulation {
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name: string;
  resourceVersion: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

export interface Binding extends KubeObject {
  metadata: {
    name: string; uid?: string; creationTimestamp?: unknown; resourceVersion: string; generation?: number; ownerReferences?: OwnerReference[];
  };
  spec: { workload: { clusterScope?: DownsyncClause[]; namespaceScope?: DownsyncClause[] }; destinations?: { clusterId: string }[] };
  /** KubeStellar's BindingStatus (observedGeneration, errors, conditions: the policy's), and ours: each destination's state. */
  status: { observedGeneration: number; errors?: string[]; conditions?: unknown[]; destinations?: DestinationStatus[] };
}

/** A modulation as KubeStellar serializes it: false and empty fields left out. */
export function modulationJSON(m: Modulation | undefined): DownsyncModulation {
  return {
    ...(m?.createOnly ? { createOnly: true as const } : {}),
    ...(m && m.statusCollectors.length > 0 ? { statusCollectors: [...m.statusCollectors].sort() } : {}),
    ...(m?.wantSingletonReportedState ? { wantSingletonReportedState: true as const } : {}),
    ...(m?.wantMultiWECReportedState ? { wantMultiWECReportedState: true as const } : {}),
  };
}

/** KubeStellar's order: by "group/version, Resource=resource", then "namespace/name" (or name), then resourceVersion. */
function clauseOrder(a: DownsyncClause, b: DownsyncClause): number {
  const key = (c: DownsyncClause) => [`${c.group}/${c.version}, Resource=${c.resource}`, c.namespace ? `${c.namespace}/${c.name}` : c.name, c.resourceVersion];
  const ka = key(a);
  const kb = key(b);
  for (let i = 0; i < ka.length; i++) {
    if (ka[i]! !== kb[i]!) return ka[i]! < kb[i]! ? -1 : 1;
  }
  return 0;
}

/** A uid of the Binding's own, stable for its policy: not the policy's, which is the owner's. */
function bindingUid(policyUid: string | undefined): string | undefined {
  if (!policyUid) return undefined;
  return stableUid(`binding/${policyUid}`);
}

/** What one reader may see of a Binding: which objects, and the policy's own status or not. */
export interface BindingView {
  object(id: ObjectIdentity): boolean;
  policyStatus: boolean;
}

/** How the objects fare in their clusters (the works and clusters caches): for destination statuses. */
export interface Outcomes {
  outcome(cluster: string, id: ObjectIdentity): ObjectOutcome;
  readiness(cluster: string): { ready: boolean; message?: string };
}

export class Bindings {
  /** source key → placement, for objects some policy selects. */
  private readonly placed = new Map<string, Placement>();
  /** policy → the source keys of the objects it selects (a policy's Binding reads only its own). */
  private readonly byPolicy = new Map<string, Set<string>>();
  private readonly events = new EventEmitter();
  private rv = 1;

  constructor(private readonly policies: Store<BindingPolicy>, private readonly clusters: Store<ManagedCluster>, private readonly outcomes?: Outcomes) {
    this.events.setMaxListeners(0); // one per open watch of bindings
  }

  /**
   * Each destination of a policy: its clusters (those its selectors pick, and any an object is
   * still sent to) with the state of every object it sends there. Empty without outcomes.
   */
  destinations(name: string, clusters: readonly string[], view?: BindingView): DestinationStatus[] {
    const outcomes = this.outcomes;
    if (!outcomes) return [];
    const byCluster = new Map<string, ObjectIdentity[]>(clusters.map((c) => [c, []]));
    for (const e of this.placedBy(name)) {
      if (view && !view.object(e.id)) continue;
      for (const c of e.modulations[name]?.clusters ?? []) {
        let ids = byCluster.get(c);
        if (!ids) byCluster.set(c, (ids = []));
        ids.push(e.id);
      }
    }
    return destinationStatuses([...byCluster.keys()], (c) => byCluster.get(c) ?? [], (c, id) => outcomes.outcome(c, id), (c) => outcomes.readiness(c));
  }

  /** What was recorded of the objects a policy selects. */
  private *placedBy(policy: string): Iterable<Placement> {
    for (const source of this.byPolicy.get(policy) ?? []) {
      const e = this.placed.get(source);
      if (e) yield e;
    }
  }

  /** The clusters a policy's selectors pick now (none for a malformed selector: status.errors says why). */
  policyDestinations(p: BindingPolicy): string[] {
    try {
      return policyClusters(p.spec ?? {}, this.clusters.list().map((c) => ({ name: c.metadata.name, labels: c.metadata.labels ?? {} })));
    } catch {
      return [];
    }
  }

  /** Records an object's placement (undefined: no policy selects it, or it is gone). */
  record(source: string, entry: Placement | undefined): void {
    const before = this.placed.get(source);
    if (JSON.stringify(before) === JSON.stringify(entry)) return;
    if (entry) this.placed.set(source, entry);
    else this.placed.delete(source);
    for (const p of before?.policies ?? []) this.byPolicy.get(p)?.delete(source);
    for (const p of entry?.policies ?? []) {
      let sources = this.byPolicy.get(p);
      if (!sources) this.byPolicy.set(p, (sources = new Set()));
      sources.add(source);
    }
    for (const p of before?.policies ?? []) if (this.byPolicy.get(p)?.size === 0) this.byPolicy.delete(p);
    for (const p of new Set([...(before?.policies ?? []), ...(entry?.policies ?? [])])) this.touch(p);
    this.events.emit('placed', source);
  }

  /** What was recorded of an object, by its source key. */
  placement(source: string): Placement | undefined {
    return this.placed.get(source);
  }

  /** Calls `cb(source)` whenever the recorded placement of that object changed; returns the unsubscriber. */
  onPlacementChange(cb: (source: string) => void): () => void {
    this.events.on('placed', cb);
    return () => { this.events.off('placed', cb); };
  }

  /**
   * That policy's Binding may have changed; `statusOnly`: only through the policy's own status
   * (its conditions, which the Binding shows), nothing it places or how that fares.
   */
  touch(policy: string, statusOnly = false): void {
    this.rv++;
    this.events.emit('change', policy, statusOnly);
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  /** Calls `cb(policyName, statusOnly)` whenever that policy's Binding may have changed; returns the unsubscriber. */
  onChange(cb: (policy: string, statusOnly: boolean) => void): () => void {
    this.events.on('change', cb);
    return () => { this.events.off('change', cb); };
  }

  /** The Binding of one BindingPolicy (as `view` lets one reader see it), or undefined when there is no such policy. */
  binding(name: string, view?: BindingView): Binding | undefined {
    const p = this.policies.get('', name);
    if (!p) return undefined;
    const clusterScope: DownsyncClause[] = [];
    const namespaceScope: DownsyncClause[] = [];
    for (const e of this.placedBy(name)) {
      if (view && !view.object(e.id)) continue;
      const ref = { group: e.id.group, version: e.id.version, resource: e.id.resource };
      const modulation = modulationJSON(e.modulations[name]);
      if (e.id.namespace) namespaceScope.push({ ...ref, namespace: e.id.namespace, name: e.id.name, resourceVersion: e.resourceVersion, ...modulation });
      else clusterScope.push({ ...ref, name: e.id.name, resourceVersion: e.resourceVersion, ...modulation });
    }
    const destinations = this.policyDestinations(p);
    const states = this.destinations(name, destinations, view);
    const uid = bindingUid(p.metadata.uid);
    const policyStatus = !view || view.policyStatus;
    return {
      apiVersion: BINDING_API_VERSION, kind: 'Binding',
      metadata: {
        name, ...(uid ? { uid } : {}), creationTimestamp: p.metadata.creationTimestamp, resourceVersion: this.resourceVersion(), generation: p.metadata.generation,
        ...(p.metadata.uid ? {
          ownerReferences: [{ apiVersion: BINDING_API_VERSION, kind: 'BindingPolicy', name, uid: p.metadata.uid, controller: true, blockOwnerDeletion: false }],
        } : {}),
      },
      spec: {
        workload: {
          ...(clusterScope.length > 0 ? { clusterScope: clusterScope.sort(clauseOrder) } : {}),
          ...(namespaceScope.length > 0 ? { namespaceScope: namespaceScope.sort(clauseOrder) } : {}),
        },
        ...(destinations.length > 0 ? { destinations: destinations.map((clusterId) => ({ clusterId })) } : {}),
      },
      status: {
        observedGeneration: p.status?.observedGeneration ?? 0, ...(policyStatus && p.status?.errors?.length ? { errors: p.status.errors } : {}),
        ...(policyStatus && p.status?.conditions?.length ? { conditions: p.status.conditions } : {}),
        ...(states.length > 0 ? { destinations: states } : {}),
      },
    };
  }

  /** Every Binding, by name. */
  list(): Binding[] {
    return this.policies.list().map((p) => this.binding(p.metadata.name)).filter((b): b is Binding => b !== undefined)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }
}
