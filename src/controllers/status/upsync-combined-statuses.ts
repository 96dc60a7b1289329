// CombinedStatuses over upsynced objects (docs/upsync.md "Summarized"): for a policy
// whose upsync clauses name StatusCollectors, one CombinedStatus per (namespace, resource) of the
// objects upsynced for it, over every cluster: each upsynced object is a row, with
// `inventory.name` its cluster, `returned.status` its status and `obj` the object (its own, without
// status). So "how many of my Pods are Running, per cluster" is a COUNT grouped by
// `inventory.name` and `returned.status.phase`. The collectors named by any of a policy's upsync
// clauses apply to all its upsynced objects. Cluster-scoped upsynced objects get none.
// Named `upsync.<resource>[.<group>].<policy uid>` in the objects' namespace, labelled as
// KubeStellar labels a CombinedStatus, less the object name, plus status.kubestellar.io/upsync:
// "true"; shown to a reader who may `get` that resource in that namespace
// (src/apiserver/groups/combinedstatuses-resource.ts). Computed as ./combined-statuses.ts computes the
// others (the same compiled collectors and CEL workers, rows kept per object by its
// resourceVersion, a read never waits: the rows computed so far), announced by key, never stored.
import { EventEmitter } from 'node:events';
import { stableUid, type JsonObject, type KubeObject } from '../../kube/objects.js';
import type { UpsyncClause, UpsyncedObject } from '../../kube/upsync-api.js';
import { combineRows, failedRow, type CollectorShape, type NamedStatusCombination, type RowEval } from './collector-rows.js';
import { COMBINED_STATUS_API_VERSION, LABELS, type CombinedStatus } from './combined-status.js';
import { CelTaskError, type CelPool, type CompileAnswer } from './cel-pool.js';
import { EVALUATE_DEADLINE_MS, ROWS_PER_TASK } from './combined-statuses.js';

export const UPSYNC_LABEL = 'status.kubestellar.io/upsync';
export const UPSYNC_NAME_PREFIX = 'upsync.';

type Policy = KubeObject & { metadata: { name: string; uid?: string; creationTimestamp?: string }; spec?: { upsync?: UpsyncClause[] | null } };

export interface UpsyncCombinedOptions {
  policy(name: string): Policy | undefined;
  policyNames(): string[];
  /** The upsynced objects the view shows (src/controllers/upsync/upsynced-cache.ts). */
  upsynced: { list(): readonly UpsyncedObject[]; onChange(cb: (type: string, obj: UpsyncedObject, old?: UpsyncedObject) => void): () => void };
  /** The StatusCollectors, compiled (./combined-statuses.ts). */
  collectors: { compile(name: string): CompileAnswer | undefined; onCollectorChange(cb: (name: string) => void): () => void; generation(name: string): string | undefined; spec(name: string): unknown };
  pool: CelPool;
  onPolicyChange(cb: (policy: string) => void): () => void;
  evaluateDeadlineMs?: number;
}

/** One CombinedStatus's inputs: what it is of, and its rows' objects by `<cluster>/<copy name>`. */
interface Entry { policy: string; namespace: string; group: string; resource: string; copies: Map<string, UpsyncedObject> }
interface Memo { shape: CollectorShape; rows: Map<string, { version: string; row: RowEval }>; pending: boolean; result?: NamedStatusCombination }

const resourceKey = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);
const copyKey = (o: UpsyncedObject) => `${o.metadata.namespace}/${o.metadata.name}`;

/** The collectors a policy's upsync clauses name, sorted. */
function collectorsOf(p: Policy | undefined): string[] {
  return [...new Set((p?.spec?.upsync ?? []).flatMap((c) => c.statusCollectors ?? []))].sort();
}

