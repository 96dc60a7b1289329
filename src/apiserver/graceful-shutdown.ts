// Graceful shutdown of the HTTPS server, as kube-apiserver's (--shutdown-delay-duration, then
// http.Server.Shutdown): `begin()` only turns readiness off (the caller keeps serving for the
// delay, so load balancers and endpoint mirrors drop the pod before it stops answering); `drain()`
// then stops accepting connections, lets the requests in flight finish (keep-alive connections
// are closed after their answer), ends long-running responses (watches) with their last chunk so
// clients re-watch elsewhere, and after `graceMs` closes whatever is left, upgraded connections
// (exec, attach, port-forward) included, which kube-apiserver does not wait for either.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const LONG_RUNNING = Symbol('ksview.longRunning');

/** Marks a response as long-running (a watch, logs, a proxy stream): drain() ends it rather than waiting for it. */
export function markLongRunning(res: ServerResponse): void {
  (res as ServerResponse & { [LONG_RUNNING]?: boolean })[LONG_RUNNING] = true;
}

const isLongRunning = (res: ServerResponse) => (res as ServerResponse & { [LONG_RUNNING]?: boolean })[LONG_RUNNING] === true;

/** How often draining looks again at what is left. */
const POLL_MS = 50;

export class GracefulShutdown {
  private shutting = false;
  private draining = false;
  private readonly active = new Set<ServerResponse>();
  private readonly upgraded = new Set<Socket>();

  constructor(private readonly server: Server) {
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.active.add(res);
      res.once('close', () => this.active.delete(res));
      // Arrived on a kept-alive connection while draining: answered, then the connection closes.
      if (this.draining) closeConnectionAfter(res);
    });
    server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
      this.upgraded.add(socket);
      socket.once('close', () => this.upgraded.delete(socket));
    });
  }

  /** True from begin() on: /readyz answers 503. */
  get shuttingDown(): boolean {
    return this.shutting;
  }

  /** Requests in flight (tests, logs). */
  get inFlight(): number {
    return this.active.size;
  }

  begin(): void {
    this.shutting = true;
  }

  /**
   * Stops accepting, waits (at most graceMs) for the requests in flight, ends the long-running
   * ones, then closes every connection left. Resolves with how many were cut at the deadline.
   */
  async drain(graceMs: number): Promise<{ cut: number }> {
    this.begin();
    this.draining = true;
    // Stops accepting; Node also closes the connections idle now.
    this.server.close();
    for (const res of this.active) closeConnectionAfter(res);
    const deadline = Date.now() + graceMs;
    for (;;) {
      for (const res of this.active) {
        if (isLongRunning(res) && res.headersSent) endStream(res);
      }
      this.server.closeIdleConnections();
      if (this.active.size === 0) break;
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const cut = this.active.size + this.upgraded.size;
    this.server.closeAllConnections();
    for (const s of this.upgraded) s.destroy();
    return { cut };
  }
}

/**
 * Ends a streaming response with its final chunk, whatever still writes into it: later writes
 * are dropped (a write after end would be an unhandled 'error' on the response), and the
 * connection closes after it. The writer sees the response close and stops (the passthrough
 * aborts its upstream watch; a virtual watch drops its subscriptions).
 */
function endStream(res: ServerResponse): void {
  if (res.writableEnded || res.destroyed) return;
  closeConnectionAfter(res);
  res.write = (() => true) as ServerResponse['write'];
  res.end();
}

/**
 * The connection closes once this response is sent: with `Connection: close` when its headers
 * are still to go, else by Node's own flag for it (`_last`, what `shouldKeepAlive` sets when the
 * headers are written), as http.Server.Shutdown closes a connection when its request is done.
 */
function closeConnectionAfter(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  if (res.headersSent) (res as ServerResponse & { _last?: boolean })._last = true;
}
