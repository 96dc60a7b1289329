// What the agent applied of each work, manifest by manifest, so that a work whose spec changed
// applies again only what changed in it: a bundle of 100 objects (the placement's
// --max-objects-per-work) whose one object changed costs one apply in the WEC, not 100. A manifest
// is kept as it is when the work carries it as it was last applied — the same manifest, the same
// manifestConfig, executor and deleteOption — the last apply succeeded and took it (owned), and the
// object in the WEC is at the resourceVersion that apply left (the applied objects' watch shows no
// one changed it since: a drift, or its deletion, applies it again; a change of its status alone,
// or our own write's echo, moves the recorded resourceVersion along). Its result is then recomputed
// from the object as the watch has it (the work's new generation, its status), as a watch event's is.
import { createHash } from 'node:crypto';
import { joinApiVersion } from '../../kube/api-version.js';
import type { KubeObject } from '../../kube/objects.js';
import type { ManifestWork } from '../../kube/ocm-api.js';
import type { ManifestApplyResult } from '../shared/contract.js';

/** A manifest by what it names: apiVersion, kind, namespace, name. */
export function manifestKey(m: unknown): string {
  const o = (m ?? {}) as { apiVersion?: unknown; kind?: unknown; metadata?: { namespace?: unknown; name?: unknown } };
  return JSON.stringify([o.apiVersion ?? '', o.kind ?? '', o.metadata?.namespace ?? '', o.metadata?.name ?? '']);
}

/** What applying the manifest depends on, hashed: the manifest, the configs naming it, the executor, the deleteOption. */
function applyHash(work: ManifestWork, manifest: unknown): string {
  const md = ((manifest ?? {}) as { metadata?: { namespace?: unknown; name?: unknown } }).metadata ?? {};
  const configs = (work.spec?.manifestConfigs ?? []).filter((c) => c.resourceIdentifier.name === md.name && (c.resourceIdentifier.namespace ?? '') === (md.namespace ?? ''));
  return createHash('sha256').update(JSON.stringify([manifest, configs, work.spec?.executor ?? null, work.spec?.deleteOption ?? null])).digest('hex');
}

const applied = (r: ManifestApplyResult) => r.owned && r.conditions.some((c) => c.type === 'Applied' && c.status === 'True');

export class AppliedAs {
  /** work → manifest key → the hash applied and the resourceVersion the object was left at. */
  private readonly byWork = new Map<string, Map<string, { hash: string; resourceVersion: string }>>();
  /** work → ordinal (as the applied objects' watch names them, set with the same apply) → manifest key. */
  private readonly keys = new Map<string, Map<number, string>>();

  /** Records what an apply of the work did (results in manifest order, after owner references were set). */
  record(work: ManifestWork, results: readonly ManifestApplyResult[]): void {
    const manifests = work.spec?.workload?.manifests ?? [];
    const next = new Map<string, { hash: string; resourceVersion: string }>();
    const keys = new Map<number, string>();
    for (const r of results) {
      const m = manifests[r.ordinal];
      const rv = r.live?.metadata?.resourceVersion;
      if (m && rv && applied(r)) {
        next.set(manifestKey(m), { hash: applyHash(work, m), resourceVersion: rv });
        keys.set(r.ordinal, manifestKey(m));
      }
    }
    this.byWork.set(work.metadata.name, next);
    this.keys.set(work.metadata.name, keys);
  }

  forget(work: string): void {
    this.byWork.delete(work);
    this.keys.delete(work);
  }

  /**
   * A watch event of the object the work applied as manifest `ordinal` (the watch's own naming):
   * a drift (or deletion) voids its record, anything else moves the record to this version.
   */
  observed(work: string, ordinal: number, obj: KubeObject, drift: boolean): void {
    const records = this.byWork.get(work);
    const key = this.keys.get(work)?.get(ordinal);
    if (key === undefined || !records) return;
    if (drift) {
      records.delete(key);
      return;
    }
    const rec = records.get(key);
    const rv = obj.metadata?.resourceVersion;
    if (rec && rv) rec.resourceVersion = rv;
  }

  /**
   * The `unchanged` of WorkApplier.applyWork for this work: the previous result of a manifest that
   * need not be applied again, recomputed by `observe` from the watch's object, else undefined.
   */
  unchanged(work: ManifestWork, previous: readonly ManifestApplyResult[] | undefined, watched: (r: ManifestApplyResult) => KubeObject | undefined,
    observe: (ordinal: number, live: KubeObject, prior: ManifestApplyResult) => ManifestApplyResult): (ordinal: number) => ManifestApplyResult | undefined {
    const recorded = this.byWork.get(work.metadata.name);
    const manifests = work.spec?.workload?.manifests ?? [];
    const byKey = new Map((previous ?? []).map((r) => [manifestKey({ apiVersion: r.resourceMeta.version ? joinApiVersion(r.resourceMeta.group, r.resourceMeta.version) : '', kind: r.resourceMeta.kind, metadata: { namespace: r.resourceMeta.namespace, name: r.resourceMeta.name } }), r]));
    return (ordinal) => {
      const m = manifests[ordinal];
      const key = manifestKey(m);
      const rec = recorded?.get(key);
      const prior = byKey.get(key);
      if (!m || !rec || !prior || !applied(prior) || rec.hash !== applyHash(work, m)) return undefined;
      const live = watched(prior);
      if (!live || live.metadata?.resourceVersion !== rec.resourceVersion) return undefined;
      return observe(ordinal, live, { ...prior, ordinal, resourceMeta: { ...prior.resourceMeta, ordinal } });
    };
  }
}
