// Kubernetes strategic merge patch (SMP, application/strategic-merge-patch+json), applied the way
// k8s.io/apimachinery/pkg/util/strategicpatch applies it on the server (StrategicMergeMapPatch),
// with the patch metadata (patch strategy, merge key) read from an OpenAPI v3 schema instead of Go
// struct tags.
//
// Written by hand: no good library exists for JavaScript (npm has JSON Merge Patch, RFC 7396, which
// knows neither merge keys nor directives; SMP lives only in Go, in apimachinery). The behaviour
// follows apimachinery's patch.go and the SMP design documents in kubernetes/community
// (contributors/devel/sig-api-machinery/strategic-merge-patch.md and the "preserve order" proposal):
//
// - maps merge recursively; `null` deletes a key; keys absent from the original take the patch value;
//   a value whose JSON type differs from the original's replaces it;
// - lists whose field has strategy `merge` and a merge key merge item by item on that key (a patch
//   item without the key is an error); lists of primitives with strategy `merge` are set unions;
//   every other list is replaced;
// - `$patch: replace` (map, or as a list item) takes the patch literally; `$patch: delete` (map, or a
//   list item naming its merge key) deletes; a map's `$patch: delete` leaves `{}` where the original
//   had the map (as apimachinery does, see its "delete map from nested map" test) and nothing where
//   it did not;
// - `$setElementOrder/<list>` orders the merged list: the items it names in its order, the others
//   (live-only items) interleaved by their live position, exactly apimachinery's normalizeElementOrder
//   + mergeSortedSlice. Without it, patch items follow the patch's order and the ones the live list
//   lacks come before the remaining live-only items (apimachinery's order too);
// - `$retainKeys: [...]` clears the keys of the original map it does not list (honoured wherever it
//   appears, as apimachinery does; kubectl only sends it for fields with strategy `retainKeys`), and
//   every non-null key of the patch map must be listed;
// - `$deleteFromPrimitiveList/<list>: [...]` removes those values from a list of primitives.
//
// Deliberate differences, all on inputs kubectl never produces:
// - Directives never leak into the result. apimachinery copies a value the original lacks as is
//   after dropping maps that hold `$patch`; here such values are applied to "nothing", so nested
//   `$setElementOrder/`, `$retainKeys`, `$deleteFromPrimitiveList/` and nulls go too, and
//   `{$patch: replace, ...}` keeps its content instead of vanishing.
// - `$patch: merge`, which apimachinery rejects in patches ("merge" exists only as a struct tag), is
//   accepted: on a map it is the default merge; as a list item it is a no-op marker.
// - `$deleteFromPrimitiveList/<list>` must be a list of primitives (apimachinery deletes the whole
//   field for `null` and misbehaves on lists of maps).
// - Fields the schema does not describe get no metadata (maps merge, lists replace) rather than an
//   error.
// - Directive items of a patch list are ignored wherever they stand when checking it against
//   `$setElementOrder` (apimachinery rejects one placed after the last ordered item).
// - When a field has no `x-kubernetes-patch-strategy`, `x-kubernetes-list-type: map` with a single
//   `x-kubernetes-list-map-keys` entry means merge on that key, and `atomic` means replace (the
//   structured-merge-diff reading of the schema; apimachinery's own lookup reads only the patch
//   extensions, so this matters only for fields that lack them).
// Multi-key list maps (`x-kubernetes-list-map-keys` with several keys and no patch strategy) cannot be
// expressed in SMP and are replaced.
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject } from '../kube/json.js';
import type { JsonObject } from '../kube/objects.js';
import type { OpenAPIV3Schema } from './crd-schema.js';

/** An invalid patch (unknown directive, missing merge key, malformed directive list...). */
export class StrategicMergePatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StrategicMergePatchError';
  }
}

/** How a patch applies at one point of the schema. */
export interface PatchMeta {
  /**
   * The patch strategy of the value here: `merge` (lists merge by `mergeKey`, or as a set when they
   * hold primitives), `replace` (maps too are replaced), or undefined (maps merge, lists replace).
   */
  readonly strategy: 'merge' | 'replace' | undefined;
  /** Whether the field carries the `retainKeys` strategy (kubectl then sends `$retainKeys`). */
  readonly retainKeys: boolean;
  /** The merge key of a list of maps with strategy `merge`. */
  readonly mergeKey: string | undefined;
  /** Metadata of a field of the map here (a declared property, else `additionalProperties`). */
  lookup(field: string): PatchMeta;
  /** Metadata of the items of the list here. */
  items(): PatchMeta;
}

