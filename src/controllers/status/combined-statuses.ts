// The CombinedStatuses of one WDS, computed on demand from the caches (never stored): for each
// placed object and each selecting policy that names StatusCollectors for it, one CombinedStatus
// (./combined-status.ts) over the policy's clusters' WorkStatuses. What the server serves as the
// virtual `combinedstatuses` (src/apiserver/combinedstatuses-resource.ts reads it through
// `combinedStatuses`, `combinedStatus` and `onCombinedStatusChange`).
// Also the StatusCollectors' own state: an informer over them in the WDS; each is compiled once
// per generation (./collectors.ts); the leader writes its `status` (observedGeneration, and the
// compile errors in `errors`, KubeStellar's place for them); an invalid collector yields no result.
// The CEL engine is loaded when the first StatusCollector appears, not before: it costs ≈ 19 MB of
// RSS (measured), which a server without collectors does not pay.
// Changes are announced, never pushed: an object's WorkStatus, placement or own change, and any
// collector change, name the CombinedStatus keys (`<namespace>/<name>`) that may differ; the
// served collection recomputes them when read or watched.
import { isDeepStrictEqual } from 'node:util';
import { EventEmitter } from 'node:events';
import { Informer, type Store } from '../../kube/informer.js';
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import type { WorkStatus } from '../../kube/ocm-api.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { decodeKey, encodeKey, identityKey } from '../placement/keys.js';
import type { CompiledCollector, CompileResult, RowMemo, StatusCollector, WecReport } from './collectors.js';
import { buildCombinedStatus, combinedStatusRef, lastStatusUpdate, type CombinedStatus } from './combined-status.js';
import type { StatusSources } from './controller.js';
import type { CachedWorkStatus } from './workstatus-cache.js';

export const STATUS_COLLECTORS = '/apis/control.kubestellar.io/v1alpha1/statuscollectors';

type PolicyObject = KubeObject & { metadata: { name: string; uid?: string; creationTimestamp?: string } };

export interface CombinedStatusesOptions {
  wds: Upstream;
  sources: StatusSources & { policy(name: string): PolicyObject | undefined };
  /** The ITS's WorkStatuses, indexed by `identity` (the status controller's informer). */
  workStatuses: Store<WorkStatus>;
  /** Called with the encoded key of an object whose reports, placement or self changed. */
  onObjectReportChange(cb: (source: string) => void): () => void;
  log: (msg: string) => void;
}

