// Small helpers over parsed JSON shared by storage, translation and the controllers. Those that
// walk a whole value are iterative: JSON.parse is iterative in V8 and takes any depth
// kube-apiserver accepts (thousands of levels), while recursion in JavaScript — and V8's own
// JSON.stringify and util.isDeepStrictEqual — overflows the stack a few thousand levels down
// (RangeError: Maximum call stack size exceeded). Code that must stringify or compare values
// from less trusted writers bounds their depth first, with jsonExtent.
import type { JsonObject } from './objects.js';

/** A JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Freezes o and everything in it (cached objects that callers must not mutate), at any depth; returns o. */
export function deepFreeze<T>(o: T): T {
  const stack: unknown[] = [o];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return o;
}

/** How far a JSON value reaches, as far as jsonExtent looked. */
export interface JsonExtent {
  /** The length of its JSON text (strings counted in UTF-16 units, escapes not counted); a lower bound when over. */
  length: number;
  /** The deepest nesting seen (a scalar is 0, {} and [] are 1). */
  depth: number;
  /** Which bound it passes, if any; the walk stopped there. */
  over?: 'depth' | 'length';
}

/**
 * The extent of a parsed JSON value, in one iterative pass that stops as soon as the value is
 * deeper than maxDepth or longer than maxLength: O(min(size, bound)), safe at any depth.
 */
export function jsonExtent(v: unknown, maxDepth: number, maxLength: number): JsonExtent {
  let length = 0;
  let depth = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (typeof x === 'string') length += x.length + 2;
    else if (typeof x === 'number') length += String(x).length;
    else if (typeof x === 'boolean') length += x ? 4 : 5;
    else if (x === null || x === undefined) length += 4;
    else if (typeof x === 'object') {
      const inner = d + 1;
      if (inner > depth) depth = inner;
      if (depth > maxDepth) return { length, depth, over: 'depth' };
      if (Array.isArray(x)) {
        length += 2 + Math.max(0, x.length - 1);
        for (const child of x) stack.push([child, inner]);
      } else {
        const keys = Object.keys(x);
        length += 2 + Math.max(0, keys.length - 1);
        for (const k of keys) {
          length += k.length + 3;
          stack.push([(x as Record<string, unknown>)[k], inner]);
        }
      }
    }
    if (length > maxLength) return { length, depth, over: 'length' };
  }
  return { length, depth };
}
