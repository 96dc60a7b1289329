// Small helpers over parsed JSON shared by storage, translation and the controllers.
import type { JsonObject } from './objects.js';

/** A JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Freezes o and everything in it (cached objects that callers must not mutate); returns o. */
export function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
