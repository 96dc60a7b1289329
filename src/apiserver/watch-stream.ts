// The response of a watch on one of this server's virtual resources (spaces, bindings): headers
// flushed at once, one JSON event per line, ended after `timeoutSeconds` (default 30 min, at most
// an hour, as kube-apiserver's --min-request-timeout range allows) or when the client leaves.
import type { FastifyReply } from 'fastify';

export interface WatchStream {
  send(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', object: unknown): void;
  /** Called once when the stream ends, whichever side ends it. */
  onClose(fn: () => void): void;
}

/** Hijacks `reply` and opens the stream; the route returns `reply` afterwards. */
export function openWatchStream(reply: FastifyReply, timeoutSeconds: string | undefined): WatchStream {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'cache-control': 'no-cache' });
  raw.flushHeaders();
  const timeout = Math.min(Number(timeoutSeconds ?? 1800) || 1800, 3600);
  const timer = setTimeout(() => raw.end(), timeout * 1000);
  raw.on('close', () => clearTimeout(timer));
  return {
    send: (type, object) => { raw.write(`${JSON.stringify({ type, object })}\n`); },
    onClose: (fn) => { raw.on('close', fn); },
  };
}

/** A boolean query parameter as Go's strconv.ParseBool reads it (kube-apiserver's `watch=`). */
export function queryBool(v: string | null | undefined): boolean {
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}
