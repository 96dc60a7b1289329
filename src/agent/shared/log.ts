// The agent's log: one line per event, prefixed by the caller (e.g. `[wec2]`). A plain function so
// tests record lines and the CLI writes them to stderr.
export type AgentLog = (line: string) => void;

export const stderrLog: AgentLog = (line) => { process.stderr.write(`${new Date().toISOString()} ${line}\n`); };

/** The message of any thrown value, first line only (a log line, never a stack). */
export function errorLine(err: unknown): string {
  const e = err as { message?: string; code?: string };
  const msg = (e?.message ?? String(err)).split('\n')[0]!.trim();
  return e?.code && !msg.includes(e.code) ? `${msg} (${e.code})` : msg;
}
