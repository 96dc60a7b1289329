// Bundled works (ksview serve --max-objects-per-work N > 1, --max-bytes-per-work B): the objects a
// cluster receives from the same policies (with the same executor) are packed into works of at most
// N manifests and B bytes — a bundle group's slots, named <wds>-b<group>-<slot> — instead of one work
// per object. Each manifest keeps its own manifestConfig (server-side apply or CreateOnly, feedback
// rules), an implied Namespace its orphaning rule; the work's annotations list the manifests' WDS
// objects and generations (in manifest order).
//
// Packing is stable: an object keeps its slot while it fits (its place in the slot, by key, under N;
// the slot's other objects and it under B), so one object's change rewrites one work; one that no
// longer fits (it grew, N was lowered, its policies changed) moves to the first slot of its group
// with room, or a new one. A move writes the receiving work before the releasing one, and until
// then every write of the releasing one still carries the object (Slot.leaving), so an agent sees
// it carried by both before it sees it released (src/agent/handover.ts: it is handed over in
// place, never deleted and re-created).
//
// State: which object is in which slot, with its manifest, is held in memory (the leader's); a slot
// of the ITS not known yet (a new leader, a restart) is read whole from the ITS before anything is
// decided about it, and what it carries is kept until each object says otherwise — nothing is
// dropped from a work because this process has not reconciled that object yet. Decisions are made
// synchronously once the slots are read; each slot's writes go one at a time with the content as it
// is when the write starts (../../util/latest-runs.ts), so concurrent reconciles of its objects
// merge into few writes and never overtake each other.
import { Buffer } from 'node:buffer';
import type { JsonObject } from '../../kube/objects.js';
import type { DeleteOption, ManifestConfigOption } from '../../kube/ocm-api.js';
import { SOURCE_GENERATION_ANNOTATION, SOURCE_GENERATIONS_ANNOTATION } from '../../kube/ocm-api.js';
import { eachSettled } from '../../util/each-settled.js';
import { LatestRuns } from '../../util/latest-runs.js';
import { BUNDLE_ANNOTATION, bundleGroup, bundleWorkName, MAX_MANIFESTS_BYTES, SOURCES_ANNOTATION, WDS_LABEL, type ManifestWork } from '../wrapping.js';
import { SOURCE_ANNOTATION, workKey } from './keys.js';
import { objectIndexKey, type Works } from './works.js';

