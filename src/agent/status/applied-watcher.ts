// Watches what the works applied in the WEC: one informer per GVR some work applied (cluster-wide
// list/watch; stopped when no work uses the GVR any more), and an index namespace/name → the works
// (and manifest ordinals) that applied it. Each event is handed to onEvent with those works, so
// the agent can tell drift (re-apply) from status (observe) — see classify().
import { Informer, type ChangeType } from '../../kube/informer.js';
import type { KubeObject } from '../../kube/objects.js';
import type { Upstream } from '../../kube/upstream.js';
import { collectionPath, gvrKey, type ResourceRef } from '../../kube/resource-path.js';

export interface AppliedRef extends ResourceRef {
  ordinal: number;
}

export interface AppliedEvent {
  type: ChangeType;
  obj: KubeObject;
  old?: KubeObject;
  /** The gvrKey of the object's resource. */
  gvr: string;
  /** The works that applied the object, with the manifest's ordinal in each. */
  works: { work: string; ordinal: number }[];
}

/** Drift: anything but status (and bookkeeping metadata) changed, or the object went away. */
export function classify(e: { type: ChangeType; obj: KubeObject; old?: KubeObject }): 'drift' | 'status' {
  if (e.type === 'DELETED') return 'drift';
  if (!e.old) return 'status';
  return strip(e.obj) === strip(e.old) ? 'status' : 'drift';
}

function strip(o: KubeObject): string {
  const { status: _s, metadata, ...rest } = o;
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...meta } = metadata ?? {};
  return JSON.stringify({ ...rest, metadata: meta });
}

export type InformerFactory = (path: string, onChange: (type: ChangeType, obj: KubeObject, old?: KubeObject) => void) =>
  { start(): void; stop(): void; hasSynced: boolean; get?(namespace: string, name: string): KubeObject | undefined };

export class AppliedWatcher {
  private readonly informers = new Map<string, ReturnType<InformerFactory>>();
  /** gvr key → namespace/name → work → ordinal. */
  private readonly index = new Map<string, Map<string, Map<string, number>>>();
  private readonly byWork = new Map<string, AppliedRef[]>();
  private readonly factory: InformerFactory;

  constructor(wec: Upstream, private readonly onEvent: (e: AppliedEvent) => void, factory?: InformerFactory) {
    this.factory = factory ?? ((path, onChange) => new Informer<KubeObject>(wec, { path, onChange }));
  }

  /** The objects `work` applies now (replacing what it applied before). */
  setWork(work: string, refs: readonly AppliedRef[]): void {
    this.unindex(work);
    this.byWork.set(work, [...refs]);
    for (const r of refs) {
      const g = gvrKey(r);
      if (!this.index.has(g)) this.index.set(g, new Map());
      const objs = this.index.get(g)!;
      const k = `${r.namespace}/${r.name}`;
      if (!objs.has(k)) objs.set(k, new Map());
      objs.get(k)!.set(work, r.ordinal);
      if (!this.informers.has(g)) {
        const inf = this.factory(collectionPath(r), (type, obj, old) => this.dispatch(g, type, obj, old));
        this.informers.set(g, inf);
        inf.start();
      }
    }
    this.stopUnused();
  }

  /** The object as the watch last saw it (undefined before its informer has listed it). */
  cached(r: ResourceRef): KubeObject | undefined {
    return this.informers.get(gvrKey(r))?.get?.(r.namespace, r.name);
  }

  removeWork(work: string): void {
    this.unindex(work);
    this.byWork.delete(work);
    this.stopUnused();
  }

  synced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced);
  }

  gvrs(): string[] {
    return [...this.informers.keys()];
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop();
    this.informers.clear();
  }

  private dispatch(g: string, type: ChangeType, obj: KubeObject, old?: KubeObject): void {
    const holders = this.index.get(g)?.get(`${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`);
    if (!holders?.size) return;
    this.onEvent({ type, obj, old, gvr: g, works: [...holders].map(([work, ordinal]) => ({ work, ordinal })) });
  }

  private unindex(work: string): void {
    for (const r of this.byWork.get(work) ?? []) {
      const g = gvrKey(r);
      const objs = this.index.get(g);
      const k = `${r.namespace}/${r.name}`;
      objs?.get(k)?.delete(work);
      if (objs?.get(k)?.size === 0) objs.delete(k);
      if (objs?.size === 0) this.index.delete(g);
    }
  }

  private stopUnused(): void {
    for (const [g, inf] of this.informers) {
      if (this.index.has(g)) continue;
      inf.stop();
      this.informers.delete(g);
    }
  }
}