/** No metadata anywhere: JSON-merge-patch-like behaviour with SMP directives. */
export const NO_PATCH_META: PatchMeta = Object.freeze({
  strategy: undefined,
  retainKeys: false,
  mergeKey: undefined,
  lookup: () => NO_PATCH_META,
  items: () => NO_PATCH_META,
});

// ---------------------------------------------------------------------------------------------
// Patch metadata from an OpenAPI v3 schema

const PATCH_STRATEGY = 'x-kubernetes-patch-strategy';
const PATCH_MERGE_KEY = 'x-kubernetes-patch-merge-key';
const LIST_TYPE = 'x-kubernetes-list-type';
const LIST_MAP_KEYS = 'x-kubernetes-list-map-keys';

type RefResolver = (ref: string) => object | undefined;


/** The schema itself followed by what its `$ref` and `allOf` members resolve to, depth first. */
function flatten(schema: OpenAPIV3Schema, resolveRef: RefResolver, seen = new Set<object>()): OpenAPIV3Schema[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const out = [schema];
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const target = resolveRef(ref);
    if (!isJsonObject(target)) throw new Error(`OpenAPI schema reference ${ref} cannot be resolved`);
    out.push(...flatten(target, resolveRef, seen));
  }
  if (Array.isArray(schema.allOf)) {
    for (const member of schema.allOf) if (isJsonObject(member)) out.push(...flatten(member, resolveRef, seen));
  }
  return out;
}

/** Parses x-kubernetes-patch-strategy as apimachinery's extractRetainKeysPatchStrategy does. */
function parseStrategy(value: unknown): { strategy: string | undefined; retainKeys: boolean } {
  if (typeof value !== 'string') throw new Error(`${PATCH_STRATEGY} must be a string, got ${JSON.stringify(value)}`);
  const parts = value.split(',').map((s) => s.trim());
  if (parts.length === 1) {
    return parts[0] === 'retainKeys' ? { strategy: undefined, retainKeys: true } : { strategy: parts[0], retainKeys: false };
  }
  if (parts.length === 2 && parts.includes('retainKeys')) {
    return { strategy: parts[0] === 'retainKeys' ? parts[1] : parts[0], retainKeys: true };
  }
  throw new Error(`unexpected ${PATCH_STRATEGY}: ${value}`);
}

class SchemaPatchMeta implements PatchMeta {
  readonly strategy: 'merge' | 'replace' | undefined;
  readonly retainKeys: boolean;
  readonly mergeKey: string | undefined;
  private readonly chain: OpenAPIV3Schema[];
  private readonly fields = new Map<string, PatchMeta>();
  private itemMeta: PatchMeta | undefined;

  constructor(
    schema: OpenAPIV3Schema,
    private readonly resolveRef: RefResolver,
  ) {
    this.chain = flatten(schema, resolveRef);
    // The extensions sit on the property schema; fall back to what it refers to.
    const ext = (name: string): unknown => this.chain.find((s) => s[name] !== undefined)?.[name];
    let strategy: string | undefined;
    let retainKeys = false;
    let mergeKey: string | undefined;
    const declared = ext(PATCH_STRATEGY);
    const key = ext(PATCH_MERGE_KEY);
    if (key !== undefined && typeof key !== 'string') throw new Error(`${PATCH_MERGE_KEY} must be a string`);
    const listType = ext(LIST_TYPE);
    const mapKeys = ext(LIST_MAP_KEYS);
    const singleMapKey =
      listType === 'map' && Array.isArray(mapKeys) && mapKeys.length === 1 && typeof mapKeys[0] === 'string'
        ? mapKeys[0]
        : undefined;
    if (declared !== undefined) {
      ({ strategy, retainKeys } = parseStrategy(declared));
      mergeKey = key ?? singleMapKey;
    } else {
      if (singleMapKey !== undefined) {
        strategy = 'merge';
        mergeKey = singleMapKey;
      } else if (listType === 'atomic') {
        strategy = 'replace';
      }
    }
    this.strategy = strategy === 'merge' || strategy === 'replace' ? strategy : undefined;
    this.retainKeys = retainKeys;
    this.mergeKey = this.strategy === 'merge' && mergeKey ? mergeKey : undefined;
  }

