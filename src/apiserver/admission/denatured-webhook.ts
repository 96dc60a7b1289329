// The validating admission webhook for writes made to denatured.kubestellar.io objects straight in
// the WDS, around the view: the WDS calls it on every CREATE and UPDATE of one (and of its status)
// but the view's own writes (../wds-registration.ts writes the ValidatingWebhookConfiguration with a
// matchCondition on the view's user extra, ../../storage/view-write-extra.ts; hosted or local alike). The checks are the view's own
// (../../storage/denatured-admission.ts: reserved annotations, Kubernetes' validation of the native
// object); a write one refuses is denied with its Status (422 Invalid, with the fields), which
// kube-apiserver passes to the client as `admission webhook "…" denied the request: …`.
//
// It fails closed, as its failurePolicy Fail: a review it cannot act on (the denatured kinds not
// synced yet, ksview-native not answering) is denied with a 503 saying why, so nothing unchecked
// is stored while the server is starting. Kinds of the group the view does not serve (a CRD left
// from another configuration) are neither shown nor sent, and are allowed with a warning.
import type { FastifyInstance } from 'fastify';
import { isJsonObject } from '../../kube/json.js';
import { admissionRequest, reviewAnswers, reviewAuthor } from './admission-review.js';
import type { KubeObject } from '../../kube/objects.js';
import { errors, StatusError } from '../../kube/status.js';
import { DENATURED_GROUP } from '../../storage/crd-schema.js';
import { admitDirectWrite } from '../../storage/denatured-admission.js';
import type { DenaturedRegistry } from '../../storage/denatured-registry.js';

export const DENATURED_ADMISSION_PATH = '/admission/denatured';
export const DENATURED_WEBHOOK_NAME = 'denatured.view.kubestellar.io';

/**
 * The largest AdmissionReview read: kube-apiserver takes request bodies up to 3 MiB, and an update's
 * review carries the object and the old one.
 */
export const MAX_DENATURED_REVIEW_BYTES = 2 * 3 * 1024 * 1024 + 64 * 1024;

export interface DenaturedWebhookOptions {
  /** The denatured kinds the view serves. */
  registry: DenaturedRegistry;
  /** Where the server's own log lines go. */
  log: (msg: string) => void;
}

/** POST /admission/denatured, a fastify plugin. */
export async function denaturedWebhook(app: FastifyInstance, { registry, log }: DenaturedWebhookOptions): Promise<void> {
  app.post(DENATURED_ADMISSION_PATH, { bodyLimit: MAX_DENATURED_REVIEW_BYTES }, async (req, reply) => {
    const review = req.body;
    const request = admissionRequest(review);
    const { answer, deny } = reviewAnswers(reply, request);
    const resource = isJsonObject(request.resource) ? request.resource : {};
    const operation = request.operation;
    const subresource = typeof request.subResource === 'string' ? request.subResource : '';
    if ((operation !== 'CREATE' && operation !== 'UPDATE') || resource.group !== DENATURED_GROUP || (subresource !== '' && subresource !== 'status')) {
      return answer({ allowed: true });
    }
    if (!isJsonObject(request.object) || (operation === 'UPDATE' && !isJsonObject(request.oldObject))) {
      return deny(errors.badRequest(`the AdmissionReview of this ${operation} carries no object${operation === 'UPDATE' ? ' or old object' : ''}`).status);
    }
    if (!registry.ready) {
      return deny(errors.serviceUnavailable(`the view's denatured kinds are not ready yet${registry.lastError ? `: ${registry.lastError}` : ''}; try again`).status);
    }
    const plural = String(resource.resource ?? '');
    const version = String(resource.version ?? '');
    const store = registry.storeForStored(plural);
    if (!store || !store.strategy.version(version)) {
      return answer({ allowed: true, warnings: [`${plural}.${DENATURED_GROUP}/${version} is not a kind the view serves: its objects are neither shown nor sent, and this one was not checked`] });
    }
    try {
      const refusal = await admitDirectWrite({
        operation, subresource, version, store, user: reviewAuthor(request.userInfo),
        object: request.object as KubeObject, oldObject: request.oldObject as KubeObject | undefined,
      });
      return refusal ? deny(refusal) : answer({ allowed: true });
    } catch (err) {
      // ksview-native restarting, or not answering: nothing unchecked is stored (failurePolicy Fail's spirit).
      const s = err instanceof StatusError ? err.status : errors.internal((err as Error).message).status;
      log(`denatured admission: ${plural}.${DENATURED_GROUP}: ${s.message}`);
      return deny(s);
    }
  });
}