export interface BundleLimits {
  /** Manifests per work (N). */
  objects: number;
  /** Bytes of manifests per work (B; OCM refuses a work over 500 KiB). */
  bytes: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = { objects: 1, bytes: MAX_MANIFESTS_BYTES };

type OrphaningRule = NonNullable<NonNullable<DeleteOption['selectivelyOrphans']>['orphaningRules']>[number];

/** One object's manifest in a bundle. */
interface Member {
  key: string;
  source: string;
  generation: number | undefined;
  manifest: JsonObject;
  config: ManifestConfigOption;
  orphan: OrphaningRule | undefined;
  bytes: number;
}

/** One work of a bundle group in one cluster. */
interface Slot {
  cluster: string;
  name: string;
  index: number;
  group: string;
  labels: Record<string, string>;
  executor: JsonObject | undefined;
  members: Map<string, Member>;
  /**
   * Members moving to another slot whose work is not written with them yet: still written here, so
   * a write of this slot by another object's reconcile never releases them before they are received.
   */
  leaving: Map<string, Member>;
}

const bytesOf = new WeakMap<JsonObject, number>();
function sizeOf(manifest: JsonObject): number {
  let n = bytesOf.get(manifest);
  if (n === undefined) {
    n = Buffer.byteLength(JSON.stringify(manifest));
    bytesOf.set(manifest, n);
  }
  return n;
}

/** The member of a work of one object (as ../wrapping.ts manifestWork makes it), and its group. */
function memberOf(work: ManifestWork): { member: Member; group: string } {
  const manifest = work.spec!.workload!.manifests![0] as JsonObject;
  const config = work.spec!.manifestConfigs![0]!;
  const generation = Number(work.metadata.annotations?.[SOURCE_GENERATION_ANNOTATION]);
  return {
    group: bundleGroup(work.metadata.labels ?? {}, work.spec?.executor),
    member: {
      key: objectIndexKey(config.resourceIdentifier),
      source: work.metadata.annotations?.[SOURCE_ANNOTATION] ?? '',
      generation: Number.isSafeInteger(generation) ? generation : undefined,
      manifest, config,
      orphan: work.spec?.deleteOption?.selectivelyOrphans?.orphaningRules?.[0],
      bytes: sizeOf(manifest),
    },
  };
}

/** The members of a bundled work read from the ITS. */
function membersOfStored(w: ManifestWork): Member[] {
  let sources: unknown;
  let generations: unknown;
  try {
    sources = JSON.parse(w.metadata.annotations?.[SOURCES_ANNOTATION] ?? '[]');
    generations = JSON.parse(w.metadata.annotations?.[SOURCE_GENERATIONS_ANNOTATION] ?? '[]');
  } catch {
    sources = [];
    generations = [];
  }
  const manifests = (w.spec?.workload?.manifests ?? []) as JsonObject[];
  const rules = w.spec?.deleteOption?.selectivelyOrphans?.orphaningRules ?? [];
  return manifests.flatMap((manifest, i): Member[] => {
    const config = w.spec?.manifestConfigs?.[i];
    if (!config) return [];
    const key = objectIndexKey(config.resourceIdentifier);
    const g = Array.isArray(generations) ? Number(generations[i]) : NaN;
    return [{
      key, manifest, config,
      source: Array.isArray(sources) && typeof sources[i] === 'string' ? sources[i] : '',
      generation: Number.isSafeInteger(g) && g > 0 ? g : undefined,
      orphan: rules.find((r) => objectIndexKey(r) === key),
      bytes: sizeOf(manifest),
    }];
  });
}

/** The work a slot's members make (members in key order: the same members make the same work). */
export function slotWork(wds: string, slot: Slot): ManifestWork {
  const members = [...slot.leaving.values(), ...slot.members.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const orphans = members.flatMap((m) => (m.orphan ? [m.orphan] : []));
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: slot.name, namespace: slot.cluster, labels: { ...slot.labels, [WDS_LABEL]: wds },
      annotations: {
        [BUNDLE_ANNOTATION]: slot.group,
        [SOURCES_ANNOTATION]: JSON.stringify(members.map((m) => m.source)),
        [SOURCE_GENERATIONS_ANNOTATION]: JSON.stringify(members.map((m) => m.generation ?? null)),
      },
    },
    spec: {
      workload: { manifests: members.map((m) => m.manifest) },
      manifestConfigs: members.map((m) => m.config),
      ...(orphans.length > 0 ? { deleteOption: { propagationPolicy: 'SelectivelyOrphan', selectivelyOrphans: { orphaningRules: orphans } } } : {}),
      ...(slot.executor ? { executor: slot.executor } : {}),
    },
  };
}

/** One write of a bundle's work at a time, 64 works at once (as per-object works, ./reconcile.ts). */
const WRITES_AT_ONCE = 64;

export class Bundles {
  /** work key → slot. */
  private readonly slots = new Map<string, Slot>();
  /** object key → cluster → the work key of its slot. */
  private readonly where = new Map<string, Map<string, string>>();
  /** object key → cluster → the work keys of the slots it is leaving (Slot.leaving). */
  private readonly leavingFrom = new Map<string, Map<string, Set<string>>>();
  /** Slots being read from the ITS. */
  private readonly loading = new Map<string, Promise<void>>();
  private readonly writes = new LatestRuns();

  constructor(private readonly wds: string, private readonly works: Works, readonly limits: BundleLimits) {}

  /** Whether objects are packed (N > 1); with N = 1 bundles are only emptied (the layout changed back). */
  get enabled(): boolean {
    return this.limits.objects > 1;
  }

