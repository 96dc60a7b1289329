// The generic store of a denatured kind (as kubernetes/sample-apiserver's generic registry, with a
// per-kind strategy): every verb on the native kind, served from the kind's denatured.kubestellar.io
// CRD in the WDS. Requests reach the WDS with the caller's identity headers (impersonation), so the
// WDS's RBAC on denatured.kubestellar.io decides; this store never widens. Contract:
// - inputs and outputs are native (apiVersion, names, managedFields, Status wording); the stored
//   form never leaves this module (translation: ./denatured-translation.ts);
// - nothing is stored that fails validation against the native schema (422 with field causes);
// - JSON, merge and strategic merge patches are applied here to the native form and written with
//   an optimistic-concurrency update, retried on conflict unless the patch named a
//   resourceVersion; server-side apply is done by the WDS on the stored form (so managedFields and
//   conflicts are the real ones) after a dry run whose result is validated first;
// - errors are StatusError with the Status kube-apiserver would give for the native kind.
import type { Dispatcher } from 'undici';
import { isDeepStrictEqual } from 'node:util';
import { errors, isStatus, StatusError, statusForText, type FailureStatus, type Status, type StatusCause } from '../kube/status.js';
import { DENATURED_GROUP } from './crd-schema.js';
import type { DenaturedKind, NativeVersion } from './denatured-kinds.js';
import {
  fieldSelectorToStored, listToNative, nativeApiVersion, statusToNative, storedName, toNative, toStored,
  TranslationError, watchEventToNative, type NativeGroupVersionResource, type WatchEvent,
} from './denatured-translation.js';
import type { KubeList, KubeObject, ManagedFieldsEntry } from '../kube/objects.js';
import { ManagedFieldsShaper } from './managed-fields-shape.js';
import { FieldSelectorError } from '../kube/field-selector.js';
import { jsonLines } from '../kube/json-lines.js';
import { applyNativeDefaults, presentNative } from './native-defaults.js';
import { NativeValidator } from './native-validation.js';
import { applyPatch, PatchError, type PatchType } from './patches.js';
import { NO_PATCH_META, schemaPatchMeta, type PatchMeta } from './strategic-merge-patch.js';
import type { Upstream } from '../kube/upstream.js';
import { isJsonObject } from '../kube/json.js';

/** Who asks, as headers for the WDS (impersonation, the server's credential, user-agent...). */
export interface Caller {
  headers: Record<string, string | string[]>;
}

/** What a request addresses (`name` and `subresource` may be empty). */
export interface Target {
  version: string;
  namespace: string;
  name: string;
  subresource: string;
}

/** A result with the Warning headers the WDS sent (CRD field validation in Warn mode). */
export interface Result<T> {
  value: T;
  warnings: string[];
}

