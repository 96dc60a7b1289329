// This WDS's ManifestWorks in the ITS: their cache (a Store indexed by work name and by the
// policies their labels name) and the writes. A work is server-side applied (forced, under the
// WDS's field manager) only when its content differs from what this controller last wrote, or it
// is gone; the resourceVersion of each write is remembered, so the echo of that write coming back
// through the informer is recognised and not reconciled a second time. A work of one of this WDS's
// names that the ITS holds for another WDS, or for none (label view.kubestellar.io/wds), is never
// written nor deleted: the write throws (placement reports it before: ./reconcile.ts, ./bundles.ts).
import { createHash } from 'node:crypto';
import { Store } from '../../kube/informer.js';
import { expectOk, serverSideApply, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { Interner } from '../../kube/interner.js';
import type { Condition, FeedbackValue, ManifestCondition } from '../../kube/ocm-api.js';
import { lastStatusUpdate } from '../../kube/objects.js';
import { isStatusValue, MAX_FIELDS, MAX_JSON_RAW } from '../../kube/status-in-work.js';
import { BUNDLE_ANNOTATION, manifestWorkName, POLICY_LABEL_PREFIX, SOURCES_ANNOTATION, policyLabel, WDS_LABEL, type ManifestWork, type ObjectIdentity } from '../model/wrapping.js';
import { workPath } from '../model/api.js';
import { statusOnlyChange } from './apply-failures.js';
import { identityKey, SOURCE_ANNOTATION, workKey } from '../model/keys.js';
import { statusEntries, type Entry } from '../model/work-entries.js';

/** The key of an object's identity in the works' `object` index (a manifest's resourceIdentifier). */
export const objectIndexKey = (id: { group?: string; resource?: string; namespace?: string; name?: string }): string => identityKey('', id);

/** Whether a work is a bundle (several objects, ./bundles.ts), not the work of one object. */
export const isBundle = (w: ManifestWork): boolean => w.metadata.annotations?.[BUNDLE_ANNOTATION] !== undefined;

export const WORK_INDEXERS = {
  name: (w: ManifestWork) => [w.metadata.name],
  policy: (w: ManifestWork) => Object.keys(w.metadata.labels ?? {}).filter((l) => l.startsWith(POLICY_LABEL_PREFIX)),
  /** The objects a work carries (each manifest's resourceIdentifier: placement writes one per manifest). */
  object: (w: ManifestWork) => (w.spec?.manifestConfigs ?? []).map((c) => objectIndexKey(c.resourceIdentifier)),
  /** The same, per cluster: `<cluster><object key>`. */
  placed: (w: ManifestWork) => (w.spec?.manifestConfigs ?? []).map((c) => `${w.metadata.namespace}${objectIndexKey(c.resourceIdentifier)}`),
  /** `<cluster>|<group>` of a bundled work. */
  bundle: (w: ManifestWork) => (isBundle(w) ? [`${w.metadata.namespace}|${w.metadata.annotations![BUNDLE_ANNOTATION]}`] : []),
};

/** The work conditions whose state ./destination-state.ts reads. */
const WORK_CONDITIONS = new Set(['Applied', 'Available', 'Degraded']);
const MANIFEST_CONDITIONS = new Set(['Applied', 'Available']);

/** The status feedback values ./destination-state.ts reads (the well-known health of four kinds). */
const FEEDBACK_NAMES = new Set(['AvailableReplicas', 'NumberAvailable', 'DesiredNumberScheduled', 'PodReady', 'PodPhase', 'JobComplete']);

/** Of a bundle's manifest, the values that carry its object's status (../status/reports.ts reads them), each bounded as OCM's CRD bounds it. */
function statusCarried(values: readonly FeedbackValue[] | undefined): FeedbackValue[] {
  const out: FeedbackValue[] = [];
  for (const v of values ?? []) {
    if (!isStatusValue(v)) continue;
    if (out.length === MAX_FIELDS + 3) break; // the fields, their count and the two details
    const raw = v.fieldValue?.jsonRaw;
    // One over OCM's length is not taken (and so the status it belongs to is not whole).
    out.push(typeof raw === 'string' && raw.length > MAX_JSON_RAW ? { name: v.name, fieldValue: { type: 'JsonRaw', jsonRaw: '' } } : v);
  }
  return out;
}

/**
 * How much of an agent's message is kept (it reaches the policies' status.errors and the Bindings):
 * an agent writes up to 32 KiB per condition (OCM's schema), for any number of manifests.
 */
export const MAX_AGENT_MESSAGE = 1024;

/** The first item of each key in `keys`, in order (O(n): an agent's list may be long). */
function firstOfEach<T>(items: readonly T[] | undefined, key: (x: T) => string, keys: ReadonlySet<string>): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const x of items ?? []) {
    const k = key(x);
    if (!keys.has(k) || seen.has(k)) continue;
    seen.add(k);
    out.push(x);
    if (seen.size === keys.size) break;
  }
  return out;
}

