// The response of a watch on one of this server's virtual resources (spaces, bindings,
// combinedstatuses): headers flushed at once, one JSON event per line, ended after `timeoutSeconds`
// (default 30 min, at most an hour, as kube-apiserver's --min-request-timeout range allows) or
// when the client leaves.
import type { FastifyReply } from 'fastify';

export interface WatchStream {
  send(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR', object: unknown): void;
  /** Ends the stream (after an ERROR event, as kube-apiserver does). */
  end(): void;
  /** Called once when the stream ends, whichever side ends it (at once if it has ended). */
  onClose(fn: () => void): void;
}

/** Hijacks `reply` and opens the stream; the route returns `reply` afterwards. */
export function openWatchStream(reply: FastifyReply, timeoutSeconds: string | undefined): WatchStream {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'cache-control': 'no-cache' });
  raw.flushHeaders();
  const closers: Array<() => void> = [];
  let ended = false;
  // Ending is one step, whichever side ends: no event is written after it (a write after end is
  // an 'error' on the response, which nothing would handle) and subscriptions go at once, not
  // when a slow client's socket finally closes.
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    for (const fn of closers.splice(0)) fn();
    if (!raw.writableEnded) raw.end();
  };
  const timer = setTimeout(end, watchTimeoutSeconds(timeoutSeconds) * 1000);
  raw.on('close', end);
  return {
    send: (type, object) => {
      if (ended || raw.destroyed) return;
      raw.write(`${JSON.stringify({ type, object })}\n`);
    },
    end,
    onClose: (fn) => {
      if (ended) fn();
      else closers.push(fn);
    },
  };
}

/** A boolean query parameter as Go's strconv.ParseBool reads it (kube-apiserver's `watch=`). */
export function queryBool(v: string | null | undefined): boolean {
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

/** How long a watch lasts: timeoutSeconds (default 30 min), at most an hour. */
export function watchTimeoutSeconds(timeoutSeconds: string | undefined): number {
  return Math.min(Number(timeoutSeconds ?? 1800) || 1800, 3600);
}
