// Durations as Kubernetes prints them (the AGE column of kubectl get, Tables, Events).

/** Exactly k8s.io/apimachinery/pkg/util/duration.HumanDuration, for a duration in milliseconds. */
export function humanDuration(ms: number): string {
  // Go converts with int(), which truncates toward zero.
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>'; // up to 2s of clock skew still reads as "now"
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

/** Go's zero time.Time (in ms), which a JSON null or absent timestamp decodes to. */
export const GO_ZERO_TIME = Date.parse('0001-01-01T00:00:00Z');

/**
 * The AGE cell of an object created at `from` (RFC 3339): printers.go translateTimestampSince,
 * `<unknown>` for no time (absent, unparsable, or Go's zero time).
 */
export function age(from: string | undefined, now = Date.now()): string {
  const created = from ? Date.parse(from) : NaN;
  return Number.isNaN(created) || created === GO_ZERO_TIME ? '<unknown>' : humanDuration(now - created);
}
