// The Secret types that are never sent anywhere, whatever a policy selects, in either direction:
// a ServiceAccount's token (`kubernetes.io/service-account-token`) and a bootstrap token
// (`bootstrap.kubernetes.io/token`). Both are credentials to the cluster that holds them, useful
// nowhere else and a way into it anywhere they are copied: downsync never sends a WDS's
// (../controllers/placement/system-objects.ts) and upsync never copies a WEC's (../agent/upsync/select.ts),
// even when a clause names one. Pure; one list for both sides.
import type { KubeObject } from './objects.js';

export const NEVER_SENT_SECRET_TYPES: ReadonlySet<string> = new Set(['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token']);

/** Whether a Secret (native form) is of a type that never leaves its cluster. */
export const isNeverSentSecret = (secret: KubeObject): boolean =>
  typeof secret.type === 'string' && NEVER_SENT_SECRET_TYPES.has(secret.type);
