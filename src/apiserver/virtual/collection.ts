// A served collection of computed objects (a virtual resource: bindings, combinedstatuses)
// with kube-apiserver's resourceVersion semantics, as its watch cache gives them (API conventions,
// "Resource versions"; messages as kube-apiserver 1.33 words them):
// - every change (an object added, changed in content, or removed) takes the next resourceVersion;
//   an object carries the one of its last change; a removed object's last state is kept for its
//   DELETED event, stamped with the removal's resourceVersion; an object replaced by one of another
//   uid (deleted and made again between two looks) is a DELETED and an ADDED, as in etcd;
// - the last HISTORY changes (at most HISTORY_BYTES of them) are kept, each with the object it
//   replaced, so that a watch can start after any kept resourceVersion (older: 410 Expired) and a
//   list can be served exactly at one;
// - resourceVersions start from the clock (microseconds), so they keep growing across restarts of
//   the server: a client's resourceVersion from before a restart is older, never "in the future".
// Query validation (ListOptions) and the list and watch rules are here; the resource's routes
// (./read-only-resource.ts) only filter and encode. Objects are never mutated: changes replace them.
import type { KubeObject } from '../../kube/objects.js';
import { errors, StatusError, type FailureStatus } from '../../kube/status.js';

/** Changes kept for watches and exact lists: as many as kube-apiserver's watch cache keeps by default (100). */
const HISTORY = 100;
/** And at most about this much of them (JSON length of the objects kept): a large Binding is megabytes. */
const HISTORY_BYTES = 8 * 1024 * 1024;
/** How long a list asking for a resourceVersion not reached yet waits before 504, as kube-apiserver. */
const TOO_LARGE_WAIT_MS = 3000;

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change<T> {
  key: string;
  type: EventType;
  object: T;
  /** The object it replaced (undefined for ADDED). */
  old?: T;
  rv: number;
}

export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: string;
  continue?: string;
  watch: boolean;
}

/** Parsed list options: `rv` undefined when unset or "0" (any state will do). */
export interface ListRequest {
  rv: number | undefined;
  exact: boolean;
}

const withRv = <T extends KubeObject>(o: T, rv: number): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: String(rv) } });

function listOptionsInvalid(causes: { field: string; message: string; reason: string }[]): StatusError {
  const list = causes.map((c) => `${c.field}: ${c.message}`);
  return new StatusError({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 422, reason: 'Invalid',
    message: `ListOptions.meta.k8s.io "" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`,
    details: { group: 'meta.k8s.io', kind: 'ListOptions', causes },
  });
}

