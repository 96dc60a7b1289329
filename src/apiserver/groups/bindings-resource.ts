// The virtual Bindings (cluster-scoped, get/list/watch, Tables): one Binding per BindingPolicy,
// KubeStellar v0.29's shape, computed by the placement controllers and never stored. A fastify
// plugin (../virtual/read-only-resource.ts) registered once per group that serves it
// (./group-resources.ts): bindings.view.kubestellar.io for direct clients and
// bindings.control.kubestellar.io inside the view, where KubeStellar's tools read them; each
// answer carries its path's apiVersion, and both paths share one feed
// (../virtual/feed.ts), so their resourceVersions are the same. Without controllers (no
// --its-kubeconfig) the list is empty. Field selectors on metadata.name only; label selectors are
// a 400 (Bindings carry no labels of their own).
// What a reader sees of a Binding (../auth/subject-access.ts): the `bindings` right shows that a policy
// has one (its name, destinations and owner); in it, only the objects the reader may `get`, in
// `spec.workload` and in `status.destinations` (their counts and broken objects are computed again
// over those, by the source), and the policy's own status (`errors`, `conditions`, whose messages
// name objects) only to a reader who may `get` the BindingPolicy. Such a Binding is computed by the
// source when it is shown (with the served object's resourceVersion: its content may be a little
// newer, never older); one the source no longer has (its DELETED event) is shown from itself,
// without the objects hidden and without `status.destinations`.
import type { FastifyInstance } from 'fastify';
import { column, type KindPrinter } from '../../storage/printing/printer.js';
import { age } from '../../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../../kube/objects.js';
import type { Subject, Visibility } from '../auth/subject-access.js';
import { BINDINGS, VERSION } from './view-group.js';
import { sharedFeeds, VirtualFeed } from '../virtual/feed.js';
import { registerVirtualResource, type ResourceAccess, type SubjectVisibility } from '../virtual/read-only-resource.js';
import type { Shown } from '../virtual/list-watch.js';

/** What one reader may see in a Binding: which of its objects, and whether the policy's own status. */
export interface BindingView {
  object(id: { group: string; resource: string; namespace: string; name: string }): boolean;
  policyStatus: boolean;
}

/** What serves the Bindings (the placement controller). */
export interface BindingSource {
  bindings(): KubeObject[];
  /** A policy's Binding; with a view, only what it lets the reader see (counts computed over that). */
  binding(name: string, view?: BindingView): KubeObject | undefined;
  onBindingChange(cb: (policy: string) => void): () => void;
}

/** The BindingPolicy a Binding is of: its status is the policy's. */
const POLICIES = { group: 'control.kubestellar.io', resource: 'bindingpolicies' };

/** One object of a Binding's workload (KubeStellar's downsync clause, what is read of it here). */
interface Clause { group: string; resource: string; namespace?: string; name: string }

/** A Binding as the placement controller makes it: KubeStellar's shape (empty lists left out). */
interface Binding extends KubeObject {
  metadata: ObjectMeta & { name: string; resourceVersion?: string; creationTimestamp?: string };
  spec: {
    workload: { clusterScope?: Clause[]; namespaceScope?: Clause[] };
    destinations?: Array<{ clusterId: string }>;
  };
  status?: {
    observedGeneration?: number; errors?: string[]; conditions?: Array<{ type?: string; status?: string }>;
    destinations?: Array<{ clusterId: string; objects: number; states: Record<string, number> }>;
  };
}

const subjectOf = (c: Clause): Subject => ({ group: c.group, resource: c.resource, ...(c.namespace ? { namespace: c.namespace } : {}), name: c.name });
const policyOf = (b: Binding): Subject => ({ ...POLICIES, name: b.metadata.name });

