// The status of an applied object carried in its manifest's statusFeedback values (a bundled work:
// one ManifestWork for many objects, so one status write per work, not a WorkStatus per object).
// Both sides read this one encoding: our agent writes it (agent/status/work-status-writer.ts), the status
// controller reads it back (controllers/status/reports.ts) as it reads a WorkStatus.
//
// The encoding is what OCM's schema lets a status feedback say: one JsonRaw value per top-level
// field of .status, named `view.kubestellar.io/status.<field>` (OCM's CRD caps a jsonRaw at 1,024
// characters), a count of those fields (`…/statusFields`: a reader that does not find them all takes
// nothing rather than a part), and the WorkStatus's statusDetails as an Integer and a Boolean. A
// status that does not fit — a field over 1,024 characters, more than MAX_FIELDS fields, more than
// MAX_BYTES in all, or past the work's MAX_WORK_BYTES — is not encoded: the agent writes that
// object's WorkStatus as before.
import type { JsonObject } from './objects.js';
import type { FeedbackValue, WorkStatusDetails } from './ocm-api.js';

const PREFIX = 'view.kubestellar.io/';
const FIELD = `${PREFIX}status.`;
const FIELDS = `${PREFIX}statusFields`;
const LAST_GENERATION = `${PREFIX}lastGeneration`;
const LAST_GENERATION_APPLIED = `${PREFIX}lastGenerationIsApplied`;

/** OCM's CRD: `maxLength: 1024` on a FieldValue's jsonRaw. */
export const MAX_JSON_RAW = 1024;
/** Top-level status fields carried (a Deployment has 8, a Pod 10). */
export const MAX_FIELDS = 32;
/** JSON characters of one object's status carried in its work. */
export const MAX_BYTES = 8 * 1024;

/** JSON characters of the statuses one work carries (its spec may hold 500 KiB, etcd 1.5 MiB in all). */
export const MAX_WORK_BYTES = 512 * 1024;

/** Whether a feedback value is one of ours (every other is a feedback rule's). */
export const isStatusValue = (v: FeedbackValue): boolean => v.name.startsWith(PREFIX);

/**
 * The values that carry `status` (and the details), with their JSON length; undefined when it does
 * not fit (the object's WorkStatus carries it).
 */
export function statusValues(status: JsonObject, details: WorkStatusDetails | undefined): { values: FeedbackValue[]; bytes: number } | undefined {
  const fields = Object.entries(status).filter(([, v]) => v !== undefined);
  if (fields.length > MAX_FIELDS) return undefined;
  const values: FeedbackValue[] = [{ name: FIELDS, fieldValue: { type: 'Integer', integer: fields.length } }];
  let bytes = 0;
  for (const [field, v] of fields) {
    const raw = JSON.stringify(v);
    bytes += raw.length + field.length;
    if (raw.length > MAX_JSON_RAW || bytes > MAX_BYTES) return undefined;
    values.push({ name: `${FIELD}${field}`, fieldValue: { type: 'JsonRaw', jsonRaw: raw } });
  }
  if (details) {
    values.push({ name: LAST_GENERATION, fieldValue: { type: 'Integer', integer: details.lastGeneration } });
    values.push({ name: LAST_GENERATION_APPLIED, fieldValue: { type: 'Boolean', boolean: details.lastGenerationIsApplied } });
  }
  return { values, bytes };
}

/**
 * The status (and details) that feedback values carry; undefined when they carry none (not ours, or
 * not a bundle), `{ invalid }` when they are not whole or not JSON (the report is not taken).
 */
export function statusFromValues(values: readonly FeedbackValue[] | undefined): { status: JsonObject; details?: WorkStatusDetails } | { invalid: string } | undefined {
  let count: number | undefined;
  let generation: number | undefined;
  let applied: boolean | undefined;
  const status: JsonObject = {};
  let found = 0;
  for (const v of values ?? []) {
    if (!isStatusValue(v)) continue;
    if (v.name === FIELDS) count = v.fieldValue.integer;
    else if (v.name === LAST_GENERATION) generation = v.fieldValue.integer;
    else if (v.name === LAST_GENERATION_APPLIED) applied = v.fieldValue.boolean;
    else if (v.name.startsWith(FIELD)) {
      const field = v.name.slice(FIELD.length);
      if (typeof v.fieldValue.jsonRaw !== 'string' || Object.hasOwn(status, field)) return { invalid: `its status field ${field} is not one JSON value` };
      try {
        status[field] = JSON.parse(v.fieldValue.jsonRaw) as JsonObject[string];
      } catch {
        return { invalid: `its status field ${field} is not JSON` };
      }
      found++;
    }
  }
  if (count === undefined) return found > 0 ? { invalid: 'its status fields are not counted' } : undefined;
  if (count !== found) return { invalid: `its status has ${found} of ${count} fields` };
  const details = typeof generation === 'number' && typeof applied === 'boolean' ? { lastGeneration: generation, lastGenerationIsApplied: applied } : undefined;
  return { status, ...(details ? { details } : {}) };
}