export class UpsyncCombinedStatuses {
  private readonly entries = new Map<string, Entry>();
  private readonly memos = new Map<string, Map<string, Memo>>();
  /** The keys each copy is in (`<cluster>/<copy name>` → keys). */
  private readonly keysByCopy = new Map<string, Set<string>>();
  private readonly events = new EventEmitter();
  private readonly unsubscribe: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly options: UpsyncCombinedOptions) {
    this.events.setMaxListeners(0);
  }

  start(): void {
    this.unsubscribe.push(
      this.options.upsynced.onChange((type, obj, old) => {
        if (old && old !== obj) this.place(old, false);
        this.place(obj, type !== 'DELETED');
      }),
      this.options.onPolicyChange(() => this.reindex()),
      this.options.collectors.onCollectorChange(() => { for (const key of this.entries.keys()) this.events.emit('change', key); }),
    );
    this.reindex();
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
  }

  onCombinedStatusChange(cb: (key: string) => void): () => void {
    this.events.on('change', cb);
    return () => { this.events.off('change', cb); };
  }

  combinedStatuses(): CombinedStatus[] {
    return [...this.entries.keys()].flatMap((k) => { const cs = this.build(k); return cs ? [cs] : []; });
  }

  combinedStatus(namespace: string, name: string): CombinedStatus | undefined {
    return this.entries.has(`${namespace}/${name}`) ? this.build(`${namespace}/${name}`) : undefined;
  }

  /** The CombinedStatus keys a copy belongs to: one per policy of it that names collectors. */
  private keysOf(c: UpsyncedObject): { key: string; policy: string }[] {
    if (!c.source.namespace) return [];
    return (c.policies ?? []).flatMap((policy) => {
      const p = this.options.policy(policy);
      if (!p?.metadata.uid || collectorsOf(p).length === 0) return [];
      return [{ key: `${c.source.namespace}/${UPSYNC_NAME_PREFIX}${resourceKey(c.source.group, c.source.resource)}.${p.metadata.uid}`, policy }];
    });
  }

  /** Puts a copy where it belongs now (`shown`: the view shows it), out of where it was, announcing what changed. */
  private place(c: UpsyncedObject, shown: boolean): void {
    const ck = copyKey(c);
    const now = new Map(shown ? this.keysOf(c).map((k) => [k.key, k.policy]) : []);
    for (const key of this.keysByCopy.get(ck) ?? []) {
      const e = this.entries.get(key);
      if (!e || now.has(key)) continue;
      e.copies.delete(ck);
      if (e.copies.size === 0) { this.entries.delete(key); this.memos.delete(key); }
      this.events.emit('change', key);
    }
    if (now.size > 0) this.keysByCopy.set(ck, new Set(now.keys()));
    else this.keysByCopy.delete(ck);
    for (const [key, policy] of now) {
      let e = this.entries.get(key);
      if (!e) this.entries.set(key, (e = { policy, namespace: c.source.namespace, group: c.source.group, resource: c.source.resource, copies: new Map() }));
      e.copies.set(ck, c);
      this.events.emit('change', key);
    }
  }

  /** Every entry again from the shown copies (a policy's collectors or uid changed). */
  private reindex(): void {
    const before = new Set(this.entries.keys());
    this.entries.clear();
    this.keysByCopy.clear();
    for (const c of this.options.upsynced.list()) {
      const keys = this.keysOf(c);
      if (keys.length > 0) this.keysByCopy.set(copyKey(c), new Set(keys.map((k) => k.key)));
      for (const { key, policy } of keys) {
        let e = this.entries.get(key);
        if (!e) this.entries.set(key, (e = { policy, namespace: c.source.namespace, group: c.source.group, resource: c.source.resource, copies: new Map() }));
        e.copies.set(copyKey(c), c);
      }
    }
    for (const key of [...this.memos.keys()]) if (!this.entries.has(key)) this.memos.delete(key);
    for (const key of new Set([...before, ...this.entries.keys()])) this.events.emit('change', key);
  }

  private build(key: string): CombinedStatus | undefined {
    const e = this.entries.get(key);
    const p = e && this.options.policy(e.policy);
    if (!e || !p?.metadata.uid) return undefined;
    const results: NamedStatusCombination[] = [];
    let memos = this.memos.get(key);
    if (!memos) this.memos.set(key, (memos = new Map()));
    const named = collectorsOf(p);
    for (const name of [...memos.keys()]) if (!named.includes(name)) memos.delete(name);
    const copies = [...e.copies.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const name of named) {
      const shape = this.options.collectors.compile(name)?.shape;
      if (!shape) continue;
      let memo = memos.get(name);
      if (!memo || memo.shape !== shape) memos.set(name, (memo = { shape, rows: new Map(), pending: false }));
      for (const k of [...memo.rows.keys()]) if (!e.copies.has(k)) memo.rows.delete(k);
      const missing = copies.filter(([k, c]) => memo!.rows.get(k)?.version !== c.source.resourceVersion);
      if (missing.length > 0) this.evaluate(key, name, memo, missing);
      if (missing.length === 0 || memo.rows.size > 0) memo.result = combineRows(shape, copies.flatMap(([k]) => { const r = memo!.rows.get(k); return r ? [r.row] : []; }));
      if (memo.result) results.push(memo.result);
    }
    const [namespace, name] = [e.namespace, key.slice(e.namespace.length + 1)];
    return {
      apiVersion: COMBINED_STATUS_API_VERSION, kind: 'CombinedStatus',
      metadata: {
        name, namespace, uid: stableUid(`combinedstatus/${namespace}/${name}`),
        ...(p.metadata.creationTimestamp ? { creationTimestamp: p.metadata.creationTimestamp } : {}),
        labels: { [LABELS.group]: e.group, [LABELS.resource]: e.resource, [LABELS.namespace]: namespace, [LABELS.policy]: e.policy, [UPSYNC_LABEL]: 'true' },
      },
      ...(results.length > 0 ? { results: results.sort((a, b) => a.name.localeCompare(b.name)) } : {}),
    };
  }

  /** Asks the CEL workers for the missing rows (tasks of ROWS_PER_TASK); the answer announces the key. */
  private evaluate(key: string, name: string, memo: Memo, missing: [string, UpsyncedObject][]): void {
    if (memo.pending || this.stopped) return;
    memo.pending = true;
    const collector = { key: `${name}/${this.options.collectors.generation(name) ?? ''}/${JSON.stringify(this.options.collectors.spec(name))}`, name, spec: this.options.collectors.spec(name) };
    const usesObj = memo.shape.uses.includes('obj');
    const tasks: Promise<void>[] = [];
    for (let i = 0; i < missing.length; i += ROWS_PER_TASK) {
      const chunk = missing.slice(i, i + ROWS_PER_TASK);
      const reports = chunk.map(([, c]) => {
        const { status, ...withoutStatus } = c.object as JsonObject;
        return { cluster: c.metadata.namespace, status: (status ?? {}) as JsonObject, lastReturnedUpdateTimestamp: c.lastSeen, ...(usesObj ? { obj: withoutStatus } : {}) };
      });
      tasks.push(this.options.pool.evaluate(name, { collector, reports }, this.options.evaluateDeadlineMs ?? EVALUATE_DEADLINE_MS).then(
        (rows) => { chunk.forEach(([k, c], j) => memo.rows.set(k, { version: c.source.resourceVersion, row: rows[j]! })); },
        (err: Error) => {
          const why = err instanceof CelTaskError ? `evaluation ${err.message}` : `evaluation failed: ${err.message}`;
          for (const [k, c] of chunk) memo.rows.set(k, { version: c.source.resourceVersion, row: failedRow(c.metadata.namespace, why) });
        },
      ));
    }
    void Promise.all(tasks).then(() => {
      memo.pending = false;
      if (!this.stopped) this.events.emit('change', key);
    });
  }
}

interface CombinedSource {
  combinedStatuses(): CombinedStatus[];
  combinedStatus(namespace: string, name: string): CombinedStatus | undefined;
  onCombinedStatusChange(cb: (key: string) => void): () => void;
}

/** What the view serves as `combinedstatuses`: the workload objects' and, named `upsync.*`, the upsynced objects'. */
export function withUpsyncCombined(objects: CombinedSource, upsynced: CombinedSource): CombinedSource {
  return {
    combinedStatuses: () => [...objects.combinedStatuses(), ...upsynced.combinedStatuses()],
    combinedStatus: (namespace, name) => (name.startsWith(UPSYNC_NAME_PREFIX) ? upsynced : objects).combinedStatus(namespace, name),
    onCombinedStatusChange: (cb) => {
      const offs = [objects.onCombinedStatusChange(cb), upsynced.onCombinedStatusChange(cb)];
      return () => { for (const off of offs) off(); };
    },
  };
}
