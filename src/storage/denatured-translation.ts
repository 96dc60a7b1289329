// Translation between the native form of a denatured kind (what every client of the view sees) and
// its stored form in the WDS (a denatured.kubestellar.io custom resource of the same kind, version
// and plural). Contract:
// - Every function is pure: inputs are never mutated (results are fresh copies).
// - storedName(n) is n itself when n is a DNS-1123 subdomain that does not look encoded
//   (isEncodedName), else `kv-` + the first 40 hex chars of sha256(n). It depends only on n, so a
//   lookup by native name needs no index. An encoded object carries its native name in annotation
//   NATIVE_NAME_ANNOTATION; an unencoded one never does.
// - The native object's managedFields and generation are the ones Kubernetes' own field manager and
//   registry computed (ksview-native); the WDS keeps its own for the custom resource, so toStored
//   puts the native ones in annotation NATIVE_METADATA_ANNOTATION and toNative takes them back.
//   Objects stored before that annotation existed show the WDS's managedFields, cleaned of what
//   the native-name annotation added, and no generation.
// - toNative(toStored(x)) deep-equals x for any native x that does not carry the reserved
//   annotations (toStored rejects them).
// - Status objects and field selectors are rewritten so clients see native names and groups only.
// Violations of the contract raise TranslationError, whose message says what is wrong without naming
// the object (callers do); a malformed field selector, FieldSelectorError.
import { createHash } from 'node:crypto';
import { DENATURED_GROUP } from './crd-schema.js';
import { fieldSelectorTerm, parseFieldSelector } from '../kube/field-selector.js';
import { isJsonObject } from '../kube/json.js';
import { isDNS1123Subdomain } from '../kube/names.js';
import type { KubeList, KubeObject, ManagedFieldsEntry } from '../kube/objects.js';
import type { Status } from '../kube/status.js';

export const NATIVE_NAME_ANNOTATION = 'view.kubestellar.io/native-name';
export const NATIVE_METADATA_ANNOTATION = 'view.kubestellar.io/native-metadata';

/** What NATIVE_METADATA_ANNOTATION holds (JSON). */
interface NativeMetadata {
  managedFields?: ManagedFieldsEntry[];
  generation?: number;
}

/** Whether a stored object carries the native managedFields and generation. */
export const hasNativeMetadata = (stored: KubeObject): boolean => stored.metadata?.annotations?.[NATIVE_METADATA_ANNOTATION] !== undefined;

export class TranslationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TranslationError';
  }
}

export interface NativeGroupVersion {
  group: string;
  version: string;
}

export interface NativeGroupVersionResource extends NativeGroupVersion {
  resource: string;
}

export interface WatchEvent {
  type: string;
  object: KubeObject | Status;
}

const ENCODED_NAME = /^kv-[0-9a-f]{40}$/;

export function isEncodedName(s: string): boolean {
  return ENCODED_NAME.test(s);
}

export function storedName(nativeName: string): string {
  if (isDNS1123Subdomain(nativeName) && !isEncodedName(nativeName)) return nativeName;
  return 'kv-' + createHash('sha256').update(nativeName, 'utf8').digest('hex').slice(0, 40);
}

export function storedApiVersion(native: NativeGroupVersion): string {
  return `${DENATURED_GROUP}/${native.version}`;
}

export function nativeApiVersion(native: NativeGroupVersion): string {
  return native.group === '' ? native.version : `${native.group}/${native.version}`;
}

/** As kube-apiserver validates generateName: a trailing '-' is allowed, the rest must be a name. */
function isValidGenerateName(prefix: string): boolean {
  const masked = prefix.length > 1 && prefix.endsWith('-') ? prefix.slice(0, -1) + 'a' : prefix;
  return isDNS1123Subdomain(masked);
}

