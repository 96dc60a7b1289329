// List and watch of a virtual resource (spaces, bindings, combinedstatuses) from its
// VirtualCollection, as kube-apiserver serves a collection: ListOptions validated, a list at the
// asked resourceVersion, a watch from it (an ERROR event and the end when it is too old), BOOKMARK
// events when asked (every minute and shortly before the timeout, as kube-apiserver's watch cache
// sends them). The resource says which objects a request keeps (its selectors) and how they are
// encoded (JSON or a Table row), and, for resources whose objects speak of others (Bindings,
// CombinedStatuses), what its reader may see of each (`reader`: decided for a batch of objects
// by SubjectAccessReviews, ../auth/subject-access.ts). A watch then delivers its events in order, each
// batch shown as its reader may see it once decided: an object the reader may not see is never
// sent; a change of the reader's rights shows from the object's next event (one becoming visible
// arrives as MODIFIED, which a client-go informer adds; one becoming hidden gets no more events
// and leaves the client's cache at its next list), where kube-apiserver, which authorizes a watch
// once, would go on sending it. A watch whose reader falls MAX_PENDING_EVENTS behind is ended,
// as kube-apiserver ends a watcher that does not keep up: the client watches again.
import type { FastifyReply } from 'fastify';
import type { KubeObject } from '../../kube/objects.js';
import { toStatus, type StatusError } from '../../kube/status.js';
import { leftOutWarning } from '../auth/subject-access.js';
import { parseListOptions, tooOldEvent, type Change, type VirtualCollection } from './collection.js';
import { openWatchStream, queryBool, watchTimeoutSeconds, type WatchStream } from '../http/watch-stream.js';

/** What a reader may see of a batch of objects, and how many were left undecided (hidden). */
export interface Shown<T> {
  /** Whether the reader may see the object at all. */
  visible(o: T): boolean;
  /** A visible object as shown to the reader (a Binding without the objects they may not get). */
  show(o: T): T;
  leftOut: number;
}

/** Everything, as it is: a resource without readers' limits, or a reader who may see all. */
export const SHOW_ALL: Shown<never> = { visible: () => true, show: (o) => o, leftOut: 0 };

/** Decides, for one reader, what they may see of these objects. */
export type ReaderView<T> = (objects: readonly T[]) => Promise<Shown<T>>;

/** Live events a watch may have waiting for its reader's decisions before it is ended. */
export const MAX_PENDING_EVENTS = 1000;

export interface CollectionQuery {
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: string;
  allowWatchBookmarks?: string;
  timeoutSeconds?: string;
  continue?: string;
}

export interface Served<T extends KubeObject> {
  collection: VirtualCollection<T>;
  keep: (o: T) => boolean;
  /** The list's body: the objects kept, sorted by the caller, at resourceVersion `rv`. */
  list: (items: T[], rv: string) => unknown;
  /** What a watch event carries for one object. */
  event: (o: T) => unknown;
  /** apiVersion and kind of the BOOKMARK objects. */
  type: { apiVersion: string; kind: string };
  /** What the request's reader may see (absent: everything the selectors keep). */
  reader?: ReaderView<T>;
}

/** Answers a list (returns its body) or opens a watch on `reply` (returns `reply`). */
export async function listOrWatch<T extends KubeObject>(reply: FastifyReply, watch: boolean, q: CollectionQuery, s: Served<T>): Promise<unknown> {
  const opts = parseListOptions({ ...q, watch });
  if (!watch) {
    const { rv, items } = await s.collection.list(opts);
    const kept = items.filter(s.keep);
    if (!s.reader) return s.list(kept, String(rv));
    const shown = await s.reader(kept);
    if (shown.leftOut > 0) reply.header('warning', leftOutWarning(shown.leftOut));
    return s.list(kept.flatMap((o) => (shown.visible(o) ? [shown.show(o)] : [])), String(rv));
  }
  // A resourceVersion this collection has not reached (another replica's, a clock set back): wait
  // a little, else end with the error, so that the client lists again rather than miss changes.
  let tooLarge: unknown;
  if (opts.rv !== undefined && opts.rv > s.collection.resourceVersion()) await s.collection.reached(opts.rv).catch((err: StatusError) => { tooLarge = err.status; });
  const stream = openWatchStream(reply, q.timeoutSeconds);
  if (tooLarge) {
    stream.send('ERROR', tooLarge);
    stream.end();
    return reply;
  }
  // As kube-apiserver's watch cache: an object entering the selection is ADDED, one leaving it DELETED;
  // an object the reader may not see is outside the selection the same way, and never sent.
  const deliver = (c: Change<T>, r: Shown<T>) => {
    const seen = (o: T) => s.keep(o) && r.visible(o);
    const before = c.old !== undefined && c.type !== 'ADDED' && seen(c.old);
    if (c.type === 'DELETED') {
      if (before) stream.send('DELETED', s.event(r.show(c.object)));
    } else if (seen(c.object)) stream.send(before || c.type === 'ADDED' ? c.type : 'ADDED', s.event(r.show(c.object)));
    else if (before) stream.send('DELETED', s.event(r.show(r.visible(c.object) ? c.object : c.old!)));
  };
  const reader = s.reader;
  const pending: Change<T>[] = [];
  let draining = false;
  let live = false;
  let closed = false;
  /** Delivers the waiting events in order, each batch once the reader's decisions for it are made. */
  const drain = async () => {
    if (draining || !reader) return;
    draining = true;
    try {
      while (pending.length > 0 && !closed) {
        const batch = pending.splice(0);
        const shown = await reader(batch.flatMap((c) => (c.old ? [c.object, c.old] : [c.object])));
        if (closed) return;
        for (const c of batch) deliver(c, shown);
      }
    } catch (err) {
      stream.send('ERROR', toStatus(err));
      stream.end();
    } finally {
      draining = false;
    }
  };
  const w = s.collection.watch(opts.rv, (c) => {
    if (!reader) return deliver(c, SHOW_ALL as Shown<T>);
    pending.push(c);
    if (live && pending.length > MAX_PENDING_EVENTS) {
      stream.end();
      return;
    }
    if (live) void drain();
  });
  live = true;
  if (w.expired !== false) {
    stream.send('ERROR', tooOldEvent(opts.rv!, w.expired));
    stream.end();
    return reply;
  }
  stream.onClose(() => {
    closed = true;
    pending.length = 0;
    w.stop();
  });
  void drain();
  if (queryBool(q.allowWatchBookmarks)) {
    // A bookmark's resourceVersion must not pass events still waiting for their decisions.
    scheduleBookmarks(stream, watchTimeoutSeconds(q.timeoutSeconds), () => (draining || pending.length > 0
      ? undefined
      : { ...s.type, metadata: { resourceVersion: String(s.collection.resourceVersion()) } }));
  }
  return reply;
}

/** BOOKMARK events: every minute, and one 2 s before the watch times out (none while `bookmark` has none to give). */
function scheduleBookmarks(stream: WatchStream, timeoutSeconds: number, bookmark: () => unknown): void {
  const send = () => {
    const b = bookmark();
    if (b !== undefined) stream.send('BOOKMARK', b);
  };
  const every = setInterval(send, 60_000);
  const last = timeoutSeconds > 2 ? setTimeout(send, (timeoutSeconds - 2) * 1000) : undefined;
  stream.onClose(() => {
    clearInterval(every);
    if (last) clearTimeout(last);
  });
}