const clip = (s: string | undefined): string | undefined => (s !== undefined && s.length > MAX_AGENT_MESSAGE ? `${s.slice(0, MAX_AGENT_MESSAGE)}…` : s);

/** The values works share: one object's works in all its clusters, the agents' usual words. */
const shared = new Interner({ entries: 50_000, bytes: 32_000_000 });

/**
 * The cache's copy of a work (an informer transform): only what placement reads of the works it
 * wrote — identity, generation, labels, annotations and deletion; each manifest's kind and replicas
 * (its health) and resourceIdentifier (which object it is); the agent's Applied, Available and
 * Degraded, each manifest's identity, Applied, Available and status feedback — with every repeated
 * part shared (../../kube/interner.ts). A fleet of 1,000 clusters keeps 100,000 works here; the rest
 * (manifests, managedFields, timestamps, other conditions) and the copies were most of each.
 * A bundle also keeps the values that carry its objects' statuses (../../kube/status-in-work.ts) and
 * when its status last changed.
 * The status is the cluster's agent's, so what is kept of it is bounded whatever it writes: as many
 * manifest entries as the work has manifests, the feedback values that are read, and each message
 * cut at MAX_AGENT_MESSAGE characters.
 * The spec needs no copy to tell a spec change: kube-apiserver bumps the generation of a
 * ManifestWork on every change of its spec.
 */
export function slimWork(w: ManifestWork): ManifestWork {
  const { name, namespace, resourceVersion, generation, labels, annotations, deletionTimestamp } = w.metadata;
  const bundle = isBundle(w);
  // When a bundle's status last changed: the time of the reports its feedback carries.
  const statusTime = bundle ? lastStatusUpdate(w) : undefined;
  const specManifests = (w.spec?.workload?.manifests ?? []) as { kind?: unknown; spec?: { replicas?: unknown } }[];
  const keep = (c: Condition): Condition => shared.value({
    type: c.type, status: c.status, reason: clip(c.reason), message: clip(c.message),
    ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
  } as Condition);
  const feedback = (f: NonNullable<ManifestCondition['statusFeedback']>) => shared.value({
    values: [
      ...firstOfEach(f.values, (v) => v.name, FEEDBACK_NAMES).map((v) => (typeof v.fieldValue?.string === 'string' ? { ...v, fieldValue: { ...v.fieldValue, string: clip(v.fieldValue.string)! } } : v)),
      ...(bundle ? statusCarried(f.values) : []),
    ],
  });
  const manifests = w.status?.resourceStatus?.manifests?.slice(0, specManifests.length).map((m): ManifestCondition => ({
    resourceMeta: shared.value(m.resourceMeta),
    conditions: firstOfEach(m.conditions, (c) => c.type, MANIFEST_CONDITIONS).map(keep),
    ...(m.statusFeedback ? { statusFeedback: feedback(m.statusFeedback) } : {}),
  }));
  const configs = (w.spec?.manifestConfigs ?? []).slice(0, specManifests.length).map((c) => ({ resourceIdentifier: c.resourceIdentifier }));
  return {
    apiVersion: w.apiVersion, kind: w.kind,
    metadata: {
      name: shared.string(name), namespace: shared.string(namespace), resourceVersion, generation,
      labels: shared.value(labels), annotations: shared.value(annotations), ...(deletionTimestamp ? { deletionTimestamp } : {}),
      ...(statusTime ? { managedFields: [{ operation: 'Update', subresource: 'status', time: statusTime }] } : {}),
    },
    ...(specManifests.length > 0 ? { spec: shared.value({
      workload: { manifests: specManifests.map((m) => ({ kind: m.kind, ...(m.spec?.replicas !== undefined ? { spec: { replicas: m.spec.replicas } } : {}) })) },
      ...(configs.length > 0 ? { manifestConfigs: configs } : {}),
    }) } : {}),
    ...(w.status ? { status: {
      conditions: firstOfEach(w.status.conditions, (c) => c.type, WORK_CONDITIONS).map(keep),
      ...(manifests ? { resourceStatus: { manifests } } : {}),
    } } : {}),
  } as ManifestWork;
}