export interface Getter { get(caller: Caller, target: Target, query: URLSearchParams): Promise<Result<KubeObject>> }
export interface Lister { list(caller: Caller, target: Target, query: URLSearchParams): Promise<Result<KubeList>> }
export interface Watcher {
  /** Opens the watch (a failure to open throws), then streams native events to onEvent until it ends or signal aborts. */
  watch(caller: Caller, target: Target, query: URLSearchParams, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<{ done: Promise<void> }>;
}
export interface Creater { create(caller: Caller, target: Target, body: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> }
export interface Updater { update(caller: Caller, target: Target, body: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> }
export interface Patcher { patch(caller: Caller, target: Target, type: PatchType | 'apply', patch: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> }
export interface Deleter { delete(caller: Caller, target: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeObject | Status>> }
export interface CollectionDeleter { deleteCollection(caller: Caller, target: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeList>> }

/** What differs between denatured kinds. */
export interface KindStrategy {
  readonly kind: DenaturedKind;
  /** PUT of a missing object creates it (RBAC kinds and LimitRange natively), instead of 404. */
  readonly allowCreateOnUpdate: boolean;
  version(v: string): NativeVersion | undefined;
  validator(v: string): NativeValidator;
  patchMeta(v: string): PatchMeta;
  shaper(v: string): ManagedFieldsShaper;
}

const CREATE_ON_UPDATE = new Set(['clusterroles.rbac.authorization.k8s.io', 'clusterrolebindings.rbac.authorization.k8s.io',
  'roles.rbac.authorization.k8s.io', 'rolebindings.rbac.authorization.k8s.io', 'limitranges.']);

/** `make(version)` computed once per served version of the kind. */
function perVersion<T>(kind: DenaturedKind, make: (nv: NativeVersion) => T): (v: string) => T {
  const made = new Map<string, T>();
  return (v) => {
    let x = made.get(v);
    if (x === undefined) {
      const nv = kind.versions.find((n) => n.version === v);
      if (!nv) throw new Error(`${kind.plural}: version ${v} is not served`);
      x = make(nv);
      made.set(v, x);
    }
    return x;
  };
}

export function kindStrategy(kind: DenaturedKind): KindStrategy {
  const schemasOf = (nv: NativeVersion) => nv.doc.components?.schemas ?? {};
  return {
    kind,
    allowCreateOnUpdate: CREATE_ON_UPDATE.has(`${kind.plural}.${kind.group}`),
    version: (v) => kind.versions.find((x) => x.version === v),
    validator: perVersion(kind, (nv) => new NativeValidator(nv.doc, nv.schemaName)),
    shaper: perVersion(kind, (nv) => new ManagedFieldsShaper(schemasOf(nv), nv.schemaName)),
    patchMeta: perVersion(kind, (nv) => {
      const schemas = schemasOf(nv);
      const schema = schemas[nv.schemaName];
      return schema ? schemaPatchMeta(schema, (ref) => schemas[ref.replace('#/components/schemas/', '')]) : NO_PATCH_META;
    }),
  };
}

interface Answer {
  status: number;
  warnings: string[];
  json: unknown;
}

const MAX_PATCH_ATTEMPTS = 5;

/**
 * A copy without null-valued fields: kube-apiserver decodes `null` as "not set" (typed clients
 * send `creationTimestamp: null`), so neither validation nor storage should see them.
 */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (!isJsonObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

export class DenaturedStore implements Getter, Lister, Watcher, Creater, Updater, Patcher, Deleter, CollectionDeleter {
  readonly kind: DenaturedKind;

  constructor(private readonly up: Upstream, readonly strategy: KindStrategy) {
    this.kind = strategy.kind;
  }

  private gvr(version: string): NativeGroupVersionResource {
    return { group: this.kind.group, version, resource: this.kind.plural };
  }

  private path(t: Target, name: string, query?: URLSearchParams): string {
    let p = `/apis/${DENATURED_GROUP}/${t.version}`;
    if (this.kind.namespaced && t.namespace) p += `/namespaces/${encodeURIComponent(t.namespace)}`;
    p += `/${this.kind.plural}`;
    if (name) p += `/${storedName(name)}`;
    if (name && t.subresource) p += `/${t.subresource}`;
    const qs = query?.toString();
    return qs ? `${p}?${qs}` : p;
  }

  private async call(caller: Caller, method: string, path: string, body?: unknown, contentType = 'application/json',
    signal?: AbortSignal): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string | string[]> = { ...caller.headers, accept: 'application/json' };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = contentType;
    }
    try {
      return await this.up.pool.request({ method: method as 'GET', path: this.up.basePath + path, headers, body: payload, signal });
    } catch (err) {
      throw errors.serviceUnavailable(`the WDS did not answer: ${(err as Error).message}`);
    }
  }

  /** The body of an answer, parsed when it is JSON. */
  private static async bodyOf(res: Dispatcher.ResponseData): Promise<{ text: string; json: unknown }> {
    const text = await res.body.text();
    try {
      return { text, json: text ? JSON.parse(text) : undefined };
    } catch {
      return { text, json: undefined };
    }
  }

  /** The JSON answer; a non-2xx answer is thrown as the native Status. */
  private async request(caller: Caller, method: string, t: Target, name: string, query?: URLSearchParams,
    body?: unknown, contentType?: string): Promise<Answer> {
    const res = await this.call(caller, method, this.path(t, name, query), body, contentType);
    const { text, json } = await DenaturedStore.bodyOf(res);
    const warnings = ([] as string[]).concat(res.headers.warning ?? []);
    if (res.statusCode >= 300) throw this.statusError(res.statusCode, json, text, t.version, name);
    return { status: res.statusCode, warnings, json };
  }

