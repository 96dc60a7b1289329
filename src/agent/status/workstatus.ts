// Pure builder of the KubeStellar WorkStatus of one applied object (the ManifestWork status is
// ./work-conditions.ts's). With the WDS generation the work was made from (its annotation
// view.kubestellar.io/source-generation), the WorkStatus also says, in KubeStellar's statusDetails,
// whether that generation is in effect in the WEC: applied and, for a kind whose status has an
// observedGeneration, observed by the WEC's controller. The status carried is bounded (the ITS
// refuses a larger WorkStatus from an agent: manifests/its/mailbox-bounds.yaml): past the bound,
// the largest top-level fields are left out and named in an annotation.
import { SOURCE_GENERATION_ANNOTATION, SOURCE_GENERATIONS_ANNOTATION, type ManifestWork, type WorkStatus, type WorkStatusDetails } from '../../kube/ocm-api.js';
import type { JsonObject } from '../../kube/objects.js';
import type { ManifestApplyResult } from '../shared/contract.js';

export const WORKSTATUS_WORK_LABEL = 'transport.kubestellar.io/manifestwork';
/** On a WorkStatus whose status was cut to the bound: the top-level fields left out. */
export const STATUS_TRUNCATED_ANNOTATION = 'view.kubestellar.io/status-truncated';
/**
 * Bytes of JSON of the status a WorkStatus carries, at most. The ITS admits 64 KiB of a whole
 * WorkStatus from an agent, managedFields included, and those (server-side apply's record of the
 * status's fields) can be nearly as large as the status's keys: so well under half of it.
 */
export const MAX_STATUS_BYTES = 24 * 1024;
/** The annotation names at most this much of the fields left out (their names come from the WEC). */
const MAX_TRUNCATED_NAMES = 256;

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

/**
 * The status within MAX_STATUS_BYTES: as it is when it fits, else its top-level fields smallest
 * first while they fit (conditions and counters are small, what overflows is rarely what a reader
 * checks first), with the names of those left out.
 */
export function boundedStatus(status: JsonObject): { status: JsonObject; dropped: string[] } {
  if (jsonBytes(status) <= MAX_STATUS_BYTES) return { status, dropped: [] };
  const fields = Object.entries(status).map(([k, v]) => ({ k, v, bytes: jsonBytes({ [k]: v }) })).sort((a, b) => a.bytes - b.bytes);
  const kept: JsonObject = {};
  const dropped: string[] = [];
  let bytes = 2;
  for (const f of fields) {
    if (bytes + f.bytes - 1 <= MAX_STATUS_BYTES) {
      kept[f.k] = f.v;
      bytes += f.bytes - 1;
    } else dropped.push(f.k);
  }
  return { status: kept, dropped: dropped.sort() };
}

const truncatedNames = (dropped: string[]): string => {
  const all = dropped.join(',');
  return all.length <= MAX_TRUNCATED_NAMES ? all : `${all.slice(0, MAX_TRUNCATED_NAMES)}…`;
};

/**
 * The WorkStatus name for one applied object: `<kind>-<namespace>-<name>` lowercased
 * (`<kind>-<name>` when cluster-scoped), in the mailbox namespace.
 */
export function workStatusName(r: { kind: string; namespace: string; name: string }): string {
  const parts = [r.kind.toLowerCase(), ...(r.namespace ? [r.namespace] : []), r.name];
  return parts.join('-').slice(0, 253);
}

const generationOf = (v: unknown): number | undefined => {
  const n = typeof v === 'string' || typeof v === 'number' ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/**
 * The WDS generation each manifest of a work was made from, by ordinal (undefined: the work does not
 * say, e.g. KubeStellar's own): a bundled work says it per manifest, a work of one object for its
 * one; the annotation is read once per work.
 */
export function sourceGenerations(work: ManifestWork | undefined): (ordinal: number) => number | undefined {
  const many = work?.metadata.annotations?.[SOURCE_GENERATIONS_ANNOTATION];
  if (many !== undefined) {
    let list: unknown;
    try {
      list = JSON.parse(many);
    } catch {
      list = undefined;
    }
    return (ordinal) => (Array.isArray(list) ? generationOf(list[ordinal]) : undefined);
  }
  const one = generationOf(work?.metadata.annotations?.[SOURCE_GENERATION_ANNOTATION]);
  return (ordinal) => (ordinal === 0 ? one : undefined);
}

/** What of a work names the WDS generations of its manifests (a change of it is a change of what its WorkStatuses say). */
export const sourceGenerationsOf = (work: ManifestWork | undefined): string =>
  `${work?.metadata.annotations?.[SOURCE_GENERATION_ANNOTATION] ?? ''}|${work?.metadata.annotations?.[SOURCE_GENERATIONS_ANNOTATION] ?? ''}`;

/** Whether the applied object's status is of its current spec (no observedGeneration: nothing says otherwise). */
function observed(r: ManifestApplyResult): boolean {
  const seen = (r.live?.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  if (typeof seen !== 'number') return true;
  return seen >= (r.live?.metadata?.generation ?? 0);
}

/** The WorkStatus of the object of `r` (its full .status), or undefined when nothing was applied. */
export function buildWorkStatusObject(cluster: string, workName: string, r: ManifestApplyResult, generation?: number): WorkStatus | undefined {
  if (!r.owned || !r.live) return undefined;
  const m = r.resourceMeta;
  const full = (r.live.status && typeof r.live.status === 'object' ? r.live.status : {}) as JsonObject;
  const { status, dropped } = boundedStatus(full);
  const applied = r.conditions.some((c) => c.type === 'Applied' && c.status === 'True');
  const details: WorkStatusDetails | undefined = generation !== undefined ? { lastGeneration: generation, lastGenerationIsApplied: applied && observed(r) } : undefined;
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1',
    kind: 'WorkStatus',
    metadata: {
      name: workStatusName(m), namespace: cluster, labels: { [WORKSTATUS_WORK_LABEL]: workName },
      ...(dropped.length > 0 ? { annotations: { [STATUS_TRUNCATED_ANNOTATION]: truncatedNames(dropped) } } : {}),
    },
    spec: { sourceRef: { group: m.group, version: m.version, resource: m.resource, kind: m.kind, namespace: m.namespace, name: m.name } },
    ...(details ? { statusDetails: details } : {}),
    status,
  };
}
