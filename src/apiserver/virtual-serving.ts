// List and watch of a virtual resource (spaces, bindings, combinedstatuses) from its
// VirtualCollection, as kube-apiserver serves a collection: ListOptions validated, a list at the
// asked resourceVersion, a watch from it (an ERROR event and the end when it is too old), BOOKMARK
// events when asked (every minute and shortly before the timeout, as kube-apiserver's watch cache
// sends them). The resource says which objects a request keeps (its selectors) and how they are
// encoded (JSON or a Table row).
import type { FastifyReply } from 'fastify';
import type { KubeObject } from '../kube/objects.js';
import type { StatusError } from '../kube/status.js';
import { parseListOptions, tooOldEvent, type VirtualCollection } from './virtual-collection.js';
import { openWatchStream, queryBool, watchTimeoutSeconds, type WatchStream } from './watch-stream.js';

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
}

/** Answers a list (returns its body) or opens a watch on `reply` (returns `reply`). */
export async function listOrWatch<T extends KubeObject>(reply: FastifyReply, watch: boolean, q: CollectionQuery, s: Served<T>): Promise<unknown> {
  const opts = parseListOptions({ ...q, watch });
  if (!watch) {
    const { rv, items } = await s.collection.list(opts);
    return s.list(items.filter(s.keep), String(rv));
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
  // As kube-apiserver's watch cache: an object entering the selection is ADDED, one leaving it DELETED.
  const w = s.collection.watch(opts.rv, (c) => {
    const now = c.type !== 'DELETED' && s.keep(c.object);
    const before = c.old !== undefined && c.type !== 'ADDED' && s.keep(c.old);
    if (c.type === 'DELETED') {
      if (before) stream.send('DELETED', s.event(c.object));
    } else if (now) stream.send(before || c.type === 'ADDED' ? c.type : 'ADDED', s.event(c.object));
    else if (before) stream.send('DELETED', s.event(c.object));
  });
  if (w.expired !== false) {
    stream.send('ERROR', tooOldEvent(opts.rv!, w.expired));
    stream.end();
    return reply;
  }
  stream.onClose(w.stop);
  if (queryBool(q.allowWatchBookmarks)) {
    scheduleBookmarks(stream, watchTimeoutSeconds(q.timeoutSeconds), () => ({ ...s.type, metadata: { resourceVersion: String(s.collection.resourceVersion()) } }));
  }
  return reply;
}

/** BOOKMARK events: every minute, and one 2 s before the watch times out. */
function scheduleBookmarks(stream: WatchStream, timeoutSeconds: number, bookmark: () => unknown): void {
  const every = setInterval(() => stream.send('BOOKMARK', bookmark()), 60_000);
  const last = timeoutSeconds > 2 ? setTimeout(() => stream.send('BOOKMARK', bookmark()), (timeoutSeconds - 2) * 1000) : undefined;
  stream.onClose(() => {
    clearInterval(every);
    if (last) clearTimeout(last);
  });
}
