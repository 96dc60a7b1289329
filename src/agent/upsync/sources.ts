// The WEC informers upsync needs, one per (group, resource) some UpsyncRequest names (all
// namespaces, managedFields dropped): setWanted() starts the missing ones and stops those no
// request needs any more. Versions, kinds and scopes come from the agent's REST mapper (the
// WEC's discovery); a resource discovery does not list is `unserved` (the request's status says
// so) and is tried again on each rediscover() (a timer of the UpsyncAgent, and each change of the
// wanted set), so a CRD installed later is picked up. Implements the planner's World.
import type { ChangeType } from '../../kube/informer.js';
import type { Labels } from '../../kube/label-selector.js';
import type { KubeObject } from '../../kube/objects.js';
import { collectionPath } from '../../kube/resource-path.js';
import type { Mapping } from '../rest-mapper.js';
import { NAMESPACES, type WatchedResource, type World } from './plan.js';

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

/** What upsync needs of the REST mapper (./rest-mapper.ts). */
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

export class WecSources implements World {
  private readonly watched = new Map<string, { mapping: Mapping; informer: InformerLike }>();
  private wanted = new Set<string>();
  private readonly unservedSet = new Set<string>();
  private discovering: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: WecSourcesOptions) {}

  /** Watches exactly `grs` (group|resource keys). */
  setWanted(grs: ReadonlySet<string>): void {
    this.wanted = new Set(grs);
    for (const [gr, w] of this.watched) {
      if (this.wanted.has(gr)) continue;
      w.informer.stop();
      this.watched.delete(gr);
    }
    for (const gr of this.unservedSet) if (!this.wanted.has(gr)) this.unservedSet.delete(gr);
    if (this.startResolved() < this.wanted.size) void this.rediscover();
  }

  /** Reads discovery again when a wanted resource is not watched yet (shared by concurrent callers). */
  rediscover(): Promise<void> {
    if (this.stopped || [...this.wanted].every((gr) => this.watched.has(gr))) return Promise.resolve();
    this.discovering ??= (async () => {
      try {
        await this.o.mapper.refresh();
        this.startResolved();
        for (const gr of this.wanted) if (!this.watched.has(gr)) this.unservedSet.add(gr);
      } catch (err) {
        this.o.onError(err); // the WEC did not answer: not "unserved", tried again later
      } finally {
        this.discovering = undefined;
      }
      this.o.onChange();
    })();
    return this.discovering;
  }

  resource(gr: string): WatchedResource | undefined {
    const w = this.watched.get(gr);
    if (!w) return undefined;
    return { mapping: w.mapping, objects: w.informer.list(), get: (ns, name) => w.informer.get(w.mapping.namespaced ? ns : '', name) };
  }

  unserved(gr: string): boolean {
    return this.unservedSet.has(gr);
  }

  namespaceLabels(namespace: string): Labels | undefined {
    return this.watched.get(NAMESPACES)?.informer.get('', namespace)?.metadata?.labels;
  }

  /** Whether the resource's informer has listed (false while not watched). */
  synced(gr: string): boolean {
    return this.watched.get(gr)?.informer.hasSynced ?? false;
  }

  /** Whether every wanted resource is listed or known unserved: what the planner sees is complete. */
  allSynced(): boolean {
    return [...this.wanted].every((gr) => this.synced(gr) || this.unservedSet.has(gr));
  }

  /** Resources watched now (tests, logs). */
  watching(): string[] {
    return [...this.watched.keys()].sort();
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watched.values()) w.informer.stop();
    this.watched.clear();
  }

  /** Starts an informer for each wanted resource the mapper knows; returns how many are watched. */
  private startResolved(): number {
    for (const gr of this.wanted) {
      if (this.watched.has(gr) || this.stopped) continue;
      const [group, resource] = gr.split('|') as [string, string];
      const mapping = this.o.mapper.byResource(group, resource);
      if (!mapping) continue;
      this.unservedSet.delete(gr);
      const informer = this.o.informers('wec', collectionPath(mapping), () => this.o.onChange(), () => this.o.onChange());
      this.watched.set(gr, { mapping, informer });
      informer.start();
    }
    return this.watched.size;
  }
}
