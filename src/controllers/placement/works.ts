// This WDS's ManifestWorks in the ITS: their cache (a Store indexed by work name and by the
// policies their labels name) and the writes. A work is server-side applied (forced, under the
// WDS's field manager) only when its content differs from what this controller last wrote, or it
// is gone; the resourceVersion of each write is remembered, so the echo of that write coming back
// through the informer is recognised and not reconciled a second time.
import { createHash } from 'node:crypto';
import { Store } from '../../kube/informer.js';
import { expectOk, serverSideApply, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { Interner } from '../../kube/interner.js';
import type { Condition, ManifestCondition } from '../../kube/ocm-api.js';
import { POLICY_LABEL_PREFIX, policyLabel, type ManifestWork } from '../wrapping.js';
import { workPath } from './api.js';
import { statusOnlyChange } from './apply-failures.js';
import { workKey } from './keys.js';

export const WORK_INDEXERS = {
  name: (w: ManifestWork) => [w.metadata.name],
  policy: (w: ManifestWork) => Object.keys(w.metadata.labels ?? {}).filter((l) => l.startsWith(POLICY_LABEL_PREFIX)),
};

/** The work conditions whose state ./destination-state.ts reads. */
const WORK_CONDITIONS = new Set(['Applied', 'Available', 'Degraded']);
const APPLIED = new Set(['Applied']);

/** The status feedback values ./destination-state.ts reads (the well-known health of four kinds). */
const FEEDBACK_NAMES = new Set(['AvailableReplicas', 'NumberAvailable', 'DesiredNumberScheduled', 'PodReady', 'PodPhase', 'JobComplete']);

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
 * wrote — identity, generation, labels, annotations and deletion; the kind and replicas of the
 * first manifest (its health); the agent's Applied, Available and Degraded, each manifest's
 * identity and Applied, and the first manifest's status feedback — with every repeated part
 * shared (../../kube/interner.ts). A fleet of 1,000 clusters keeps 100,000 works here; the rest
 * (manifests, managedFields, timestamps, other conditions) and the copies were most of each.
 * The status is the cluster's agent's, so what is kept of it is bounded whatever it writes: as many
 * manifest entries as the work has manifests, the feedback values that are read, and each message
 * cut at MAX_AGENT_MESSAGE characters.
 * The spec needs no copy to tell a spec change: kube-apiserver bumps the generation of a
 * ManifestWork on every change of its spec.
 */
export function slimWork(w: ManifestWork): ManifestWork {
  const { name, namespace, resourceVersion, generation, labels, annotations, deletionTimestamp } = w.metadata;
  const first = w.spec?.workload?.manifests?.[0] as { kind?: unknown; spec?: { replicas?: unknown } } | undefined;
  const replicas = first?.spec?.replicas;
  const keep = (c: Condition): Condition => shared.value({
    type: c.type, status: c.status, reason: clip(c.reason), message: clip(c.message),
    ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
  } as Condition);
  const feedback = (f: NonNullable<ManifestCondition['statusFeedback']>) => shared.value({
    values: firstOfEach(f.values, (v) => v.name, FEEDBACK_NAMES).map((v) => (typeof v.fieldValue?.string === 'string' ? { ...v, fieldValue: { ...v.fieldValue, string: clip(v.fieldValue.string)! } } : v)),
  });
  const manifests = w.status?.resourceStatus?.manifests?.slice(0, w.spec?.workload?.manifests?.length ?? 0).map((m, i): ManifestCondition => ({
    resourceMeta: shared.value(m.resourceMeta),
    conditions: firstOfEach(m.conditions, (c) => c.type, APPLIED).map(keep),
    ...(i === 0 && m.statusFeedback ? { statusFeedback: feedback(m.statusFeedback) } : {}),
  }));
  return {
    apiVersion: w.apiVersion, kind: w.kind,
    metadata: {
      name: shared.string(name), namespace: shared.string(namespace), resourceVersion, generation,
      labels: shared.value(labels), annotations: shared.value(annotations), ...(deletionTimestamp ? { deletionTimestamp } : {}),
    },
    ...(first ? { spec: shared.value({ workload: { manifests: [{ kind: first.kind, ...(replicas !== undefined ? { spec: { replicas } } : {}) }] } }) } : {}),
    ...(w.status ? { status: {
      conditions: firstOfEach(w.status.conditions, (c) => c.type, WORK_CONDITIONS).map(keep),
      ...(manifests ? { resourceStatus: { manifests } } : {}),
    } } : {}),
  } as ManifestWork;
}

export class Works {
  /** work key → hash of what this controller last applied. */
  private readonly written = new Map<string, string>();
  /** work key → resourceVersion of this controller's last write of it. */
  private readonly ownWrites = new Map<string, string>();

  constructor(private readonly its: Upstream, readonly store: Store<ManifestWork>, private readonly fieldManager: string) {}

  static newStore(works: readonly ManifestWork[] = []): Store<ManifestWork> {
    return new Store<ManifestWork>(WORK_INDEXERS, works);
  }

  /** Whether w is what this controller's last write of it stored. */
  isEcho(w: ManifestWork): boolean {
    return this.ownWrites.get(workKey(w.metadata.namespace, w.metadata.name)) === w.metadata.resourceVersion;
  }

  /** The clusters (namespaces) holding a work of that name. */
  clustersOf(name: string): string[] {
    return this.store.byIndex('name', name).map((w) => w.metadata.namespace);
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
    const stored = await serverSideApply<ManifestWork>(this.its, workPath(cluster, name), work, this.fieldManager);
    this.written.set(k, hash);
    if (stored.metadata?.resourceVersion) this.ownWrites.set(k, stored.metadata.resourceVersion);
  }

  async delete(cluster: string, name: string): Promise<void> {
    expectOk(await upstreamRequest(this.its, 'DELETE', workPath(cluster, name)), `delete ManifestWork ${workKey(cluster, name)}`, [404]);
    this.written.delete(workKey(cluster, name));
    this.ownWrites.delete(workKey(cluster, name));
  }
}