  lookup(field: string): PatchMeta {
    let meta = this.fields.get(field);
    if (!meta) {
      meta = NO_PATCH_META;
      const declared = this.chain.find((s) => isJsonObject(s.properties) && isJsonObject(s.properties[field]));
      if (declared) {
        meta = new SchemaPatchMeta((declared.properties as JsonObject)[field] as OpenAPIV3Schema, this.resolveRef);
      } else {
        const additional = this.chain.find((s) => isJsonObject(s.additionalProperties));
        if (additional) meta = new SchemaPatchMeta(additional.additionalProperties as OpenAPIV3Schema, this.resolveRef);
      }
      this.fields.set(field, meta);
    }
    return meta;
  }

  items(): PatchMeta {
    if (!this.itemMeta) {
      const list = this.chain.find((s) => isJsonObject(s.items));
      this.itemMeta = list ? new SchemaPatchMeta(list.items as OpenAPIV3Schema, this.resolveRef) : NO_PATCH_META;
    }
    return this.itemMeta;
  }
}

/**
 * Patch metadata of the documents `schema` describes (e.g. `components.schemas["io.k8s.api.apps.v1.Deployment"]`
 * of an OpenAPI v3 document). `resolveRef` maps a `$ref` ("#/components/schemas/...") to its schema.
 * Lookups are lazy and memoized; an unresolvable `$ref` or a malformed patch extension throws when reached.
 */
export function schemaPatchMeta(schema: object, resolveRef: (ref: string) => object | undefined): PatchMeta {
  return new SchemaPatchMeta(schema as OpenAPIV3Schema, resolveRef);
}

// ---------------------------------------------------------------------------------------------
// Applying a patch

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

/** Returned by `materialize` for a value that must not appear at all (`{$patch: delete}`). */
const DROP = Symbol('drop');

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s !== undefined && s.length > 200 ? `${s.slice(0, 200)}...` : String(s);
}

function fail(path: string, message: string): never {
  throw new StrategicMergePatchError(path ? `${path}: ${message}` : message);
}

function sub(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

type Kind = 'map' | 'list' | 'null' | 'string' | 'number' | 'boolean' | 'other';

function kindOf(v: unknown): Kind {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  const t = typeof v;
  if (t === 'object') return 'map';
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'other';
}

/** The part after "<prefix>/" of a directive key, which must be a field name. */
function directiveField(key: string, prefix: string, path: string): string {
  const field = key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1) : '';
  if (!field) fail(path, `invalid directive key ${JSON.stringify(key)}: expected ${prefix}/<field>`);
  return field;
}

function checkDirective(value: unknown, path: string): 'replace' | 'delete' | 'merge' {
  if (value === 'replace' || value === 'delete' || value === 'merge') return value;
  return fail(path, `unknown ${DIRECTIVE} directive ${describe(value)}`);
}

/**
 * Applies strategic merge patch `patch` to the JSON object `original` and returns the result. Pure:
 * neither input is modified, and the result shares no objects with them.
 * Throws StrategicMergePatchError for an invalid patch.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, meta: PatchMeta): unknown {
  if (!isJsonObject(patch)) fail('', `a strategic merge patch must be a JSON object, got ${describe(patch)}`);
  if (original !== undefined && original !== null && !isJsonObject(original)) {
    fail('', `a strategic merge patch applies to a JSON object, got ${describe(original)}`);
  }
  return mergeMap(original === undefined || original === null ? {} : (structuredClone(original) as JsonObject), patch, meta, '');
}

/**
 * Merges `patch` into `target`, which this module owns (a copy of the original) and may modify.
 * `patch` is only read. Returns the merged map (a `$patch: delete` map yields `{}`).
 */