  /** Forgets every slot (a new leader reads them from the ITS again: another may have changed them). */
  forget(): void {
    this.slots.clear();
    this.where.clear();
    this.leavingFrom.clear();
  }

  /** The clusters where a bundle of this process holds the object (written or about to be). */
  clustersOf(key: string): string[] {
    return [...(this.where.get(key)?.keys() ?? [])];
  }

  /**
   * Places the object (its works per cluster, as ../wrapping.ts makes them for one object) into its
   * groups' slots in `desired`, and takes it out of its slot in each cluster of `release`; writes
   * the works that receive it, then those that release it (an emptied one is deleted).
   */
  async update(key: string, desired: ReadonlyMap<string, ManifestWork>, release: Iterable<string>): Promise<void> {
    const placing = [...desired].map(([cluster, work]) => ({ cluster, ...memberOf(work), work }));
    const releasing = [...release].filter((c) => !desired.has(c));
    await Promise.all([
      ...placing.map((p) => this.prepare(p.cluster, key, p.group)),
      ...releasing.map((c) => this.prepare(c, key, undefined)),
    ]);
    // From here to the writes nothing is awaited: the decisions see one state.
    const receiving = new Set<string>();
    const released = new Set<string>();
    for (const p of placing) receiving.add(this.place(p.cluster, p.member, p.group, p.work));
    for (const cluster of releasing) {
      const from = this.take(cluster, key);
      if (from) released.add(from);
      for (const k of this.stopLeaving(key, cluster)) released.add(k);
    }
    await eachSettled(receiving, WRITES_AT_ONCE, (k) => this.write(k));
    // Received everywhere it goes (a write that started after the decision): the slots it left may let it go.
    for (const p of placing) for (const k of this.stopLeaving(key, p.cluster)) released.add(k);
    await eachSettled([...released].filter((k) => !receiving.has(k)), WRITES_AT_ONCE, (k) => this.write(k));
  }

  /** Whether nothing is being written. */
  idle(): boolean {
    return this.writes.idle();
  }

  /** Reads from the ITS the slots a decision about the object in this cluster looks at. */
  private async prepare(cluster: string, key: string, group: string | undefined): Promise<void> {
    const names = new Set<string>();
    for (const { work } of this.works.carriers(cluster, key)) if (work.metadata.annotations?.[BUNDLE_ANNOTATION] !== undefined) names.add(work.metadata.name);
    if (group !== undefined) for (const w of this.works.store.byIndex('bundle', `${cluster}|${group}`)) names.add(w.metadata.name);
    await Promise.all([...names].map((n) => this.load(cluster, n)));
  }

  private load(cluster: string, name: string): Promise<void> {
    const k = workKey(cluster, name);
    if (this.slots.has(k)) return Promise.resolve();
    let p = this.loading.get(k);
    if (!p) {
      p = this.works.read(cluster, name).then((w) => {
        if (this.slots.has(k)) return;
        const group = w?.metadata.annotations?.[BUNDLE_ANNOTATION];
        const index = Number(/-(\d+)$/.exec(name)?.[1]);
        // A work of that name that is no bundle (or gone): nothing to keep of it.
        if (!w || group === undefined || !Number.isSafeInteger(index)) return;
        const slot: Slot = { cluster, name, index, group, labels: { ...w.metadata.labels }, executor: w.spec?.executor, members: new Map(), leaving: new Map() };
        for (const m of membersOfStored(w)) {
          slot.members.set(m.key, m);
          this.setWhere(m.key, cluster, k);
        }
        this.slots.set(k, slot);
      }).finally(() => this.loading.delete(k));
      this.loading.set(k, p);
    }
    return p;
  }

