// Deleting what a work applied, as OCM's helper.DeleteAppliedResources does, plus the owner
// reference rule of its manifest controller (manageOwnerRef):
// - an object not owned by our AppliedManifestWork (Orphan, SelectivelyOrphan, someone else's)
//   is left alone; one also owned by another AppliedManifestWork only loses our reference;
// - an object whose uid is not the one recorded was re-created by someone else: left alone;
// - an object already being deleted (deletionTimestamp) is still pending;
// - otherwise DELETE with a uid precondition, Background propagation: pending until gone.
// Protected objects (./manifest-order.ts: system Namespaces, the fleet lease) are never deleted,
// whatever a work says. An object handed over to another work of ours (./handover.ts) only loses
// our reference once that work's AppliedManifestWork records it; while a live work carries it
// without having applied it, it is neither touched nor read: it stays ours, awaiting.
// Deletion is done with the agent's own identity, whatever the work's executor, as OCM's agent does
// (its appliedmanifestwork finalizer and garbage collection use the agent's client): the work may be
// gone, and with it its executor; what is deleted is only what the work itself applied (recorded
// uid, our owner reference), and an executor's `delete` on each object the work owns was checked
// when it was applied (../shared/work-executor.ts).
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import type { KubeObject } from '../../kube/objects.js';
import { WORK_GROUP, type AppliedManifestResourceMeta, type DeleteOption } from '../../kube/ocm-api.js';
import type { OwnerReference } from './applied-works.js';
import { isProtected } from './manifest-order.js';
import type { Handover } from './handover.js';
import { objectPath, type ResourceRef } from '../../kube/resource-path.js';

/** OCM's OwnedByTheWork: whether the work's deleteOption lets it own (and so delete) this resource. */
export function ownedByTheWork(r: { group: string; resource: string; namespace: string; name: string }, opt: DeleteOption | undefined): boolean {
  if (!opt) return true;
  if (opt.propagationPolicy === 'Foreground') return true;
  if (opt.propagationPolicy === 'Orphan') return false;
  const rules = opt.selectivelyOrphans?.orphaningRules;
  if (!rules) return true;
  return !rules.some((o) => o.group === r.group && o.resource === r.resource && o.name === r.name && o.namespace === r.namespace);
}

type Owners = OwnerReference[];
const ownersOf = (o: KubeObject): Owners => (o.metadata?.ownerReferences as Owners | undefined) ?? [];

/** The owner references `live` should have: ours present when owned by the work, absent otherwise (OCM's "<uid>-" removal). */
export function desiredOwners(live: KubeObject, owner: OwnerReference, owned: boolean): Owners | undefined {
  const current = ownersOf(live);
  const has = current.some((o) => o.uid === owner.uid);
  if (owned && !has) return [...current, owner];
  if (!owned && has) return current.filter((o) => o.uid !== owner.uid);
  return undefined;
}

/**
 * Sets owner references by merge patch, with the object's resourceVersion so a concurrent change
 * wins (409); `headers` impersonate the work's executor when this is part of its apply.
 */
export async function patchOwners(wec: Upstream, ref: ResourceRef, live: KubeObject, owners: Owners, headers: Record<string, string> = {}): Promise<KubeObject> {
  const body = { metadata: { ownerReferences: owners, resourceVersion: live.metadata?.resourceVersion, uid: live.metadata?.uid } };
  const res = await upstreamRequest(wec, 'PATCH', objectPath(ref), { headers: { ...headers, 'content-type': 'application/merge-patch+json' }, body });
  return JSON.parse(expectOk(res, `set owner references of ${objectPath(ref)}`).body.toString('utf8')) as KubeObject;
}

const otherAppliedOwners = (owner: OwnerReference, owners: Owners): boolean =>
  owners.some((o) => o.apiVersion === `${WORK_GROUP}/v1` && o.kind === 'AppliedManifestWork' && o.uid !== owner.uid);

export interface GcResult {
  /** Deleted or being deleted: not gone yet. */
  pending: AppliedManifestResourceMeta[];
  /** Kept: a live work of ours carries them and has not applied them yet (./handover.ts). */
  awaiting: AppliedManifestResourceMeta[];
  errors: Error[];
}

/** Deletes `resources` per OCM's rules (see the header); `handover` says what another work of ours does with each. */
export async function deleteAppliedResources(wec: Upstream, resources: readonly AppliedManifestResourceMeta[], owner: OwnerReference,
  handover: (r: AppliedManifestResourceMeta) => Handover = () => undefined): Promise<GcResult> {
  const out: GcResult = { pending: [], awaiting: [], errors: [] };
  await Promise.all(resources.map(async (r) => {
    try {
      if (isProtected(r)) return;
      const next = handover(r);
      if (next === 'awaiting') {
        out.awaiting.push(r);
        return;
      }
      const ref: ResourceRef = r;
      const got = await upstreamRequest(wec, 'GET', objectPath(ref));
      if (got.status === 404) return;
      const live = JSON.parse(expectOk(got, `get ${objectPath(ref)}`).body.toString('utf8')) as KubeObject;
      const owners = ownersOf(live);
      if (!owners.some((o) => o.uid === owner.uid)) return;
      if (otherAppliedOwners(owner, owners) || next === 'applied') {
        await patchOwners(wec, ref, live, owners.filter((o) => o.uid !== owner.uid));
        return;
      }
      if (r.uid && r.uid !== live.metadata?.uid) return;
      if (live.metadata?.deletionTimestamp) {
        out.pending.push(r);
        return;
      }
      const body = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', preconditions: { uid: live.metadata?.uid } };
      const res = await upstreamRequest(wec, 'DELETE', objectPath(ref), { body });
      if (res.status === 404 || res.status === 409) return;
      expectOk(res, `delete ${objectPath(ref)}`);
      out.pending.push(r);
    } catch (err) {
      out.errors.push(err as Error);
    }
  }));
  return out;
}