const forbidden = (field: string, message: string) => ({ field, reason: 'FieldValueForbidden', message: `Forbidden: ${message}` });
const notSupported = (field: string, value: string, supported: string[]) =>
  ({ field, reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}` });

/**
 * Validates the options as kube-apiserver does (ValidateListOptions of k8s.io/apimachinery, ported
 * rule for rule, with the WatchList feature gate off as in 1.33's defaults: 422), then parses the
 * resourceVersion (400 for a list, 500 with no reason for a watch, as kube-apiserver answers).
 */
export function parseListOptions(q: ListOptions): ListRequest {
  const match = q.resourceVersionMatch ?? '';
  const rvText = q.resourceVersion ?? '';
  const sendInitialEvents = q.sendInitialEvents !== undefined && q.sendInitialEvents !== '';
  const continued = (q.continue ?? '') !== '';
  const causes: { field: string; message: string; reason: string }[] = [];
  if (q.watch) {
    if (sendInitialEvents) {
      if (match !== 'NotOlderThan') causes.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
      causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
    }
    if (match !== '') {
      if (!sendInitialEvents) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') causes.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (continued) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  } else {
    if (match !== '') {
      if (rvText === '') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
      if (continued) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      if (match !== 'Exact' && match !== 'NotOlderThan') causes.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
      if (match === 'Exact' && rvText === '0') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
    if (sendInitialEvents) causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (causes.length > 0) throw listOptionsInvalid(causes);
  let rv: number | undefined;
  if (rvText !== '') {
    if (!/^\d+$/.test(rvText)) {
      const detail = `resourceVersion: Invalid value: ${JSON.stringify(rvText)}: strconv.ParseUint: parsing ${JSON.stringify(rvText)}: invalid syntax`;
      if (q.watch) throw new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: detail, code: 500 } as FailureStatus);
      throw errors.badRequest(`invalid resource version: ${detail}`);
    }
    rv = Number(rvText);
  }
  return { rv: rv === 0 ? undefined : rv, exact: match === 'Exact' };
}

export class VirtualCollection<T extends KubeObject> {
  private rv: number;
  private readonly startRv: number;
  private readonly objects = new Map<string, { obj: T; content: string }>();
  private readonly history: Change<T>[] = [];
  /** JSON length of each kept change's objects, and their sum. */
  private readonly sizes: number[] = [];
  private historyBytes = 0;
  /** Whether changes were dropped from the history (else it reaches back to the start). */
  private trimmed = false;
  private readonly listeners = new Set<(c: Change<T>) => void>();

  /** `content` tells whether an object changed (resourceVersion aside). */
  constructor(private readonly content: (o: T) => string, startRv = Date.now() * 1000) {
    this.rv = startRv;
    this.startRv = startRv;
  }

  resourceVersion(): number {
    return this.rv;
  }

  /** Whether some watch is open (a feed need not keep the collection current for nobody). */
  watched(): boolean {
    return this.listeners.size > 0;
  }

  /** Sets the object of `key` (undefined: removes it); a change in content is a new resourceVersion. */
  set(key: string, obj: T | undefined): void {
    const cur = this.objects.get(key);
    if (cur && (!obj || obj.metadata?.uid !== cur.obj.metadata?.uid)) {
      this.objects.delete(key);
      this.record({ key, type: 'DELETED', object: withRv(cur.obj, this.rv + 1), old: cur.obj, rv: this.rv + 1 }, 2 * cur.content.length);
    }
    if (!obj) return;
    const before = this.objects.get(key);
    const content = this.content(obj);
    if (before?.content === content) return;
    const stamped = withRv(obj, this.rv + 1);
    this.objects.set(key, { obj: stamped, content });
    this.record({ key, type: before ? 'MODIFIED' : 'ADDED', object: stamped, old: before?.obj, rv: this.rv + 1 }, content.length + (before?.content.length ?? 0));
  }

  get(key: string): T | undefined {
    return this.objects.get(key)?.obj;
  }

  /** The objects now, and the collection's resourceVersion. */
  current(): { rv: number; items: T[] } {
    return { rv: this.rv, items: [...this.objects.values()].map((e) => e.obj) };
  }

  /**
   * What a list answers: the current state, or exactly the one at `rv` (resourceVersionMatch=Exact,
   * 410 when older than kept); a resourceVersion not reached yet waits up to 3 s, then 504.
   */
  async list(req: ListRequest): Promise<{ rv: number; items: T[] }> {
    if (req.rv !== undefined && req.rv > this.rv) await this.reached(req.rv);
    if (!req.exact || req.rv === undefined || req.rv === this.rv) return this.current();
    if (req.rv < this.oldest()) throw expiredList();
    const state = new Map([...this.objects].map(([k, v]) => [k, v.obj]));
    for (const c of [...this.history].reverse()) {
      if (c.rv <= req.rv) break;
      if (c.type === 'ADDED') state.delete(c.key);
      else state.set(c.key, c.old!);
    }
    return { rv: req.rv, items: [...state.values()] };
  }

  /** The oldest resourceVersion whose state can still be told (every change after it is kept). */
  private oldest(): number {
    return this.trimmed ? this.history[0]!.rv - 1 : this.startRv;
  }

  /**
   * A watch: `from` undefined (resourceVersion unset or "0") starts with an ADDED of every current
   * object; else with the changes after `from` (410 when they are no longer all kept). Then every
   * change, until the returned function is called. The replay and the subscription are one step:
   * no change falls between them.
   */
  watch(from: number | undefined, onChange: (c: Change<T>) => void): { expired: false | number; stop: () => void } {
    if (from === undefined) {
      for (const [key, { obj }] of this.objects) onChange({ key, type: 'ADDED', object: obj, rv: Number(obj.metadata?.resourceVersion) });
    } else {
      const oldest = this.oldest();
      if (from < oldest) return { expired: oldest, stop: () => {} };
      for (const c of this.history) if (c.rv > from) onChange(c);
    }
    const listener = (c: Change<T>) => { if (from === undefined || c.rv > from) onChange(c); };
    this.listeners.add(listener);
    return { expired: false, stop: () => { this.listeners.delete(listener); } };
  }

  private record(c: Change<T>, size: number): void {
    this.rv = c.rv;
    this.history.push(c);
    this.sizes.push(size);
    this.historyBytes += size;
    while (this.history.length > HISTORY || (this.historyBytes > HISTORY_BYTES && this.history.length > 1)) {
      this.history.shift();
      this.historyBytes -= this.sizes.shift()!;
      this.trimmed = true;
    }
    for (const l of this.listeners) l(c);
  }

  /** Waits up to 3 s for the collection to reach `rv`; then 504 Too large resource version, as kube-apiserver. */
  async reached(rv: number): Promise<void> {
    const end = Date.now() + TOO_LARGE_WAIT_MS;
    while (this.rv < rv && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    if (this.rv < rv) {
      const err = errors.gatewayTimeout(`Timeout: Too large resource version: ${rv}, current: ${this.rv}`);
      err.status.details = { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 };
      throw err;
    }
  }
}

function expiredList(): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'The resourceVersion for the provided list is too old.', reason: 'Expired', code: 410 });
}

/** The ERROR event a watch from a resourceVersion no longer kept starts with (then it ends). */
export function tooOldEvent(from: number, oldest: number) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${oldest})`, reason: 'Expired', code: 410 };
}