  /**
   * Puts the member in its slot (kept while it fits) or the first of its group with room, and says
   * which; a slot it moves out of keeps it as leaving until the receiving work is written.
   */
  private place(cluster: string, m: Member, group: string, work: ManifestWork): string {
    const fromKey = this.where.get(m.key)?.get(cluster);
    const from = fromKey !== undefined ? this.slots.get(fromKey) : undefined;
    if (from && from.group === group && this.fits(from, m)) {
      from.members.set(m.key, m);
      return fromKey!;
    }
    const target = this.slotWithRoom(cluster, group, m, fromKey) ?? this.newSlot(cluster, group, work);
    const to = workKey(cluster, target.name);
    target.members.set(m.key, m);
    this.setWhere(m.key, cluster, to);
    // Back into a slot it was leaving: a member there again.
    if (target.leaving.delete(m.key)) this.leavingFrom.get(m.key)?.get(cluster)?.delete(to);
    if (from) {
      const old = from.members.get(m.key);
      from.members.delete(m.key);
      if (old) {
        from.leaving.set(m.key, old);
        let at = this.leavingFrom.get(m.key);
        if (!at) this.leavingFrom.set(m.key, (at = new Map()));
        let slots = at.get(cluster);
        if (!slots) at.set(cluster, (slots = new Set()));
        slots.add(fromKey!);
      }
    }
    return to;
  }

  /** Lets the slots the object was leaving in the cluster drop it; their work keys (to be written). */
  private stopLeaving(key: string, cluster: string): string[] {
    const at = this.leavingFrom.get(key);
    const slots = [...(at?.get(cluster) ?? [])];
    for (const k of slots) this.slots.get(k)?.leaving.delete(key);
    at?.delete(cluster);
    if (at?.size === 0) this.leavingFrom.delete(key);
    return slots;
  }

  /** Takes the object out of its slot in the cluster; the slot's work key, or undefined. */
  private take(cluster: string, key: string): string | undefined {
    const at = this.where.get(key);
    const k = at?.get(cluster);
    if (k === undefined) return undefined;
    this.slots.get(k)?.members.delete(key);
    at!.delete(cluster);
    if (at!.size === 0) this.where.delete(key);
    return k;
  }

  /** Whether the member, in its slot, is among the first N (by key) and the slot stays within B bytes. */
  private fits(slot: Slot, m: Member): boolean {
    let before = 0;
    let bytes = m.bytes;
    for (const [k, other] of slot.members) {
      if (k === m.key) continue;
      if (k < m.key) before++;
      bytes += other.bytes;
    }
    return before < this.limits.objects && bytes <= this.limits.bytes;
  }

  private slotWithRoom(cluster: string, group: string, m: Member, except: string | undefined): Slot | undefined {
    let best: Slot | undefined;
    for (const [k, s] of this.slots) {
      if (k === except || s.cluster !== cluster || s.group !== group) continue;
      const bytes = [...s.members.values()].reduce((n, x) => n + x.bytes, 0);
      if (s.members.size >= this.limits.objects || bytes + m.bytes > this.limits.bytes) continue;
      if (!best || s.index < best.index) best = s;
    }
    return best;
  }

  private newSlot(cluster: string, group: string, work: ManifestWork): Slot {
    const used = new Set([...this.slots.values()].filter((s) => s.cluster === cluster && s.group === group).map((s) => s.index));
    let index = 0;
    while (used.has(index)) index++;
    const labels = Object.fromEntries(Object.entries(work.metadata.labels ?? {}).filter(([l]) => l !== WDS_LABEL));
    const slot: Slot = { cluster, name: bundleWorkName(this.wds, group, index), index, group, labels, executor: work.spec?.executor, members: new Map(), leaving: new Map() };
    this.slots.set(workKey(cluster, slot.name), slot);
    return slot;
  }

  private setWhere(key: string, cluster: string, slot: string): void {
    let at = this.where.get(key);
    if (!at) this.where.set(key, (at = new Map()));
    at.set(cluster, slot);
  }

  /** Writes a slot's work as its members are when the write starts (an empty slot's work is deleted). */
  private write(k: string): Promise<void> {
    return this.writes.run(k, async () => {
      const slot = this.slots.get(k);
      if (!slot) return;
      if (slot.members.size + slot.leaving.size === 0) await this.works.delete(slot.cluster, slot.name);
      else await this.works.apply(slot.cluster, slotWork(this.wds, slot));
    });
  }
}