function mergeMap(target: JsonObject, patch: JsonObject, meta: PatchMeta, path: string): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = checkDirective(patch[DIRECTIVE], path);
    if (directive === 'delete') return {};
    if (directive === 'replace') return materializeMap(patch, meta, path);
  }

  applyRetainKeys(target, patch, path);
  const ordered = applySetElementOrder(target, patch, meta, path);

  for (const [key, patchValue] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || ordered.has(key)) continue;

    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = directiveField(key, DELETE_FROM_PRIMITIVE_LIST, path);
      const at = sub(path, key);
      if (!Array.isArray(patchValue)) fail(at, `must be a list of primitives, got ${describe(patchValue)}`);
      const current = target[field];
      if (Array.isArray(current)) target[field] = deleteFromPrimitiveList(current, patchValue, sub(path, field), at);
      continue;
    }

    const at = sub(path, key);
    if (patchValue === null) {
      delete target[key];
      continue;
    }
    const fieldMeta = meta.lookup(key);
    const current = target[key];
    const kind = kindOf(patchValue);
    if (!Object.hasOwn(target, key) || kindOf(current) !== kind || (kind !== 'map' && kind !== 'list')) {
      const value = materialize(patchValue, fieldMeta, at);
      if (value === DROP) delete target[key];
      else target[key] = value;
    } else if (kind === 'map') {
      target[key] =
        fieldMeta.strategy === 'replace'
          ? replaceMap(patchValue as JsonObject, fieldMeta, at)
          : mergeMap(current as JsonObject, patchValue as JsonObject, fieldMeta, at);
    } else {
      target[key] = mergeList(current as unknown[], patchValue as unknown[], fieldMeta, at);
    }
  }
  return target;
}

/** A map under strategy `replace`: the patch, without its directives. */
function replaceMap(patch: JsonObject, meta: PatchMeta, path: string): JsonObject {
  const value = materialize(patch, meta, path);
  return value === DROP ? {} : (value as JsonObject);
}

/** `$retainKeys`: validates it against the patch and clears the unlisted keys of `target`. */
function applyRetainKeys(target: JsonObject, patch: JsonObject, path: string): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  const at = sub(path, RETAIN_KEYS);
  if (!Array.isArray(list) || list.some((k) => typeof k !== 'string')) {
    fail(at, `must be a list of field names, got ${describe(list)}`);
  }
  const retained = new Set(list as string[]);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || key === RETAIN_KEYS || key === DIRECTIVE) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained.has(key)) fail(at, `the patch sets ${JSON.stringify(key)}, which ${RETAIN_KEYS} does not list`);
  }
  for (const key of Object.keys(target)) if (!retained.has(key)) delete target[key];
}

/**
 * `$setElementOrder/<field>`: merges the patch's list for each such field with the original's and
 * orders the result. Returns the fields it handled, which the caller must skip.
 */
function applySetElementOrder(target: JsonObject, patch: JsonObject, meta: PatchMeta, path: string): Set<string> {
  const handled = new Set<string>();
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = directiveField(key, SET_ELEMENT_ORDER, path);
    const at = sub(path, key);
    const fieldPath = sub(path, field);
    if (!Array.isArray(order)) fail(at, `must be a list, got ${describe(order)}`);
    const fieldMeta = meta.lookup(field);
    const mergeKey = fieldMeta.mergeKey ?? '';

    const hasOriginal = Object.hasOwn(target, field);
    const hasPatch = Object.hasOwn(patch, field);
    const originalList = target[field];
    const patchList = patch[field];
    if (hasOriginal && !Array.isArray(originalList)) fail(fieldPath, `${key} needs a list, the original has ${describe(originalList)}`);
    if (hasPatch && !Array.isArray(patchList)) fail(fieldPath, `${key} needs a list, the patch has ${describe(patchList)}`);
    if (!hasOriginal && !hasPatch) continue;
    handled.add(field);
    const live = (hasOriginal ? originalList : []) as unknown[];
    const patched = (hasPatch ? patchList : []) as unknown[];
    if (!mergeKey && [...order, ...live, ...patched].some(isJsonObject)) {
      fail(at, `ordering a list of maps needs a merge key, and ${fieldPath} has none`);
    }
    validateAgainstOrder(patched, order, mergeKey, at);

    let merged: unknown[];
    if (!hasPatch) merged = live;
    else if (!hasOriginal) merged = materializeList(patched, fieldMeta, fieldPath);
    else merged = mergeList(live, patched, fieldMeta, fieldPath);

    const key_ = itemKey(mergeKey, fieldPath);
    const [named, liveOnly] = partition(merged, order, key_);
    target[field] = normalizeElementOrder(named, liveOnly, order, live, key_);
  }
  return handled;
}

