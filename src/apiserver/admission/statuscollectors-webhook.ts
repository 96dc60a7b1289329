// The validating admission webhook for StatusCollectors (control.kubestellar.io/v1alpha1), which
// the WDS calls on every CREATE and UPDATE of one (../wds-registration.ts writes the
// ValidatingWebhookConfiguration, with --register): a
// collector whose CEL expressions or shape the status controller would refuse is denied with a
// 422 Invalid Status listing each error, in the words the collector's status.errors would use.
// So `kubectl apply` of a bad collector fails at once, as with any invalid object, instead of the
// error showing up later in its status.
//
// Only the WDS's kube-apiserver may call it: the app answers every route under /admission/ only
// for the front-proxy client certificate it presents to webhooks (../front-door.ts; configured by its
// --admission-control-config-file, charts/kubestellar-view/README.md), others get 401 or 403. It reads nothing
// and writes nothing, only compiles the spec it is sent, and what one review can cost is bounded
// by `validate` (src/controllers/status: a spec over the count and size bounds is refused by
// counting; the rest compiles in a CEL worker, never on this thread, within a deadline, reviews
// one at a time). With no validator (no status
// controller: the server runs without an ITS) every request is allowed. A request the webhook
// cannot read gets an AdmissionReview that allows it (failurePolicy Ignore's spirit: the status
// controller still reports the collector's errors) and a 400 only when no AdmissionReview uid can
// be answered.
import type { FastifyInstance } from 'fastify';
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject } from '../../kube/json.js';
import { errors, type StatusCause } from '../../kube/status.js';

export const ADMISSION_PATH = '/admission/statuscollectors';
export const WEBHOOK_NAME = 'statuscollectors.view.kubestellar.io';

/** The compile errors of a StatusCollector (none: valid), as the status controller would report them. */
export type CollectorValidator = (collector: { metadata: { name: string }; spec?: unknown }) => Promise<string[]>;

/** Which spec field an error of the compiler is about, by the words it starts with (../../controllers/status/collectors.ts's messages). */
function fieldOf(message: string): string {
  const m = /^(filter|select|groupBy|combinedField|limit)\b/.exec(message);
  if (!m) return 'spec';
  return `spec.${m[1] === 'combinedField' ? 'combinedFields' : m[1]}`;
}

/** The causes of a 422 for these compile errors. */
export function invalidCauses(errs: readonly string[]): StatusCause[] {
  return errs.map((message) => ({ reason: 'FieldValueInvalid', field: fieldOf(message), message }));
}

interface AdmissionRequest { uid?: unknown; operation?: unknown; name?: unknown; object?: unknown; oldObject?: unknown }

/**
 * The largest AdmissionReview read: a StatusCollector and its old version, far under it. Anyone
 * may call this path, so what one request can make the compiler do is bounded by it (and each
 * expression by the compiler's own limits).
 */
export const MAX_ADMISSION_BODY_BYTES = 256 * 1024;

export interface StatusCollectorsWebhookOptions {
  /** Compiles a StatusCollector (none without an ITS: all allowed). */
  validate: CollectorValidator | undefined;
}

/** POST /admission/statuscollectors, a fastify plugin. */
export async function statusCollectorsWebhook(app: FastifyInstance, { validate }: StatusCollectorsWebhookOptions): Promise<void> {
  app.post(ADMISSION_PATH, { bodyLimit: MAX_ADMISSION_BODY_BYTES }, async (req, reply) => {
    const review = req.body;
    const request = (isJsonObject(review) && isJsonObject(review.request) ? review.request : undefined) as AdmissionRequest | undefined;
    if (!request || typeof request.uid !== 'string') throw errors.badRequest('expected an admission.k8s.io/v1 AdmissionReview with request.uid');
    const answer = (response: Record<string, unknown>) => reply.send({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, ...response } });
    const obj = request.object;
    if (!validate || !isJsonObject(obj) || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return answer({ allowed: true });
    const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
    // An update that leaves the spec as it was (labels, finalizers, a deletion under way) is never
    // refused: a collector stored invalid (before the webhook, or while it did not answer) must
    // still be labelled, released and deleted.
    const old = request.oldObject;
    if (request.operation === 'UPDATE' && (meta.deletionTimestamp !== undefined || (isJsonObject(old) && isDeepStrictEqual(old.spec, obj.spec)))) return answer({ allowed: true });
    const name = typeof meta.name === 'string' ? meta.name : typeof request.name === 'string' ? request.name : '';
    let errs: string[];
    try {
      errs = await validate({ metadata: { name }, spec: obj.spec });
    } catch (err) {
      // The compiler itself failed (e.g. the CEL engine did not load): not the collector's fault.
      req.log.warn({ err }, 'statuscollector admission');
      return answer({ allowed: true, warnings: [`not validated: ${(err as Error).message}`] });
    }
    if (errs.length === 0) return answer({ allowed: true });
    const { status } = errors.invalid({ group: 'control.kubestellar.io', kind: 'StatusCollector', name }, invalidCauses(errs));
    return answer({ allowed: false, status: { status: 'Failure', code: status.code, reason: status.reason, message: status.message, details: status.details } });
  });
}
