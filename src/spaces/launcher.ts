// What `spaces up` starts, and keeps track of: the Launcher starts each component (etcd, the
// kube-apiservers and their controllers, kwok, the nodes' processes) once, records it in the
// state, reuses what still runs with the same flags and heals what died (healPlan).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '../util/progress.js';
import { waitFor, type ProbeResult } from '../kube/wait.js';
import type { SpacesLayout } from './layout.js';
import { isRunning, runsWith, startDetached, stopAll, waitReady, type ProcessRecord } from './processes.js';
import { writeState, type SpacesState } from './state.js';

/**
 * Starts components and remembers them, saving the state after each start so `down` can always
 * clean up. A recorded process that is dead is forgotten and started again on the same data
 * (healing); one that dies while `up` waits for it (it was shutting down) is started once more.
 */
export class Launcher {
  private readonly live = new Map<string, ProcessRecord>();
  private readonly startedNow = new Set<string>();
  private readonly args = new Map<string, { binary: string; args: string[] }>();

  constructor(private readonly layout: SpacesLayout, private readonly state: SpacesState,
    private readonly progress: Progress) {
    const { reuse, restart } = healPlan(state.processes, isRunning);
    for (const r of reuse) this.live.set(r.name, r);
    for (const name of restart) progress.step(`${name} is not running: it will be started again, on its data`);
    state.processes = [...this.live.values()];
  }

  running(name: string): boolean {
    return this.live.has(name);
  }

  /** Stops a live process (the next `ensure` starts it again). */
  async stop(name: string): Promise<void> {
    const rec = this.live.get(name);
    if (!rec) return;
    await stopAll([rec]);
    this.live.delete(name);
  }

  async ensure(name: string, binary: string, args: string[], wrapper: string[] = []): Promise<ProcessRecord> {
    const existing = this.live.get(name);
    if (existing && runsWith(existing, binary, args)) return existing;
    if (existing) {
      this.progress.step(`${name} runs with other flags than this version starts it with: restarting it, on its data`);
      await stopAll([existing]);
      this.live.delete(name);
    }
    const logDir = path.join(this.layout.dir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const rec = startDetached(name, binary, args, path.join(logDir, `${name.replace('/', '-')}.log`), process.env, wrapper);
    // A wrapper execs the binary a moment later: until then the process is not yet "ours".
    if (wrapper.length > 0) await waitFor(async () => ({ ok: isRunning(rec), detail: 'not exec\'d yet' }), 5_000, 20);
    this.live.set(name, rec);
    this.startedNow.add(name);
    this.args.set(name, { binary, args });
    this.state.processes = [...this.state.processes.filter((p) => p.name !== name), rec];
    writeState(this.layout.statePath, this.state);
    this.progress.step(`started ${name} (pid ${rec.pid})`);
    return rec;
  }

  /** `ensure`, then wait until ready; a reused process that exits meanwhile is started again. */
  async ensureReady(name: string, binary: string, args: string[], what: string,
    probe: () => Promise<ProbeResult>, timeoutMs: number): Promise<ProcessRecord> {
    const rec = await this.ensure(name, binary, args);
    try {
      await waitReady(what, rec, probe, timeoutMs);
      return rec;
    } catch (err) {
      if (this.startedNow.has(name) || isRunning(rec)) throw err;
      this.live.delete(name);
      this.progress.step(`${name} exited while reused: starting it again`);
      const again = await this.ensure(name, binary, args);
      await waitReady(what, again, probe, timeoutMs);
      return again;
    }
  }
}

/** Which recorded processes `up` reuses (alive) and which it starts again (dead: same name, same data). */
export function healPlan(recorded: readonly ProcessRecord[], alive: (r: ProcessRecord) => boolean): { reuse: ProcessRecord[]; restart: string[] } {
  const reuse = recorded.filter((r) => alive(r));
  const restart = recorded.filter((r) => !alive(r)).map((r) => r.name);
  return { reuse, restart };
}

