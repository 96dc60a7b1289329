// Shares equal values among cached objects (pure; no I/O). A cache of 100,000 objects parsed one by
// one from JSON holds 100,000 copies of each repeated string and sub-object (a work's source
// annotation, its manifest's identity, the agent's conditions); an interner hands out one shared
// instance per distinct value instead. Bounded in entries and in size (least recently used first
// out; a value larger than a sixteenth of the size is not kept), so values that never repeat, or
// a few large ones, cost a bounded amount. Shared values are frozen, as the informer freezes what
// it caches: one reader's write would otherwise show in every object sharing the value.
import { LRUCache } from 'lru-cache';
import { deepFreeze } from './json.js';

export interface InternerLimits {
  /** Distinct values (and as many distinct strings) kept. */
  entries: number;
  /** Characters of the kept values' JSON (and of the kept strings). */
  chars: number;
}

export class Interner {
  private readonly values: LRUCache<string, object>;
  private readonly strings: LRUCache<string, string>;

  constructor(limits: InternerLimits = { entries: 20_000, chars: 8_000_000 }) {
    const options = { max: limits.entries, maxSize: limits.chars, maxEntrySize: Math.ceil(limits.chars / 16) };
    this.values = new LRUCache<string, object>({ ...options, sizeCalculation: (_v, key) => Math.max(1, key.length) });
    this.strings = new LRUCache<string, string>({ ...options, sizeCalculation: (s) => Math.max(1, s.length) });
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
    const key = JSON.stringify(v);
    const had = this.values.get(key);
    if (had !== undefined) return had as T;
    const frozen = deepFreeze(v);
    this.values.set(key, frozen);
    return frozen;
  }
}
