// Passthrough of HTTP/1.1 upgrades (exec, attach, port-forward over SPDY or WebSockets) under the
// view root: authenticated like every request, classified like every request, then a raw TLS
// connection to the WDS carrying the same request as the end user, piped both ways.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import net from 'node:net';
import type { KindCategories } from '../storage/kind-categories.js';
import type { Upstream } from '../kube/upstream.js';
import type { Authenticator } from './authn.js';
import { upstreamHeaders } from './impersonation.js';
import { assertSafePath, parseRequestInfo } from '../kube/request-info.js';
import { errors, toStatus } from '../kube/status.js';

function writeStatus(socket: Duplex, err: unknown): void {
  const status = toStatus(err);
  const body = JSON.stringify(status);
  socket.end(`HTTP/1.1 ${status.code} ${status.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export function handleUpgrades(server: { on(event: 'upgrade', fn: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown },
  opts: { root: string; up: Upstream; cats: KindCategories; authenticator: Authenticator }): void {
  const target = new URL(opts.up.origin);
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    void (async () => {
      const url = req.url ?? '/';
      const path = url.split('?')[0]!;
      assertSafePath(path);
      if (!path.startsWith(`${opts.root}/`)) throw errors.pathNotFound();
      const user = await opts.authenticator.authenticate(req);
      const info = parseRequestInfo(path.slice(opts.root.length));
      const category = info.isResourceRequest ? opts.cats.categorize({ group: info.group, resource: info.resource }) : 'natured';
      if (category === 'hidden') throw errors.pathNotFound();
      if (category === 'denatured') throw errors.notImplemented(`${info.resource} is a denatured kind: the view does not serve it yet`);

      const headers = upstreamHeaders(req.headers, user, opts.up.authorization);
      headers.host = target.host;
      headers.connection = 'Upgrade';
      headers.upgrade = String(req.headers.upgrade ?? '');
      const upstreamPath = opts.up.basePath + url.slice(opts.root.length);
      const lines = [`${req.method} ${upstreamPath} HTTP/1.1`];
      for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);

      const upstream = tls.connect({
        host: target.hostname, port: Number(target.port || 443),
        ...(net.isIP(target.hostname) ? {} : { servername: target.hostname }),
        ca: opts.up.tls.ca, cert: opts.up.tls.cert, key: opts.up.tls.key, ALPNProtocols: ['http/1.1'],
      });
      upstream.on('error', (err) => {
        if (!socket.destroyed) writeStatus(socket, errors.serviceUnavailable(`the WDS did not answer: ${err.message}`));
      });
      upstream.once('secureConnect', () => {
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
    })().catch((err) => writeStatus(socket, err));
  });
}