  private statusError(code: number, json: unknown, text: string, version: string, name?: string): StatusError {
    if (isStatus(json)) {
      // A kube-apiserver's error Status always has its code, reason and message.
      return new StatusError(statusToNative(json, this.gvr(version), name || undefined) as FailureStatus);
    }
    return new StatusError(statusForText(code, text));
  }

  private native(obj: unknown, version: string): KubeObject {
    if (!isJsonObject(obj)) throw errors.internal('the WDS answered without an object');
    try {
      return this.present(toNative(obj as KubeObject, { group: this.kind.group, version }), version);
    } catch (err) {
      if (err instanceof TranslationError) throw errors.internal(err.message);
      throw err;
    }
  }

  /** A translated object as the native kind shows it: defaults, status, generation, managedFields shape. */
  private present(obj: KubeObject, version: string): KubeObject {
    const out = presentNative(this.kind.group, this.kind.plural, this.kind.hasStatus, obj);
    if (out.metadata?.managedFields) out.metadata.managedFields = this.strategy.shaper(version).entries(out.metadata.managedFields);
    return out;
  }

  private stored(obj: KubeObject, version: string): KubeObject {
    try {
      return toStored(obj, { group: this.kind.group, version });
    } catch (err) {
      if (err instanceof TranslationError) throw this.invalid(obj.metadata?.name ?? '', [{ reason: 'FieldValueInvalid', message: err.message.replace(/^[^:]+: /, 'Invalid value: '), field: err.message.split(':')[0]! }]);
      throw err;
    }
  }

  private invalid(name: string, causes: StatusCause[]): StatusError {
    return errors.invalid({ group: this.kind.group, kind: this.kind.kind, name }, causes);
  }

  /** The object as natively written: defaulted, then validated (422 when invalid). */
  private prepare(obj: KubeObject, version: string): KubeObject {
    const out = applyNativeDefaults(this.kind.group, this.kind.plural, obj);
    this.validate(out, version);
    return out;
  }

  private validate(obj: KubeObject, version: string): void {
    const causes = this.strategy.validator(version).validate(obj);
    if (causes.length > 0) throw this.invalid(obj.metadata?.name ?? obj.metadata?.generateName ?? '', causes);
  }

  /**
   * Checks and completes apiVersion, kind, name and namespace of a request body as kube-apiserver
   * does (mismatches are 400); returns a copy.
   */
  private checkBody(body: unknown, t: Target, nameFromUrl: string): KubeObject {
    if (!isJsonObject(body)) throw errors.badRequest('the request body must be a JSON or YAML object');
    const obj = withoutNulls(body) as KubeObject;
    const expected = nativeApiVersion({ group: this.kind.group, version: t.version });
    if (obj.apiVersion !== undefined && obj.apiVersion !== expected) {
      throw errors.badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (obj.kind !== undefined && obj.kind !== this.kind.kind) {
      throw errors.badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${this.kind.kind})`);
    }
    obj.apiVersion = expected;
    obj.kind = this.kind.kind;
    if (obj.metadata !== undefined && !isJsonObject(obj.metadata)) throw errors.badRequest('metadata must be an object');
    const meta = obj.metadata ?? (obj.metadata = {});
    if (nameFromUrl) {
      if (meta.name !== undefined && meta.name !== '' && meta.name !== nameFromUrl) {
        throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${nameFromUrl})`);
      }
      meta.name = nameFromUrl;
    }
    if (this.kind.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== t.namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      if (t.namespace) meta.namespace = t.namespace;
    } else if (meta.namespace !== undefined && meta.namespace !== '') {
      delete meta.namespace; // kube-apiserver clears it for cluster-scoped kinds
    }
    return obj;
  }

  async get(caller: Caller, t: Target, query: URLSearchParams): Promise<Result<KubeObject>> {
    const a = await this.request(caller, 'GET', t, t.name, query);
    return { value: this.native(a.json, t.version), warnings: a.warnings };
  }

  private storedQuery(query: URLSearchParams): URLSearchParams {
    const q = new URLSearchParams(query);
    const fs = q.get('fieldSelector');
    if (fs) {
      try {
        q.set('fieldSelector', fieldSelectorToStored(fs));
      } catch (err) {
        if (err instanceof FieldSelectorError) throw errors.badRequest(err.message);
        throw err;
      }
    }
    return q;
  }

