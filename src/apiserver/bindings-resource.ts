// The virtual Bindings (cluster-scoped, get/list/watch, Tables): one Binding per BindingPolicy,
// KubeStellar v0.29's shape, computed by the placement controllers and never stored. Served twice
// by the same code (./virtual-resource.ts): as bindings.view.kubestellar.io for direct clients
// (./app.ts) and as bindings.control.kubestellar.io inside the view, where KubeStellar's tools read
// them (./view-proxy.ts); each answer carries its path's apiVersion, and both paths share one feed
// (./virtual-feed.ts), so their resourceVersions are the same. Without controllers (no
// --its-kubeconfig) the list is empty. Field selectors on metadata.name only; label selectors are
// a 400 (Bindings carry no labels of their own).
import type { FastifyInstance } from 'fastify';
import { column, type KindPrinter } from '../storage/denatured-printers.js';
import { age } from '../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../kube/objects.js';
import { BINDINGS } from './view-group.js';
import { sharedFeeds, VirtualFeed } from './virtual-feed.js';
import { registerVirtualResource, type Authorize } from './virtual-resource.js';

/** What serves the Bindings (the placement controller). */
export interface BindingSource {
  bindings(): KubeObject[];
  binding(name: string): KubeObject | undefined;
  onBindingChange(cb: (policy: string) => void): () => void;
}

/** A Binding as the placement controller makes it: KubeStellar's shape (empty lists left out). */
interface Binding extends KubeObject {
  metadata: ObjectMeta & { name: string; resourceVersion?: string; creationTimestamp?: string };
  spec: {
    workload: { clusterScope?: unknown[]; namespaceScope?: unknown[] };
    destinations?: Array<{ clusterId: string }>;
  };
  status?: { conditions?: Array<{ type?: string; status?: string }>; destinations?: Array<{ clusterId: string; objects: number; states: Record<string, number> }> };
}

/** Per destination, how many of its objects are Available: `wec1 2/2,wec2 1/2`. */
const availability = (b: Binding) => (b.status?.destinations ?? []).map((d) => `${d.clusterId} ${d.states.Available ?? 0}/${d.objects}`).join(',') || '<none>';

const BINDING_PRINTER: KindPrinter<Binding> = {
  columns: [
    { ...column('Name', 'string', 'Name of the Binding and of its BindingPolicy'), format: 'name' },
    column('Objects', 'integer', 'Workload objects the policy selects'),
    column('Clusters', 'string', 'The clusters the policy selects'),
    column('Ready', 'string', 'The BindingPolicy\'s Ready condition: every object Available in every destination'),
    column('Available', 'string', 'Per destination, how many of the objects sent there are Available'),
    column('Age', 'string', 'Age of the BindingPolicy'),
  ],
  cells: (b, now) => [b.metadata.name, (b.spec.workload.clusterScope?.length ?? 0) + (b.spec.workload.namespaceScope?.length ?? 0),
    (b.spec.destinations ?? []).map((d) => d.clusterId).join(',') || '<none>', b.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '<unknown>',
    availability(b), age(b.metadata.creationTimestamp, now.getTime())],
};

/** What tells whether a Binding changed (not its resourceVersion). */
const content = (b: Binding) => JSON.stringify([b.metadata.uid, b.metadata.ownerReferences, b.metadata.generation, b.spec, b.status]);

/** Keyed by name (the BindingPolicy's). */
const feedOf = sharedFeeds((source: BindingSource | undefined) => new VirtualFeed<Binding>(source && {
  all: () => source.bindings() as Binding[],
  one: (name) => source.binding(name) as Binding | undefined,
  keyOf: (b) => b.metadata.name,
  onChange: (cb) => source.onBindingChange(cb),
}, content));

/**
 * Registers GET (get, list, watch) and the refused writes of `/apis/<group>/v1alpha1/bindings`
 * on `app` (or a plugin under a prefix). `authorize` checks `bindings` in `group`.
 */
export function registerBindings(app: FastifyInstance, source: BindingSource | undefined, authorize: Authorize, group: string): void {
  registerVirtualResource(app, { kind: BINDINGS, group, feed: feedOf(source), printer: BINDING_PRINTER, labelSelectors: false, authorize });
}
