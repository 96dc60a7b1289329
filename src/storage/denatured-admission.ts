// Admission of writes made to denatured.kubestellar.io objects straight in the WDS, around the view
// (the WDS sends each CREATE and UPDATE to ksview serve's webhook,
// src/apiserver/admission/denatured-webhook.ts; the view's own writes skip it,
// ./view-write-extra.ts). They pass the checks
// the view's write path makes, in DIRECT_WRITE_CHECKS order; the first that refuses answers:
//  1. reservedAnnotations — what the view's store sets is the view's word about the native object,
//     so a direct write cannot forge it: view.kubestellar.io/native-metadata (the native object's
//     managedFields and generation, which Kubernetes computes) is never set or changed, only kept
//     as it was or removed; view.kubestellar.io/native-name must be the name the stored name
//     encodes, and a stored name of that encoded form must carry it;
//  2. kubernetesValidation — Kubernetes' own registry of the native kind (ksview-native: create or
//     update rules, validation) on the native object, as on the view's writes; for Roles,
//     ClusterRoles and their bindings that includes Kubernetes' RBAC escalation check for the
//     writer (the review's userInfo), as on the view's writes (ksview-native's escalation.go).
// A change of metadata alone (labels, finalizers, owner references, a deletion under way) is not
// judged by Kubernetes' validation again: an object stored invalid before this admission existed
// must still be released and deleted. For the kinds whose file in ./kinds/ says 'gc-fields' (the
// RBAC kinds) "metadata alone" is Kubernetes' own notion (pkg/registry/rbac.IsOnlyMutatingGCFields:
// owner references, finalizers, managed fields): a change of labels is checked, as natively, since
// labels decide where placement sends a grant.
import { isDeepStrictEqual } from 'node:util';
import { isJsonObject } from '../kube/json.js';
import type { KubeObject } from '../kube/objects.js';
import { errors, type FailureStatus, type StatusCause } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';
import { DENATURED_GROUP } from './crd-schema.js';
import type { DenaturedStore } from './denatured-store.js';
import { isEncodedName, NATIVE_METADATA_ANNOTATION, NATIVE_NAME_ANNOTATION, storedName } from './denatured-translation.js';

/** One CREATE or UPDATE of a stored object, as the WDS's admission gives it. */
export interface DirectWrite {
  operation: 'CREATE' | 'UPDATE';
  /** '' or 'status'. */
  subresource: string;
  /** The version of the stored object (= of its native kind). */
  version: string;
  object: KubeObject;
  oldObject?: KubeObject;
  /** Who writes (for checks that depend on it). */
  user: UserInfo;
  /** The store of the kind. */
  store: DenaturedStore;
}

/** A check: the Status refusing the write, or undefined to let it pass on. */
export type DirectWriteCheck = (w: DirectWrite) => Promise<FailureStatus | undefined>;

const annotationsOf = (o: KubeObject | undefined): Record<string, unknown> =>
  (o && isJsonObject(o.metadata) && isJsonObject(o.metadata.annotations) ? o.metadata.annotations : {});

export const reservedAnnotations: DirectWriteCheck = async (w) => {
  const causes: StatusCause[] = [];
  const name = String(w.object.metadata?.name ?? '');
  const now = annotationsOf(w.object);
  const before = annotationsOf(w.oldObject);
  const metadata = now[NATIVE_METADATA_ANNOTATION];
  if (metadata !== undefined && !(w.operation === 'UPDATE' && metadata === before[NATIVE_METADATA_ANNOTATION])) {
    causes.push({
      reason: 'FieldValueForbidden', field: `metadata.annotations[${NATIVE_METADATA_ANNOTATION}]`,
      message: 'Forbidden: set only by the view (the native object\'s managedFields and generation, which Kubernetes computes); ' +
        'write the object through the view, or keep the annotation as it was or remove it',
    });
  }
  const nativeName = now[NATIVE_NAME_ANNOTATION];
  if (nativeName !== undefined && (typeof nativeName !== 'string' || storedName(nativeName) !== name)) {
    causes.push({
      reason: 'FieldValueInvalid', field: `metadata.annotations[${NATIVE_NAME_ANNOTATION}]`,
      message: `Invalid value: ${JSON.stringify(nativeName)}: must be the native name that the name ${JSON.stringify(name)} encodes (set by the view)`,
    });
  } else if (nativeName === undefined && isEncodedName(name)) {
    causes.push({
      reason: 'FieldValueInvalid', field: 'metadata.name',
      message: `Invalid value: ${JSON.stringify(name)}: names of this form are the view's encoding of a native name, and need annotation ${NATIVE_NAME_ANNOTATION}`,
    });
  }
  if (causes.length === 0) return undefined;
  return errors.invalid({ group: DENATURED_GROUP, kind: String(w.object.kind ?? w.store.kind.kind), name }, causes).status;
};

/** Whether an update changes nothing but metadata. */
function metadataOnly(w: DirectWrite): boolean {
  if (w.operation !== 'UPDATE' || !w.oldObject) return false;
  const { metadata: now, ...nowRest } = w.object;
  const { metadata: before, ...beforeRest } = w.oldObject;
  if (!isDeepStrictEqual(nowRest, beforeRest)) return false;
  return w.store.strategy.metadataOnlyUpdates !== 'gc-fields' || isDeepStrictEqual(withoutGCFields(now), withoutGCFields(before));
}

/**
 * Metadata without what Kubernetes' IsOnlyMutatingGCFields leaves out (owner references,
 * finalizers, managed fields: here also the view's annotation that carries them), nor what the
 * server sets on every write (resourceVersion, generation) or on deletion.
 */
function withoutGCFields(m: unknown): Record<string, unknown> {
  const meta: Record<string, unknown> = isJsonObject(m) ? { ...m } : {};
  for (const k of ['ownerReferences', 'finalizers', 'managedFields', 'resourceVersion', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds']) delete meta[k];
  if (isJsonObject(meta.annotations)) {
    const { [NATIVE_METADATA_ANNOTATION]: _carried, ...annotations } = meta.annotations;
    meta.annotations = annotations;
    if (Object.keys(annotations).length === 0) delete meta.annotations;
  }
  return meta;
}

export const kubernetesValidation: DirectWriteCheck = async (w) => {
  if (metadataOnly(w)) return undefined;
  return w.store.validateStored(w);
};

/** The checks of a direct write, in order. */
export const DIRECT_WRITE_CHECKS: readonly DirectWriteCheck[] = [reservedAnnotations, kubernetesValidation];

/** The first check's refusal, or undefined when every check lets the write pass. */
export async function admitDirectWrite(w: DirectWrite, checks: readonly DirectWriteCheck[] = DIRECT_WRITE_CHECKS): Promise<FailureStatus | undefined> {
  for (const check of checks) {
    const refusal = await check(w);
    if (refusal) return refusal;
  }
  return undefined;
}
