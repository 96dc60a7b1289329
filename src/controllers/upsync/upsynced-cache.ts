// serve's memory of the upsynced objects of its WDS (the view's UpsyncedSource): the agents'
// UpsyncedObjects in every mailbox of the ITS, labelled with this WDS. The edge is less trusted
// than the center, so a copy is shown only as far as serve can check it (./copy-validation.ts):
// well formed, and selected by a current UpsyncRequest of a policy it names in its own mailbox
// (the cluster); the copy shown carries only those policies. A clause removed or a cluster
// unselected hides its copies at once, before the agent deletes them. Bounds hold here too, not
// only in honest agents: a copy larger than maxObjectBytes is kept without its object (and never
// shown), and a cluster shows at most the sum of its requests' maxObjects.
// A cluster whose ManagedCluster is Available=Unknown because its lease stopped (../clusters/cluster-health.ts)
// is stale: its copies stay, and each is reported MODIFIED when the cluster turns stale or fresh,
// so watchers see the mark change.
import { byNamespace, Informer } from '../../kube/informer.js';
import { ClusterCondition, MANAGEDCLUSTERS_PATH, type ManagedCluster } from '../../kube/ocm-api.js';
import { UPSYNC_WDS_LABEL, UPSYNCED_OBJECTS_PATH, type UpsyncedObject, type UpsyncRequest } from '../../kube/upsync-api.js';
import type { Upstream } from '../../kube/upstream.js';
import { LEASE_STOPPED_REASON } from '../clusters/cluster-health.js';
import { policiesSelecting } from './copy-validation.js';
import type { UpsyncLimits } from './desired-requests.js';

type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
type Listener = (type: ChangeType, obj: UpsyncedObject, old?: UpsyncedObject) => void;

/** What is read of the requests (./request-controller.ts). */
export interface UpsyncRequests {
  request(cluster: string, policy: string): UpsyncRequest | undefined;
  list(): UpsyncRequest[];
  onRequestChange(cb: (policy: string, request: UpsyncRequest) => void): () => void;
}

/** When the cluster's lease stopped being renewed, as the hub marked it; undefined when it is fresh. */
export function staleSince(mc: ManagedCluster | undefined): string | undefined {
  const c = mc?.status?.conditions?.find((x) => x.type === ClusterCondition.Available);
  return c && c.status === 'Unknown' && c.reason === LEASE_STOPPED_REASON ? c.lastTransitionTime ?? '' : undefined;
}

/** A copy shown: the copy as stored (`raw`) and as shown (its policies those that select it). */
interface Shown { raw: UpsyncedObject; shown: UpsyncedObject }

export class UpsyncedCache {
  /** The copies as the ITS has them, shown or not (tests fill its store and call objectChanged). */
  readonly objects: Informer<UpsyncedObject>;
  private readonly clustersInformer: Informer<ManagedCluster>;
  /** What list() returns, by mailbox/name. */
  private readonly shown = new Map<string, Shown>();
  private readonly byCluster = new Map<string, Map<string, UpsyncedObject>>();
  private readonly stale = new Map<string, string | undefined>();
  /** Copies whose object was dropped for its size (never shown). */
  private readonly tooLarge = new WeakSet<UpsyncedObject>();
  private readonly listeners = new Set<Listener>();
  private unsubscribe: (() => void) | undefined;

  constructor(wdsName: string, its: Upstream, private readonly requests: UpsyncRequests, log: (msg: string) => void, private readonly limits?: UpsyncLimits) {
    this.objects = new Informer<UpsyncedObject>(its, {
      path: UPSYNCED_OBJECTS_PATH,
      labelSelector: `${UPSYNC_WDS_LABEL}=${wdsName}`,
      indexers: { cluster: byNamespace },
      transform: (o) => this.bounded(o),
      onChange: (type, o) => this.objectChanged(o.metadata.namespace, o.metadata.name, type === 'DELETED' ? undefined : o),
      onError: (err) => log(`upsync: upsyncedobjects: ${err.message}`),
    });
    this.clustersInformer = new Informer<ManagedCluster>(its, {
      path: MANAGEDCLUSTERS_PATH,
      onChange: (type, mc) => this.clusterChanged(mc.metadata.name, type === 'DELETED' ? undefined : staleSince(mc)),
      onError: (err) => log(`upsync: managedclusters: ${err.message}`),
    });
  }

