// The three patch types kube-apiserver applies to an object it holds (server-side apply is not
// here: the WDS does that on the stored form). Pure: the original is never modified.
// - application/json-patch+json (RFC 6902): fast-json-patch.
// - application/merge-patch+json (RFC 7386): written here, it is a dozen lines.
// - application/strategic-merge-patch+json: ./strategic-merge-patch.ts, with the native kind's
//   patch metadata.
// A malformed patch is PatchError 'BadRequest' (kube: 400); a well-formed one that cannot apply
// (a failed `test`, a missing path) is PatchError 'Invalid' (kube: 422 on field `patch`).
import jsonPatch from 'fast-json-patch';
import { applyStrategicMergePatch, StrategicMergePatchError, type PatchMeta } from './strategic-merge-patch.js';
import { isJsonObject } from '../kube/json.js';

export type PatchType = 'json' | 'merge' | 'strategic';

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};

export class PatchError extends Error {
  constructor(readonly reason: 'BadRequest' | 'Invalid', message: string) {
    super(message);
    this.name = 'PatchError';
  }
}


export function applyMergePatch(original: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isJsonObject(original) ? structuredClone(original) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function applyJsonPatch(original: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw new PatchError('BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  for (const op of patch) {
    const error = jsonPatch.validate([op]);
    if (error) throw new PatchError('BadRequest', `invalid JSON patch operation ${JSON.stringify(op).slice(0, 200)}: ${error.message.split('\n')[0]}`);
  }
  try {
    return jsonPatch.applyPatch(structuredClone(original), patch as jsonPatch.Operation[], true, true).newDocument;
  } catch (err) {
    throw new PatchError('Invalid', (err as Error).message.split('\n')[0] ?? 'the patch does not apply');
  }
}

export function applyPatch(type: PatchType, original: unknown, patch: unknown, meta: PatchMeta): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(original, patch);
    case 'merge':
      if (!isJsonObject(patch)) throw new PatchError('BadRequest', 'a merge patch must be a JSON object');
      return applyMergePatch(original, patch);
    case 'strategic':
      try {
        return applyStrategicMergePatch(original, patch, meta);
      } catch (err) {
        if (err instanceof StrategicMergePatchError) throw new PatchError('BadRequest', err.message);
        throw err;
      }
  }
}
