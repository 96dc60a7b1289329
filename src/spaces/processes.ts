// Detached child processes that outlive the `ksview spaces up` command: started in their own
// process group with output to a log file, recognised later by pid plus command line (so a
// recycled pid is never mistaken for ours), waited on until ready, and stopped by group with
// TERM then KILL.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor, type ProbeResult } from '../kube/wait.js';
import { UserError } from '../util/user-error.js';

export interface ProcessRecord {
  name: string;
  pid: number;
  binary: string;
  log: string;
}

/**
 * `wrapper`: a command that execs `binary args` in another context (e.g. `nsenter --net=… --`):
 * the record names `binary`, which is what runs once the wrapper has exec'd.
 */
export function startDetached(name: string, binary: string, args: string[], log: string,
  env: NodeJS.ProcessEnv = process.env, wrapper: string[] = []): ProcessRecord {
  const fd = openSync(log, 'a');
  try {
    const [cmd, ...pre] = wrapper.length > 0 ? [...wrapper, binary] : [binary];
    const child = spawn(cmd!, [...pre, ...args], { detached: true, stdio: ['ignore', fd, fd], env });
    if (child.pid === undefined) throw new Error(`could not start ${binary}`);
    child.unref();
    return { name, pid: child.pid, binary, log };
  } finally {
    closeSync(fd);
  }
}

/** True when `rec.pid` is alive and is still the binary we started. */
export function isRunning(rec: ProcessRecord): boolean {
  try {
    const cmdline = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8');
    const stat = readFileSync(`/proc/${rec.pid}/stat`, 'utf8');
    // A zombie (state Z) has exited; it only waits for its parent to reap it.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && cmdline.split('\0')[0] === rec.binary;
  } catch {
    return false;
  }
}

/**
 * Whether the live process `rec` runs exactly `binary args`: `up` restarts one started with other
 * flags (an older version of these spaces), so what runs is always what this version starts.
 */
export function runsWith(rec: ProcessRecord, binary: string, args: readonly string[]): boolean {
  try {
    const argv = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8').split('\0');
    if (argv.at(-1) === '') argv.pop();
    return argv.length === args.length + 1 && argv[0] === binary && args.every((a, i) => argv[i + 1] === a);
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try { process.kill(pid, signal); } catch { /* already gone */ }
  }
}

/** Stops the processes: TERM to each group, KILL to what is left after `graceMs`. */
export async function stopAll(records: ProcessRecord[], graceMs = 10_000): Promise<void> {
  const alive = records.filter(isRunning);
  for (const r of alive) signalGroup(r.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive.some(isRunning) && Date.now() < deadline) await sleep(100);
  for (const r of alive.filter(isRunning)) signalGroup(r.pid, 'SIGKILL');
  while (alive.some(isRunning)) await sleep(50);
}

/** The last lines of a log, to explain why a component did not come up. */
export function logTail(log: string, lines = 5): string {
  try {
    return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Waits until `probe` says the process is ready; a UserError naming `what`, the last detail and
 * the end of its log when it exits or `timeoutMs` passes first.
 */
export async function waitReady(what: string, rec: ProcessRecord, probe: () => Promise<ProbeResult>, timeoutMs: number): Promise<void> {
  const result = await waitFor(async () => {
    if (!isRunning(rec)) return { ok: false, detail: 'exited', final: true };
    return probe();
  }, timeoutMs);
  if (!result.ok) {
    const last = logTail(rec.log, 1).slice(0, 300);
    throw new UserError(`${what} is not ready after ${Math.round(timeoutMs / 1000)}s (${result.detail.slice(0, 200)}); log ${rec.log}: ${last}`);
  }
}
