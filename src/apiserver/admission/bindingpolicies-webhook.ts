// The validating admission webhook for BindingPolicies (control.kubestellar.io/v1alpha1): who may
// name an executor (docs/placement.md, "Executor: as whom a work runs in the WEC"). A policy's works are applied in the WECs as its executor
// (`spec.executor.serviceAccount`, ../../controllers/model/executor.ts), so naming one is acting
// as it: a CREATE, or an UPDATE that changes the spec (a new downsync clause selects more objects
// for the same executor), of a policy naming ServiceAccount X is admitted only if its author may
// `impersonate` X in the WDS — a SubjectAccessReview as the author (user, groups, extra, uid from
// the AdmissionReview): verb impersonate, resource serviceaccounts in group "", X's namespace and
// name, as kube-apiserver checks `kubectl --as system:serviceaccount:NS:NAME`. So naming a
// powerful executor is itself a right an admin grants, like OCM's `execute-as` on the hub.
// A policy naming none is not this webhook's business (the server's default executor applies,
// which the admin chose).
//
// Refused: 403 Forbidden in the AdmissionReview's status, kube's Status shape and words; a
// malformed executor (a CRD without our schema) 422 Invalid. Registered with failurePolicy Fail
// (../wds-registration.ts): a review it cannot decide (the WDS does not answer the review) is denied
// with a 503, never allowed. Only the WDS's kube-apiserver may call it (../front-door.ts: every
// /admission/ route). One review costs one SubjectAccessReview (cached 10 s by the Authorizer, as
// kube's webhook authorizer caches), and reads a body of at most MAX_POLICY_REVIEW_BYTES.
import type { FastifyInstance } from 'fastify';
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject } from '../../kube/json.js';
import { admissionRequest, reviewAnswers, reviewAuthor } from './admission-review.js';
import { errors, MAX_BODY_BYTES } from '../../kube/status.js';
import { serviceAccountRefErrors } from '../../kube/service-account-ref.js';
import type { Authorizer } from '../auth/authz.js';

export const POLICY_ADMISSION_PATH = '/admission/bindingpolicies';
export const POLICY_WEBHOOK_NAME = 'bindingpolicies.view.kubestellar.io';

/**
 * A BindingPolicy and its old version: the app's limit on every body (a policy is stored in etcd,
 * at most ~1.5 MiB, so both fit).
 */
export const MAX_POLICY_REVIEW_BYTES = MAX_BODY_BYTES;

export interface BindingPoliciesWebhookOptions {
  /** Decides the author's SubjectAccessReview. */
  authorizer: Pick<Authorizer, 'decide'>;
  /** Where the server's own log lines go. */
  log: (msg: string) => void;
}

/** POST /admission/bindingpolicies, a fastify plugin. */
export async function bindingPoliciesWebhook(app: FastifyInstance, { authorizer, log }: BindingPoliciesWebhookOptions): Promise<void> {
  app.post(POLICY_ADMISSION_PATH, { bodyLimit: MAX_POLICY_REVIEW_BYTES }, async (req, reply) => {
    const review = req.body;
    const request = admissionRequest(review);
    const { answer, deny } = reviewAnswers(reply, request);
    const { operation } = request;
    if (operation !== 'CREATE' && operation !== 'UPDATE') return answer({ allowed: true });
    const obj = request.object;
    if (!isJsonObject(obj)) return deny(errors.badRequest(`the AdmissionReview of this ${operation} carries no object`).status);
    // Labels, finalizers, status, a deletion under way: the spec (what is sent, as whom) is as it was.
    if (operation === 'UPDATE' && isJsonObject(request.oldObject) && isDeepStrictEqual(request.oldObject.spec, obj.spec)) return answer({ allowed: true });
    const spec = isJsonObject(obj.spec) ? obj.spec : {};
    if (spec.executor === undefined || spec.executor === null) return answer({ allowed: true });
    const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
    const name = typeof meta.name === 'string' ? meta.name : typeof request.name === 'string' ? request.name : '';
    const executor = isJsonObject(spec.executor) ? spec.executor.serviceAccount : undefined;
    const invalid = serviceAccountRefErrors(executor, 'spec.executor.serviceAccount');
    if (invalid.length > 0) {
      return deny(errors.invalid({ group: 'control.kubestellar.io', kind: 'BindingPolicy', name }, invalid.map((e) => {
        const [field, ...rest] = e.split(': ');
        return { reason: 'FieldValueInvalid', field: field!, message: rest.join(': ') };
      })).status);
    }
    const sa = executor as { namespace: string; name: string };
    const author = reviewAuthor(request.userInfo);
    let allowed: boolean;
    try {
      allowed = (await authorizer.decide(author, { resource: { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name } })).allowed;
    } catch (err) {
      log(`bindingpolicy admission: SubjectAccessReview failed: ${(err as Error).message}`);
      return deny(errors.serviceUnavailable(`cannot tell whether User "${author.username}" may impersonate ServiceAccount ${sa.namespace}/${sa.name} (the WDS did not answer the SubjectAccessReview); try again`).status);
    }
    if (allowed) return answer({ allowed: true });
    return deny(errors.forbidden(
      `BindingPolicy "${name}" may not name executor ServiceAccount ${sa.namespace}/${sa.name}: `
      + `User "${author.username}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${sa.namespace}" `
      + `(its works would be applied in the WECs as that ServiceAccount; naming it takes the right to impersonate it)`,
      { name, group: 'control.kubestellar.io', kind: 'bindingpolicies' }).status);
  });
}