const keyOf = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`;

export class CombinedStatuses {
  readonly collectors: Informer<StatusCollector>;
  private readonly compiled = new Map<string, { generation: number | undefined; result: CompileResult }>();
  /** Per object (source key), per policy, per collector name: the rows computed (./collectors.ts, RowMemo). */
  private readonly rowMemos = new Map<string, Map<string, Map<string, { collector: CompiledCollector; objectVersion: string; rows: RowMemo }>>>();
  /** The CombinedStatus keys each object (encoded key) last had, and what each key is of. */
  private readonly keysBySource = new Map<string, Set<string>>();
  private readonly byKey = new Map<string, { source: string; policy: string }>();
  private readonly events = new EventEmitter();
  private readonly unsubscribe: (() => void)[] = [];
  private leading = false;
  private cel: typeof import('./collectors.js') | undefined;
  private celLoading: Promise<void> | undefined;

  constructor(private readonly o: CombinedStatusesOptions) {
    this.events.setMaxListeners(0);
    this.collectors = new Informer<StatusCollector>(o.wds, {
      path: STATUS_COLLECTORS,
      onChange: (type, sc, old) => {
        void this.loadCel();
        this.writeCollectorStatus(sc.metadata.name);
        // A status write (ours, echoed) changes no result: only a new generation or a deletion does.
        if (type === 'MODIFIED' && old?.metadata.generation === sc.metadata.generation) return;
        this.compiled.delete(sc.metadata.name);
        for (const source of [...this.keysBySource.keys()]) this.touch(source);
      },
      onError: (err) => o.log(`status: statuscollectors: ${err.message}`),
    });
  }

  async start(): Promise<void> {
    this.unsubscribe.push(this.o.onObjectReportChange((source) => this.touch(source)));
    this.collectors.start();
    await this.collectors.synced;
    if (this.collectors.list().length > 0) await this.loadCel();
    // The served collection was filled before the caches were: every key found now is news.
    this.refreshIndex();
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.collectors.stop();
  }

  /** Whether this replica writes the collectors' status; a new leader writes each once. */
  setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) for (const sc of this.collectors.list()) this.writeCollectorStatus(sc.metadata.name);
  }

  onCombinedStatusChange(cb: (key: string) => void): () => void {
    this.events.on('change', cb);
    return () => { this.events.off('change', cb); };
  }

  combinedStatuses(): CombinedStatus[] {
    this.refreshIndex();
    return [...this.byKey.entries()].flatMap(([, at]) => {
      const cs = this.build(at.source, at.policy);
      return cs ? [cs] : [];
    });
  }

  /** One CombinedStatus; the index is kept by start() and touch(), so a miss is an answer (no scan). */
  combinedStatus(namespace: string, name: string): CombinedStatus | undefined {
    const at = this.byKey.get(`${namespace}/${name}`);
    return at ? this.build(at.source, at.policy) : undefined;
  }

  /**
   * Loads the CEL engine (./collectors.ts) once; then every collector's status is written and every
   * CombinedStatus announced again, as their results could not be computed before.
   */
  loadCel(): Promise<void> {
    this.celLoading ??= import('./collectors.js').then((m) => {
      this.cel = m;
      for (const sc of this.collectors.list()) this.writeCollectorStatus(sc.metadata.name);
      for (const source of [...this.keysBySource.keys()]) this.touch(source);
    }).catch((err: Error) => {
      this.celLoading = undefined; // the next collector event tries again
      this.o.log(`status: loading the CEL engine: ${err.message}`);
    });
    return this.celLoading;
  }

  /**
   * The compile errors of a collector as written (none: valid), for admission
   * (src/apiserver/admission.ts): the same compiler and messages as its status.errors; loads the
   * CEL engine on first use without starting anything else.
   */
  async validate(sc: { metadata: { name: string }; spec?: unknown }): Promise<string[]> {
    const m = await import('./collectors.js');
    try {
      return m.compileCollector(sc as StatusCollector).errors;
    } catch (err) {
      return [`invalid spec: ${(err as Error).message}`];
    }
  }

  /** A collector's compile result, compiled once per generation (undefined before the CEL engine is loaded). */
  compile(name: string): CompileResult | undefined {
    const sc = this.collectors.get('', name);
    if (!sc || !this.cel) return undefined;
    const had = this.compiled.get(name);
    if (had && had.generation === sc.metadata.generation) return had.result;
    let result: CompileResult;
    try {
      result = this.cel.compileCollector(sc);
    } catch (err) { // a spec of unexpected shape (another CRD's schema): said, never thrown
      result = { errors: [`invalid spec: ${(err as Error).message}`] };
    }
    this.compiled.set(name, { generation: sc.metadata.generation, result });
    return result;
  }

  /** The CombinedStatuses an object has now: policy name by key. */
  private currentKeys(source: string): Map<string, string> {
    const out = new Map<string, string>();
    const k = decodeKey(source);
    const placement = this.o.sources.placement(source);
    if (k?.kind !== 'object' || !placement) return out;
    const found = this.o.sources.find(k);
    const stored = this.o.sources.stored(k);
    if (!found || !stored || encodeKey(found.key) !== source) return out;
    for (const [policy, m] of Object.entries(placement.modulations)) {
      if (m.statusCollectors.length === 0) continue;
      const p = this.o.sources.policy(policy);
      if (!p?.metadata.uid || !stored.obj.metadata?.uid) continue;
      out.set(keyOf(combinedStatusRef(found.id, stored.obj.metadata.uid, p.metadata.uid)), policy);
    }
    return out;
  }

  /** Re-reads which keys an object has and announces them and the ones it lost. */
  private touch(source: string): void {
    const now = this.currentKeys(source);
    const before = this.keysBySource.get(source) ?? new Set<string>();
    for (const key of before) if (!now.has(key)) this.byKey.delete(key);
    for (const [key, policy] of now) this.byKey.set(key, { source, policy });
    if (now.size > 0) this.keysBySource.set(source, new Set(now.keys()));
    else this.keysBySource.delete(source);
    const memos = this.rowMemos.get(source);
    const policies = new Set(now.values());
    for (const policy of [...memos?.keys() ?? []]) if (!policies.has(policy)) memos!.delete(policy);
    if (memos?.size === 0) this.rowMemos.delete(source);
    for (const key of new Set([...before, ...now.keys()])) this.events.emit('change', key);
  }

  /** Rebuilds the index from the caches; a key found or lost here (no event said so) is announced. */
  private refreshIndex(): void {
    const before = new Set(this.byKey.keys());
    this.byKey.clear();
    this.keysBySource.clear();
    for (const k of this.o.sources.allKeys()) {
      const source = encodeKey(k);
      const now = this.currentKeys(source);
      if (now.size === 0) continue;
      this.keysBySource.set(source, new Set(now.keys()));
      for (const [key, policy] of now) this.byKey.set(key, { source, policy });
    }
    for (const source of [...this.rowMemos.keys()]) if (!this.keysBySource.has(source)) this.rowMemos.delete(source);
    for (const key of before) if (!this.byKey.has(key)) this.events.emit('change', key);
    for (const key of this.byKey.keys()) if (!before.has(key)) this.events.emit('change', key);
  }

  private build(source: string, policyName: string): CombinedStatus | undefined {
    const k = decodeKey(source);
    const placement = this.o.sources.placement(source);
    const m = placement?.modulations[policyName];
    const policy = this.o.sources.policy(policyName);
    if (k?.kind !== 'object' || !m || !policy) return undefined;
    const found = this.o.sources.find(k);
    const stored = this.o.sources.stored(k);
    if (!found || !stored) return undefined;
    const collectors = m.statusCollectors.flatMap((name) => this.compile(name)?.collector ?? []);
    const reports: WecReport[] = m.clusters.flatMap((cluster) => {
      const ws = this.o.workStatuses.byIndex('identity', identityKey(cluster, found.id))[0] as CachedWorkStatus | undefined;
      // A WorkStatus says the object is there, status or not (a ConfigMap has none): a row. One whose
      // status was refused (./workstatus-cache.ts) says nothing: no row, as if not reported yet.
      return ws && !ws.refused ? [{ cluster, status: ws.status ?? {}, lastReturnedUpdateTimestamp: lastStatusUpdate(ws), version: ws.metadata.resourceVersion }] : [];
    });
    const cel = this.cel;
    let obj: unknown;
    const objOnce = () => (obj ??= cel!.objForCel(stored.obj as JsonObject));
    const results = cel ? collectors.map((c) => cel.collect(c, objOnce, reports, this.rowMemo(source, policyName, c, stored.obj.metadata?.resourceVersion ?? ''))) : [];
    this.pruneRowMemos(source, policyName, collectors);
    return buildCombinedStatus({ id: found.id, object: stored.obj, policy, results });
  }

  /**
   * The rows one collector computed for one object under one policy (its clusters), kept while
   * neither changes (a new compile of the collector is a new object; a collector that reads `obj`
   * starts afresh with each resourceVersion of the object, one that does not ignores them): at
   * 1,000 WECs a change in one WEC then costs one row's CEL, not 1,000.
   */
  private rowMemo(source: string, policy: string, c: CompiledCollector, resourceVersion: string): RowMemo {
    let bySource = this.rowMemos.get(source);
    if (!bySource) this.rowMemos.set(source, (bySource = new Map()));
    let byCollector = bySource.get(policy);
    if (!byCollector) bySource.set(policy, (byCollector = new Map()));
    const objectVersion = c.uses.has('obj') ? resourceVersion : '';
    const had = byCollector.get(c.name);
    if (had && had.collector === c && had.objectVersion === objectVersion) return had.rows;
    const rows: RowMemo = new Map();
    byCollector.set(c.name, { collector: c, objectVersion, rows });
    return rows;
  }

  /** Drops the kept rows of collectors a policy no longer names for an object. */
  private pruneRowMemos(source: string, policy: string, collectors: readonly CompiledCollector[]): void {
    const byCollector = this.rowMemos.get(source)?.get(policy);
    if (!byCollector) return;
    const named = new Set(collectors.map((c) => c.name));
    for (const name of [...byCollector.keys()]) if (!named.has(name)) byCollector.delete(name);
  }

  /** status: {observedGeneration, errors} of a collector, written by the leader when it differs. */
  private writeCollectorStatus(name: string): void {
    if (!this.leading) return;
    const sc = this.collectors.get('', name);
    const result = this.compile(name);
    if (!sc || !result) return;
    const want = { observedGeneration: sc.metadata.generation ?? 0, ...(result.errors.length > 0 ? { errors: result.errors } : {}) };
    if (isDeepStrictEqual(sc.status ?? {}, want)) return;
    const body = { metadata: { resourceVersion: sc.metadata.resourceVersion }, status: { observedGeneration: want.observedGeneration, errors: want.errors ?? null } };
    upstreamRequest(this.o.wds, 'PATCH', `${STATUS_COLLECTORS}/${encodeURIComponent(name)}/status`, {
      headers: { 'content-type': 'application/merge-patch+json' }, body,
    }).then((res) => { expectOk(res, `status of StatusCollector ${name}`, [404, 409]); })
      .catch((err: Error) => this.o.log(`status: statuscollector ${name}: ${err.message}`));
  }
}
