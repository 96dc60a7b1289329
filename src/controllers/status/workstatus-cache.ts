// The WorkStatus cache's copy of a WorkStatus (an informer transform, src/kube/informer.ts): what
// the status controller and the CombinedStatuses read — namespace (the cluster), sourceRef,
// status, statusDetails, resourceVersion, and of managedFields only when the status last changed
// (./combined-status.ts lastStatusUpdate gives the same answer after it) — with the parts that
// repeat from cluster to cluster shared (../../kube/interner.ts). At 1,000 clusters the cache
// holds 100,000 WorkStatuses, and most of them report the same status as their neighbours.
// Shared parts are frozen: readers never mutate cached objects.
import { Interner } from '../../kube/interner.js';
import type { WorkStatus } from '../../kube/ocm-api.js';
import { lastStatusUpdate } from './combined-status.js';

const shared = new Interner({ entries: 50_000, bytes: 48_000_000 });

export function slimWorkStatus(ws: WorkStatus): WorkStatus {
  const { name, namespace, resourceVersion, managedFields } = ws.metadata;
  const time = managedFields ? lastStatusUpdate(ws) : undefined;
  return {
    apiVersion: ws.apiVersion, kind: ws.kind,
    metadata: {
      name: shared.string(name), namespace: shared.string(namespace), resourceVersion,
      ...(managedFields ? { managedFields: time ? [shared.value({ operation: 'Update', subresource: 'status', time })] : [] } : {}),
    },
    spec: shared.value(ws.spec),
    ...(ws.status !== undefined ? { status: shared.value(ws.status) } : {}),
    ...(ws.statusDetails !== undefined ? { statusDetails: shared.value(ws.statusDetails) } : {}),
  } as WorkStatus;
}
