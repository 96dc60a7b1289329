// The generic store of a denatured kind (as kubernetes/sample-apiserver's generic registry, with a
// per-kind strategy, ./denatured-strategy.ts): every verb on the native kind (./denatured-verbs.ts),
// served from the kind's denatured.kubestellar.io CRD in the WDS. Requests reach the WDS with the caller's identity headers (impersonation), so the
// WDS's RBAC on denatured.kubestellar.io decides; this store never widens. Contract:
// - inputs and outputs are native (apiVersion, names, managedFields, Status wording); the stored
//   form never leaves this module: one converter (./denatured-converter.ts) turns the live object
//   native and the registry's result stored, once each per write attempt;
// - every write (create, update, the three patch types, server-side apply) is Kubernetes' own:
//   ksview-native (./native-code.ts) runs the kind's registry on the request and the live object
//   (decoding, strict field validation, patching, defaulting, validation, update rules, field
//   manager); its result is stored with the live resourceVersion as precondition, and the whole
//   write is tried again when the WDS reports a conflict (as kube-apiserver's GuaranteedUpdate);
// - what is read is shown as kube-apiserver shows it (ksview-native's normalize);
// - one stored object that cannot be shown natively (./denatured-presenter.ts: written around the
//   view, before its admission webhook) never fails the others: a list leaves it out and names it
//   in a Warning header, a watch skips it (a deletion of it is still sent); a get of it is a 500;
// - writes the store makes carry the user extra VIEW_WRITE_EXTRA (./view-write-extra.ts), so
//   the WDS's admission webhook for direct writes leaves them to the checks made here;
// - errors are StatusError with the Status kube-apiserver would give for the native kind.
import type { Dispatcher } from 'undici';
import { LRUCache } from 'lru-cache';
import { errors, isStatus, StatusError, statusForText, type FailureStatus, type Status } from '../kube/status.js';
import { DENATURED_GROUP } from './crd-schema.js';
import { inGoOrder, StoredFormConverter } from './denatured-converter.js';
import type { DenaturedKind } from './denatured-kinds.js';
import type { KindStrategy } from './denatured-strategy.js';
import { TranslationError, type WatchEvent } from './denatured-translation.js';
import type { KubeList, KubeObject } from '../kube/objects.js';
import { shownKey, StoredObjectPresenter } from './denatured-presenter.js';
import { jsonLines } from '../kube/json-lines.js';
import type { Upstream } from '../kube/upstream.js';
import type { NativeRegistries } from './native-code.js';
import type {
  Caller, CollectionDeleter, Deleter, Getter, Lister, Result, StoredWrite, Target, Watcher, WriteRequest, Writer,
} from './denatured-verbs.js';
import { isJsonObject } from '../kube/json.js';
import { VIEW_WRITE_HEADERS } from './view-write-extra.js';
import { VALIDATION_USER } from './native-code.js';

interface Answer {
  status: number;
  warnings: string[];
  json: unknown;
}

/** As kube-apiserver's GuaranteedUpdate: a write that lost a race is computed again on the new live object. */
const MAX_WRITE_ATTEMPTS = 5;

/** The field manager ksview-native is told for writes it only validates. */
const VALIDATION_MANAGER = 'kubestellar-view-admission';

