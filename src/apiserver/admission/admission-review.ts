// What the server's validating admission webhooks (./denatured-webhook.ts, ./bindingpolicies-webhook.ts)
// share of admission.k8s.io/v1 AdmissionReview: the request read defensively (the WDS's
// kube-apiserver sends it, but its object is whatever a writer put there), the author as a
// UserInfo, and the answer — allowed, or denied with a Status that kube-apiserver hands to the
// client as `admission webhook "…" denied the request: …`.
import type { FastifyReply } from 'fastify';
import { isJsonObject } from '../../kube/json.js';
import { errors, type FailureStatus } from '../../kube/status.js';
import type { UserInfo } from '../../kube/user.js';

export interface AdmissionRequest {
  uid: string;
  operation?: unknown; name?: unknown; resource?: unknown; subResource?: unknown;
  object?: unknown; oldObject?: unknown; userInfo?: unknown;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The request of an AdmissionReview; a 400 Status when the body is not one. */
export function admissionRequest(review: unknown): AdmissionRequest {
  const request = isJsonObject(review) && isJsonObject(review.request) ? review.request : undefined;
  if (!request || typeof request.uid !== 'string') throw errors.badRequest('expected an admission.k8s.io/v1 AdmissionReview with request.uid');
  return request as unknown as AdmissionRequest;
}

/** The author of the reviewed request, as the AdmissionReview's userInfo describes them. */
export function reviewAuthor(v: unknown): UserInfo {
  const u = isJsonObject(v) ? v : {};
  const extra: Record<string, string[]> = {};
  if (isJsonObject(u.extra)) for (const [k, x] of Object.entries(u.extra)) extra[k] = strings(x);
  return { username: typeof u.username === 'string' ? u.username : '', ...(typeof u.uid === 'string' ? { uid: u.uid } : {}), groups: strings(u.groups), extra };
}

/** The answers to one review: `answer` (allowed, with warnings or not), or `deny` with a Status. */
export function reviewAnswers(reply: FastifyReply, request: AdmissionRequest) {
  const answer = (response: Record<string, unknown>) =>
    reply.send({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, ...response } });
  return {
    answer,
    deny: (s: FailureStatus) => answer({
      allowed: false, status: { status: 'Failure', code: s.code, reason: s.reason, message: s.message, ...(s.details ? { details: s.details } : {}) },
    }),
  };
}
