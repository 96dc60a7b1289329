// Waiting on a condition with a deadline: the one polling loop for "until ready" everywhere
// (spaces' components, CRDs Established, the APIService Available).
import { setTimeout } from 'node:timers/promises';

export interface ProbeResult {
  ok: boolean;
  detail: string;
  /** Set when waiting longer cannot help (the process exited). */
  final?: boolean;
}

/** Polls `probe` until it is ok or `timeoutMs` passes; returns the last result. */
export async function waitFor(probe: () => Promise<ProbeResult>, timeoutMs: number, everyMs = 250): Promise<ProbeResult> {
  const deadline = Date.now() + timeoutMs;
  let last: ProbeResult = { ok: false, detail: 'not probed' };
  while (Date.now() < deadline) {
    last = await probe();
    if (last.ok || last.final) return last;
    await setTimeout(everyMs);
  }
  return last;
}
