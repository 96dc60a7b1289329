// The CombinedStatuses of one WDS, computed on demand from the caches (never stored): for each
// placed object and each selecting policy that names StatusCollectors for it, one CombinedStatus
// (./combined-status.ts) over the policy's clusters' WorkStatuses. What the server serves as the
// virtual `combinedstatuses` (src/apiserver/groups/combinedstatuses-resource.ts reads it through
// `combinedStatuses`, `combinedStatus` and `onCombinedStatusChange`).
// Also the StatusCollectors' own state: an informer over them in the WDS; each is compiled once
// per generation; the leader writes its `status` (observedGeneration, and the compile errors in
// `errors`, KubeStellar's place for them); an invalid collector yields no result.
// CEL never runs on this thread (docs/security.md D4): compiles and evaluations are tasks of the
// CEL workers (./cel-pool.ts, one lane per collector), with deadlines; the workers start with the
// first StatusCollector (or admission review), so a server without collectors does not pay them. A read never waits for
// them: it shows each collector's result over the rows computed so far (none before the first; a WEC
// whose report changed keeps its former row until the new one is back; one not computed yet is not
// counted yet; after the object's new version, for a collector that reads `obj`, the former result
// until each WEC has a row of the new one), and asks for the
// rows whose inputs changed (a WorkStatus's resourceVersion; the object's, for a collector that
// reads `obj`); when they come back the key is announced, and the served collection shows the new
// result. An evaluation the pool stopped (its deadline, its memory) gives those rows the reason
// as their error until their inputs change; a compile it stopped is the collector's error.
// Changes are announced, never pushed: an object's WorkStatus, placement or own change, any
// collector change, and a finished evaluation name the CombinedStatus keys (`<namespace>/<name>`)
// that may differ; the served collection recomputes them when read or watched.
import { isDeepStrictEqual } from 'node:util';
import { EventEmitter } from 'node:events';
import { Informer } from '../../kube/informer.js';
import { lastStatusUpdate, type JsonObject, type KubeObject } from '../../kube/objects.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { decodeKey, encodeKey } from '../model/keys.js';
import { CelPool, CelTaskError, type CompileAnswer } from './cel-pool.js';
import { combineRows, failedRow, specBoundErrors, type CollectorShape, type NamedStatusCombination, type RowEval } from './collector-rows.js';
import { buildCombinedStatus, combinedStatusRef, type CombinedStatus } from './combined-status.js';
import type { StatusSources } from '../model/sent.js';
import type { Reports } from './reports.js';

export const STATUS_COLLECTORS = '/apis/control.kubestellar.io/v1alpha1/statuscollectors';

type PolicyObject = KubeObject & { metadata: { name: string; uid?: string; creationTimestamp?: string } };

/** A StatusCollector as read from the WDS. */
export interface StatusCollector extends KubeObject {
  metadata: { name: string; generation?: number; resourceVersion?: string; uid?: string };
  spec?: unknown;
  status?: { observedGeneration?: number; errors?: string[] };
}

/** How long a compile may take: an admission review must be answered within the webhook's 5 s. */
export const COMPILE_DEADLINE_MS = 4000;
/** How long one evaluation task (at most ROWS_PER_TASK rows of one object) may take. */
export const EVALUATE_DEADLINE_MS = 2000;
export const ROWS_PER_TASK = 50;
/** Admission reviews waiting for a compile; past that a review is answered unchecked (the status says later). */
export const MAX_WAITING_REVIEWS = 8;

/** One collector's rows for one object under one policy, by WEC, each with the version of the report it came from. */
interface RowMemo {
  shape: CollectorShape;
  objectVersion: string;
  rows: Map<string, { version: string; row: RowEval }>;
  /** An evaluation is on its way. */
  pending: boolean;
  /** The result shown: over the rows computed so far, or, while `inherited`, the previous memo's last. */
  result?: NamedStatusCombination;
  /** `result` is the previous memo's (the object's former version, for a collector that reads `obj`), kept until this memo has a row for every WEC. */
  inherited: boolean;
}

/** What a WEC contributes to a row. */
interface ClusterInput { cluster: string; status: JsonObject; lastReturnedUpdateTimestamp?: string; version: string }