/**
 * The items of the patch list must appear in `$setElementOrder` in the same relative order
 * (apimachinery's validatePatchWithSetOrderList). Directive items (`{$patch: ...}`) are skipped
 * wherever they are (apimachinery fails on one after the last ordered item).
 */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string, path: string): void {
  if (patchList.length === 0 || order.length === 0) return;
  const items = patchList.filter((item) => !(isJsonObject(item) && Object.hasOwn(item, DIRECTIVE)));
  const key = itemKey(mergeKey, path);
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    if (sameKey(key(items[p]), key(order[o]))) p++;
    o++;
  }
  if (p < items.length) fail(path, `the order of the patch list ${describe(patchList)} doesn't match ${describe(order)}`);
}

/** Merges two lists per the field's strategy (`replace`: the patch list). */
function mergeList(original: unknown[], patch: unknown[], meta: PatchMeta, path: string): unknown[] {
  return meta.strategy === 'merge' ? mergeSlice(original, patch, meta, path) : materializeList(patch, meta, path);
}

/** The kind of all items of the lists; lists of lists and mixed kinds are errors. */
function elementKind(path: string, ...lists: unknown[][]): Kind | undefined {
  let kind: Kind | undefined;
  for (const list of lists) {
    for (const item of list) {
      const k = kindOf(item);
      if (k === 'list') fail(path, 'lists of lists cannot be merged');
      if (kind !== undefined && k !== kind) fail(path, `list items are not all of the same type: ${describe(list)}`);
      kind = k;
    }
  }
  return kind;
}

/** apimachinery's mergeSlice: merge by key (maps) or set union (primitives), then order. */
function mergeSlice(original: unknown[], patch: unknown[], meta: PatchMeta, path: string): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(path, original, patch);
  if (kind !== 'map') {
    const merged: unknown[] = [];
    for (const v of [...original, ...patch]) if (!merged.some((m) => sameKey(m, v))) merged.push(v);
    const key = itemKey('', path);
    const [fromPatch, liveOnly] = partition(merged, patch, key);
    return normalizeElementOrder(fromPatch, liveOnly, patch, original, key);
  }

  const mergeKey = meta.mergeKey;
  if (!mergeKey) fail(path, 'a list of maps with strategy merge needs a merge key, and the schema declares none');
  const itemMeta = meta.items();
  let live = original;
  const plain: JsonObject[] = [];
  let replace = false;
  patch.forEach((item, i) => {
    const p = item as JsonObject;
    if (!Object.hasOwn(p, DIRECTIVE)) {
      plain.push(p);
      return;
    }
    const at = `${path}[${i}]`;
    switch (checkDirective(p[DIRECTIVE], at)) {
      case 'delete':
        if (!Object.hasOwn(p, mergeKey)) fail(at, `map ${describe(p)} does not contain declared merge key: ${mergeKey}`);
        live = live.filter((o) => !(isJsonObject(o) && Object.hasOwn(o, mergeKey) && sameKey(o[mergeKey], p[mergeKey])));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        break;
    }
  });
  if (replace) return materializeList(plain, meta, path);

  const merged = [...live];
  for (const [i, item] of plain.entries()) {
    const at = `${path}[${i}]`;
    if (!Object.hasOwn(item, mergeKey)) fail(at, `map ${describe(item)} does not contain declared merge key: ${mergeKey}`);
    const found = merged.findIndex((o) => isJsonObject(o) && Object.hasOwn(o, mergeKey) && sameKey(o[mergeKey], item[mergeKey]));
    if (found >= 0) merged[found] = mergeMap(merged[found] as JsonObject, item, itemMeta, at);
    else merged.push(materialize(item, itemMeta, at));
  }
  const key = itemKey(mergeKey, path);
  const [fromPatch, liveOnly] = partition(merged, plain, key);
  return normalizeElementOrder(fromPatch, liveOnly, plain, live, key);
}