export function toStored<T extends KubeObject>(obj: T, native: NativeGroupVersion): T {
  const out = structuredClone(obj) as T;
  const apiVersion = storedApiVersion(native);
  out.apiVersion = apiVersion;
  const meta = out.metadata;
  if (!meta) return out;
  for (const reserved of [NATIVE_NAME_ANNOTATION, NATIVE_METADATA_ANNOTATION]) {
    if (meta.annotations && reserved in meta.annotations) throw new TranslationError(`metadata.annotations: annotation ${reserved} is reserved`);
  }
  if (meta.generateName !== undefined && meta.generateName !== '' && !isValidGenerateName(meta.generateName)) {
    throw new TranslationError(
      `metadata.generateName: ${JSON.stringify(meta.generateName)} is not supported for this kind: ` +
      'it must be a lowercase RFC 1123 subdomain prefix (lowercase alphanumerics, \'-\' and \'.\')');
  }
  if (meta.name !== undefined && meta.name !== '') {
    const stored = storedName(meta.name);
    if (stored !== meta.name) {
      meta.annotations = { ...meta.annotations, [NATIVE_NAME_ANNOTATION]: meta.name };
      meta.name = stored;
    }
  }
  const nativeMetadata: NativeMetadata = {};
  if (meta.managedFields && meta.managedFields.length > 0) nativeMetadata.managedFields = meta.managedFields;
  if (typeof meta.generation === 'number' && meta.generation > 0) nativeMetadata.generation = meta.generation;
  delete meta.managedFields;
  delete meta.generation;
  meta.annotations = { ...meta.annotations, [NATIVE_METADATA_ANNOTATION]: JSON.stringify(nativeMetadata) };
  return out;
}

/**
 * The annotation's value as toStored writes it: a JSON object whose managedFields, when present, is
 * a list of entries and whose generation a non-negative integer. Anything else was not written by
 * the view (or was altered since), and is refused rather than shown as Kubernetes' own metadata.
 */
