// Passthrough of HTTP/1.1 upgrades (exec, attach, port-forward over SPDY or WebSockets) under the
// view root: authenticated like every request, classified like every request, counted as a
// long-running request of its user (../http/request-limits.ts), then sent to the WDS as the end user,
// as kube-apiserver's UpgradeAwareHandler (k8s.io/apimachinery/pkg/util/proxy) does it:
// - nothing the client sent after the upgrade request's head (Node hands it over in `head`, and
//   more may follow on the socket) reaches the WDS until the WDS has switched protocols: the
//   client socket stays paused and `head` is held, because the connection to the WDS carries the
//   server's own credentials and a second request on it would run as the server, not the user;
// - the WDS's answer is read and parsed first (Node's HTTP client): a 101 is relayed with its
//   headers, then the held bytes are sent on and both sides are piped; any other answer is
//   relayed as a Status (the WDS's own when it sent one) and both connections are closed.
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { KindCategories } from '../../storage/kind-categories.js';
import type { Upstream } from '../../kube/upstream.js';
import type { Authenticator } from '../auth/authn.js';
import { upstreamHeaders } from '../auth/impersonation.js';
import type { RequestLimits } from '../http/request-limits.js';
import { assertSafePath, parseRequestInfo } from '../../kube/request-info.js';
import { ViewPaths } from '../groups/view-paths.js';
import { errors, isStatus, statusForText, toStatus, type FailureStatus, type Status } from '../../kube/status.js';

/** How long the WDS may take to answer the upgrade request (it may have to reach a kubelet first). */
const ANSWER_TIMEOUT_MS = 60_000;
/** How much of a refusal's body is read for the client: a Status is far smaller. */
const MAX_REFUSAL_BYTES = 64 * 1024;

const REASON_PHRASES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests',
  500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable',
};

/** Answers the client with `status` and closes its connection. */
function writeStatus(socket: Duplex, status: Status & { code: number }): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(status);
  const retry = status.code === 429 && status.details?.retryAfterSeconds ? `retry-after: ${status.details.retryAfterSeconds}\r\n` : '';
  socket.end(`HTTP/1.1 ${status.code} ${REASON_PHRASES[status.code] ?? status.reason ?? ''}\r\ncontent-type: application/json\r\n${retry}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export interface UpgradeOptions {
  root: string;
  up: Upstream;
  cats: KindCategories;
  authenticator: Pick<Authenticator, 'authenticate'>;
  limits: RequestLimits;
}

export function handleUpgrades(server: { on(event: 'upgrade', fn: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown },
  opts: UpgradeOptions): void {
  server.on('upgrade', (req, socket, head) => {
    // Held until the WDS has switched protocols (or forever, when it does not).
    socket.pause();
    socket.on('error', () => socket.destroy());
    upgrade(req, socket, head, opts).catch((err) => writeStatus(socket, toStatus(err)));
  });
}

async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, opts: UpgradeOptions): Promise<void> {
  const url = req.url ?? '/';
  const path = url.split('?')[0]!;
  assertSafePath(path);
  const paths = new ViewPaths(opts.root);
  // Below the root only (not the root itself), classified as the WDS would see it: a cluster's view
  // serves no upgrades, so its path goes to the WDS as it is, which has no such path.
  const below = paths.below(path);
  if (!below) throw errors.pathNotFound();
  const user = await opts.authenticator.authenticate(req);
  const info = parseRequestInfo(below);
  const category = info.isResourceRequest ? opts.cats.categorize({ group: info.group, resource: info.resource }) : 'natured';
  if (category === 'hidden') throw errors.pathNotFound();
  if (category === 'denatured') throw errors.notImplemented(`${info.resource} is a denatured kind: the view does not serve it yet`);
  // An upgrade request carries no body: bytes after its head belong to the upgraded stream.
  if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0) {
    throw errors.badRequest('an upgrade request carries no body');
  }
  if (socket.destroyed) return;
  const release = opts.limits.acquire(user, true);
  socket.once('close', release);

  const { up } = opts;
  const target = new URL(up.origin);
  const headers = upstreamHeaders(req.headers, user, up.authorization);
  delete headers['content-length'];
  headers.connection = 'Upgrade';
  headers.upgrade = String(req.headers.upgrade ?? '');
  const upReq = https.request({
    host: target.hostname, port: Number(target.port || 443), method: req.method, path: up.basePath + paths.upstreamPath(url),
    headers, agent: false, timeout: ANSWER_TIMEOUT_MS,
    ca: up.tls.ca, cert: up.tls.cert, key: up.tls.key, rejectUnauthorized: up.tls.rejectUnauthorized ?? true,
    servername: up.tls.servername ?? (net.isIP(target.hostname) ? undefined : target.hostname),
  });
  // One outcome per request: switched, refused, or failed.
  let settled = false;
  const refuse = (status: Status & { code: number }) => {
    if (settled) return;
    settled = true;
    upReq.destroy();
    writeStatus(socket, status);
  };
  // The client went away before the WDS answered: nothing more to do there.
  const onClientClose = () => upReq.destroy();
  socket.once('close', onClientClose);
  upReq.on('timeout', () => upReq.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000}s`)));
  upReq.on('error', (err) => refuse(errors.serviceUnavailable(`the WDS did not answer: ${err.message}`).status));

  upReq.on('upgrade', (res, upSocket, upHead) => {
    socket.removeListener('close', onClientClose);
    if (settled) {
      upSocket.destroy();
      return;
    }
    settled = true;
    upSocket.setTimeout(0);
    if (socket.destroyed) {
      upSocket.destroy();
      return;
    }
    // The WDS switched protocols for this user's request: from here on the bytes are that stream's.
    const lines = [`HTTP/1.1 101 ${res.statusMessage || 'Switching Protocols'}`];
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (upHead.length > 0) socket.write(upHead);
    if (head.length > 0) upSocket.write(head);
    upSocket.on('error', () => socket.destroy());
    socket.on('close', () => upSocket.destroy());
    upSocket.on('close', () => socket.destroy());
    upSocket.pipe(socket);
    socket.pipe(upSocket);
    socket.resume();
  });

  upReq.on('response', (res) => {
    // Not switched: relay the refusal, then close both connections; the held bytes are dropped.
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => refuse(refusal(res.statusCode ?? 500, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks)));
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_REFUSAL_BYTES) chunks.push(chunk.subarray(0, MAX_REFUSAL_BYTES - size));
      size += chunk.length;
      if (size >= MAX_REFUSAL_BYTES) done();
    });
    res.on('end', done);
    res.on('error', done);
  });
  upReq.end();
}

/** The Status the client gets for a WDS answer other than 101. */
function refusal(code: number, contentType: string, body: Buffer): FailureStatus | Status & { code: number } {
  if (code >= 400 && /json/.test(contentType)) {
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      if (isStatus(parsed)) return { ...parsed, code };
    } catch { /* not JSON after all: as text below */ }
  }
  if (code >= 400) return statusForText(code, body.toString('utf8'));
  return errors.internal(`the WDS did not switch protocols: it answered ${code}`).status;
}