  async start(): Promise<void> {
    this.unsubscribe = this.requests.onRequestChange((_p, r) => this.requestChanged(r.metadata.namespace));
    this.objects.start();
    this.clustersInformer.start();
    await Promise.all([this.objects.synced, this.clustersInformer.synced]);
  }

  stop(): void {
    this.unsubscribe?.();
    this.objects.stop();
    this.clustersInformer.stop();
  }

  list(): readonly UpsyncedObject[] {
    return [...this.shown.values()].map((s) => s.shown);
  }

  ofCluster(cluster: string): readonly UpsyncedObject[] {
    return [...(this.byCluster.get(cluster)?.values() ?? [])];
  }

  clusters(): readonly string[] {
    return [...new Set(this.requests.list().map((r) => r.metadata.namespace))].sort();
  }

  staleSince(cluster: string): string | undefined {
    return this.stale.get(cluster);
  }

  onChange(cb: Listener): () => void {
    this.listeners.add(cb);
    return () => { this.listeners.delete(cb); };
  }

  /** The informer's transform: a copy over maxObjectBytes is kept without its object (memory bounded whatever the agent writes). */
  bounded(o: UpsyncedObject): UpsyncedObject {
    const max = this.limits?.maxObjectBytes;
    if (max !== undefined && o.object !== undefined && JSON.stringify(o.object).length > max) {
      o.object = {};
      this.tooLarge.add(o);
    }
    return o;
  }

  /** The copy as shown (its policies those whose request selects it), or undefined: not shown. */
  private showable(o: UpsyncedObject, had: Shown | undefined): UpsyncedObject | undefined {
    if (this.tooLarge.has(o)) return undefined;
    const cluster = o.metadata.namespace;
    const policies = policiesSelecting(o, (p) => this.requests.request(cluster, p)?.spec);
    if (policies.length === 0) return undefined;
    if (had?.raw === o && had.shown.policies.join('\n') === policies.join('\n')) return had.shown;
    return policies.join('\n') === (o.policies ?? []).join('\n') ? o : Object.freeze({ ...o, policies });
  }

  /** At most the sum of the cluster's requests' maxObjects are shown (none without limits). */
  private full(cluster: string): boolean {
    if (!this.limits) return false;
    const cap = this.requests.list().filter((r) => r.metadata.namespace === cluster).reduce((n, r) => n + (r.spec?.maxObjects ?? 0), 0);
    return (this.byCluster.get(cluster)?.size ?? 0) >= cap;
  }

  /** The copy at mailbox/name is now `o` (undefined: gone); shown or hidden as its requests say. */
  objectChanged(cluster: string, name: string, o: UpsyncedObject | undefined): void {
    const key = `${cluster}/${name}`;
    const had = this.shown.get(key);
    let next = o ? this.showable(o, had) : undefined;
    if (next && !had && this.full(cluster)) next = undefined;
    if (had?.shown === next) {
      if (had && o) had.raw = o;
      return;
    }
    let perCluster = this.byCluster.get(cluster);
    if (next) {
      this.shown.set(key, { raw: o!, shown: next });
      if (!perCluster) this.byCluster.set(cluster, (perCluster = new Map()));
      perCluster.set(key, next);
    } else {
      this.shown.delete(key);
      perCluster?.delete(key);
      if (perCluster?.size === 0) this.byCluster.delete(cluster);
    }
    const old = had?.shown;
    const type: ChangeType = !old ? 'ADDED' : !next ? 'DELETED' : 'MODIFIED';
    this.emit(type, next ?? old!, old);
  }

  /** A request of the cluster came, went or changed: its copies shown or hidden again. */
  requestChanged(cluster: string): void {
    for (const o of this.objects.store.byIndex('cluster', cluster)) this.objectChanged(cluster, o.metadata.name, o);
  }

  clusterChanged(cluster: string, since: string | undefined): void {
    if (this.stale.get(cluster) === since) return;
    if (since === undefined) this.stale.delete(cluster);
    else this.stale.set(cluster, since);
    for (const o of this.byCluster.get(cluster)?.values() ?? []) this.emit('MODIFIED', o, o);
  }

  private emit(type: ChangeType, obj: UpsyncedObject, old?: UpsyncedObject): void {
    for (const cb of this.listeners) cb(type, obj, old);
  }
}
