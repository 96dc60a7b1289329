// The facts of one native kind that the view stores denatured, as this project writes them down:
// one file per kind in this folder holds all of them, ./index.ts lists the kinds. What the WDS
// says of the kind is discovered at run time instead (../denatured-kinds.ts): its versions, scope,
// status subresource and shape (the OpenAPI schema its CRD is made from, ../crd-schema.ts), so a
// WDS of another Kubernetes version is served as it serves the kind.
import type { KubeObject } from '../../kube/objects.js';
import type { KindPrinter } from '../printing/printer.js';

/** Which updates of metadata alone are not judged by Kubernetes' validation again (KindFacts.metadataOnlyUpdates). */
export type MetadataOnlyUpdates = 'any' | 'gc-fields';

export interface KindFacts {
  /** The native group ('' for core) and resource (plural), as discovery names them. */
  group: string;
  resource: string;
  /** Its Table (`kubectl get`), exactly as kube-apiserver v1.33 prints the kind. */
  printer: KindPrinter;
  /** The order kube-apiserver prints a list's Table in; list order when absent. */
  tableOrder?(items: readonly KubeObject[]): KubeObject[];
  /**
   * Whether an object of the kind (native form) belongs to the WDS itself and is never sent,
   * whatever a policy selects (src/controllers/placement/system-objects.ts); `direct`: written to
   * the WDS natively, not through the view (a user's object, whatever its name). Absent: never.
   */
  isSystemObject?(obj: KubeObject, direct: boolean): boolean;
  /**
   * Which updates of a stored object written around the view count as changing metadata alone,
   * and so are not judged by Kubernetes' validation again (../denatured-admission.ts): any change
   * of metadata (the default), or only of the 'gc-fields' (owner references, finalizers, managed
   * fields: pkg/registry/rbac.IsOnlyMutatingGCFields), so that a change of labels is checked.
   */
  metadataOnlyUpdates?: MetadataOnlyUpdates;
}
