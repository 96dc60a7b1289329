// What the mailbox should hold (pure, unit-tested without a server): from the cluster's
// UpsyncRequests and what the WEC informers hold, the UpsyncedObjects wanted — one per (WDS,
// object) any request of that WDS selects and its executor may read (./authorize.ts), with the
// sorted policies selecting it — and each request's status. Bounds per request: the readable
// objects sorted by namespace/name (then group/resource), those whose JSON is larger than
// maxObjectBytes left out, the first maxObjects of the rest kept. A resource the WEC does not serve
// selects nothing and is named in the message. Also what the WEC must be watched for
// (watchScopes: which resources, in which namespaces).
import type { Labels } from '../../kube/label-selector.js';
import type { KubeObject } from '../../kube/objects.js';
import { ASSOCIATED_RESOURCES, upsyncedObjectName, type UpsyncClause, type UpsyncRequest, type UpsyncRequestStatus, type UpsyncedSourceRef } from '../../kube/upsync-api.js';
import type { Mapping } from '../shared/rest-mapper.js';
import { authorize } from './authorize.js';
import type { ReadAccess } from './read-rights.js';
import {
  associatedClauseKeeps, clauseResources, grKey, isClaimOf, nameOf, nsOf, ownedBy, resourceClauseSelects,
  statefulSetClaims, type Candidate, type Owner,
} from './select.js';

export const NAMESPACES = grKey('', 'namespaces');

export interface WatchedResource {
  mapping: Mapping;
  objects: readonly KubeObject[];
  get(namespace: string, name: string): KubeObject | undefined;
}

/** What the planner reads of the WEC. */
export interface World {
  /** A watched resource's mapping and objects; undefined while not watched (unserved, or starting). */
  resource(gr: string): WatchedResource | undefined;
  /** Whether the WEC does not serve the resource (as its discovery last said). */
  unserved(gr: string): boolean;
  namespaceLabels(namespace: string): Labels | undefined;
}

/** One UpsyncedObject as it should be (name, WDS, and the content the view shows). */
export interface DesiredCopy {
  name: string;
  wds: string;
  source: UpsyncedSourceRef;
  policies: string[];
  object: KubeObject;
}

export interface Plan {
  desired: Map<string, DesiredCopy>;
  /** Request name → its status. */
  statuses: Map<string, UpsyncRequestStatus>;
  /** Copies (names) of selected objects whose executor's right is not known yet: left as they are meanwhile. */
  undecided: Set<string>;
}

/** group|resource → the namespaces to watch it in, or null: every namespace (one informer). */
export type WatchScopes = Map<string, Set<string> | null>;

/** The namespaces a clause can select objects in: null when any (none listed, "*", or namespaceSelectors). */
function clauseNamespaces(c: UpsyncClause): readonly string[] | null {
  const ns = c.namespaces ?? [];
  return ns.length === 0 || ns.includes('*') || (c.namespaceSelectors?.length ?? 0) > 0 ? null : ns;
}

/**
 * What the requests need watched in the WEC: each resource a clause names (and, for
 * `associatedWith`, the kinds owners are followed through and the downsynced objects' own), only
 * in the namespaces the clauses name when every clause needing it names them. That suffices for
 * associatedWith too: a namespaced owner is only followed in its dependent's namespace (./select.ts),
 * so the objects, owners and roots that matter are all in the clause's namespaces (cluster-scoped
 * resources are always watched whole: ./sources.ts).
 */
export function watchScopes(requests: readonly UpsyncRequest[]): WatchScopes {
  const out: WatchScopes = new Map();
  const need = (gr: string, namespaces: readonly string[] | null) => {
    const cur = out.get(gr);
    if (cur === null) return;
    if (namespaces === null) out.set(gr, null);
    else out.set(gr, new Set([...(cur ?? []), ...namespaces]));
  };
  for (const r of requests) {
    for (const c of r.spec.clauses ?? []) {
      const namespaces = clauseNamespaces(c);
      for (const gr of clauseResources(c)) need(gr, namespaces);
      if (c.namespaceSelectors?.length) need(NAMESPACES, null);
      if (c.associatedWith === 'downsync') {
        for (const gr of ASSOCIATED_RESOURCES) need(gr, namespaces);
        for (const d of r.spec.downsynced ?? []) need(grKey(d.group, d.resource), namespaces);
      }
    }
  }
  return out;
}

/** The resources (group|resource) the requests need watched in the WEC, in any namespace. */
export function neededResources(requests: readonly UpsyncRequest[]): Set<string> {
  return new Set(watchScopes(requests).keys());
}

const resourceName = (gr: string): string => {
  const [group, resource] = gr.split('|') as [string, string];
  return group ? `${resource}.${group}` : resource;
};

interface Selected { cand: Candidate; mapping: Mapping }

