// Passthrough of one request on a natured kind to the WDS, as the end user: method, path (the view
// root replaced by the WDS's base path), query, the client's headers minus credentials and
// hop-by-hop ones plus impersonation, and the body fastify buffered and checked. It goes out on one
// of the WDS's undici Pools through `dispatch` (long-running requests, which hold a connection for
// their life, on the pool kept for them), and the answer is written to the client as it arrives:
// headers at once (a watch's come before its first event, as kube-apiserver flushes them), chunks
// with backpressure, the upstream request aborted when the client goes away. Nothing is parsed or
// re-encoded on the way, except error answers kube-apiserver gives in plain text (an unknown
// group's path), which become a Status; a WDS that does not answer is a 503 Status.
//
// This is the view's hot path: no stream objects, no per-request closures beyond the handler, no
// logging. The whole cost is measured by bench/view-latency.ts (KSVIEW − IMPERSONATE).
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Dispatcher } from 'undici';
import type { Upstream } from '../../kube/upstream.js';
import { errors, statusForText, type FailureStatus } from '../../kube/status.js';
import type { UserInfo } from '../../kube/user.js';
import { upstreamHeaders, withoutHeaders } from '../auth/impersonation.js';

/** Hop-by-hop headers of an answer: Node frames the response to the client itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'http2-settings', 'trailer']);

/** How much of a plain-text error answer goes into the Status message. */
const ERROR_TEXT_LIMIT = 64 * 1024;

const isStructured = (contentType: string | string[] | undefined) => /json|protobuf|yaml/.test(String(contentType ?? ''));

export interface PassthroughRequest {
  method: string;
  /** Path and query on the WDS (base path included). */
  path: string;
  headers: IncomingHttpHeaders;
  /** The buffered body (absent for bodiless methods). */
  body?: Buffer;
  user: UserInfo;
  /** A watch, logs, ...: it holds its connection for as long as it lasts. */
  longRunning?: boolean;
}

/** Sends `req` to the WDS and streams the answer to `reply`. Never throws: failures are answered as a Status. */
export function passThrough(up: Upstream, req: PassthroughRequest, reply: FastifyReply): void {
  const headers = upstreamHeaders(req.headers, req.user, up.authorization);
  if (req.body) headers['content-length'] = String(req.body.length);
  else delete headers['content-length'];
  const handler = new ResponseHandler(reply);
  try {
    (req.longRunning ? up.longPool : up.pool).dispatch({ method: req.method as Dispatcher.HttpMethod, path: req.path, headers, body: req.body ?? null }, handler);
  } catch (err) {
    // Refused before it went out (a closed pool, a header undici will not send): the same answer.
    handler.onResponseError(undefined, err as Error);
  }
}

const hopByHop = (name: string) => HOP_BY_HOP.has(name);

/** undici's dispatch handler: one per request, writing straight to the client's ServerResponse. */
class ResponseHandler implements Dispatcher.DispatchHandler {
  private readonly res: ServerResponse;
  private controller?: Dispatcher.DispatchController;
  /** Set while an error answer in plain text is collected for its Status. */
  private errorText?: { code: number; text: string };
  /** The WDS answered (its status line and headers came). */
  private answered = false;
  private done = false;

  constructor(private readonly reply: FastifyReply) {
    this.res = reply.raw;
    this.res.once('close', this.onClientClose);
  }

  /** The client went away first: stop the upstream request (a watch would otherwise stay open). */
  private readonly onClientClose = () => {
    if (!this.done) this.controller?.abort(new Error('the client closed the connection'));
  };

  private readonly onDrain = () => this.controller?.resume();

  /** Answers with a Status; once the answer has begun, only breaking the connection can tell the client. */
  private fail(status: FailureStatus): void {
    if (this.res.destroyed) return;
    if (this.res.headersSent) {
      this.res.destroy();
      return;
    }
    void this.reply.code(status.code).header('content-type', 'application/json').send(status);
  }

  private finish(): void {
    this.done = true;
    this.res.removeListener('close', this.onClientClose);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.res.destroyed) controller.abort(new Error('the client closed the connection'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // informational: the final answer follows
    this.answered = true;
    if (statusCode >= 400 && !isStructured(headers['content-type'])) {
      // kube-apiserver answers some errors in plain text; a client of the view always gets a Status.
      this.errorText = { code: statusCode, text: '' };
      return;
    }
    try {
      this.res.writeHead(statusCode, withoutHeaders(headers, hopByHop));
    } catch (err) {
      // A header Node will not write: nothing was sent yet, so the client still gets a Status.
      controller.abort(err as Error);
      return;
    }
    this.reply.hijack();
    // A streaming answer (watch, logs -f): the headers go out now, not with the first event.
    if (headers['content-length'] === undefined) this.res.flushHeaders();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.errorText) {
      if (this.errorText.text.length < ERROR_TEXT_LIMIT) this.errorText.text += chunk.toString('utf8');
      return;
    }
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', this.onDrain);
    }
  }

  onResponseEnd(): void {
    this.finish();
    if (this.errorText) {
      const { code, text } = this.errorText;
      this.fail(statusForText(code, text));
      return;
    }
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.errorText) {
      // The rest of a plain-text error answer is lost; what came is still the best message.
      this.onResponseEnd();
      return;
    }
    this.finish();
    this.fail(this.answered
      ? errors.internal(`the answer of the WDS could not be passed on: ${error.message}`).status
      : errors.serviceUnavailable(`the WDS did not answer: ${error.message}`).status);
  }
}
