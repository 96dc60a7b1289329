// Which WEC objects one upsync clause selects (pure functions, unit-tested without a server):
// - a clause naming resources selects as a downsync clause does (../../kube/object-selection.ts),
//   except that an absent apiGroup is the core group (upsync-api.ts: the agent watches exactly
//   the resources named, so "any group" would mean guessing groups);
// - Secrets (core `secrets`) only when the clause lists the name in objectNames ("*" or a
//   selector alone never select one: a Secret leaves the WEC only when asked for by name);
//   service-account-token and bootstrap-token Secrets never (../../kube/system-secrets.ts, the
//   list downsync's system-objects predicate uses too);
// - `associatedWith: downsync` selects objects whose ownerReferences chain (at most
//   MAX_OWNER_DEPTH links) reaches a live object the policy downsynced, and the PVCs of a
//   downsynced StatefulSet's volumeClaimTemplates (`<template>-<statefulset>-<ordinal>`);
//   the clause's other fields narrow that set further. A link counts only as Kubernetes' garbage
//   collector would follow it: the owner found by the reference's uid is in the dependent's
//   namespace (or cluster-scoped) and is of the reference's group, kind and name. A uid alone
//   would let a Pod in namespace B, whose author copied the uid of a downsynced Deployment of
//   namespace A into its ownerReferences, be upsynced as that Deployment's.
import { clauseMatches, listMatches } from '../../kube/object-selection.js';
import type { Labels } from '../../kube/label-selector.js';
import type { KubeObject } from '../../kube/objects.js';
import { isNeverSentSecret } from '../../kube/system-secrets.js';
import { splitApiVersion } from '../../kube/api-version.js';
import type { UpsyncClause } from '../../kube/upsync-api.js';

/** How far up ownerReferences a chain is followed (Pod → ReplicaSet → Deployment is 2). */
export const MAX_OWNER_DEPTH = 5;

/** One WEC object as selection sees it. */
export interface Candidate {
  group: string;
  resource: string;
  obj: KubeObject;
}

export const nsOf = (o: KubeObject): string => o.metadata?.namespace ?? '';
export const nameOf = (o: KubeObject): string => o.metadata?.name ?? '';
export const grKey = (group: string, resource: string): string => `${group}|${resource}`;

/** The (group, resource) keys a clause names (absent apiGroup: core; "*" is refused by the CRD and skipped). */
export function clauseResources(c: UpsyncClause): string[] {
  return (c.resources ?? []).filter((r) => r !== '*').map((r) => grKey(c.apiGroup ?? '', r));
}

/** The Secrets rule, applied after the clause matched: by name only, never a service-account or bootstrap token. */
export function secretAllowed(c: UpsyncClause, cand: Candidate): boolean {
  if (cand.group !== '' || cand.resource !== 'secrets') return true;
  if (isNeverSentSecret(cand.obj)) return false;
  return (c.objectNames ?? []).includes(nameOf(cand.obj));
}

/** Whether a resources clause selects `cand`. */
export function resourceClauseSelects(c: UpsyncClause, cand: Candidate, nsLabels: Labels | undefined): boolean {
  if (!c.resources?.length) return false;
  const ref = { group: cand.group, resource: cand.resource, namespace: nsOf(cand.obj), name: nameOf(cand.obj), labels: cand.obj.metadata?.labels ?? {} };
  return clauseMatches({ ...c, apiGroup: c.apiGroup ?? '' }, ref, nsLabels) && secretAllowed(c, cand);
}

/** Whether an associatedWith clause keeps an associated `cand` (its other fields narrow). */
export function associatedClauseKeeps(c: UpsyncClause, cand: Candidate, nsLabels: Labels | undefined): boolean {
  if (c.resources?.length && (!listMatches(c.resources, cand.resource) || (c.apiGroup ?? '') !== cand.group)) return false;
  const ref = { group: cand.group, resource: cand.resource, namespace: nsOf(cand.obj), name: nameOf(cand.obj), labels: cand.obj.metadata?.labels ?? {} };
  return clauseMatches({ ...c, apiGroup: null, resources: undefined }, ref, nsLabels) && secretAllowed(c, cand);
}

/** An object an ownerReference may name, with its group and kind as the WEC's discovery says. */
export interface Owner {
  group: string;
  kind: string;
  obj: KubeObject;
}

interface OwnerReference { apiVersion?: unknown; kind?: unknown; name?: unknown; uid: string }

/**
 * Whether obj's ownerReferences chain reaches one of `roots` (uids). Owners are found by uid with
 * `byUid` (which must find the roots too: a root is reached only through a link that holds).
 */
export function ownedBy(obj: KubeObject, roots: ReadonlySet<string>, byUid: (uid: string) => Owner | undefined): boolean {
  let frontier = [obj];
  const seen = new Set<string>();
  for (let depth = 0; depth < MAX_OWNER_DEPTH && frontier.length > 0; depth++) {
    const next: KubeObject[] = [];
    for (const o of frontier) {
      for (const ref of ownerRefs(o)) {
        const owner = byUid(ref.uid);
        if (!owner || !linkHolds(o, ref, owner)) continue;
        if (roots.has(ref.uid)) return true;
        if (seen.has(ref.uid)) continue;
        seen.add(ref.uid);
        next.push(owner.obj);
      }
    }
    frontier = next;
  }
  return false;
}

/**
 * Whether the garbage collector would take `owner` for `ref` of `dependent`: a namespaced owner in
 * the dependent's own namespace (a cluster-scoped dependent has only cluster-scoped owners), and
 * the reference's group, kind and name its own (the collector looks the owner up by those, and
 * the uid only confirms it).
 */
function linkHolds(dependent: KubeObject, ref: OwnerReference, owner: Owner): boolean {
  const ns = nsOf(owner.obj);
  if (ns !== '' && ns !== nsOf(dependent)) return false;
  if (typeof ref.apiVersion !== 'string' || splitApiVersion(ref.apiVersion).group !== owner.group) return false;
  return ref.kind === owner.kind && ref.name === nameOf(owner.obj);
}

function ownerRefs(o: KubeObject): OwnerReference[] {
  const refs = o.metadata?.ownerReferences;
  return Array.isArray(refs) ? refs.filter((r): r is OwnerReference => typeof (r as { uid?: unknown })?.uid === 'string') : [];
}

/** The PVC name patterns of a StatefulSet: `<template>-<name>-` followed by an ordinal. */
export function statefulSetClaims(sts: KubeObject): { namespace: string; prefixes: string[] } {
  const templates = (sts.spec as { volumeClaimTemplates?: { metadata?: { name?: string } }[] } | undefined)?.volumeClaimTemplates;
  const prefixes = (Array.isArray(templates) ? templates : [])
    .map((t) => t?.metadata?.name).filter((n): n is string => typeof n === 'string' && n !== '')
    .map((n) => `${n}-${nameOf(sts)}-`);
  return { namespace: nsOf(sts), prefixes };
}

/** Whether a PVC is one of a StatefulSet's claims (statefulSetClaims). */
export function isClaimOf(pvc: KubeObject, claims: { namespace: string; prefixes: string[] }): boolean {
  if (nsOf(pvc) !== claims.namespace) return false;
  const n = nameOf(pvc);
  return claims.prefixes.some((p) => n.startsWith(p) && /^\d+$/.test(n.slice(p.length)));
}
