// Writing one object's works, after ./reconcile.ts decided which it wants (the leader only):
// - a cluster where the object's work name is held by a work that is not this WDS's (another WDS's
//   or one naming none, ./conflicts.ts ownerOf) gets nothing written: a forced apply would take that
//   work over and empty it. The object's work there under an earlier name stays; the policies
//   sending it there say why (a conflict, like an agent's refusal). Bundles choose names no other
//   work holds (./bundles.ts), so this is for works of one object.
// - its works are written in its own works (a work per object) or in bundles (./bundles.ts), and
//   it is taken out of the works of the other layout (the flags changed), out of the clusters it no
//   longer goes to, and out of its own works under another name (an earlier release cut long WDS
//   names short: ../model/wrapping.ts). What receives the object is written before what releases it (an
//   agent hands it over in place: src/agent/apply/handover.ts). One object's works in all its clusters at
//   once (bounded here; the whole controller's writes by the ITS's limiter, --max-its-requests-inflight).
import { eachSettled } from '../../util/each-settled.js';
import { manifestWorkName, type ManifestWork, type ObjectIdentity } from '../model/wrapping.js';
import type { Bundles } from './bundles.js';
import { isBundle, notOwnWork, objectIndexKey, type Works } from './works.js';

/** One object's work writes in flight at once (its ITS upstream's connections: ../../kube/upstream.ts ownPool). */
export const WRITES_PER_OBJECT = 64;

/**
 * Takes out of `desired` each cluster where the object's work name is not this WDS's to write (its
 * work there under an earlier name is then `kept`); `refused(cluster, message)` for each.
 */
export function refuseTakenNames(works: Works, id: ObjectIdentity, desired: Map<string, ManifestWork>, kept: Set<string>,
  refused: (cluster: string, message: string) => void): void {
  if (works.bundled) return;
  const name = manifestWorkName(works.wds, id);
  for (const cluster of [...desired.keys()]) {
    const owner = works.ownerElsewhere(cluster, name);
    if (owner === undefined) continue;
    desired.delete(cluster);
    if (works.carrying(cluster, id)) kept.add(cluster);
    refused(cluster, notOwnWork(cluster, name, owner));
  }
}

/** Writes the object's wanted works and removes the others (see the header); `kept` clusters are left as they are. */
export async function writeObjectWorks(works: Works, bundles: Bundles, id: ObjectIdentity, desired: ReadonlyMap<string, ManifestWork>,
  kept: ReadonlySet<string>): Promise<void> {
  const key = objectIndexKey(id);
  const name = manifestWorkName(works.wds, id);
  const stays = (cluster: string) => desired.has(cluster) || kept.has(cluster);
  const own = works.ownWorksOf(id).filter((w) => !kept.has(w.cluster));
  const bundled = [...new Set([...works.clustersOf(id).filter((c) => works.carriers(c, key).some((x) => isBundle(x.work))), ...bundles.clustersOf(key)])]
    .filter((c) => !kept.has(c));
  const remove = (list: readonly { cluster: string; name: string }[]) => eachSettled(list, WRITES_PER_OBJECT, (w) => works.delete(w.cluster, w.name));
  if (bundles.enabled) {
    // The bundles are written shortly, by Bundles; only an object's own works wait for them.
    const { received } = await bundles.update(key, desired, bundled.filter((c) => !stays(c)), own.length > 0);
    if (own.length === 0) return;
    await received;
    await remove(own);
    return;
  }
  await eachSettled(desired, WRITES_PER_OBJECT, ([cluster, work]) => works.apply(cluster, work));
  await remove(own.filter((w) => !(desired.has(w.cluster) && w.name === name)));
  if (bundled.length > 0) await bundles.update(key, new Map(), bundled);
}