/** The objects a Binding names, and their kinds (served objects never change: computed once each). */
const subjectsCache = new WeakMap<Binding, { subjects: Subject[]; kinds: { group: string; resource: string }[] }>();
function namedBy(b: Binding): { subjects: Subject[]; kinds: { group: string; resource: string }[] } {
  let s = subjectsCache.get(b);
  if (!s) {
    const subjects = [...(b.spec.workload.clusterScope ?? []), ...(b.spec.workload.namespaceScope ?? [])].map(subjectOf);
    const kinds = new Map(subjects.map((x) => [`${x.group}/${x.resource}`, { group: x.group, resource: x.resource }]));
    subjectsCache.set(b, (s = { subjects, kinds: [...kinds.values()] }));
  }
  return s;
}
const subjectsOf = (b: Binding) => namedBy(b).subjects;

/** A Binding the source no longer has, shown from itself: the hidden objects and the destinations' states left out. */
function stripped(b: Binding, view: BindingView): Binding {
  const keep = (list: Clause[] | undefined) => (list ?? []).filter((c) => view.object({ ...c, namespace: c.namespace ?? '' }));
  const clusterScope = keep(b.spec.workload.clusterScope);
  const namespaceScope = keep(b.spec.workload.namespaceScope);
  const { errors, conditions, destinations: _destinations, ...status } = b.status ?? {};
  return {
    ...b,
    spec: { ...b.spec, workload: { ...(clusterScope.length > 0 ? { clusterScope } : {}), ...(namespaceScope.length > 0 ? { namespaceScope } : {}) } },
    status: { ...status, ...(view.policyStatus ? { ...(errors ? { errors } : {}), ...(conditions ? { conditions } : {}) } : {}) },
  };
}

/**
 * What one reader sees of a batch of Bindings. A reader who may get every object of the kinds
 * they name and the policies, across the cluster (an admin: a review per kind), sees them as they
 * are, without a look at each object (a Binding may name 100,000).
 */
async function shownBindings(source: BindingSource | undefined, visibility: ReturnType<SubjectVisibility>, bindings: readonly Binding[]): Promise<Shown<Binding>> {
  const kinds = new Map([POLICIES, ...bindings.flatMap((b) => namedBy(b).kinds)].map((k) => [`${k.group}/${k.resource}`, k]));
  if (await visibility.everywhere(kinds.values())) return { visible: () => true, show: (b) => b, leftOut: 0 };
  const vis: Visibility = await visibility.resolve(bindings.flatMap((b) => [policyOf(b), ...subjectsOf(b)]));
  if (vis.all) return { visible: () => true, show: (b) => b, leftOut: 0 };
  return {
    visible: () => true,
    show: (b) => {
      const policyStatus = vis.may(policyOf(b));
      if (policyStatus && subjectsOf(b).every(vis.may)) return b;
      const view: BindingView = { object: (id) => vis.may({ group: id.group, resource: id.resource, ...(id.namespace ? { namespace: id.namespace } : {}), name: id.name }), policyStatus };
      const fresh = source?.binding(b.metadata.name, view) as Binding | undefined;
      if (!fresh || fresh.metadata.uid !== b.metadata.uid) return stripped(b, view);
      return { ...fresh, metadata: { ...fresh.metadata, resourceVersion: b.metadata.resourceVersion } };
    },
    leftOut: vis.leftOut,
  };
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

export interface BindingsOptions extends ResourceAccess {
  /** The placement controllers (none without an ITS: the list is empty). */
  source: BindingSource | undefined;
}

/**
 * GET (get, list, watch) and the refused writes of `/apis/<group>/v1alpha1/bindings`.
 * `authorize` checks `bindings` in `group`; `visibility` decides which of the objects named in
 * each the reader may see.
 */
export async function bindingsResource(app: FastifyInstance, { source, group, authorize, visibility }: BindingsOptions): Promise<void> {
  registerVirtualResource(app, {
    kind: BINDINGS, group, version: VERSION, feed: feedOf(source), printer: BINDING_PRINTER, labelSelectors: false, authorize,
    reader: (req) => (bindings) => shownBindings(source, visibility(req), bindings),
  });
}
