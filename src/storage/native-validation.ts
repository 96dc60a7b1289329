// Validation of a native object against the WDS's OpenAPI v3 schema of its kind, with ajv, before
// anything is stored: the denatured CRD cannot carry every rule of the native schema (its metadata
// must be `{type: object}`, zero defaults and enums of metadata go), and clients expect the native
// kind's error shape. Each failure is a cause with a kube-style field path (`subjects[0].kind`),
// reason (FieldValueRequired, FieldValueNotSupported, FieldValueTypeInvalid, FieldValueInvalid)
// and message. Formats are not checked: kube's own validation owns them, and ajv's differ
// (int32, int64, byte). Unknown fields are not an error here: the CRD applies the request's
// fieldValidation (Strict, Warn, Ignore) to them exactly as the native kind would.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { OpenAPIV3Doc } from './crd-schema.js';

export interface FieldCause {
  reason: 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueTypeInvalid' | 'FieldValueInvalid';
  message: string;
  field: string;
}

/** One ajv instance per OpenAPI document: every kind of a group version shares the compiled refs. */
const instances = new WeakMap<OpenAPIV3Doc, Ajv>();

function ajvFor(doc: OpenAPIV3Doc): Ajv {
  let ajv = instances.get(doc);
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, validateSchema: false });
    ajv.addSchema({ $id: 'native', components: doc.components ?? {} });
    instances.set(doc, ajv);
  }
  return ajv;
}

/** `/subjects/0/kind` → `subjects[0].kind` (JSON pointer unescaping included). */
export function fieldPath(pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const p of parts) {
    if (/^\d+$/.test(p)) out += `[${p}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out;
}

/** A value as kube's field errors print it: strings quoted, others as JSON. */
function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  const s = JSON.stringify(v);
  return s === undefined ? 'null' : s.length > 100 ? `${s.slice(0, 100)}...` : s;
}

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const p of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

function causeOf(e: ErrorObject, obj: unknown): FieldCause {
  const value = valueAt(obj, e.instancePath);
  switch (e.keyword) {
    case 'required':
      return { reason: 'FieldValueRequired', message: 'Required value', field: fieldPath(e.instancePath, String((e.params as { missingProperty: string }).missingProperty)) };
    case 'enum': {
      const allowed = ((e.params as { allowedValues: unknown[] }).allowedValues).map(show).join(', ');
      return { reason: 'FieldValueNotSupported', message: `Unsupported value: ${show(value)}: supported values: ${allowed}`, field: fieldPath(e.instancePath) };
    }
    case 'type':
      return { reason: 'FieldValueTypeInvalid', message: `Invalid value: ${show(value)}: must be of type ${(e.params as { type: string }).type}`, field: fieldPath(e.instancePath) };
    default:
      return { reason: 'FieldValueInvalid', message: `Invalid value: ${show(value)}: ${e.message ?? 'invalid'}`, field: fieldPath(e.instancePath) };
  }
}

/** The validator of one kind: `validate(obj)` returns its causes, empty when valid. */
export class NativeValidator {
  private readonly fn: ValidateFunction;

  constructor(doc: OpenAPIV3Doc, schemaName: string) {
    this.fn = ajvFor(doc).compile({ $ref: `native#/components/schemas/${schemaName.replace(/~/g, '~0').replace(/\//g, '~1')}` });
  }

  validate(obj: unknown): FieldCause[] {
    if (this.fn(obj)) return [];
    const causes: FieldCause[] = [];
    const seen = new Set<string>();
    // Failed branches of an anyOf/oneOf (IntOrString, Quantity) report each branch's type error;
    // only the alternative's own error is worth showing.
    const errs = this.fn.errors ?? [];
    const alternatives = new Set(errs.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath));
    for (const e of errs) {
      if (alternatives.has(e.instancePath) && e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
      const c = causeOf(e, obj);
      if (e.keyword === 'anyOf' || e.keyword === 'oneOf') c.message = `Invalid value: ${show(valueAt(obj, e.instancePath))}: must be an integer or a string`;
      const key = `${c.field}\u0000${c.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      causes.push(c);
    }
    return causes;
  }
}
