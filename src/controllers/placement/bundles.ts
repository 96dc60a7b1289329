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
// it carried by both before it sees it released (src/agent/apply/handover.ts: it is handed over in
// place, never deleted and re-created).
//
// State: which object is in which slot, with its manifest, is held in memory (the leader's); a slot
// of the ITS not known yet (a new leader, a restart, a slot name another leader may have used) is
// read whole from the ITS before anything is decided about it or it is first written, and what it
// carries is kept until each object says otherwise — nothing is dropped from a work because this
// process has not reconciled that object yet; an object found in two slots (a move cut short by a
// crash or a failed write) stays in the other as leaving and goes once its own slot is written.
// A name the ITS holds for a work not this WDS's (label view.kubestellar.io/wds) is never adopted,
// written nor deleted: skipped, or (found at a slot's first write) its objects go to another slot.
// A slot of an earlier release's name (../model/wrapping.ts) takes no object; it empties as they move.
// Decisions are made synchronously once the slots are read. Writes are this class's: a slot's
// changes gather for WRITE_DELAY_MS, then its work is written with its content as it is when the
// write starts, one write per slot at a time (../../util/latest-runs.ts), a failed one tried again
// with backoff until it succeeds — so placing many objects at once costs about two writes per
// slot, and a reconcile never waits for them (except to delete an object's own work after its
// bundle took it over).
import { LatestRuns } from '../../util/latest-runs.js';
import { BUNDLE_ANNOTATION, bundleWorkName, MAX_MANIFESTS_BYTES, WDS_LABEL, type ManifestWork } from '../model/wrapping.js';
import { fingerprint, memberOf, membersOfStored, shapeOf, slotWork, type Member, type Slot, type SlotShape } from './bundle-slots.js';
import { workKey } from '../model/keys.js';
import { isBundle, notOwnWork, type Works } from './works.js';