/**
 * The encoded keys of the WDS objects a work carries, in manifest order (a bundle lists them; a
 * work of one object names it); an entry that is no string is '' (it names no object), in its place.
 */
export function sourcesOf(w: ManifestWork): string[] {
  const one = w.metadata.annotations?.[SOURCE_ANNOTATION];
  if (!isBundle(w)) return one !== undefined ? [one] : [];
  try {
    const list: unknown = JSON.parse(w.metadata.annotations?.[SOURCES_ANNOTATION] ?? '[]');
    return Array.isArray(list) ? list.map((x) => (typeof x === 'string' ? x : '')) : [];
  } catch {
    return [];
  }
}

const conditionOf = (conds: readonly Condition[] | undefined, type: string) => conds?.find((c) => c.type === type);

/**
 * What a (slim) work says of its manifest `i`, as the work of that object alone would say it: the
 * work's generation and Applied (whether the agent has seen this generation) with the manifest's
 * own Applied and Available, its status entry and feedback. A work of one object is itself.
 */
export function manifestOf(w: ManifestWork, i: number): ManifestWork {
  return isBundle(w) ? project(w, i, statusEntries(w)) : w;
}

/** manifestOf for every manifest of the work, in one pass over its status. */
export function manifestsOf(w: ManifestWork): ManifestWork[] {
  const n = w.spec?.workload?.manifests?.length ?? 0;
  if (!isBundle(w)) return Array.from({ length: n }, () => w);
  const entries = statusEntries(w);
  return Array.from({ length: n }, (_, i) => project(w, i, entries));
}

/** Per cached (never mutated) work: its manifests by object key — a bundle is read per object, 100 times an event. */
const ordinalsOf = new WeakMap<ManifestWork, Map<string, number>>();

function project(w: ManifestWork, i: number, entries: ReadonlyMap<number, Entry>): ManifestWork {
  const entry = entries.get(i);
  const workApplied = conditionOf(w.status?.conditions, 'Applied');
  const conditions: Condition[] = [];
  if (workApplied) {
    const applied = conditionOf(entry?.conditions, 'Applied');
    conditions.push(applied ? { ...workApplied, status: applied.status, reason: applied.reason, message: applied.message } : workApplied);
    const available = conditionOf(entry?.conditions, 'Available');
    if (available) conditions.push({ ...available, observedGeneration: workApplied.observedGeneration });
  }
  const manifest = w.spec?.workload?.manifests?.[i];
  const config = w.spec?.manifestConfigs?.[i];
  return {
    apiVersion: w.apiVersion, kind: w.kind, metadata: w.metadata,
    spec: { workload: { manifests: manifest ? [manifest] : [] }, ...(config ? { manifestConfigs: [config] } : {}) },
    ...(w.status ? { status: { conditions, resourceStatus: { manifests: entry ? [entry] : [] } } } : {}),
  } as ManifestWork;
}

/** Where a work carries the object (its objectIndexKey): the manifest's index, or -1. */
function manifestIndex(w: ManifestWork, key: string): number {
  let memo = ordinalsOf.get(w);
  if (!memo) {
    memo = new Map();
    (w.spec?.manifestConfigs ?? []).forEach((c, i) => { const k = objectIndexKey(c.resourceIdentifier); if (!memo!.has(k)) memo!.set(k, i); });
    ordinalsOf.set(w, memo);
  }
  return memo.get(key) ?? -1;
}

