// Go-compatible reading of untyped JSON for printers: an absent or mistyped field reads as Go's
// zero value (an absent object as undefined, so callers can tell a nil pointer), and strings sort
// as Go's sort.Strings does.
import { isJsonObject } from '../../kube/json.js';
import type { JsonObject, KubeObject } from '../../kube/objects.js';

export function obj(v: unknown): JsonObject | undefined {
  return isJsonObject(v) ? v : undefined;
}
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
export function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
export function spec(o: KubeObject): JsonObject {
  return obj(o.spec) ?? {};
}

/** Go's sort.Strings order (bytewise), which differs from JS's UTF-16 order only beyond the BMP. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
