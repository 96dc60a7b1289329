// CEL off the server's thread (docs/security.md D4 and D6): a few worker threads (./cel-worker.ts)
// compile StatusCollectors and evaluate their rows; the server's thread only sends plain data and
// gets plain data back, so no read of any resource waits for a collector, and a runaway one
// stalls nothing. Work is queued in lanes (one per collector, one for admission reviews): at most
// one task of a lane runs at a time and idle workers take lanes in turn, so one collector's work,
// however slow, occupies at most one worker and cannot delay the others' results. Each task has a
// deadline, counted from when its worker takes it: past it the worker is ended (the only way to
// stop a synchronous evaluation) and replaced, and the task fails with the reason; a worker that
// runs out of its heap (WORKER_HEAP_MB) ends the same way, never the server. A lane holds at
// most `maxQueued` waiting tasks (past that a task fails at once as too busy).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { JsonObject } from '../../kube/objects.js';
import type { CollectorShape, RowEval } from './collector-rows.js';

/** What the server sends a worker. */
export type WorkerRequest =
  | { id: number; op: 'compile'; name: string; spec: unknown }
  | {
    id: number; op: 'evaluate';
    collector: { key: string; name: string; spec: unknown };
    /** The WDS object without its status, when the collector reads `obj`. */
    obj?: unknown;
    /** Each row's report; `obj`, when given, is that row's own (an upsynced object without its status). */
    reports: { cluster: string; status: JsonObject; lastReturnedUpdateTimestamp?: string; obj?: unknown }[];
  };
type Request = Omit<Extract<WorkerRequest, { op: 'compile' }>, 'id'> | Omit<Extract<WorkerRequest, { op: 'evaluate' }>, 'id'>;

/** What a worker answers. */
export type WorkerAnswer =
  | { id: number; ok: true; errors: string[]; shape?: CollectorShape }
  | { id: number; ok: true; rows: RowEval[] }
  | { id: number; ok: false; message: string };

export interface CompileAnswer { errors: string[]; shape?: CollectorShape }

/** A task that failed for want of time, memory or room, not because of what it computed. */
export class CelTaskError extends Error {}

/** The heap of one worker: an evaluation that builds more ends its worker, not the server. */
export const WORKER_HEAP_MB = 256;

export interface CelPoolOptions {
  /** Worker threads (default 2: one runaway collector leaves the other to everyone else). */
  workers?: number;
  /**
   * The worker's code (default ./cel-worker.ts). The pool's scheduling tests give one whose task
   * blocks until its deadline, since a real evaluation's length varies with the machine's load.
   */
  workerUrl?: URL;
}

interface Task {
  req: Request;
  deadlineMs: number;
  resolve: (a: WorkerAnswer) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  task?: Task;
  /** The id its task was sent with (an answer to an earlier one is ignored). */
  id?: number;
  lane?: string;
  timer?: NodeJS.Timeout;
}

/** The worker's code: the compiled file, or the TypeScript source when run from it (tests). */
function workerUrl(): URL {
  const js = new URL('./cel-worker.js', import.meta.url);
  return existsSync(fileURLToPath(js)) ? js : new URL('./cel-worker.ts', import.meta.url);
}

export class CelPool {
  private readonly size: number;
  private readonly workerUrl: URL;
  private readonly slots: (Slot | undefined)[];
  private readonly lanes = new Map<string, Task[]>();
  /** Lanes with waiting tasks, in the order idle workers take them. */
  private readonly turn: string[] = [];
  private readonly running = new Set<string>();
  private nextId = 1;
  private closed = false;

  constructor(o: CelPoolOptions = {}) {
    this.size = Math.max(1, o.workers ?? 2);
    this.workerUrl = o.workerUrl ?? workerUrl();
    this.slots = Array.from({ length: this.size }, () => undefined);
  }

  /** The compile errors of a collector (none: valid) and, when valid, its shape. */
  async compile(lane: string, name: string, spec: unknown, deadlineMs: number, maxQueued = Infinity): Promise<CompileAnswer> {
    const a = await this.run(lane, { op: 'compile', name, spec }, deadlineMs, maxQueued);
    if (!a.ok) throw new Error(a.message);
    if (!('errors' in a)) throw new Error('a compile answered without errors');
    return { errors: a.errors, ...(a.shape ? { shape: a.shape } : {}) };
  }

  /** The rows of a collector over these reports, in their order. */
  async evaluate(lane: string, req: Omit<Extract<WorkerRequest, { op: 'evaluate' }>, 'id' | 'op'>, deadlineMs: number): Promise<RowEval[]> {
    const a = await this.run(lane, { op: 'evaluate', ...req }, deadlineMs);
    if (!a.ok) throw new Error(a.message);
    if (!('rows' in a)) throw new Error('an evaluation answered without rows');
    return a.rows;
  }