/** Why a work of this WDS's name is not its own, as a policy's status says it. */
export function notOwnWork(cluster: string, name: string, owner: string): string {
  return `ManifestWork ${name} in cluster ${cluster} belongs to ${owner ? `WDS ${owner}` : `no WDS (no ${WDS_LABEL} label)`}`;
}

export class Works {
  /** work key → hash of what this controller last applied. */
  private readonly written = new Map<string, string>();
  /** work key → resourceVersion of this controller's last write of it. */
  private readonly ownWrites = new Map<string, string>();
  /** work key → the write of it on its way (settled either way). */
  private readonly inFlight = new Map<string, Promise<void>>();

  /**
   * @param bundled whether objects are sent in bundled works (--max-objects-per-work > 1): where an
   *   object is carried both by its own work and by a bundle (the layout is changing), the bundle
   *   is the one that counts then, its own work otherwise.
   */
  /**
   * @param ownerElsewhere whose the cluster's work of that name is when it is not this WDS's (another
   *   WDS's name, '' for none), as the cache of the others' works says (./conflicts.ts ownerOf).
   */
  constructor(private readonly its: Upstream, readonly store: Store<ManifestWork>, private readonly fieldManager: string,
    readonly wds = '', readonly bundled = false, readonly ownerElsewhere: (cluster: string, name: string) => string | undefined = () => undefined) {}

  static newStore(works: readonly ManifestWork[] = []): Store<ManifestWork> {
    return new Store<ManifestWork>(WORK_INDEXERS, works);
  }

  /** Whether w is what this controller's last write of it stored. */
  isEcho(w: ManifestWork): boolean {
    return this.ownWrites.get(workKey(w.metadata.namespace, w.metadata.name)) === w.metadata.resourceVersion;
  }

  /** The clusters (namespaces) holding a work of that name. */
  clustersOfName(name: string): string[] {
    return this.store.byIndex('name', name).map((w) => w.metadata.namespace);
  }

  /**
   * The works of one object of this WDS (not bundles) that carry it or have its name: an object's
   * work under another name is one an earlier release named (its WDS name was cut short), to go.
   */
  ownWorksOf(id: ObjectIdentity): { cluster: string; name: string }[] {
    const named = this.store.byIndex('name', manifestWorkName(this.wds, id));
    return [...new Set([...named, ...this.store.byIndex('object', objectIndexKey(id)).filter((w) => !isBundle(w))])]
      .map((w) => ({ cluster: w.metadata.namespace, name: w.metadata.name }));
  }

  /** Refuses to touch a work of that name that is not this WDS's (see ownerElsewhere). */
  private ensureOwn(verb: string, cluster: string, name: string): void {
    const owner = this.ownerElsewhere(cluster, name);
    if (owner !== undefined) throw new Error(`not ${verb}: ${notOwnWork(cluster, name, owner)}`);
  }

  /** The clusters where a work (its own, or a bundle) carries the object. */
  clustersOf(id: ObjectIdentity): string[] {
    return [...new Set([...this.store.byIndex('object', objectIndexKey(id)), ...this.store.byIndex('name', manifestWorkName(this.wds, id))].map((w) => w.metadata.namespace))];
  }

  /** The works of a cluster carrying the object (its objectIndexKey), with the manifest that is it. */
  carriers(cluster: string, key: string): { work: ManifestWork; index: number }[] {
    return this.store.byIndex('placed', `${cluster}${key}`).map((work) => ({ work, index: manifestIndex(work, key) }));
  }

  /** What the cluster's work carrying the object says of it (./destination-state.ts reads it as a work of its own), or undefined. */
  carrying(cluster: string, id: ObjectIdentity): ManifestWork | undefined {
    const chosen = this.chosenCarrier(cluster, id);
    if (chosen) return manifestOf(chosen.work, chosen.index);
    // Its own work, should that name no resource in a manifestConfig (written by hand).
    return this.store.get(cluster, manifestWorkName(this.wds, id));
  }

  /**
   * The bundled work of the cluster carrying the object, with the manifest's index, as carrying()
   * chooses it; undefined when a work of its own carries it (or none). Status readers ask it for
   * every (object, cluster): no view is made (../status/reports.ts reads statusEntry, ../model/work-entries.ts).
   */
  bundleCarrying(cluster: string, id: ObjectIdentity): { work: ManifestWork; index: number } | undefined {
    const chosen = this.chosenCarrier(cluster, id);
    return chosen && chosen.index >= 0 && isBundle(chosen.work) ? chosen : undefined;
  }