export function plan(requests: readonly UpsyncRequest[], world: World, sizeOf: (obj: KubeObject) => number, mayRead: ReadAccess): Plan {
  const desired = new Map<string, DesiredCopy>();
  const statuses = new Map<string, UpsyncRequestStatus>();
  const undecided = new Set<string>();
  let uids: Map<string, Owner> | undefined;
  const byUid = (uid: string) => {
    uids ??= uidIndex(world, requests);
    return uids.get(uid);
  };
  for (const req of [...requests].sort((a, b) => cmp(a.metadata.name, b.metadata.name))) {
    const { selected, unserved } = selectFor(req, world, byUid);
    const sorted = [...selected.values()].sort(order);
    const rights = authorize(req, sorted, mayRead);
    for (const s of rights.undecided) undecided.add(upsyncedObjectName(req.spec.wds, sourceOf(s)));
    const fits = rights.readable.filter((s) => sizeOf(s.cand.obj) <= req.spec.maxObjectBytes);
    const kept = fits.slice(0, Math.max(0, req.spec.maxObjects));
    for (const s of kept) {
      const source = sourceOf(s);
      const name = upsyncedObjectName(req.spec.wds, source);
      const d = desired.get(name);
      if (d) {
        if (!d.policies.includes(req.spec.policy)) d.policies = [...d.policies, req.spec.policy].sort(cmp);
      } else {
        desired.set(name, { name, wds: req.spec.wds, source, policies: [req.spec.policy], object: s.cand.obj });
      }
    }
    const tooLarge = rights.readable.length - fits.length;
    const parts: string[] = [];
    if (unserved.length) parts.push(`not served by the cluster: ${unserved.map(resourceName).join(', ')}`);
    if (rights.message) parts.push(rights.message);
    if (kept.length < fits.length) parts.push(`${sorted.length} objects selected, ${kept.length} upsynced (maxObjects ${req.spec.maxObjects})`);
    if (tooLarge > 0) parts.push(`${tooLarge} larger than ${req.spec.maxObjectBytes} bytes left out`);
    statuses.set(req.metadata.name, {
      ...(req.metadata.generation !== undefined ? { observedGeneration: req.metadata.generation } : {}),
      objects: kept.length, selected: sorted.length, tooLarge, message: parts.join('; '),
    });
  }
  return { desired, statuses, undecided };
}

function selectFor(req: UpsyncRequest, world: World, byUid: (uid: string) => Owner | undefined) {
  const selected = new Map<string, Selected>();
  const unserved = new Set<string>();
  const add = (s: Selected) => selected.set(`${s.cand.group}|${s.cand.resource}|${nsOf(s.cand.obj)}/${nameOf(s.cand.obj)}`, s);
  let associated: Selected[] | undefined;
  for (const c of req.spec.clauses ?? []) {
    if (c.associatedWith === 'downsync') {
      associated ??= associatedOf(req, world, byUid);
      for (const s of associated) if (associatedClauseKeeps(c, s.cand, world.namespaceLabels(nsOf(s.cand.obj)))) add(s);
      continue;
    }
    for (const gr of clauseResources(c)) {
      const r = world.resource(gr);
      if (!r) {
        if (world.unserved(gr)) unserved.add(gr);
        continue;
      }
      for (const obj of r.objects) {
        const cand = { group: r.mapping.group, resource: r.mapping.resource, obj };
        if (resourceClauseSelects(c, cand, world.namespaceLabels(nsOf(obj)))) add({ cand, mapping: r.mapping });
      }
    }
  }
  return { selected, unserved: [...unserved].sort() };
}

/** The objects associated with what the request's policy downsynced (owner chain, StatefulSet claims). */
function associatedOf(req: UpsyncRequest, world: World, byUid: (uid: string) => Owner | undefined): Selected[] {
  const roots = new Set<string>();
  const claims: ReturnType<typeof statefulSetClaims>[] = [];
  for (const d of req.spec.downsynced ?? []) {
    const live = world.resource(grKey(d.group, d.resource))?.get(d.namespace, d.name);
    const uid = live?.metadata?.uid;
    if (!live || !uid) continue;
    roots.add(uid);
    if (d.group === 'apps' && d.resource === 'statefulsets') claims.push(statefulSetClaims(live));
  }
  if (roots.size === 0) return [];
  const out: Selected[] = [];
  for (const gr of ASSOCIATED_RESOURCES) {
    const r = world.resource(gr);
    for (const obj of r?.objects ?? []) {
      const isClaim = gr === grKey('', 'persistentvolumeclaims') && claims.some((c) => isClaimOf(obj, c));
      if (isClaim || ownedBy(obj, roots, byUid)) out.push({ cand: { group: r!.mapping.group, resource: r!.mapping.resource, obj }, mapping: r!.mapping });
    }
  }
  return out;
}

/**
 * Objects by uid among those an owner chain may pass through (the associated and downsynced
 * resources, roots included), each with the group and kind of its mapping: what an owner
 * reference is checked against (./select.ts ownedBy).
 */
function uidIndex(world: World, requests: readonly UpsyncRequest[]): Map<string, Owner> {
  const grs = new Set(ASSOCIATED_RESOURCES);
  for (const r of requests) for (const d of r.spec.downsynced ?? []) grs.add(grKey(d.group, d.resource));
  const out = new Map<string, Owner>();
  for (const gr of grs) {
    const r = world.resource(gr);
    if (!r) continue;
    for (const obj of r.objects) if (obj.metadata?.uid) out.set(obj.metadata.uid, { group: r.mapping.group, kind: r.mapping.kind, obj });
  }
  return out;
}

/** Code-unit order: the same on every machine and locale. */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const order = (a: Selected, b: Selected): number =>
  cmp(nsOf(a.cand.obj), nsOf(b.cand.obj)) || cmp(nameOf(a.cand.obj), nameOf(b.cand.obj))
  || cmp(a.cand.group, b.cand.group) || cmp(a.cand.resource, b.cand.resource);

function sourceOf({ cand, mapping }: Selected): UpsyncedSourceRef {
  const m = cand.obj.metadata ?? {};
  return {
    group: mapping.group, version: mapping.version, resource: mapping.resource, kind: mapping.kind,
    namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '', resourceVersion: m.resourceVersion ?? '',
    ...(mapping.singular ? { singular: mapping.singular } : {}), ...(mapping.shortNames?.length ? { shortNames: mapping.shortNames } : {}),
  };
}
