// The WEC informers upsync needs (managedFields dropped): for each (group, resource) some
// UpsyncRequest needs, one informer over every namespace — or, when every clause needing it names
// its namespaces (./plan.ts watchScopes), one per named namespace, so the agent lists and holds
// only what could be selected (a clause naming one Secret of one namespace does not bring every
// Secret of the cluster into the agent's memory). A cluster-scoped resource is always watched
// whole, and so is a resource named in more than MAX_NAMESPACES_PER_RESOURCE namespaces: past
// that, one watch costs the WEC less than many. setWanted() starts the missing informers and
// stops those no request needs any more (a scope that changes swaps informers; what the
// planner then sees is incomplete only until the new ones list: synced() says so). Versions,
// kinds and scopes come from the agent's REST mapper (the WEC's discovery); a resource discovery
// does not list is `unserved` (the request's status says so) and is tried again on each
// rediscover() (a timer of the UpsyncAgent, and each change of the wanted set), so a CRD
// installed later is picked up. Implements the planner's World.
import type { ChangeType } from '../../kube/informer.js';
import type { Labels } from '../../kube/label-selector.js';
import type { KubeObject } from '../../kube/objects.js';
import { collectionPath } from '../../kube/resource-path.js';
import type { Mapping } from '../shared/rest-mapper.js';
import { NAMESPACES, type WatchScopes, type WatchedResource, type World } from './plan.js';

/** Past this many namespaces, a resource is watched in every namespace with one informer. */
export const MAX_NAMESPACES_PER_RESOURCE = 16;

/** What upsync needs of an informer (../../kube/informer.ts; fakes in unit tests). */
export interface InformerLike<T extends KubeObject = KubeObject> {
  start(): void;
  stop(): void;
  readonly hasSynced: boolean;
  list(): T[];
  get(namespace: string, name: string): T | undefined;
}

/** Makes an informer on the ITS or the WEC for a collection path (the UpsyncAgent's default: real informers). */
export type UpsyncInformerFactory = (where: 'its' | 'wec', path: string,
  onChange: (type: ChangeType, obj: KubeObject, old?: KubeObject) => void,
  /** After each complete list (the first one may bring no change at all, yet completes the picture). */
  onRelisted: () => void) => InformerLike;

/** What upsync needs of the REST mapper (../shared/rest-mapper.ts). */
export interface ResourceMapper {
  byResource(group: string, resource: string): Mapping | undefined;
  refresh(): Promise<void>;
}

export interface WecSourcesOptions {
  mapper: ResourceMapper;
  informers: UpsyncInformerFactory;
  /** A watched resource changed (an object, or the set of resources watched/unserved). */
  onChange: () => void;
  onError: (err: unknown) => void;
}

/** One watched resource: its informers by namespace ('' for every namespace, the only one of a cluster-scoped resource). */
interface Watched {
  mapping: Mapping;
  informers: Map<string, InformerLike>;
}

export class WecSources implements World {
  private readonly watched = new Map<string, Watched>();
  private wanted: WatchScopes = new Map();
  private readonly unservedSet = new Set<string>();
  private discovering: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: WecSourcesOptions) {}

  /** Watches exactly the resources of `scopes` (group|resource keys), each in its namespaces. */
  setWanted(scopes: WatchScopes): void {
    this.wanted = new Map(scopes);
    for (const [gr, w] of this.watched) {
      if (this.wanted.has(gr)) {
        this.watchIn(gr, w);
        continue;
      }
      for (const i of w.informers.values()) i.stop();
      this.watched.delete(gr);
    }
    for (const gr of this.unservedSet) if (!this.wanted.has(gr)) this.unservedSet.delete(gr);
    if (this.startResolved() < this.wanted.size) void this.rediscover();
  }

  /** Reads discovery again when a wanted resource is not watched yet (shared by concurrent callers). */
  rediscover(): Promise<void> {
    if (this.stopped || [...this.wanted.keys()].every((gr) => this.watched.has(gr))) return Promise.resolve();
    this.discovering ??= (async () => {
      try {
        await this.options.mapper.refresh();
        this.startResolved();
        for (const gr of this.wanted.keys()) if (!this.watched.has(gr)) this.unservedSet.add(gr);
      } catch (err) {
        this.options.onError(err); // the WEC did not answer: not "unserved", tried again later
      } finally {
        this.discovering = undefined;
      }
      this.options.onChange();
    })();
    return this.discovering;
  }

  resource(gr: string): WatchedResource | undefined {
    const w = this.watched.get(gr);
    if (!w) return undefined;
    const all = w.informers.get('');
    const objects = all ? all.list() : [...w.informers.values()].flatMap((i) => i.list());
    const get = (ns: string, name: string) => (w.mapping.namespaced ? (all ?? w.informers.get(ns))?.get(ns, name) : all?.get('', name));
    return { mapping: w.mapping, objects, get };
  }

  unserved(gr: string): boolean {
    return this.unservedSet.has(gr);
  }

  namespaceLabels(namespace: string): Labels | undefined {
    return this.watched.get(NAMESPACES)?.informers.get('')?.get('', namespace)?.metadata?.labels;
  }

  /** Whether every informer of the resource has listed (false while not watched). */
  synced(gr: string): boolean {
    const w = this.watched.get(gr);
    return !!w && [...w.informers.values()].every((i) => i.hasSynced);
  }

  /** Whether every wanted resource is listed or known unserved: what the planner sees is complete. */
  allSynced(): boolean {
    return [...this.wanted.keys()].every((gr) => this.synced(gr) || this.unservedSet.has(gr));
  }

  /** What is watched now (tests, logs): `group|resource`, or `group|resource@namespace` for one namespace. */
  watching(): string[] {
    return [...this.watched].flatMap(([gr, w]) => [...w.informers.keys()].map((ns) => (ns ? `${gr}@${ns}` : gr))).sort();
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watched.values()) for (const i of w.informers.values()) i.stop();
    this.watched.clear();
  }

  /** Starts an informer for each wanted resource the mapper knows; returns how many are watched. */
  private startResolved(): number {
    for (const gr of this.wanted.keys()) {
      if (this.watched.has(gr) || this.stopped) continue;
      const [group, resource] = gr.split('|') as [string, string];
      const mapping = this.options.mapper.byResource(group, resource);
      if (!mapping) continue;
      this.unservedSet.delete(gr);
      const w: Watched = { mapping, informers: new Map() };
      this.watched.set(gr, w);
      this.watchIn(gr, w);
    }
    return this.watched.size;
  }

  /** Makes w's informers those of its wanted scope: stops the others, starts the missing. */
  private watchIn(gr: string, w: Watched): void {
    const scope = this.wanted.get(gr);
    const namespaces = !w.mapping.namespaced || !scope || scope.size > MAX_NAMESPACES_PER_RESOURCE ? [''] : [...scope].sort();
    for (const [ns, i] of w.informers) {
      if (namespaces.includes(ns)) continue;
      i.stop();
      w.informers.delete(ns);
    }
    for (const ns of namespaces) {
      if (w.informers.has(ns) || this.stopped) continue;
      const informer = this.options.informers('wec', collectionPath(w.mapping, ns), () => this.options.onChange(), () => this.options.onChange());
      w.informers.set(ns, informer);
      informer.start();
    }
  }
}
