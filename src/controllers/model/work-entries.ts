// What the agent says of each manifest of a (cached, never mutated) ManifestWork: its status
// entries by manifest ordinal. Placement projects a bundle per object with them; status reads an
// object's returned state from them (../status/reports.ts). Memoized per work object: a bundle is
// read per object, 100 times an event.
import type { ManifestWork } from '../../kube/ocm-api.js';

/** One entry of a work's status.resourceStatus.manifests. */
export type Entry = NonNullable<NonNullable<ManifestWork['status']>['resourceStatus']>['manifests'] extends (infer E)[] | undefined ? E : never;

const entriesOf = new WeakMap<ManifestWork, Map<number, Entry>>();

/** The agent's status entries of a work by manifest ordinal (an entry without one: by its place). */
export function statusEntries(w: ManifestWork): Map<number, Entry> {
  const memo = entriesOf.get(w);
  if (memo) return memo;
  const out = new Map<number, Entry>();
  entriesOf.set(w, out);
  (w.status?.resourceStatus?.manifests ?? []).forEach((m, i) => {
    const ordinal = m.resourceMeta?.ordinal ?? i;
    if (!out.has(ordinal)) out.set(ordinal, m);
  });
  return out;
}

/** The agent's status entry of a (cached) work's manifest `i`, or undefined. */
export const statusEntry = (w: ManifestWork, i: number): Entry | undefined => statusEntries(w).get(i);