  async list(caller: Caller, t: Target, query: URLSearchParams): Promise<Result<KubeList>> {
    const a = await this.request(caller, 'GET', t, '', this.storedQuery(query));
    if (!isJsonObject(a.json) || !Array.isArray(a.json.items)) throw errors.internal('the WDS answered a list without items');
    const list = listToNative(a.json as KubeList, { group: this.kind.group, version: t.version });
    list.items = list.items.map((i) => this.present(i, t.version));
    return { value: list, warnings: a.warnings };
  }

  async watch(caller: Caller, t: Target, query: URLSearchParams, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<{ done: Promise<void> }> {
    const q = this.storedQuery(query);
    q.set('watch', 'true');
    const res = await this.call(caller, 'GET', this.path(t, '', q), undefined, undefined, signal);
    if (res.statusCode !== 200) {
      const { text, json } = await DenaturedStore.bodyOf(res);
      throw this.statusError(res.statusCode, json, text, t.version);
    }
    const gvr = this.gvr(t.version);
    const done = (async () => {
      try {
        for await (const line of jsonLines(res.body)) {
          const event = watchEventToNative(line as WatchEvent, gvr);
          if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED') event.object = this.present(event.object as KubeObject, t.version);
          onEvent(event);
        }
      } catch (err) {
        if (!signal.aborted) throw err;
      }
    })();
    return { done };
  }

  async create(caller: Caller, t: Target, body: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> {
    if (t.subresource) throw errors.methodNotAllowed('POST');
    const obj = this.prepare(this.checkBody(body, t, ''), t.version);
    const a = await this.request(caller, 'POST', t, '', query, this.stored(obj, t.version));
    return { value: this.native(a.json, t.version), warnings: a.warnings, created: a.status === 201 };
  }

  /** The live stored object, or undefined when there is none. */
  private async live(caller: Caller, t: Target): Promise<KubeObject | undefined> {
    try {
      const a = await this.request(caller, 'GET', { ...t, subresource: '' }, t.name);
      return a.json as KubeObject;
    } catch (err) {
      // A 404 naming the object (not a missing path) means there is none.
      if (err instanceof StatusError && err.code === 404 && err.status.details?.name !== undefined) return undefined;
      throw err;
    }
  }

  /**
   * The stored form of `obj` for an update of `live`: managedFields the client sent back unchanged
   * (as they read them, translated) are replaced by the live stored ones, so the WDS keeps its own
   * bookkeeping (ownership of the native-name annotation included).
   */
  private storedForUpdate(obj: KubeObject, live: KubeObject | undefined, version: string): KubeObject {
    const out = this.stored(obj, version);
    const liveManaged: ManagedFieldsEntry[] | undefined = live?.metadata?.managedFields;
    if (live && out.metadata && liveManaged) {
      const liveNative = this.native(live, version).metadata?.managedFields;
      if (obj.metadata?.managedFields === undefined || isDeepStrictEqual(obj.metadata.managedFields, liveNative)) out.metadata.managedFields = liveManaged;
    }
    return out;
  }

  async update(caller: Caller, t: Target, body: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> {
    const obj = this.prepare(this.checkBody(body, t, t.name), t.version);
    const live = await this.live(caller, t);
    if (!live) {
      if (!this.strategy.allowCreateOnUpdate || t.subresource) {
        throw this.notFound(t.name);
      }
      const a = await this.request(caller, 'POST', { ...t, subresource: '' }, '', query, this.stored(obj, t.version));
      return { value: this.native(a.json, t.version), warnings: a.warnings, created: true };
    }
    const a = await this.request(caller, 'PUT', t, t.name, query, this.storedForUpdate(obj, live, t.version));
    return { value: this.native(a.json, t.version), warnings: a.warnings, created: a.status === 201 };
  }

  private notFound(name: string): StatusError {
    return errors.notFound({ group: this.kind.group, kind: this.kind.plural, name });
  }

  async patch(caller: Caller, t: Target, type: PatchType | 'apply', patch: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> {
    if (type === 'apply') return this.apply(caller, t, patch, query);
    let lastConflict: StatusError | undefined;
    for (let attempt = 0; attempt < MAX_PATCH_ATTEMPTS; attempt++) {
      const live = await this.live(caller, t);
      if (!live) throw this.notFound(t.name);
      const current = this.native(live, t.version);
      let patched: unknown;
      try {
        patched = applyPatch(type, current, patch, this.strategy.patchMeta(t.version));
      } catch (err) {
        if (!(err instanceof PatchError)) throw err;
        if (err.reason === 'BadRequest') throw errors.badRequest(err.message);
        throw this.invalid(t.name, [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${JSON.stringify(JSON.stringify(patch)).slice(0, 200)}: ${err.message}` }]);
      }
      const checked = this.checkBody(patched, t, t.name);
      const pinned = !!checked.metadata!.resourceVersion && checked.metadata!.resourceVersion !== current.metadata?.resourceVersion;
      if (!checked.metadata!.resourceVersion) checked.metadata!.resourceVersion = current.metadata?.resourceVersion;
      const obj = this.prepare(checked, t.version);
      try {
        const a = await this.request(caller, 'PUT', t, t.name, query, this.storedForUpdate(obj, live, t.version));
        return { value: this.native(a.json, t.version), warnings: a.warnings, created: false };
      } catch (err) {
        if (!(err instanceof StatusError) || err.code !== 409 || pinned) throw err;
        lastConflict = err;
      }
    }
    throw lastConflict!;
  }

  /** Server-side apply: a dry run on the stored form, its result validated natively, then the real one. */
  private async apply(caller: Caller, t: Target, patch: unknown, query: URLSearchParams): Promise<Result<KubeObject> & { created: boolean }> {
    if (!isJsonObject(patch)) throw errors.badRequest('an apply patch must be a JSON or YAML object');
    if (typeof patch.apiVersion !== 'string' || patch.apiVersion === '') throw errors.badRequest('invalid object type: apiVersion must be set in the applied configuration');
    if (typeof patch.kind !== 'string' || patch.kind === '') throw errors.badRequest('invalid object type: kind must be set in the applied configuration');
    // Not defaulted: kube-apiserver merges the configuration as sent (defaults come after, owned by nobody).
    const obj = this.checkBody(patch, t, t.name);
    const stored = this.stored(obj, t.version);
    const contentType = 'application/apply-patch+yaml';
    const dryRun = new URLSearchParams(query);
    dryRun.set('dryRun', 'All');
    const trial = await this.request(caller, 'PATCH', t, t.name, dryRun, stored, contentType);
    const result = this.native(trial.json, t.version);
    this.validate(result, t.version);
    if (query.get('dryRun') === 'All') return { value: result, warnings: trial.warnings, created: trial.status === 201 };
    const a = await this.request(caller, 'PATCH', t, t.name, query, stored, contentType);
    return { value: this.native(a.json, t.version), warnings: a.warnings, created: a.status === 201 };
  }

  async delete(caller: Caller, t: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeObject | Status>> {
    const a = await this.request(caller, 'DELETE', t, t.name, query, options);
    const json = a.json;
    if (isStatus(json)) {
      return { value: statusToNative(json, this.gvr(t.version), t.name), warnings: a.warnings };
    }
    const obj = this.native(json, t.version);
    if (obj.metadata?.deletionTimestamp !== undefined && Array.isArray(obj.metadata.finalizers) && obj.metadata.finalizers.length > 0) {
      // Still there (finalizers pending): kube-apiserver returns the object.
      return { value: obj, warnings: a.warnings };
    }
    // Gone: the native kinds answer a Success Status naming it (the CRD returns the object).
    const g = this.kind.group;
    return {
      value: {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
        details: { name: t.name, ...(g ? { group: g } : {}), kind: this.kind.plural, uid: obj.metadata?.uid as string | undefined },
      },
      warnings: a.warnings,
    };
  }

  async deleteCollection(caller: Caller, t: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeList>> {
    const a = await this.request(caller, 'DELETE', t, '', this.storedQuery(query), options);
    if (!isJsonObject(a.json) || !Array.isArray(a.json.items)) {
      return { value: { apiVersion: nativeApiVersion({ group: this.kind.group, version: t.version }), kind: `${this.kind.kind}List`, metadata: {}, items: [] }, warnings: a.warnings };
    }
    const list = listToNative(a.json as KubeList, { group: this.kind.group, version: t.version });
    list.items = list.items.map((i) => this.present(i, t.version));
    return { value: list, warnings: a.warnings };
  }
}