  /** Starts every worker now (loading the engine takes a while), so that the first task does not wait for it. */
  warm(): void {
    for (let i = 0; i < this.size && !this.closed; i++) if (!this.slots[i]) this.spawn(i);
  }

  /** Tasks waiting or running. */
  pending(): number {
    let n = this.running.size;
    for (const q of this.lanes.values()) n += q.length;
    return n;
  }

  /** Ends every worker; waiting and running tasks fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.lanes.values()) for (const t of q.splice(0)) t.reject(new CelTaskError('the CEL workers were stopped'));
    this.lanes.clear();
    this.turn.length = 0;
    await Promise.all(this.slots.map((s, i) => (s ? this.retire(i, 'the CEL workers were stopped') : undefined)));
  }

  private run(lane: string, req: Request, deadlineMs: number, maxQueued = Infinity): Promise<WorkerAnswer> {
    if (this.closed) return Promise.reject(new CelTaskError('the CEL workers were stopped'));
    let q = this.lanes.get(lane);
    if (q && q.length >= maxQueued) return Promise.reject(new CelTaskError(`busy: ${q.length} tasks are waiting before this one`));
    return new Promise((resolve, reject) => {
      if (!q) this.lanes.set(lane, (q = []));
      q.push({ req, deadlineMs, resolve, reject });
      if (!this.turn.includes(lane)) this.turn.push(lane);
      this.dispatch();
    });
  }

  /** Gives each idle worker the next lane's next task (a lane that is running waits its turn). */
  private dispatch(): void {
    for (let i = 0; i < this.size && !this.closed; i++) {
      if (this.slots[i]?.task) continue;
      const at = this.turn.findIndex((l) => !this.running.has(l));
      if (at < 0) return;
      const lane = this.turn.splice(at, 1)[0]!;
      const q = this.lanes.get(lane)!;
      const task = q.shift()!;
      if (q.length > 0) this.turn.push(lane);
      else this.lanes.delete(lane);
      this.start(i, lane, task);
    }
  }

  private spawn(i: number): Slot {
    const worker = new Worker(this.workerUrl, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    worker.unref();
    let ready!: () => void;
    const slot: Slot = { worker, ready: new Promise<void>((r) => { ready = r; }) };
    worker.on('message', (m: WorkerAnswer | { ready: true }) => {
      if ('ready' in m) return ready();
      const t = slot.task;
      if (!t || m.id !== slot.id) return;
      this.finish(i, slot);
      t.resolve(m);
    });
    const died = (why: string) => {
      if (this.slots[i] !== slot) return;
      this.slots[i] = undefined;
      const t = slot.task;
      if (t) {
        this.finish(i, slot);
        t.reject(new CelTaskError(why));
      }
      ready();
      this.dispatch();
    };
    worker.on('error', (err: Error & { code?: string }) => died(err.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? `it needed more than the ${WORKER_HEAP_MB} MiB of memory a CEL worker has` : `the CEL worker failed: ${err.message}`));
    worker.on('exit', (code) => died(`the CEL worker exited (${code})`));
    this.slots[i] = slot;
    return slot;
  }

  private start(i: number, lane: string, task: Task): void {
    const slot = this.slots[i] ?? this.spawn(i);
    slot.task = task;
    slot.lane = lane;
    this.running.add(lane);
    const id = this.nextId++;
    slot.id = id;
    void slot.ready.then(() => {
      if (slot.task !== task || this.slots[i] !== slot) return;
      // From when the worker can take it: loading the engine is not the task's time.
      slot.timer = setTimeout(() => {
        if (slot.task !== task) return;
        this.finish(i, slot);
        task.reject(new CelTaskError(`stopped after ${task.deadlineMs} ms, this server's limit`));
        void this.retire(i, 'deadline');
        this.dispatch();
      }, task.deadlineMs);
      slot.timer.unref();
      slot.worker.postMessage({ ...task.req, id });
    });
  }

  /** The slot's task is over: its lane may run again. */
  private finish(i: number, slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    if (slot.lane) this.running.delete(slot.lane);
    slot.task = undefined;
    slot.id = undefined;
    slot.lane = undefined;
    if (this.slots[i] === slot) setImmediate(() => this.dispatch());
  }

  /** Ends a slot's worker (its task, if any, fails with `why`); the next task of that slot starts a new one. */
  private async retire(i: number, why: string): Promise<void> {
    const slot = this.slots[i];
    if (!slot) return;
    this.slots[i] = undefined;
    const t = slot.task;
    if (t) {
      this.finish(i, slot);
      t.reject(new CelTaskError(why));
    }
    await slot.worker.terminate();
  }
}
