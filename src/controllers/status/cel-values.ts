// JSON in and out of CEL (@bufbuild/cel), as Kubernetes and KubeStellar do it:
// - in: a JSON integer is a CEL `int` (bigint), any other number a `double` — Kubernetes' unstructured
//   objects hold int64 and float64, so `obj.spec.replicas == 2` is true as in cel-go;
// - out: CEL values back to JSON (maps, lists, timestamps as RFC 3339, durations as "1.5s"), and to
//   KubeStellar's tagged `Value` of a CombinedStatus column (type String | Number | Bool | Null |
//   Object | Array; a Number's value is a decimal string under the key `float`, written as Go's
//   strconv.FormatFloat(v, 'g', -1, 64) writes it, so the strings equal KubeStellar's).
import { isCelList, isCelMap, isCelUint, type CelInput, type CelValue } from '@bufbuild/cel';
import type { JsonObject } from '../../kube/objects.js';
import { goFloat, type Value } from './collector-rows.js';

export { goFloat, type Value } from './collector-rows.js';

/** A JSON value as CEL input: integers become `int`. */
export function toCel(v: unknown): CelInput {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, CelInput> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toCel(x);
    return out as unknown as CelInput;
  }
  return v as CelInput;
}

interface Message { $typeName?: string; seconds?: bigint; nanos?: number }

/** The protobuf message a CEL timestamp or duration wraps, if `v` is one. */
function messageOf(v: unknown): Message | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const m = (v as { message?: Message }).message;
  return m && typeof m.$typeName === 'string' ? m : undefined;
}

function timestampJSON(m: Message): string {
  const ms = Number(m.seconds ?? 0n) * 1000 + Math.floor((m.nanos ?? 0) / 1e6);
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function durationJSON(m: Message): string {
  const s = Number(m.seconds ?? 0n) + (m.nanos ?? 0) / 1e9;
  return `${s}s`;
}

/** A CEL result as plain JSON (undefined for what JSON cannot hold: a type, NaN stays a number). */
export function toJSON(v: CelValue | unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (isCelUint(v)) return Number(v.value);
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (isCelList(v)) return [...v.values()].map(toJSON);
  if (isCelMap(v)) {
    const out: JsonObject = {};
    for (const [k, x] of v.entries()) out[String(isCelUint(k) ? k.value : k)] = toJSON(x);
    return out;
  }
  const m = messageOf(v);
  if (m?.$typeName === 'google.protobuf.Timestamp') return timestampJSON(m);
  if (m?.$typeName === 'google.protobuf.Duration') return durationJSON(m);
  return String(v);
}

/** A CEL result as a tagged column Value. */
export function tagged(v: CelValue | unknown): Value {
  if (v === null || v === undefined) return { type: 'Null' };
  if (typeof v === 'string') return { type: 'String', string: v };
  if (typeof v === 'boolean') return { type: 'Bool', bool: v };
  if (typeof v === 'bigint') return { type: 'Number', float: v.toString() };
  if (isCelUint(v)) return { type: 'Number', float: v.value.toString() };
  if (typeof v === 'number') return { type: 'Number', float: goFloat(v) };
  if (isCelList(v)) return { type: 'Array', array: toJSON(v) as unknown[] };
  const json = toJSON(v);
  if (typeof json === 'string') return { type: 'String', string: json };
  return { type: 'Object', object: json };
}

/**
 * The number an aggregation takes from a subject: an int or double, or a string that parses as
 * one (KubeStellar's rule: strconv.ParseFloat); undefined for anything else.
 */
export function numericOf(v: CelValue | unknown): number | undefined {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  if (isCelUint(v)) return Number(v.value);
  if (typeof v !== 'string') return undefined;
  if (/^[+-]?(inf|infinity)$/i.test(v)) return v.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(v)) return NaN;
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v) ? Number(v) : undefined;
}

/** Whether a value may be a groupBy key (KubeStellar: "must evaluate to an atomic value"). */
export function isAtomic(v: CelValue | unknown): boolean {
  return v === null || v === undefined || ['string', 'boolean', 'bigint', 'number'].includes(typeof v) || isCelUint(v) || messageOf(v) !== undefined;
}