function parseNativeMetadata(value: string): NativeMetadata {
  const bad = (why: string) => new TranslationError(`annotation ${NATIVE_METADATA_ANNOTATION} ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw bad('is not JSON');
  }
  if (!isJsonObject(parsed)) throw bad('is not a JSON object');
  const { managedFields, generation } = parsed;
  if (managedFields !== undefined && !(Array.isArray(managedFields) && managedFields.every(isJsonObject))) throw bad('has a managedFields that is not a list of entries');
  if (generation !== undefined && !(typeof generation === 'number' && Number.isSafeInteger(generation) && generation >= 0)) throw bad('has a generation that is not a non-negative integer');
  return { managedFields: managedFields as ManagedFieldsEntry[] | undefined, generation: generation as number | undefined };
}

/** A fieldset map with nothing left in it but possibly its own "." marker. */
const isEmptySet = (m: Record<string, unknown>) => Object.keys(m).every((k) => k === '.');

/** fieldsV1 without f:metadata.f:annotations.f:<native-name> and the parents it leaves empty. */
function stripNativeNameField(fields: Record<string, unknown>, annotationsRemain: boolean): Record<string, unknown> {
  const metadata = fields['f:metadata'];
  if (!isJsonObject(metadata)) return fields;
  const annotations = metadata['f:annotations'];
  if (!isJsonObject(annotations) || !(`f:${NATIVE_NAME_ANNOTATION}` in annotations)) return fields;
  const { [`f:${NATIVE_NAME_ANNOTATION}`]: _drop, ...restAnnotations } = annotations;
  const { 'f:annotations': _old, ...restMetadata } = metadata;
  // Left with only "." (the map itself, owned): FieldsV1 writes such a member without children as
  // `{}`, and kube-apiserver shows just that where the object still has annotations. Where the
  // native object has none, the map existed for this annotation alone: the field set goes.
  let newMetadata: Record<string, unknown>;
  if (!isEmptySet(restAnnotations)) newMetadata = { ...restMetadata, 'f:annotations': restAnnotations };
  else if ('.' in restAnnotations && annotationsRemain) newMetadata = { ...restMetadata, 'f:annotations': {} };
  else newMetadata = restMetadata;
  const { 'f:metadata': _oldMeta, ...restFields } = fields;
  return isEmptySet(newMetadata) ? restFields : { ...restFields, 'f:metadata': newMetadata };
}

export function toNative<T extends KubeObject>(obj: T, native: NativeGroupVersion): T {
  const out = structuredClone(obj) as T;
  const apiVersion = nativeApiVersion(native);
  out.apiVersion = apiVersion;
  const meta = out.metadata;
  if (!meta) return out;
  const annotations = meta.annotations;
  if (annotations && NATIVE_NAME_ANNOTATION in annotations) {
    const original = annotations[NATIVE_NAME_ANNOTATION]!;
    if (meta.name !== undefined && storedName(original) !== meta.name) {
      throw new TranslationError(`annotation ${NATIVE_NAME_ANNOTATION}=${JSON.stringify(original)} does not match the name ${JSON.stringify(meta.name)}`);
    }
    meta.name = original;
  }
  const stored = meta.annotations?.[NATIVE_METADATA_ANNOTATION];
  if (meta.annotations) {
    const { [NATIVE_NAME_ANNOTATION]: _name, [NATIVE_METADATA_ANNOTATION]: _metadata, ...rest } = meta.annotations;
    if (Object.keys(rest).length === 0) delete meta.annotations;
    else meta.annotations = rest;
  }
  if (stored !== undefined) {
    const parsed = parseNativeMetadata(stored);
    if (parsed.managedFields) meta.managedFields = parsed.managedFields;
    else delete meta.managedFields;
    if (parsed.generation !== undefined) meta.generation = parsed.generation;
    else delete meta.generation;
  } else {
    // Stored before the native metadata was kept: the custom resource's generation is not the
    // native one (the RBAC kinds, for one, have none), so none is shown until the next write.
    delete meta.generation;
  }
  if (stored === undefined && meta.managedFields) {
    const entries: ManagedFieldsEntry[] = [];
    for (const e of meta.managedFields) {
      const entry: ManagedFieldsEntry = e.apiVersion === undefined ? e : { ...e, apiVersion };
      if (isJsonObject(entry.fieldsV1)) {
        const fieldsV1 = stripNativeNameField(entry.fieldsV1, meta.annotations !== undefined);
        if (fieldsV1 !== entry.fieldsV1) {
          // kube-apiserver keeps no entry with an empty field set; neither do we.
          if (Object.keys(fieldsV1).length === 0) continue;
          entry.fieldsV1 = fieldsV1;
        }
      }
      entries.push(entry);
    }
    meta.managedFields = entries;
  }
  return out;
}

export function listToNative<T extends KubeObject>(list: KubeList<T>, native: NativeGroupVersion): KubeList<T> {
  const { items, ...rest } = list;
  return { ...structuredClone(rest), apiVersion: nativeApiVersion(native), items: items.map((i) => toNative(i, native)) };
}

export function watchEventToNative(event: WatchEvent, native: NativeGroupVersionResource): WatchEvent {
  switch (event.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { ...event, object: toNative(event.object as KubeObject, native) };
    case 'BOOKMARK':
      return { ...event, object: { ...structuredClone(event.object), apiVersion: nativeApiVersion(native) } };
    case 'ERROR':
      return { ...event, object: statusToNative(event.object as Status, native) };
    default:
      return structuredClone(event);
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A Status from the WDS, worded as kube-apiserver would for the native kind: `<resource>` and
 * `<details.kind>` qualified by the native group (unqualified for the core group), and the encoded
 * name replaced by originalName (when given and it encodes to the name in the Status).
 */
export function statusToNative<T extends Status>(status: T, native: NativeGroupVersionResource, originalName?: string): T {
  const out = structuredClone(status);
  const encoded = originalName === undefined ? undefined : storedName(originalName);
  const decode = encoded !== undefined && encoded !== originalName;
  const qualifiers = [native.resource, out.details?.kind].filter((w): w is string => !!w);
  const rewrite = (msg: string): string => {
    for (const w of qualifiers) {
      msg = msg.replace(new RegExp(`\\b${escapeRegExp(w)}\\.${escapeRegExp(DENATURED_GROUP)}\\b`, 'g'),
        native.group === '' ? w : `${w}.${native.group}`);
    }
    // Server-side apply conflicts name the version: `conflict with "x" using <group>/<version>`.
    msg = msg.replace(new RegExp(`\\b${escapeRegExp(DENATURED_GROUP)}/(v[0-9a-z]+)\\b`, 'g'), native.group === '' ? '$1' : `${native.group}/$1`);
    if (decode) msg = msg.split(`"${encoded}"`).join(`"${originalName}"`);
    return msg;
  };
  if (typeof out.message === 'string') out.message = rewrite(out.message);
  const details = out.details;
  if (details) {
    if (details.group === DENATURED_GROUP) {
      if (native.group === '') delete details.group;
      else details.group = native.group;
    }
    if (decode && details.name === encoded) details.name = originalName;
    if (details.causes) {
      details.causes = details.causes.map((c) => typeof c.message === 'string' ? { ...c, message: rewrite(c.message) } : c);
    }
  }
  return out;
}

/** A field selector for the stored form: `metadata.name` terms use storedName; others are kept. */
export function fieldSelectorToStored(selector: string): string {
  return parseFieldSelector(selector)
    .map((r) => fieldSelectorTerm(r.field === 'metadata.name' ? { ...r, value: storedName(r.value) } : r))
    .join(',');
}
