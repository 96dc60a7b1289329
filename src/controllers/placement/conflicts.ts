// Conflicts between WDSs: the same object sent to the same cluster by this WDS and another one, or a
// work name of this WDS held by a work that is not its own (never written nor deleted: ./works.ts).
// Other WDSs' ManifestWorks are indexed by the identity of the object they carry (cluster, group,
// resource, namespace, name) and by name; reconciling an object asks which other WDSs send it where it goes.
// (Each conflict is announced once, per identity and set of WDSs, by ./events.ts.)
import { Interner } from '../../kube/interner.js';
import { WDS_LABEL, type ManifestWork, type ObjectIdentity, type ResourceIdentifier } from '../model/wrapping.js';
import { identityKey, workKey } from '../model/keys.js';

const shared = new Interner();

/**
 * The cache's copy of another WDS's work (an informer transform): what the index reads — its
 * identity, its labels and the identity of each object it carries (one, or a bundle's). Another
 * WDS sending 100 objects to 1,000 clusters is 100,000 works (or their bundles) in this cache too.
 */
export function conflictCopy(w: ManifestWork): ManifestWork {
  const { name, namespace, resourceVersion, labels } = w.metadata;
  const configs = (w.spec?.manifestConfigs ?? []).map((c) => ({ resourceIdentifier: c.resourceIdentifier }));
  return {
    apiVersion: w.apiVersion, kind: w.kind,
    metadata: { name: shared.string(name), namespace: shared.string(namespace), resourceVersion, labels: shared.value(labels) },
    ...(configs.length > 0 ? { spec: shared.value({ manifestConfigs: configs }) } : {}),
  } as ManifestWork;
}

export class Conflicts {
  /** other WDS's work key → its WDS ('' when it names none) and the identity keys of what it carries; identity key → work key → its WDS. */
  private readonly otherWorks = new Map<string, { wds: string; keys: string[] }>();
  private readonly worksByIdentity = new Map<string, Map<string, string>>();
  /**
   * Records a change of another WDS's work (or of one naming no WDS); returns the identities of the
   * objects it carries (or carried), whose own reconciliation may now find a conflict, or find it gone.
   */
  index(deleted: boolean, w: ManifestWork): Partial<ResourceIdentifier>[] {
    const wk = workKey(w.metadata.namespace, w.metadata.name);
    for (const previous of this.otherWorks.get(wk)?.keys ?? []) this.worksByIdentity.get(previous)?.delete(wk);
    const rids = (w.spec?.manifestConfigs ?? []).map((c) => c.resourceIdentifier);
    if (deleted) {
      this.otherWorks.delete(wk);
      return rids;
    }
    const wds = w.metadata.labels?.[WDS_LABEL] ?? '';
    const keys = wds ? rids.map((rid) => identityKey(w.metadata.namespace, rid)) : [];
    this.otherWorks.set(wk, { wds, keys });
    for (const key of keys) {
      if (!this.worksByIdentity.has(key)) this.worksByIdentity.set(key, new Map());
      this.worksByIdentity.get(key)!.set(wk, wds);
    }
    return rids;
  }

  /**
   * Whose the cluster's work of that name is, when it is not this WDS's: another WDS's name, '' when
   * it names none (made by hand); undefined when the ITS (as cached) holds no such work of another.
   */
  ownerOf(cluster: string, name: string): string | undefined {
    return this.otherWorks.get(workKey(cluster, name))?.wds;
  }

  /** The other WDSs sending this object to this cluster, sorted. */
  otherWDSs(cluster: string, id: ObjectIdentity): string[] {
    const works = this.worksByIdentity.get(identityKey(cluster, id));
    return works ? [...new Set(works.values())].sort() : [];
  }

  /** The subject under which a conflict is announced once. */
  static subject(cluster: string, id: ObjectIdentity, others: readonly string[]): string {
    return `wds-conflict|${identityKey(cluster, id)}|${others.join(',')}`;
  }
}
