// The one catalogue of errors a client of `ksview serve` can see: Kubernetes `Status` objects with
// the code and reason kube-apiserver would use, so kubectl and client-go print them as usual. The
// Status type is also the shape of any Status a kube-apiserver sends (parsed JSON).
import { isJsonObject } from './json.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/**
 * metav1.Status: a Failure (an error), or a Success (a delete that is done). As a kube-apiserver
 * sends it, every field but kind may be absent (omitempty).
 */
export interface Status {
  kind: 'Status';
  apiVersion?: string;
  metadata?: Record<string, unknown>;
  status?: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** The Status of an error this server answers: a Failure with code, reason and message. */
export interface FailureStatus extends Status {
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
}

/** Whether parsed JSON is a Status (by its kind). */
export function isStatus(v: unknown): v is Status {
  return isJsonObject(v) && v.kind === 'Status';
}

export class StatusError extends Error {
  constructor(readonly status: FailureStatus) {
    super(status.message);
    this.name = 'StatusError';
  }
  get code(): number {
    return this.status.code;
  }
}

function status(code: number, reason: string, message: string, details?: StatusDetails): StatusError {
  return new StatusError({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code,
    ...(details ? { details } : {}),
  });
}

/** `<kind>.<group>` (just the kind for the core group), as kube-apiserver names a kind or resource in messages. */
const qualified = (what: { group?: string; kind: string }) => `${what.kind}${what.group ? `.${what.group}` : ''}`;

export const errors = {
  badRequest: (message: string) => status(400, 'BadRequest', message),
  unauthorized: (message = 'Unauthorized') => status(401, 'Unauthorized', message),
  forbidden: (message: string, details?: StatusDetails) => status(403, 'Forbidden', message, details),
  notFound: (what: { group?: string; kind: string; name?: string }, message?: string) => status(404, 'NotFound',
    message ?? (what.name ? `${qualified(what)} "${what.name}" not found` : 'the server could not find the requested resource'),
    { ...(what.name ? { name: what.name } : {}), ...(what.group ? { group: what.group } : {}), kind: what.kind }),
  pathNotFound: () => status(404, 'NotFound', 'the server could not find the requested resource'),
  methodNotAllowed: (method: string) => status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource: ${method}`),
  notAcceptable: (message: string) => status(406, 'NotAcceptable', message),
  requestEntityTooLarge: (limit: number) => status(413, 'RequestEntityTooLarge', `the request body is larger than the limit of ${limit} bytes`),
  /** 422 for an object that fails validation: one cause per field error. */
  invalid: (what: { group?: string; kind: string; name: string }, causes: StatusCause[]) => {
    const list = causes.map((c) => `${c.field}: ${c.message}`);
    return status(422, 'Invalid', `${qualified(what)} "${what.name}" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`,
      { name: what.name, ...(what.group ? { group: what.group } : {}), kind: what.kind, causes });
  },
  unsupportedMediaType: (type: string) => status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format: accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got ${type}`),
  /** 429, with the seconds after which to try again (also sent as Retry-After, as kube-apiserver does). */
  tooManyRequests: (message: string, retryAfterSeconds = 1) => status(429, 'TooManyRequests', message, { retryAfterSeconds }),
  internal: (message: string) => status(500, 'InternalError', `Internal error occurred: ${message}`),
  notImplemented: (message: string) => status(501, 'NotImplemented', message),
  serviceUnavailable: (message: string) => status(503, 'ServiceUnavailable', message),
  gatewayTimeout: (message: string) => status(504, 'Timeout', message),
};

const REASONS: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 406: 'NotAcceptable',
  409: 'Conflict', 410: 'Expired', 413: 'RequestEntityTooLarge', 415: 'UnsupportedMediaType', 422: 'Invalid',
  431: 'RequestHeaderFieldsTooLarge',
  429: 'TooManyRequests', 500: 'InternalError', 501: 'NotImplemented', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/** A Status for an HTTP error answered by someone else without one (e.g. a plain-text 404). */
export function statusForCode(code: number, message: string): FailureStatus {
  return status(code, REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'), message).status;
}

/** A Status for an error whose body is not a Status (plain text, HTML...): its start is the message. */
export function statusForText(code: number, text: string): FailureStatus {
  return statusForCode(code, text.trim().slice(0, 500) || `HTTP ${code}`);
}

/** Any thrown value as a Status: StatusErrors as they are, fastify's own errors by status code. */
export function toStatus(err: unknown): FailureStatus {
  if (err instanceof StatusError) return err.status;
  const e = err as { statusCode?: number; code?: string; message?: string };
  const code = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errors.requestEntityTooLarge(MAX_BODY_BYTES).status;
  if (e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return errors.unsupportedMediaType(String(e.message ?? '')).status;
  if (code === 401) return errors.unauthorized().status;
  if (code === 403) return errors.forbidden(String(e?.message ?? 'forbidden')).status;
  if (code === 404) return errors.pathNotFound().status;
  if (code === 405) return errors.methodNotAllowed('').status;
  if (code === 413) return errors.requestEntityTooLarge(MAX_BODY_BYTES).status;
  if (code === 415) return errors.unsupportedMediaType('').status;
  if (code === 429) return errors.tooManyRequests(String(e?.message ?? 'too many requests')).status;
  if (code >= 400 && code < 500) return errors.badRequest(String(e?.message ?? 'bad request')).status;
  return errors.internal(String(e?.message ?? 'unknown error')).status;
}

/** kube-apiserver's limit for a request body. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