function deleteFromPrimitiveList(current: unknown[], toDelete: unknown[], path: string, directivePath: string): unknown[] {
  elementKind(directivePath, toDelete);
  if (toDelete.some(isJsonObject)) fail(directivePath, 'can only delete primitives');
  if (current.some(isJsonObject)) fail(path, `${DELETE_FROM_PRIMITIVE_LIST} applies to lists of primitives only`);
  return current.filter((v) => !toDelete.some((d) => sameKey(d, v)));
}

// --- ordering (apimachinery's normalizeElementOrder / mergeSortedSlice) ------------------------

type KeyFn = (item: unknown) => unknown;

function sameKey(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && isDeepStrictEqual(a, b));
}

/** The identity of a list item: its merge key value, or the item itself for primitives. */
function itemKey(mergeKey: string, path: string): KeyFn {
  if (!mergeKey) return (item) => item;
  return (item) => {
    if (!isJsonObject(item)) fail(path, `expected a map with merge key ${mergeKey}, got ${describe(item)}`);
    if (!Object.hasOwn(item, mergeKey)) fail(path, `map ${describe(item)} does not contain declared merge key: ${mergeKey}`);
    return item[mergeKey];
  };
}

function indexIn(list: unknown[], item: unknown, key: KeyFn): number {
  const k = key(item);
  return list.findIndex((x) => sameKey(key(x), k));
}

/** Splits `items` into those `by` names and the others, keeping their order. */
function partition(items: unknown[], by: unknown[], key: KeyFn): [unknown[], unknown[]] {
  const named: unknown[] = [];
  const others: unknown[] = [];
  for (const item of items) (indexIn(by, item, key) >= 0 ? named : others).push(item);
  return [named, others];
}

/** Stable sort of `items` by their position in `order`; items it lacks go last. */
function sortBy(items: unknown[], order: unknown[], key: KeyFn): unknown[] {
  for (const o of order) key(o); // validates the order list's merge keys
  return items
    .map((item, pos) => ({ item, pos, at: indexIn(order, item, key) }))
    .sort((a, b) => (a.at < 0 ? Infinity : a.at) - (b.at < 0 ? Infinity : b.at) || a.pos - b.pos)
    .map((x) => x.item);
}

/**
 * Orders `fromPatch` by `patchOrder` and `liveOnly` by `liveOrder`, then interleaves them: a live-only
 * item goes before a patch item when both are in the live list and it came first there; otherwise
 * the patch item goes first.
 */
function normalizeElementOrder(
  fromPatch: unknown[],
  liveOnly: unknown[],
  patchOrder: unknown[],
  liveOrder: unknown[],
  key: KeyFn,
): unknown[] {
  const right = sortBy(fromPatch, patchOrder, key);
  const left = sortBy(liveOnly, liveOrder, key);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(liveOrder, left[i], key);
      const ri = indexIn(liveOrder, right[j], key);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

// --- values the original lacks --------------------------------------------------------------

/**
 * A patch value where the original has nothing (or a value of another type): the patch applied to
 * nothing, i.e. without directives and null map entries. `DROP` for `{$patch: delete}`.
 */
function materialize(value: unknown, meta: PatchMeta, path: string): unknown {
  if (Array.isArray(value)) return materializeList(value, meta, path);
  if (isJsonObject(value)) {
    if (Object.hasOwn(value, DIRECTIVE) && checkDirective(value[DIRECTIVE], path) === 'delete') return DROP;
    return materializeMap(value, meta, path);
  }
  return value;
}

function materializeMap(patch: JsonObject, meta: PatchMeta, path: string): JsonObject {
  const rest: JsonObject = {};
  for (const [k, v] of Object.entries(patch)) if (k !== DIRECTIVE) rest[k] = v;
  return mergeMap({}, rest, meta, path);
}

/** List items that are directives (`{$patch: ...}`) have nothing to act on and are dropped. */
function materializeList(list: unknown[], meta: PatchMeta, path: string): unknown[] {
  const itemMeta = meta.items();
  const out: unknown[] = [];
  list.forEach((item, i) => {
    const at = `${path}[${i}]`;
    if (isJsonObject(item) && Object.hasOwn(item, DIRECTIVE)) {
      checkDirective(item[DIRECTIVE], at);
      return;
    }
    out.push(materialize(item, itemMeta, at));
  });
  return out;
}
