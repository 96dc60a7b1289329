// HTTP of the denatured kinds in the view: maps a request under the view root (already
// authenticated, parsed into a RequestInfo) to a verb of the kind's store, hands write bodies to
// the store as sent (Kubernetes' own code decodes them), decodes delete options (JSON, YAML,
// protobuf through ksview-protojson), and encodes the answer as
// kube-apiserver would: JSON or YAML, a Table for `kubectl get`, a watch stream of native events
// (Tables too), Warning headers passed on, the status code of the verb. Answers are never
// protobuf (clients that send it accept JSON too).
import type { FastifyReply, FastifyRequest } from 'fastify';
import YAML from 'yaml';
import type { DenaturedRegistry } from '../../storage/denatured-registry.js';
import { DecodeError, type ProtobufDecoder } from '../../storage/protobuf-decoder.js';
import type { KindPrinter } from '../../storage/printing/printer.js';
import type { DenaturedStore } from '../../storage/denatured-store.js';
import type { Caller, Target } from '../../storage/denatured-verbs.js';
import type { KubeObject } from '../../kube/objects.js';
import type { WatchEvent } from '../../storage/denatured-translation.js';
import type { Upstream } from '../../kube/upstream.js';
import { upstreamHeaders } from '../auth/impersonation.js';
import { parseAccept, wantsTable } from '../http/negotiation.js';
import type { RequestInfo } from '../../kube/request-info.js';
import { errors, isStatus, StatusError } from '../../kube/status.js';
import { checkIncludeObject, objectsTable, type TableOptions } from '../http/table.js';
import type { UserInfo } from '../../kube/user.js';
import { bodyOf } from '../http/request-state.js';
import { queryBool } from '../http/watch-stream.js';

const BODY_HEADERS = /^(content-type|content-length|content-encoding|accept|accept-encoding)$/i;

type Encoding = 'json' | 'yaml';

/** JSON unless the client prefers YAML; 406 for a client that takes neither (protobuf only). */
function encodingFor(accept: string | undefined): Encoding {
  const types = parseAccept(accept);
  if (types.length === 0) return 'json';
  for (const m of types) {
    if (m.params.as && m.params.as !== 'Table') continue;
    if (m.type === 'application/json' || m.type === '*/*' || m.type === 'application/*') return 'json';
    if (m.type === 'application/yaml') return 'yaml';
  }
  throw errors.notAcceptable('only the following media types are accepted: application/json, application/yaml, application/json;as=Table;v=v1;g=meta.k8s.io');
}

const unsupported = (message: string) => new StatusError({ ...errors.unsupportedMediaType('').status, message });

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

