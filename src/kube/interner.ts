// Shares equal values among cached objects (pure; no I/O). A cache of 100,000 objects parsed one by
// one from JSON holds 100,000 copies of each repeated string and sub-object (a work's source
// annotation, its manifest's identity, the agent's conditions); an interner hands out one shared
// instance per distinct value instead. Bounded in entries and in bytes (least recently used first
// out; a value over a sixteenth of the bytes is not kept), so values that never repeat, or stop
// being used, pin a bounded amount: the bound counts each kept value as the heap it takes (an
// estimate from its JSON), and its key is a digest, not the JSON. Shared values are frozen, as the
// informer freezes what it caches: one reader's write would otherwise show in every object sharing
// the value.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { deepFreeze } from './json.js';

export interface InternerLimits {
  /** Distinct values (and as many distinct strings) kept. */
  entries: number;
  /** Estimated heap bytes of the kept values (and, apart, of the kept strings). */
  bytes: number;
}

/**
 * V8 heap bytes per character of a value's JSON, and per kept entry (its digest key and the
 * cache's node): measured on ManifestWorks and WorkStatuses parsed from JSON (bench/cache-heap.ts,
 * whole objects: 1.5 to 1.7 bytes per character), rounded up.
 */
const BYTES_PER_CHAR = 2;
const BYTES_PER_ENTRY = 100;

export class Interner {
  private readonly values: LRUCache<string, object>;
  private readonly strings: LRUCache<string, string>;

  constructor(limits: InternerLimits = { entries: 20_000, bytes: 16_000_000 }) {
    const options = { max: limits.entries, maxSize: limits.bytes, maxEntrySize: Math.ceil(limits.bytes / 16) };
    this.values = new LRUCache<string, object>(options);
    this.strings = new LRUCache<string, string>({ ...options, sizeCalculation: (s) => BYTES_PER_ENTRY + BYTES_PER_CHAR * s.length });
  }

  /** The shared instance of a string equal to s. */
  string<T extends string | undefined>(s: T): T {
    if (s === undefined) return s;
    const had = this.strings.get(s);
    if (had !== undefined) return had as T;
    this.strings.set(s, s);
    return s;
  }

  /** The shared, frozen instance of a JSON value deep-equal to v (same keys in the same order). */
  value<T>(v: T): T {
    if (v === undefined || v === null || typeof v !== 'object') return v;
    const json = JSON.stringify(v);
    // A 256-bit digest: two different values with one key are not to be expected in this universe.
    const key = createHash('sha256').update(json).digest('base64');
    const had = this.values.get(key);
    if (had !== undefined) return had as T;
    const frozen = deepFreeze(v) as object;
    this.values.set(key, frozen, { size: BYTES_PER_ENTRY + BYTES_PER_CHAR * json.length });
    return frozen as T;
  }
}