/** The compile errors of a collector as written (none: valid), for admission, through `pool`. */
export async function validateCollector(pool: CelPool, sc: { metadata: { name: string }; spec?: unknown }): Promise<string[]> {
  const spec = (sc.spec ?? {}) as Record<string, unknown>;
  // Counted here, before anything is sent: a review over the bounds costs no compile at all.
  const bounds = typeof spec === 'object' && spec !== null ? specBoundErrors(spec) : [];
  if (bounds.length > 0) return bounds;
  try {
    return (await pool.compile('admission', sc.metadata.name, sc.spec, COMPILE_DEADLINE_MS, MAX_WAITING_REVIEWS)).errors;
  } catch (err) {
    if (err instanceof CelTaskError && !err.message.startsWith('busy')) return [`could not be compiled: ${err.message}`];
    throw err;
  }
}

export interface CombinedStatusesOptions {
  wds: Upstream;
  sources: StatusSources & { policy(name: string): PolicyObject | undefined };
  /** Each cluster's report of an object (the status controller's). */
  reports: Reports;
  /** Called with the encoded key of an object whose reports, placement or self changed. */
  onObjectReportChange(cb: (source: string) => void): () => void;
  log: (msg: string) => void;
  /** The CEL workers (default: a pool of its own, stopped with this). */
  pool?: CelPool;
  /** How long one evaluation task may take (default EVALUATE_DEADLINE_MS). */
  evaluateDeadlineMs?: number;
}

const keyOf = (r: { namespace: string; name: string }) => `${r.namespace}/${r.name}`;

/** A policy's clusters in the order rows are listed, sorted once per list (a build reads 1,000 of them, often). */
const sorted = new WeakMap<readonly string[], readonly string[]>();
function sortedClusters(clusters: readonly string[]): readonly string[] {
  let s = sorted.get(clusters);
  if (!s) sorted.set(clusters, (s = [...clusters].sort((a, b) => a.localeCompare(b))));
  return s;
}

export class CombinedStatuses {
  readonly collectors: Informer<StatusCollector>;
  readonly pool: CelPool;
  private readonly ownPool: boolean;
  /** Per collector: the generation and spec compiled, and the answer (undefined while the compile runs). */
  private readonly compiled = new Map<string, { generation: number | undefined; spec: unknown; answer?: CompileAnswer }>();
  /** Per object (source key), per policy, per collector name: the rows computed. */
  private readonly rowMemos = new Map<string, Map<string, Map<string, RowMemo>>>();
  /** The CombinedStatus keys each object (encoded key) last had, and what each key is of. */
  private readonly keysBySource = new Map<string, Set<string>>();
  private readonly byKey = new Map<string, { source: string; policy: string }>();
  private readonly events = new EventEmitter();
  private readonly unsubscribe: (() => void)[] = [];
  private leading = false;
  private stopped = false;

  constructor(private readonly options: CombinedStatusesOptions) {
    this.events.setMaxListeners(0);
    this.pool = options.pool ?? new CelPool();
    this.ownPool = options.pool === undefined;
    this.collectors = new Informer<StatusCollector>(options.wds, {
      path: STATUS_COLLECTORS,
      onChange: (type, sc, old) => {
        // The workers start with the first collector (each costs ≈ 20 MB of RSS, measured), so
        // that the next admission review does not wait for the engine to load.
        this.pool.warm();
        if (type === 'DELETED') this.compiled.delete(sc.metadata.name);
        // Compiles a new generation (its status is written when the compile is back).
        this.writeCollectorStatus(sc.metadata.name);
        // A status write (ours, echoed) changes no result: only a new generation or a deletion does.
        if (type === 'MODIFIED' && old?.metadata.generation === sc.metadata.generation) return;
        for (const source of [...this.keysBySource.keys()]) this.touch(source);
        this.events.emit('compiled', sc.metadata.name);
      },
      onError: (err) => options.log(`status: statuscollectors: ${err.message}`),
    });
  }

  async start(): Promise<void> {
    this.unsubscribe.push(this.options.onObjectReportChange((source) => this.touch(source)));
    this.collectors.start();
    await this.collectors.synced;
    // The served collection was filled before the caches were: every key found now is news.
    this.refreshIndex();
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    this.collectors.stop();
    if (this.ownPool) void this.pool.close();
  }