/** Metadata the WDS (or the view's annotation) sets, which a native create or update computes itself. */
const SERVER_SET = ['generation', 'managedFields'] as const;
const SERVER_SET_ON_CREATE = [...SERVER_SET, 'resourceVersion', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const;

/** How many objects' verdicts validate() keeps (by uid and resourceVersion). */
const VALIDITY_CACHE_ENTRIES = 10_000;

interface DenaturedStoreOptions {
  /** The WDS. */
  up: Upstream;
  /** What differs between denatured kinds (./denatured-strategy.ts). */
  strategy: KindStrategy;
  /** Kubernetes' own code (ksview-native): the kind's registry for writes, its normalization for reads. */
  native: NativeRegistries;
  /** Where stored objects that cannot be shown are logged (once each). */
  log?: (msg: string) => void;
}

export class DenaturedStore implements Getter, Lister, Watcher, Writer, Deleter, CollectionDeleter {
  readonly kind: DenaturedKind;
  readonly strategy: KindStrategy;
  private readonly up: Upstream;
  private readonly native: NativeRegistries;
  /** The one converter between the stored and the native form. */
  private readonly convert: StoredFormConverter;
  /** How stored objects are shown natively (and which cannot be). */
  private readonly presenter: StoredObjectPresenter;

  /** validate()'s verdicts: '' for valid, else why not. */
  private readonly validity = new LRUCache<string, string>({ max: VALIDITY_CACHE_ENTRIES });

  constructor({ up, strategy, native, log = () => undefined }: DenaturedStoreOptions) {
    this.up = up;
    this.strategy = strategy;
    this.native = native;
    this.kind = strategy.kind;
    this.convert = new StoredFormConverter(strategy);
    this.presenter = new StoredObjectPresenter({ convert: this.convert, native, plural: strategy.kind.plural, log });
  }

  private path(t: Target, name: string, query?: URLSearchParams): string {
    let p = `/apis/${DENATURED_GROUP}/${t.version}`;
    if (this.kind.namespaced && t.namespace) p += `/namespaces/${encodeURIComponent(t.namespace)}`;
    p += `/${this.kind.plural}`;
    if (name) p += `/${this.convert.storedName(name)}`;
    if (name && t.subresource) p += `/${t.subresource}`;
    const qs = query?.toString();
    return qs ? `${p}?${qs}` : p;
  }

  /** The path kube-apiserver serves the native kind at (what ksview-native is asked). */
  private nativePath(t: Target, query: URLSearchParams): string {
    let p = this.kind.group === '' ? `/api/${t.version}` : `/apis/${this.kind.group}/${t.version}`;
    if (this.kind.namespaced && t.namespace) p += `/namespaces/${encodeURIComponent(t.namespace)}`;
    p += `/${this.kind.plural}`;
    if (t.name) p += `/${encodeURIComponent(t.name)}`;
    if (t.name && t.subresource) p += `/${t.subresource}`;
    const qs = query.toString();
    return qs ? `${p}?${qs}` : p;
  }

  private async call(caller: Caller, method: string, path: string, body?: unknown, contentType = 'application/json',
    signal?: AbortSignal, longRunning = false): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string | string[]> = { ...caller.headers, accept: 'application/json' };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = contentType;
    }
    try {
      // A watch holds its connection for its life: on the long-running pool (../kube/upstream.ts).
      return await (longRunning ? this.up.longPool : this.up.pool).request({ method: method as 'GET', path: this.up.basePath + path, headers, body: payload, signal });
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
      return new StatusError(this.convert.status(json, version, name || undefined) as FailureStatus);
    }
    return new StatusError(statusForText(code, text));
  }

  async get(caller: Caller, t: Target, query: URLSearchParams): Promise<Result<KubeObject>> {
    const a = await this.request(caller, 'GET', t, t.name, query);
    return { value: await this.presenter.presentOne(a.json, t.version), warnings: a.warnings };
  }

  /** The native list, without the items that cannot be shown; Warning headers name those. */
  private async nativeList(json: unknown, version: string): Promise<Result<KubeList>> {
    if (!isJsonObject(json) || !Array.isArray(json.items)) throw errors.internal('the WDS answered a list without items');
    const { items, ...rest } = json as KubeList;
    const list = this.convert.listWithoutItems(rest, version);
    const shown = await this.presenter.present(items, version);
    list.items = shown.flatMap((s) => (s.object ? [s.object] : []));
    return { value: list, warnings: this.presenter.unreadableWarnings(shown.flatMap((s) => (s.unreadable ? [s.unreadable] : []))) };
  }

  async list(caller: Caller, t: Target, query: URLSearchParams): Promise<Result<KubeList>> {
    const a = await this.request(caller, 'GET', t, '', this.convert.storedQuery(query));
    const r = await this.nativeList(a.json, t.version);
    return { value: r.value, warnings: [...a.warnings, ...r.warnings] };
  }

  async watch(caller: Caller, t: Target, query: URLSearchParams, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<{ done: Promise<void> }> {
    const q = this.convert.storedQuery(query);
    q.set('watch', 'true');
    const res = await this.call(caller, 'GET', this.path(t, '', q), undefined, undefined, signal, true);
    if (res.statusCode !== 200) {
      const { text, json } = await DenaturedStore.bodyOf(res);
      throw this.statusError(res.statusCode, json, text, t.version);
    }
    const done = (async () => {
      try {
        for await (const line of jsonLines(res.body)) {
          const e = line as WatchEvent;
          if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') {
            const [shown] = await this.presenter.present([e.object], t.version);
            // An unreadable object is left out of the stream as out of lists (present logged it);
            // its deletion is still told, by identity, so no client keeps it for ever.
            if (shown!.object) onEvent({ type: e.type, object: shown!.object });
            else if (e.type === 'DELETED') onEvent({ type: e.type, object: this.convert.identityOnly(e.object, shown!.unreadable!, t.version) });
          } else {
            onEvent(this.convert.watchEvent(e, t.version));
          }
        }
      } catch (err) {
        if (!signal.aborted) throw err;
      }
    })();
    return { done };
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
   * A create, update, patch or apply: Kubernetes' registry computes the object on the live one,
   * then it is stored; a conflict in the WDS (another write came first) computes it again.
   */
  async write(caller: Caller, t: Target, w: WriteRequest, query: URLSearchParams): Promise<Result<KubeObject> & { code: number }> {
    const path = this.nativePath(t, query);
    const dryRun = query.getAll('dryRun').length > 0;
    let conflict: StatusError | undefined;
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const live = w.method === 'POST' ? undefined : await this.live(caller, t);
      const liveNative = live ? Buffer.from(JSON.stringify(this.convert.toNativeOrFail(live, t.version))) : undefined;
      const a = await this.native.write({ method: w.method, path, contentType: w.contentType, userAgent: w.userAgent, body: w.body, live: liveNative, user: caller.user });
      if (a.status >= 300) {
        if (isStatus(a.json)) throw new StatusError(a.json as FailureStatus);
        throw errors.internal(`ksview-native answered ${a.status}`);
      }
      const obj = a.json as KubeObject;
      if (dryRun || a.write === 'none') return { value: obj, warnings: a.warnings, code: a.status };
      try {
        const stored = await this.store(caller, t, a.write, obj, live);
        const meta = ((stored.json as KubeObject).metadata ?? {}) as KubeObject['metadata'] & object;
        // The registry's object with what the WDS assigned, as a read of it will show it.
        const value: KubeObject = { ...obj, metadata: inGoOrder({ ...obj.metadata, resourceVersion: meta.resourceVersion, uid: meta.uid, creationTimestamp: meta.creationTimestamp }) };
        const key = shownKey(t.version, stored.json);
        if (key !== undefined) this.presenter.remember(key, value);
        return { value, warnings: [...a.warnings, ...stored.warnings], code: a.status };
      } catch (err) {
        // Lost a race with another write: compute it again on what is there now (as natively).
        const raced = err instanceof StatusError && err.code === 409 && (err.status.reason === 'Conflict' || (err.status.reason === 'AlreadyExists' && w.method !== 'POST'));
        if (!raced) throw err;
        conflict = err;
      }
    }
    throw conflict!;
  }

  /**
   * Stores what the registry computed: POST of a new object, else PUT on the live one with its
   * resourceVersion. Patches and applies are stored with PUT too: a merge patch of the same change
   * took the WDS 1.7 times as long (2,000-rule ClusterRole: 353 vs 208 ms); the WDS authorizes
   * them as "update" where natively they are "patch" (docs/view.md).
   */
  private async store(caller: Caller, t: Target, kind: 'create' | 'update', obj: KubeObject, live: KubeObject | undefined): Promise<Answer> {
    const stored = this.convert.toStored(obj, t.version);
    // Checked here already: the WDS's webhook for direct writes is not called for it (./view-write-extra.ts).
    const admitted: Caller = { headers: { ...caller.headers, ...VIEW_WRITE_HEADERS } };
    if (kind === 'create' || !live) {
      delete stored.metadata!.resourceVersion;
      return this.request(admitted, 'POST', { ...t, subresource: '' }, '', undefined, stored);
    }
    stored.metadata!.resourceVersion = live.metadata?.resourceVersion;
    return this.request(admitted, 'PUT', t, t.name, undefined, stored);
  }

  /**
   * Kubernetes' verdict (the kind's registry in ksview-native, as on the view's writes) on a write
   * made to the WDS around the view, given the stored objects its admission sees: the native
   * object created, or updated from the old one (on `status`, by the status subresource's rules);
   * nothing is stored. The Status kube-apiserver would answer, or undefined when it is valid. An
   * old object that cannot be read is no base for update rules: the new one is judged as new.
   */
  async validateStored(w: StoredWrite): Promise<FailureStatus | undefined> {
    let native: KubeObject;
    try {
      native = this.convert.toNative(w.object, w.version);
    } catch (err) {
      if (!(err instanceof TranslationError)) throw err;
      const u = this.convert.unreadable(w.object, err.message);
      return errors.invalid({ group: DENATURED_GROUP, kind: this.kind.kind, name: u.stored }, [{ reason: 'FieldValueInvalid', field: 'metadata.annotations', message: `Invalid value: ${err.message}` }]).status;
    }
    let old: KubeObject | undefined;
    if (w.operation === 'UPDATE' && w.oldObject !== undefined) {
      try {
        old = this.convert.toNative(w.oldObject, w.version);
      } catch (err) {
        if (!(err instanceof TranslationError)) throw err;
      }
    }
    const meta: Record<string, unknown> = { ...native.metadata };
    for (const k of old ? SERVER_SET : SERVER_SET_ON_CREATE) delete meta[k];
    if (old) meta.resourceVersion = old.metadata?.resourceVersion;
    const body = { ...native, metadata: meta };
    const t: Target = { version: w.version, namespace: native.metadata?.namespace ?? '', name: old ? native.metadata?.name ?? '' : '', subresource: old ? w.subresource : '' };
    const a = await this.native.write({
      method: old ? 'PUT' : 'POST', path: this.nativePath(t, new URLSearchParams({ fieldManager: VALIDATION_MANAGER })),
      contentType: 'application/json', body: Buffer.from(JSON.stringify(body)), live: old ? Buffer.from(JSON.stringify(old)) : undefined,
      user: w.user ?? VALIDATION_USER,
    });
    if (a.status < 300) return undefined;
    if (isStatus(a.json) && a.json.code !== undefined && a.json.code < 500) return a.json as FailureStatus;
    throw isStatus(a.json) ? new StatusError(a.json as FailureStatus) : errors.internal(`ksview-native answered ${a.status}`);
  }

  /**
   * Why a stored object is not a valid object of its native kind (it cannot be read, or Kubernetes'
   * validation of a create refuses it), or undefined when it is: what placement asks before sending
   * one. Remembered per uid and resourceVersion; a failure of ksview-native itself is thrown.
   */
  async invalidity(stored: KubeObject, version: string): Promise<string | undefined> {
    const key = shownKey(version, stored);
    const known = key === undefined ? undefined : this.validity.get(key);
    if (known !== undefined) return known || undefined;
    const why = (await this.validateStored({ operation: 'CREATE', subresource: '', version, object: stored }))?.message ?? '';
    if (key !== undefined) this.validity.set(key, why);
    return why || undefined;
  }

  async delete(caller: Caller, t: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeObject | Status>> {
    const a = await this.request(caller, 'DELETE', t, t.name, query, options);
    const json = a.json;
    if (isStatus(json)) {
      return { value: this.convert.status(json, t.version, t.name), warnings: a.warnings };
    }
    const shown = await this.presenter.presentOrIdentity(json, t.version);
    const obj = shown.object;
    const warnings = shown.warnings.length > 0 ? [...a.warnings, ...shown.warnings] : a.warnings;
    if (obj.metadata?.deletionTimestamp !== undefined && Array.isArray(obj.metadata.finalizers) && obj.metadata.finalizers.length > 0) {
      // Still there (finalizers pending): kube-apiserver returns the object.
      return { value: obj, warnings };
    }
    // Gone: the native kinds answer a Success Status naming it (the CRD returns the object).
    const g = this.kind.group;
    return {
      value: {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
        details: { name: t.name, ...(g ? { group: g } : {}), kind: this.kind.plural, uid: obj.metadata?.uid as string | undefined },
      },
      warnings,
    };
  }

  async deleteCollection(caller: Caller, t: Target, options: unknown, query: URLSearchParams): Promise<Result<KubeList>> {
    const a = await this.request(caller, 'DELETE', t, '', this.convert.storedQuery(query), options);
    if (!isJsonObject(a.json) || !Array.isArray(a.json.items)) {
      return { value: { apiVersion: this.convert.apiVersion(t.version), kind: `${this.kind.kind}List`, metadata: {}, items: [] }, warnings: a.warnings };
    }
    const r = await this.nativeList(a.json, t.version);
    return { value: r.value, warnings: [...a.warnings, ...r.warnings] };
  }
}