export interface BundleLimits {
  /** Manifests per work (N). */
  objects: number;
  /** Bytes of manifests per work (B; OCM refuses a work over 500 KiB). */
  bytes: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = { objects: 1, bytes: MAX_MANIFESTS_BYTES };
/** At most this many objects per work: its annotations (each object's key and generation) stay well under Kubernetes' 256 KiB. */
export const MAX_OBJECTS_PER_WORK = 500;

/** How long a slot's changes gather before its work is written (objects reconciled together make one write). */
export const WRITE_DELAY_MS = 20;
/** A failed write is tried again after 250 ms, doubling up to 30 s, until it succeeds or the slot changes owner. */
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 30_000;

export class Bundles {
  /** work key → slot. */
  private readonly slots = new Map<string, Slot>();
  /** `<cluster>|<group>` → the work keys of its slots. */
  private readonly byGroup = new Map<string, Set<string>>();
  /** object key → cluster → the work key of the slot it is a member of. */
  private readonly where = new Map<string, Map<string, string>>();
  /** object key → cluster → every slot holding it (member or leaving). */
  private readonly held = new Map<string, Map<string, Set<string>>>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly writes = new LatestRuns();
  /** work key → what waits for its work to be written up to a version (a release after a move). */
  private readonly waiting = new Map<string, { version: number; then: (written: boolean) => void }[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  /** Work keys of slot names whose work in the ITS is not this WDS's. */
  private readonly taken = new Set<string>();
  /** Bumped by forget(): what an older leadership scheduled does nothing. */
  private epoch = 0;

  constructor(private readonly wds: string, private readonly works: Works, readonly limits: BundleLimits,
    private readonly log: (msg: string) => void = () => {}) {}

  /** Whether objects are packed (N > 1); with N = 1 bundles are only emptied (the layout changed back). */
  get enabled(): boolean {
    return this.limits.objects > 1;
  }

  /** Forgets every slot and drops what is scheduled (leadership changed: the next leader reads the slots from the ITS). */
  forget(): void {
    this.epoch++;
    for (const t of this.timers.values()) clearTimeout(t);
    for (const list of this.waiting.values()) for (const w of list) w.then(false);
    for (const m of [this.slots, this.byGroup, this.where, this.held, this.waiting, this.timers, this.failures, this.taken]) m.clear();
  }

  /** The clusters where a bundle of this process holds the object (written or about to be). */
  clustersOf(key: string): string[] {
    return [...(this.held.get(key)?.keys() ?? [])];
  }

  /** Whether nothing is scheduled or being written. */
  idle(): boolean {
    return this.timers.size === 0 && this.writes.idle();
  }

  /**
   * Places the object (its works per cluster, as ../model/wrapping.ts makes them for one object) into its
   * groups' slots in `desired`, and takes it out of every slot holding it in each cluster of
   * `release`. The works are written shortly after, by this class (retried until they are): the
   * one receiving the object first, then any it leaves (an emptied one is deleted). `received`
   * settles once every work receiving it is written (rejected if leadership changed first); with
   * `waitFor` false it is not kept track of (at 1,000 clusters, a waiter each: nothing awaits them).
   */
  async update(key: string, desired: ReadonlyMap<string, ManifestWork>, release: Iterable<string>, waitFor = true): Promise<{ received: Promise<void> }> {
    const placing = [...desired].map(([cluster, work]) => ({ cluster, ...memberOf(work), work }));
    const releasing = [...release].filter((c) => !desired.has(c));
    await Promise.all([
      ...placing.map((p) => this.prepare(p.cluster, p.member.key, p.group)),
      ...releasing.map((c) => this.prepare(c, key, undefined)),
    ]);
    // From here on nothing is awaited: the decisions see one state.
    const received: Promise<void>[] = [];
    for (const p of placing) {
      const to = this.place(p.cluster, p.member, p.group, shapeOf(p.work));
      for (const other of this.holders(p.cluster, key)) if (other !== to) this.releaseAfter(other, key, to);
      if (waitFor) received.push(new Promise((resolve, reject) => this.whenWritten(to, this.slots.get(to)?.version ?? 0,
        (written) => (written ? resolve() : reject(new Error('the bundle was not written (leadership changed, or its name is not this WDS\'s)'))))));
    }
    for (const cluster of releasing) for (const k of this.holders(cluster, key)) this.drop(k, key);
    const all = Promise.all(received).then(() => undefined);
    all.catch(() => undefined); // a caller that does not wait for it
    return { received: all };
  }

  /** The slots of a cluster holding the object in memory or, as the cache says, in the ITS. */
  private holders(cluster: string, key: string): Set<string> {
    const out = new Set(this.held.get(key)?.get(cluster) ?? []);
    for (const { work } of this.works.carriers(cluster, key)) if (isBundle(work)) out.add(workKey(cluster, work.metadata.name));
    return out;
  }

  /** Reads from the ITS the slots a decision about the object in this cluster looks at. */
  private async prepare(cluster: string, key: string, group: string | undefined): Promise<void> {
    const names = new Set<string>();
    for (const { work } of this.works.carriers(cluster, key)) if (isBundle(work)) names.add(work.metadata.name);
    if (group !== undefined) for (const w of this.works.store.byIndex('bundle', `${cluster}|${group}`)) names.add(w.metadata.name);
    await Promise.all([...names].map((n) => this.load(cluster, n)));
  }

  private load(cluster: string, name: string): Promise<void> {
    const k = workKey(cluster, name);
    if (this.slots.has(k)) return Promise.resolve();
    let p = this.loading.get(k);
    if (!p) {
      const epoch = this.epoch;
      p = this.works.read(cluster, name).then((w) => {
        if (this.slots.has(k) || epoch !== this.epoch) return;
        if (w && w.metadata.labels?.[WDS_LABEL] !== this.wds) {
          this.taken.add(k);
          return;
        }
        const group = w?.metadata.annotations?.[BUNDLE_ANNOTATION];
        const index = Number(/-(\d+)$/.exec(name)?.[1]);
        // A work of that name that is no bundle (or gone): nothing to keep of it.
        if (!w || group === undefined || !Number.isSafeInteger(index)) return;
        const slot = this.addSlot({ cluster, name, index, group, labels: { ...w.metadata.labels }, executor: w.spec?.executor,
          members: new Map(), leaving: new Map(), version: 0, written: 0, known: true });
        this.adopt(slot, membersOfStored(w));
      }).finally(() => this.loading.delete(k));
      this.loading.set(k, p);
    }
    return p;
  }

  /**
   * Takes in what a slot's work holds in the ITS: an object no other slot holds is a member; one
   * another slot holds (a move cut short: a crash, a failed write) stays here as leaving until that
   * slot's work is written, then goes.
   */
  private adopt(slot: Slot, stored: readonly Member[]): void {
    const k = workKey(slot.cluster, slot.name);
    for (const m of stored) {
      if (slot.members.has(m.key) || slot.leaving.has(m.key)) continue;
      const at = this.where.get(m.key)?.get(slot.cluster);
      if (at === undefined) {
        slot.members.set(m.key, m);
        this.setWhere(m.key, slot.cluster, k);
      } else {
        slot.leaving.set(m.key, m);
        this.releaseAfter(k, m.key, at);
      }
      this.hold(m.key, slot.cluster, k);
    }
  }

  /** Puts the member in its slot (kept while it fits) or the first of its group with room; the slot's work key. */
  private place(cluster: string, m: Member, group: string, shape: SlotShape): string {
    const fromKey = this.where.get(m.key)?.get(cluster);
    const from = fromKey !== undefined ? this.slots.get(fromKey) : undefined;
    if (from && from.group === group && this.current(from) && this.fits(from, m)) {
      if (fingerprint(from.members.get(m.key)) !== fingerprint(m)) {
        from.members.set(m.key, m);
        this.changed(fromKey!);
      }
      return fromKey!;
    }
    const target = this.slotWithRoom(cluster, group, m, fromKey) ?? this.newSlot(cluster, group, shape);
    const to = workKey(cluster, target.name);
    target.members.set(m.key, m);
    target.leaving.delete(m.key);
    this.setWhere(m.key, cluster, to);
    this.hold(m.key, cluster, to);
    this.changed(to);
    return to;
  }

  /** The object leaves slot `from` once slot `to`'s work (as it is now) is written: until then `from` still carries it. */
  private releaseAfter(from: string, key: string, to: string): void {
    const slot = this.slots.get(from);
    const m = slot?.members.get(key);
    if (slot && m) {
      slot.members.delete(key);
      slot.leaving.set(key, m);
    }
    const target = this.slots.get(to);
    const epoch = this.epoch;
    this.whenWritten(to, target?.version ?? 0, (written) => {
      if (written && epoch === this.epoch) this.drop(from, key);
    });
  }

  /** Takes the object out of a slot (member or leaving) and writes the slot. */
  private drop(k: string, key: string): void {
    const slot = this.slots.get(k);
    if (slot) {
      slot.members.delete(key);
      slot.leaving.delete(key);
    }
    const cluster = k.slice(0, k.indexOf('/')); // a work key is <cluster>/<name>
    this.held.get(key)?.get(cluster)?.delete(k);
    if (this.where.get(key)?.get(cluster) === k) this.where.get(key)!.delete(cluster);
    this.changed(k);
  }

  /**
   * Whether the member, in its slot, is among the first N (by key) and the slot stays within B
   * bytes; an object alone in its slot always fits (one bigger than B has nowhere better to go).
   */
  private fits(slot: Slot, m: Member): boolean {
    let before = 0;
    let others = 0;
    let bytes = m.bytes;
    for (const [k, other] of slot.members) {
      if (k === m.key) continue;
      others++;
      if (k < m.key) before++;
      bytes += other.bytes;
    }
    return others === 0 || (before < this.limits.objects && bytes <= this.limits.bytes);
  }

  private slotWithRoom(cluster: string, group: string, m: Member, except: string | undefined): Slot | undefined {
    let best: Slot | undefined;
    for (const k of this.byGroup.get(`${cluster}|${group}`) ?? []) {
      const s = this.slots.get(k);
      if (!s || k === except || !this.current(s) || this.works.terminating(cluster, s.name)) continue;
      let bytes = m.bytes;
      for (const x of s.members.values()) bytes += x.bytes;
      for (const x of s.leaving.values()) bytes += x.bytes;
      if (s.members.size >= this.limits.objects || (s.members.size > 0 && bytes > this.limits.bytes)) continue;
      if (!best || s.index < best.index) best = s;
    }
    return best;
  }

  /** Whether the slot has this release's name (not an earlier one's: it then only empties). */
  private current(slot: Slot): boolean {
    return slot.name === bundleWorkName(this.wds, slot.group, slot.index);
  }

  private newSlot(cluster: string, group: string, shape: SlotShape): Slot {
    // Names of slots in memory, and of the ITS this process has not read (the cache behind the last leader's writes: read before its first write, write()).
    const used = new Set(this.byGroup.get(`${cluster}|${group}`));
    for (const w of this.works.store.byIndex('bundle', `${cluster}|${group}`)) used.add(workKey(cluster, w.metadata.name));
    let index = 0;
    const k = () => workKey(cluster, bundleWorkName(this.wds, group, index));
    while (used.has(k()) || this.taken.has(k()) || this.works.ownerElsewhere(cluster, bundleWorkName(this.wds, group, index)) !== undefined) index++;
    return this.addSlot({ cluster, name: bundleWorkName(this.wds, group, index), index, group, labels: { ...shape.labels }, executor: shape.executor,
      members: new Map(), leaving: new Map(), version: 0, written: 0, known: false });
  }

  /**
   * A slot whose name a work that is not this WDS's holds: never written; its objects go to other
   * slots of their group, and what they were leaving is released once those are written.
   */
  private rehome(k: string, slot: Slot, owner: string): void {
    this.log(`placement: ${notOwnWork(slot.cluster, slot.name, owner)}: not written; its objects go to another bundled work`);
    this.taken.add(k);
    this.removeSlot(k, slot);
    for (const w of this.waiting.get(k) ?? []) w.then(false);
    this.waiting.delete(k);
    for (const m of [...slot.members.values(), ...slot.leaving.values()]) {
      this.held.get(m.key)?.get(slot.cluster)?.delete(k);
      if (this.where.get(m.key)?.get(slot.cluster) === k) this.where.get(m.key)!.delete(slot.cluster);
    }
    for (const m of slot.members.values()) {
      const to = this.place(slot.cluster, m, slot.group, slot);
      for (const other of this.holders(slot.cluster, m.key)) if (other !== to) this.releaseAfter(other, m.key, to);
    }
  }

  private addSlot(slot: Slot): Slot {
    const k = workKey(slot.cluster, slot.name);
    this.slots.set(k, slot);
    const g = `${slot.cluster}|${slot.group}`;
    let set = this.byGroup.get(g);
    if (!set) this.byGroup.set(g, (set = new Set()));
    set.add(k);
    return slot;
  }

  private removeSlot(k: string, slot: Slot): void {
    this.slots.delete(k);
    this.byGroup.get(`${slot.cluster}|${slot.group}`)?.delete(k);
  }

  private setWhere(key: string, cluster: string, slot: string): void {
    let at = this.where.get(key);
    if (!at) this.where.set(key, (at = new Map()));
    at.set(cluster, slot);
  }

  private hold(key: string, cluster: string, slot: string): void {
    let at = this.held.get(key);
    if (!at) this.held.set(key, (at = new Map()));
    let set = at.get(cluster);
    if (!set) at.set(cluster, (set = new Set()));
    set.add(slot);
  }

  private whenWritten(k: string, version: number, then: (written: boolean) => void): void {
    const slot = this.slots.get(k);
    if (!slot || slot.written >= version) {
      queueMicrotask(() => then(true));
      return;
    }
    let list = this.waiting.get(k);
    if (!list) this.waiting.set(k, (list = []));
    list.push({ version, then });
  }

  /** The slot's work is to be written (after WRITE_DELAY_MS, or a retry's backoff). */
  private changed(k: string, delayMs = WRITE_DELAY_MS): void {
    const slot = this.slots.get(k);
    if (slot) slot.version++;
    this.schedule(k, delayMs);
  }

  private schedule(k: string, delayMs = WRITE_DELAY_MS): void {
    if (this.timers.has(k)) return;
    const epoch = this.epoch;
    this.timers.set(k, setTimeout(() => {
      this.timers.delete(k);
      if (epoch !== this.epoch) return;
      this.writes.run(k, () => this.write(k, epoch)).catch((err: Error) => {
        if (epoch !== this.epoch) return;
        const n = (this.failures.get(k) ?? 0) + 1;
        this.failures.set(k, n);
        this.log(`placement: bundled work ${k}: ${err.message} (attempt ${n}; again in ${Math.min(RETRY_BASE_MS * 2 ** (n - 1), RETRY_MAX_MS)} ms)`);
        this.schedule(k, Math.min(RETRY_BASE_MS * 2 ** (n - 1), RETRY_MAX_MS));
      });
    }, delayMs));
  }

  /** Writes a slot's work as it is when the write starts (an empty slot's work is deleted). */
  private async write(k: string, epoch: number): Promise<void> {
    const slot = this.slots.get(k);
    if (!slot || epoch !== this.epoch) return;
    let owner = this.works.ownerElsewhere(slot.cluster, slot.name);
    if (!slot.known && owner === undefined) {
      // A slot this process made: the ITS may hold a work of that name the cache had not shown yet (the last leader's, or another's).
      const stored = await this.works.read(slot.cluster, slot.name);
      if (epoch !== this.epoch || this.slots.get(k) !== slot) return;
      if (stored && stored.metadata.labels?.[WDS_LABEL] !== this.wds) owner = stored.metadata.labels?.[WDS_LABEL] ?? '';
      else if (stored && isBundle(stored)) this.adopt(slot, membersOfStored(stored));
      slot.known = true;
    }
    if (owner !== undefined) {
      this.rehome(k, slot, owner);
      return;
    }
    const version = slot.version;
    if (slot.written >= version) return;
    if (slot.members.size + slot.leaving.size === 0) await this.works.delete(slot.cluster, slot.name);
    else await this.works.apply(slot.cluster, slotWork(this.wds, slot));
    if (epoch !== this.epoch) return;
    slot.written = Math.max(slot.written, version);
    this.failures.delete(k);
    const list = this.waiting.get(k) ?? [];
    const due = list.filter((w) => w.version <= slot.written);
    if (due.length > 0) this.waiting.set(k, list.filter((w) => w.version > slot.written));
    for (const w of due) w.then(true);
    if (slot.version > slot.written) this.schedule(k);
    else if (slot.members.size + slot.leaving.size === 0 && (this.waiting.get(k)?.length ?? 0) === 0) this.removeSlot(k, slot);
  }
}