  /**
   * Where the object is carried in the cluster: a live work before one being deleted (a work that
   * released it may hold it until the new one has applied it: the new one's state is the object's),
   * then a bundle when bundled, its own work otherwise, whichever there is.
   */
  private chosenCarrier(cluster: string, id: ObjectIdentity): { work: ManifestWork; index: number } | undefined {
    const found = this.carriers(cluster, objectIndexKey(id));
    const live = found.filter((c) => !c.work.metadata.deletionTimestamp);
    const among = live.length > 0 ? live : found;
    return among.find((c) => isBundle(c.work) === this.bundled) ?? among[0];
  }

  /**
   * Whether the cluster's work of that name is being deleted: no object is placed into it (its agent
   * may be removing what it held, ../../agent/apply/handover.ts); a new work takes another name.
   */
  terminating(cluster: string, name: string): boolean {
    return this.store.get(cluster, name)?.metadata.deletionTimestamp !== undefined;
  }

  /** A work as the ITS holds it now, whole (the cache keeps only a sliver); undefined when there is none. */
  async read(cluster: string, name: string): Promise<ManifestWork | undefined> {
    const res = expectOk(await upstreamRequest(this.its, 'GET', workPath(cluster, name)), `get ManifestWork ${workKey(cluster, name)}`, [404]);
    return res.status === 404 ? undefined : JSON.parse(res.body.toString('utf8')) as ManifestWork;
  }

  /** Whether any work still names the policy in its labels. */
  namePolicy(policy: string): boolean {
    return this.store.byIndex('policy', policyLabel(policy)).length > 0;
  }

  /**
   * Notes a change of one of these works seen on the watch. A change made by someone else (neither
   * the echo of this controller's write nor a status report) voids what was last written there:
   * the next apply writes the work back instead of finding that nothing would change.
   */
  noteChange(type: 'ADDED' | 'MODIFIED' | 'DELETED', now: ManifestWork, old: ManifestWork | undefined): void {
    if (type === 'DELETED' || this.isEcho(now) || (old && statusOnlyChange(old, now))) return;
    this.written.delete(workKey(now.metadata.namespace, now.metadata.name));
  }

  /** Forgets what was written: every work is applied again (a new leader, from the ITS as it is). */
  forgetWrites(): void {
    this.written.clear();
  }

  async apply(cluster: string, work: ManifestWork): Promise<void> {
    const name = work.metadata.name;
    const hash = createHash('sha256').update(JSON.stringify(work)).digest('hex');
    const k = workKey(cluster, name);
    if (this.written.get(k) === hash && this.store.get(cluster, name)) return; // nothing would change
    // A forced apply would take another's work over (and empty it): never.
    this.ensureOwn('written', cluster, name);
    const write = serverSideApply<ManifestWork>(this.its, workPath(cluster, name), work, this.fieldManager).then((stored) => {
      this.written.set(k, hash);
      if (stored.metadata?.resourceVersion) this.ownWrites.set(k, stored.metadata.resourceVersion);
    });
    const settled = write.then(() => undefined, () => undefined);
    this.inFlight.set(k, settled);
    void settled.then(() => { if (this.inFlight.get(k) === settled) this.inFlight.delete(k); });
    await write;
  }

  /**
   * Settles when this controller's write of the work, if one is on its way, is answered: its echo
   * can come on the watch before the answer does, and is told from someone else's change only then
   * (isEcho). Undefined when none is on its way.
   */
  writing(cluster: string, name: string): Promise<void> | undefined {
    return this.inFlight.get(workKey(cluster, name));
  }

  async delete(cluster: string, name: string): Promise<void> {
    this.ensureOwn('deleted', cluster, name);
    expectOk(await upstreamRequest(this.its, 'DELETE', workPath(cluster, name)), `delete ManifestWork ${workKey(cluster, name)}`, [404]);
    this.written.delete(workKey(cluster, name));
    this.ownWrites.delete(workKey(cluster, name));
  }
}
