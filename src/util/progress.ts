// Progress lines for long work (builds, spaces start-up): one line per step on stderr, each with
// the seconds since the work began, so a user sees where the time goes.
export interface Progress {
  step(message: string): void;
}

export function stderrProgress(start = Date.now()): Progress {
  return {
    step(message: string) {
      const secs = ((Date.now() - start) / 1000).toFixed(1).padStart(5);
      process.stderr.write(`[${secs}s] ${message}\n`);
    },
  };
}

export const silentProgress: Progress = { step() {} };