  /** Whether this replica writes the collectors' status; a new leader writes each once. */
  setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) for (const sc of this.collectors.list()) this.writeCollectorStatus(sc.metadata.name);
  }

  /** Calls cb(name) when a collector's compile answer is back, or it changed or went (other users of compile(): upsync). */
  onCollectorChange(cb: (name: string) => void): () => void {
    this.events.on('compiled', cb);
    return () => { this.events.off('compiled', cb); };
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

  /** The compile errors of a collector as written (none: valid), for admission (src/apiserver/admission/statuscollectors-webhook.ts). */
  validate(sc: { metadata: { name: string }; spec?: unknown }): Promise<string[]> {
    return validateCollector(this.pool, sc);
  }

  /**
   * A collector's compile answer for its current generation, compiled once per generation in the
   * CEL workers: undefined while that runs (then its status is written and every CombinedStatus
   * announced again, as their results could not be computed before).
   */
  compile(name: string): CompileAnswer | undefined {
    const sc = this.collectors.get('', name);
    if (!sc) return undefined;
    const had = this.compiled.get(name);
    if (had && had.generation === sc.metadata.generation && isDeepStrictEqual(had.spec, sc.spec)) return had.answer;
    const entry: { generation: number | undefined; spec: unknown; answer?: CompileAnswer } = { generation: sc.metadata.generation, spec: sc.spec };
    this.compiled.set(name, entry);
    const bounds = typeof sc.spec === 'object' && sc.spec !== null ? specBoundErrors(sc.spec as Record<string, unknown>) : [];
    const done = (answer: CompileAnswer) => {
      if (this.compiled.get(name) !== entry || this.stopped) return;
      entry.answer = answer;
      this.writeCollectorStatus(name);
      for (const source of [...this.keysBySource.keys()]) this.touch(source);
      this.events.emit('compiled', name);
    };
    if (bounds.length > 0) {
      entry.answer = { errors: bounds };
      return entry.answer;
    }
    this.pool.compile(name, name, sc.spec, COMPILE_DEADLINE_MS).then(done, (err: Error) => {
      if (this.stopped) return;
      // The compile itself was too costly (its deadline, its memory): the collector's error.
      if (err instanceof CelTaskError) done({ errors: [`could not be compiled: ${err.message}`] });
      else this.options.log(`status: compiling statuscollector ${name}: ${err.message}`);
    });
    return undefined;
  }

  /** The CombinedStatuses an object has now: policy name by key. */
  private currentKeys(source: string): Map<string, string> {
    const out = new Map<string, string>();
    const k = decodeKey(source);
    const placement = this.options.sources.placement(source);
    if (k?.kind !== 'object' || !placement) return out;
    const found = this.options.sources.find(k);
    const stored = this.options.sources.stored(k);
    if (!found || !stored || encodeKey(found.key) !== source) return out;
    for (const [policy, m] of Object.entries(placement.modulations)) {
      if (m.statusCollectors.length === 0) continue;
      const p = this.options.sources.policy(policy);
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
    for (const k of this.options.sources.allKeys()) {
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
    const placement = this.options.sources.placement(source);
    const m = placement?.modulations[policyName];
    const policy = this.options.sources.policy(policyName);
    if (k?.kind !== 'object' || !m || !policy) return undefined;
    const found = this.options.sources.find(k);
    const stored = this.options.sources.stored(k);
    if (!found || !stored) return undefined;
    const reports: ClusterInput[] = sortedClusters(m.clusters).flatMap((cluster) => {
      const ws = this.options.reports.of(cluster, found.id);
      // A WorkStatus says the object is there, status or not (a ConfigMap has none): a row. One whose
      // status was refused (./workstatus-cache.ts) says nothing: no row, as if not reported yet.
      if (!ws || ws.refused) return [];
      const status = ws.status ?? {};
      const time = lastStatusUpdate(ws);
      return [{ cluster, status, lastReturnedUpdateTimestamp: time, version: ws.metadata.resourceVersion ?? JSON.stringify([status, time]) }];
    });
    const results: NamedStatusCombination[] = [];
    const named: string[] = [];
    for (const name of m.statusCollectors) {
      const shape = this.compile(name)?.shape;
      if (!shape) continue;
      named.push(name);
      const memo = this.rowMemo(source, policyName, shape, stored.obj.metadata?.resourceVersion ?? '');
      const current = new Set(reports.map((r) => r.cluster));
      for (const cluster of [...memo.rows.keys()]) if (!current.has(cluster)) memo.rows.delete(cluster);
      const missing = reports.filter((r) => memo.rows.get(r.cluster)?.version !== r.version);
      if (missing.length > 0) this.evaluate(source, policyName, name, memo, stored.obj, missing);
      // Not waiting for a moment with no row missing (at 1,000 WECs reporting, there may be none for
      // minutes: measured, the CombinedStatus froze while reports kept coming): the rows computed so
      // far, once some are (no COUNT 0 before the first answer). An inherited result stays until this
      // memo has a row for every WEC (of any report version), so that rows of two versions of the
      // object are never combined.
      if (memo.inherited && reports.every((r) => memo.rows.has(r.cluster))) memo.inherited = false;
      if (!memo.inherited && (missing.length === 0 || memo.rows.size > 0)) memo.result = combineRows(shape, reports.flatMap((r) => { const row = memo.rows.get(r.cluster); return row ? [row.row] : []; }));
      if (memo.result) results.push(memo.result);
    }
    this.pruneRowMemos(source, policyName, named);
    return buildCombinedStatus({ id: found.id, object: stored.obj, policy, results });
  }

  /**
   * Asks the CEL workers for the rows `missing` (in tasks of ROWS_PER_TASK, in the collector's
   * lane), unless an evaluation of this memo is on its way (its answer announces the key, and the
   * rows still missing then are asked for then). A task the pool stopped gives its rows the reason.
   */
  private evaluate(source: string, policy: string, name: string, memo: RowMemo, obj: KubeObject, missing: ClusterInput[]): void {
    if (memo.pending || this.stopped) return;
    const sc = this.collectors.get('', name);
    if (!sc) return;
    memo.pending = true;
    const { status: _status, ...withoutStatus } = obj as JsonObject;
    const collector = { key: `${name}/${sc.metadata.generation ?? ''}/${JSON.stringify(sc.spec)}`, name, spec: sc.spec };
    const tasks: Promise<void>[] = [];
    for (let i = 0; i < missing.length; i += ROWS_PER_TASK) {
      const chunk = missing.slice(i, i + ROWS_PER_TASK);
      const req = { collector, ...(memo.shape.uses.includes('obj') ? { obj: withoutStatus } : {}), reports: chunk.map(({ cluster, status, lastReturnedUpdateTimestamp }) => ({ cluster, status, lastReturnedUpdateTimestamp })) };
      tasks.push(this.pool.evaluate(name, req, this.options.evaluateDeadlineMs ?? EVALUATE_DEADLINE_MS).then(
        (rows) => { chunk.forEach((r, j) => memo.rows.set(r.cluster, { version: r.version, row: rows[j]! })); },
        (err: Error) => {
          const why = err instanceof CelTaskError ? `evaluation ${err.message}` : `evaluation failed: ${err.message}`;
          for (const r of chunk) memo.rows.set(r.cluster, { version: r.version, row: failedRow(r.cluster, why) });
        },
      ));
    }
    void Promise.all(tasks).then(() => {
      memo.pending = false;
      if (this.stopped) return;
      for (const key of this.keysBySource.get(source) ?? []) if (this.byKey.get(key)?.policy === policy) this.events.emit('change', key);
    });
  }

  /**
   * The rows one collector computed for one object under one policy (its clusters), kept while
   * neither changes (a new compile of the collector is a new shape; a collector that reads `obj`
   * starts afresh with each resourceVersion of the object, one that does not ignores them): at
   * 1,000 WECs a change in one WEC then costs one row's CEL, not 1,000.
   */
  private rowMemo(source: string, policy: string, shape: CollectorShape, resourceVersion: string): RowMemo {
    let bySource = this.rowMemos.get(source);
    if (!bySource) this.rowMemos.set(source, (bySource = new Map()));
    let byCollector = bySource.get(policy);
    if (!byCollector) bySource.set(policy, (byCollector = new Map()));
    const objectVersion = shape.uses.includes('obj') ? resourceVersion : '';
    const had = byCollector.get(shape.name);
    if (had && had.shape === shape && had.objectVersion === objectVersion) return had;
    // The object's new version: the former result stays shown until every WEC has a row of this one
    // (a new compile of the collector starts afresh: its former rows are of another collector).
    const inherit = had?.result !== undefined && had.shape === shape;
    const memo: RowMemo = { shape, objectVersion, rows: new Map(), pending: false, inherited: inherit, ...(inherit ? { result: had.result } : {}) };
    byCollector.set(shape.name, memo);
    return memo;
  }

  /** Drops the kept rows of collectors a policy no longer names for an object. */
  private pruneRowMemos(source: string, policy: string, named: readonly string[]): void {
    const byCollector = this.rowMemos.get(source)?.get(policy);
    if (!byCollector) return;
    for (const name of [...byCollector.keys()]) if (!named.includes(name)) byCollector.delete(name);
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
    upstreamRequest(this.options.wds, 'PATCH', `${STATUS_COLLECTORS}/${encodeURIComponent(name)}/status`, {
      headers: { 'content-type': 'application/merge-patch+json' }, body,
    }).then((res) => { expectOk(res, `status of StatusCollector ${name}`, [404, 409]); })
      .catch((err: Error) => this.options.log(`status: statuscollector ${name}: ${err.message}`));
  }
}
