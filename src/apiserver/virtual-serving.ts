// List and watch of a virtual resource (spaces, bindings) from its VirtualCollection, as
// kube-apiserver serves a collection: ListOptions validated, a list at the asked resourceVersion,
// a watch from it (an ERROR event and the end when it is too old), BOOKMARK events when asked
// (every minute and shortly before the timeout, as kube-apiserver's watch cache sends them). The
// resource says which objects a request keeps (its selectors) and how they are encoded (JSON or a
// Table row).
import type { FastifyReply } from 'fastify';
import type { KubeObject } from '../kube/objects.js';
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
  const stream = openWatchStream(reply, q.timeoutSeconds);
  const w = s.collection.watch(opts.rv, (c) => { if (s.keep(c.object)) stream.send(c.type, s.event(c.object)); });
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
