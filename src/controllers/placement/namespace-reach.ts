// Where a Namespace goes: wherever an object in it goes. Reconciling a namespaced object records
// here what it adds to its Namespace (its clusters and selecting policies, from its resolution);
// reconciling a Namespace unions the records of the objects now in it, resolving on the spot only
// those not reconciled yet. So a Namespace costs one lookup per object in it, instead of resolving
// every object of the WDS, and it is queued only when one of its objects' records changes — not on
// every event of every object in it (which, with a thousand objects in a namespace, was most of the
// controller's CPU time and delayed the view's watch events on the shared event loop).
import { resourceKey, type ObjectKey, type ResourceRef } from '../model/keys.js';

/** What one object adds to its Namespace's destinations. */
export interface Reach {
  clusters: readonly string[];
  policies: readonly string[];
}

const same = (a: Reach | undefined, b: Reach | undefined) =>
  (a?.clusters ?? []).join(',') === (b?.clusters ?? []).join(',') && (a?.policies ?? []).join(',') === (b?.policies ?? []).join(',');

export class NamespaceReach {
  /** resource key → namespace/name → what that object adds to its Namespace. */
  private readonly byResource = new Map<string, Map<string, Reach>>();

  /** Records an object's reach (undefined: gone, or never sent); returns whether its Namespace's union may have changed. */
  record(k: ObjectKey, reach: Reach | undefined): boolean {
    const rk = resourceKey(k.resource);
    const objects = this.byResource.get(rk);
    const before = objects?.get(`${k.namespace}/${k.name}`);
    if (reach) {
      if (!objects) this.byResource.set(rk, new Map([[`${k.namespace}/${k.name}`, reach]]));
      else objects.set(`${k.namespace}/${k.name}`, reach);
    } else {
      objects?.delete(`${k.namespace}/${k.name}`);
    }
    return !same(before, reach);
  }

  /** The union of the reach of `objects` (the objects now in one namespace); `resolve` gives an unrecorded one's. */
  union(objects: readonly ObjectKey[], resolve: (k: ObjectKey) => Reach | undefined): { clusters: Set<string>; policies: Set<string> } {
    const clusters = new Set<string>();
    const policies = new Set<string>();
    for (const k of objects) {
      let reach = this.byResource.get(resourceKey(k.resource))?.get(`${k.namespace}/${k.name}`);
      if (!reach) {
        reach = resolve(k);
        this.record(k, reach);
      }
      for (const c of reach?.clusters ?? []) clusters.add(c);
      for (const p of reach?.policies ?? []) policies.add(p);
    }
    return { clusters, policies };
  }

  /** Forgets every record (they were made under resolution inputs that changed). */
  clear(): void {
    this.byResource.clear();
  }

  /** Forgets every object of a resource no longer watched; returns the namespaces they reached into. */
  forgetResource(r: ResourceRef): Set<string> {
    const objects = this.byResource.get(resourceKey(r));
    this.byResource.delete(resourceKey(r));
    const namespaces = new Set<string>();
    for (const [nsName, reach] of objects ?? []) if (reach.clusters.length > 0) namespaces.add(nsName.slice(0, nsName.indexOf('/')));
    return namespaces;
  }
}