async function decodeBody(contentType: string, raw: Buffer | undefined, allowed: readonly string[], protobuf?: ProtobufDecoder): Promise<unknown> {
  // No Content-Type is JSON, as for kube-apiserver (kubectl create --raw sends none).
  const type = contentType.split(';')[0]!.trim().toLowerCase() || 'application/json';
  if (!raw || raw.length === 0) return undefined;
  if (type === PROTOBUF && protobuf && allowed.includes('application/json')) {
    try {
      return await protobuf.decode(raw);
    } catch (err) {
      if (err instanceof DecodeError) throw errors.badRequest(`the protobuf body could not be decoded: ${err.message}`);
      throw errors.internal(`decoding a protobuf body: ${(err as Error).message}`);
    }
  }
  if (!allowed.includes(type)) {
    if (type.includes('protobuf')) {
      // Typed clients (kubectl create clusterrole, client-go clientsets) default to protobuf.
      throw unsupported(`the body of the request was in an unknown format - accepted media types include: ${allowed.join(', ')} ` +
        `(${type} is not decoded for kinds the view stores denatured: send JSON, e.g. kubectl apply/create -f)`);
    }
    throw unsupported(`the body of the request was in an unknown format - accepted media types include: ${allowed.join(', ')}`);
  }
  const text = raw.toString('utf8');
  try {
    if (type.endsWith('json')) return JSON.parse(text);
    return YAML.parse(text);
  } catch (err) {
    throw errors.badRequest(`the request body is not valid ${type.endsWith('json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
}

function send(reply: FastifyReply, code: number, value: unknown, encoding: Encoding, warnings: string[]): FastifyReply {
  // One header line per warning, as kube-apiserver sends them (a second reply.header would replace the first).
  if (warnings.length > 0) void reply.header('warning', warnings);
  if (encoding === 'yaml') return reply.code(code).header('content-type', 'application/yaml').send(YAML.stringify(value));
  return reply.code(code).header('content-type', 'application/json').send(JSON.stringify(value));
}

export interface DenaturedContext {
  registry: DenaturedRegistry;
  up: Upstream;
  /** Decoder of protobuf bodies; without one they are 415. */
  protobuf?: ProtobufDecoder;
}

/** Serves one request on a denatured kind; `user` is the authenticated caller. */
export async function handleDenatured(req: FastifyRequest, reply: FastifyReply, info: RequestInfo, user: UserInfo, ctx: DenaturedContext): Promise<FastifyReply> {
  const store = ctx.registry.storeFor(info.group, info.resource);
  if (!store) {
    if (!ctx.registry.ready) {
      throw errors.serviceUnavailable(`denatured kinds are not ready yet${ctx.registry.lastError ? `: ${ctx.registry.lastError}` : ''}`);
    }
    throw errors.pathNotFound();
  }
  const kind = store.kind;
  if (!store.strategy.version(info.version)) throw errors.pathNotFound();
  if (!kind.namespaced && info.namespace) throw errors.pathNotFound();
  if (info.subresource && !(info.subresource === 'status' && kind.hasStatus)) throw errors.pathNotFound();

  const query = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  const dryRun = query.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All')) throw errors.badRequest(`dryRun: Unsupported value: "${dryRun.find((d) => d !== 'All')}": supported values: "All"`);
  const incoming: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!BODY_HEADERS.test(k)) incoming[k] = v;
  const caller: Caller = { headers: upstreamHeaders(incoming, user, ctx.up.authorization), user };
  const target: Target = { version: info.version, namespace: info.namespace, name: info.name, subresource: info.subresource };
  const contentType = String(req.headers['content-type'] ?? '');
  const raw = bodyOf(req);
  const method = req.method.toUpperCase();

  if (method === 'GET') {
    const table = wantsTable(req.headers.accept);
    const encoding = table ? 'json' : encodingFor(req.headers.accept);
    const includeObject = query.get('includeObject') ?? undefined;
    checkIncludeObject(includeObject);
    query.delete('includeObject');
    const printer = store.strategy.printer;
    const tableOpts: TableOptions | undefined = table ? { version: table, includeObject } : undefined;
    if (target.name && !info.legacyWatch && !queryBool(query.get('watch'))) {
      const r = await store.get(caller, target, query);
      return send(reply, 200, tableOpts ? objectsTable([r.value], printer, tableOpts) : r.value, encoding, r.warnings);
    }
    if (info.legacyWatch || queryBool(query.get('watch'))) {
      if (target.name) {
        // A watch of one object is a watch of the collection narrowed to its name.
        const fs = query.get('fieldSelector');
        query.set('fieldSelector', `metadata.name=${target.name}${fs ? `,${fs}` : ''}`);
      }
      return watch(reply, store, caller, { ...target, name: '' }, query, tableOpts, encoding, printer);
    }
    const r = await store.list(caller, target, query);
    const value = tableOpts ? objectsTable(store.strategy.tableOrder(r.value.items), printer, tableOpts, r.value.metadata ?? {}) : r.value;
    return send(reply, 200, value, encoding, r.warnings);
  }

  const encoding = encodingFor(req.headers.accept);
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
    // Collections take POST, objects PUT and PATCH; the body is Kubernetes' own to decode (ksview-native).
    const collection = !target.name;
    if (method === 'POST' ? !collection || (kind.namespaced && !target.namespace) : collection) throw errors.methodNotAllowed(method);
    const userAgent = req.headers['user-agent'];
    const r = await store.write(caller, target, { method, contentType, body: raw ?? Buffer.alloc(0), userAgent }, query);
    return send(reply, r.code, r.value, encoding, r.warnings);
  }
  if (method === 'DELETE') {
    const options = await decodeBody(contentType || 'application/json', raw, ['application/json', 'application/yaml'], ctx.protobuf);
    if (target.name) {
      const r = await store.delete(caller, target, options, query);
      const pending = !isStatus(r.value);
      return send(reply, pending ? 202 : 200, r.value, encoding, r.warnings);
    }
    if (target.subresource) throw errors.methodNotAllowed(method);
    const r = await store.deleteCollection(caller, target, options, query);
    return send(reply, 200, r.value, encoding, r.warnings);
  }
  throw errors.methodNotAllowed(method);
}

/** Streams native watch events (as Tables when asked) until the WDS ends the watch or the client leaves. */
async function watch(reply: FastifyReply, store: DenaturedStore, caller: Caller, target: Target,
  query: URLSearchParams, tableOpts: TableOptions | undefined, encoding: Encoding, printer: KindPrinter): Promise<FastifyReply> {
  const abort = new AbortController();
  const raw = reply.raw;
  let first = true;
  const encode = (e: WatchEvent): string => {
    let out: WatchEvent = e;
    if (tableOpts && (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED')) {
      out = { type: e.type, object: objectsTable([e.object as KubeObject], printer, { ...tableOpts, noHeaders: !first }) as unknown as KubeObject };
      first = false;
    }
    return encoding === 'yaml' ? `---\n${YAML.stringify(out)}` : `${JSON.stringify(out)}\n`;
  };
  const { done } = await store.watch(caller, target, query, (e) => { raw.write(encode(e)); }, abort.signal);
  reply.hijack();
  raw.writeHead(200, { 'content-type': encoding === 'yaml' ? 'application/yaml' : 'application/json', 'transfer-encoding': 'chunked', 'cache-control': 'no-cache, private' });
  raw.flushHeaders();
  raw.on('close', () => abort.abort());
  done.catch(() => { /* the WDS cut the stream: the client re-watches, as after any watch end */ })
    .finally(() => { if (!raw.writableEnded) raw.end(); });
  return reply;
}
