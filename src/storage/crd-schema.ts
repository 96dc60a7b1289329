// Structural CRD schemas converted from the WDS's own OpenAPI v3 for a native kind, so that a
// "denatured" copy of the kind (same kind, scope and version, group denatured.kubestellar.io)
// validates, prunes and merges under server-side apply as the native kind does.
//
// What a CRD accepts (apiextensions-apiserver): a structural schema, i.e. no $ref, a `type`
// everywhere except on x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields nodes,
// no `type`, `default`, `description`, `nullable` or x-kubernetes-* inside anyOf/allOf/oneOf/not
// (the only exception being the int-or-string `anyOf: [{type: integer}, {type: string}]`), root
// `metadata` exactly `{type: object}` (bar name/generateName restrictions), `apiVersion`/`kind`
// strings, no additionalProperties at the root nor next to properties, defaults that validate.
import { isJsonObject } from '../kube/json.js';
import { labelValueErrors } from '../kube/names.js';

export const DENATURED_GROUP = 'denatured.kubestellar.io';
export const DENATURED_FROM_LABEL = 'view.kubestellar.io/denatured-from';

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps this module produces. */
export interface JSONSchemaProps {
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps;
  anyOf?: JSONSchemaProps[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
}

/** An OpenAPI v3 schema object as the kube-apiserver publishes it (loosely typed). */
export type OpenAPIV3Schema = Record<string, unknown>;

/** An OpenAPI v3 group-version document, as served at /openapi/v3/apis/<group>/<version>. */
export interface OpenAPIV3Doc {
  components?: { schemas?: Record<string, OpenAPIV3Schema> };
  [k: string]: unknown;
}

export interface NativeKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  hasStatus: boolean;
}

const REF_PREFIX = '#/components/schemas/';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
// Schemas whose Go types accept arbitrary JSON (the OpenAPI says only `type: object`).
const ARBITRARY_JSON = new Set([
  'io.k8s.apimachinery.pkg.runtime.RawExtension',
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
]);
/**
 * The serialization grammar of resource.Quantity (<signedNumber><suffix>, suffix binary SI,
 * decimal SI incl. n/u/m, or a decimal exponent), as ParseQuantity accepts it.
 */
export const QUANTITY_PATTERN =
  '^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)))?$';

// Value validations copied as they are (their meaning is the same for CRDs).
const VALUE_KEYWORDS = [
  'format',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
] as const;


function refName(ref: unknown): string | undefined {
  return typeof ref === 'string' && ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
}

/** Whether a scalar default is the Go zero value openapi-gen writes for every non-pointer field. */
function isZeroDefault(v: unknown): boolean {
  if (v === '' || v === 0 || v === false || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isJsonObject(v);
}

/**
 * A schema with its `$ref` and `allOf: [{$ref}]` wrappers resolved against `schemas`: the
 * referenced schema with the wrapper's own keywords (description, default, list/map type, ...) on
 * top, repeatedly. Also returns the names resolved. A missing schema or a reference back to itself
 * throws.
 */
export function resolveSchema(node: OpenAPIV3Schema, schemas: Readonly<Record<string, OpenAPIV3Schema>>): { schema: OpenAPIV3Schema; names: string[] } {
  let schema = node;
  const names: string[] = [];
  for (;;) {
    let name = refName(schema.$ref);
    let rest: OpenAPIV3Schema;
    if (name !== undefined) {
      const { $ref: _r, ...others } = schema;
      rest = others;
    } else if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && isJsonObject(schema.allOf[0]) && refName(schema.allOf[0].$ref) !== undefined && Object.keys(schema.allOf[0]).length === 1) {
      name = refName(schema.allOf[0].$ref)!;
      const { allOf: _a, ...others } = schema;
      rest = others;
    } else {
      return { schema, names };
    }
    if (names.includes(name)) throw new Error(`OpenAPI schema ${name} refers to itself`);
    names.push(name);
    const target = schemas[name];
    if (!target) throw new Error(`OpenAPI schema ${name} not found in components.schemas`);
    schema = { ...target, ...rest };
  }
}

class Converter {
  private readonly schemas: Record<string, OpenAPIV3Schema>;
  private readonly expanding: string[] = [];

  constructor(doc: OpenAPIV3Doc) {
    this.schemas = doc.components?.schemas ?? {};
  }

  private resolve(node: OpenAPIV3Schema): { schema: OpenAPIV3Schema; names: string[] } {
    return resolveSchema(node, this.schemas);
  }

  convert(node: OpenAPIV3Schema): JSONSchemaProps {
    const { schema: s, names } = this.resolve(node);
    const cyclic = names.find((n) => this.expanding.includes(n));
    if (cyclic !== undefined) {
      // A recursive type cannot be inlined: accept (and keep) whatever the native kind would
      // hold there instead of pruning it.
      const out: JSONSchemaProps = {};
      if (typeof s.description === 'string') out.description = s.description;
      if (s.type === 'object') out.type = 'object';
      out['x-kubernetes-preserve-unknown-fields'] = true;
      return out;
    }
    this.expanding.push(...names);
    try {
      return this.convertResolved(s, names);
    } finally {
      this.expanding.splice(this.expanding.length - names.length, names.length);
    }
  }

  /**
   * A CRD requires every x-kubernetes-list-map-keys property to be required or defaulted.
   * Server-side apply on the native kind keys an item missing such a field by the field's
   * OpenAPI default, so keep that default (even a zero value); where the native schema has none,
   * use the zero value of the key's type (the native kind would not reject such an item either).
   */
  private defaultMapKeys(nativeItems: OpenAPIV3Schema, items: JSONSchemaProps, keys: string[]): void {
    const native = this.resolve(nativeItems).schema;
    const nativeProps = isJsonObject(native.properties) ? native.properties : {};
    for (const key of keys) {
      const prop = items.properties?.[key];
      if (!prop || items.required?.includes(key) || prop.default !== undefined) continue;
      const np = nativeProps[key];
      const nativeDefault = isJsonObject(np) ? (np.default ?? this.resolve(np).schema.default) : undefined;
      if (nativeDefault !== undefined) prop.default = nativeDefault;
      else if (prop.type === 'string') prop.default = '';
      else if (prop.type === 'integer' || prop.type === 'number') prop.default = 0;
      else if (prop.type === 'boolean') prop.default = false;
    }
  }

  private convertResolved(s: OpenAPIV3Schema, names: string[]): JSONSchemaProps {
    const out: JSONSchemaProps = {};
    if (typeof s.description === 'string') out.description = s.description;

    if (names.some((n) => ARBITRARY_JSON.has(n))) {
      if (s.type === 'object' || s.type === undefined) out.type = 'object';
      out['x-kubernetes-preserve-unknown-fields'] = true;
      return out;
    }

    const alternatives = s.oneOf ?? s.anyOf;
    if (s.type === undefined && Array.isArray(alternatives)) {
      // Scalars of more than one type: IntOrString (integer|string), Quantity (string|number).
      const types = new Set(alternatives.map((a) => (isJsonObject(a) && Object.keys(a).length === 1 ? a.type : undefined)));
      if (types.has('string') && (types.has('integer') || types.has('number')) && [...types].every((t) => t === 'string' || t === 'integer' || t === 'number')) {
        out['x-kubernetes-int-or-string'] = true;
        out.anyOf = [{ type: 'integer' }, { type: 'string' }];
        if (names.includes(QUANTITY)) out.pattern = QUANTITY_PATTERN;
      } else {
        out['x-kubernetes-preserve-unknown-fields'] = true;
      }
      return out;
    }

    let type = typeof s.type === 'string' ? s.type : undefined;
    if (type === undefined) {
      if (s.format === 'int-or-string') type = 'int-or-string';
      else if (isJsonObject(s.properties) || s.additionalProperties !== undefined) type = 'object';
      else if (s.items !== undefined) type = 'array';
    }
    if (type === 'int-or-string') {
      out['x-kubernetes-int-or-string'] = true;
      out.anyOf = [{ type: 'integer' }, { type: 'string' }];
      return out;
    }
    if (type !== undefined) out.type = type;

    for (const k of VALUE_KEYWORDS) {
      if (s[k] === undefined) continue;
      if (k === 'format' && s[k] === 'int-or-string') continue;
      (out as Record<string, unknown>)[k] = s[k];
    }
    if (s.nullable === true) out.nullable = true;
    // openapi-gen writes the Go zero value ("", 0, false, {}) as default of every non-pointer
    // field; the native apiserver never applies those, a CRD would (and `{}` often fails the
    // CRD's default validation because of required fields). Keep only `+default=` scalars,
    // which the native defaulters do apply.
    if (s.default !== undefined && !isJsonObject(s.default) && !Array.isArray(s.default) && !isZeroDefault(s.default)) out.default = s.default;

    if (type === 'object') {
      if (isJsonObject(s.properties)) {
        const props: Record<string, JSONSchemaProps> = {};
        for (const [k, v] of Object.entries(s.properties)) if (isJsonObject(v)) props[k] = this.convert(v);
        out.properties = props;
        if (Array.isArray(s.required) && s.required.length > 0) out.required = s.required.filter((r): r is string => typeof r === 'string');
      } else if (isJsonObject(s.additionalProperties)) {
        out.additionalProperties = this.convert(s.additionalProperties);
      } else if (s.additionalProperties === true) {
        out['x-kubernetes-preserve-unknown-fields'] = true;
      }
      const mapType = s['x-kubernetes-map-type'];
      if (mapType === 'atomic' || mapType === 'granular') out['x-kubernetes-map-type'] = mapType;
      if (s['x-kubernetes-embedded-resource'] === true) out['x-kubernetes-embedded-resource'] = true;
    } else if (type === 'array') {
      out.items = isJsonObject(s.items) ? this.convert(s.items) : { 'x-kubernetes-preserve-unknown-fields': true };
      Object.assign(out, listType(s));
      if (out['x-kubernetes-list-type'] === 'map' && isJsonObject(s.items)) this.defaultMapKeys(s.items, out.items, out['x-kubernetes-list-map-keys'] ?? []);
    }
    if (s['x-kubernetes-preserve-unknown-fields'] === true && (type === undefined || type === 'object' || type === 'array')) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
    if (type === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
      // No type and nothing to infer one from: the native kind takes any JSON here.
      out['x-kubernetes-preserve-unknown-fields'] = true;
    }
    return out;
  }
}

/**
 * The list topology server-side apply uses for a native list: x-kubernetes-list-type, or, where
 * absent, what kube-openapi derives from the strategic-merge-patch extensions (merge with a
 * merge key → map keyed by it; merge without → set; otherwise atomic, the default).
 */
function listType(s: OpenAPIV3Schema): Pick<JSONSchemaProps, 'x-kubernetes-list-type' | 'x-kubernetes-list-map-keys'> {
  const lt = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'];
  if (lt === 'map' && Array.isArray(keys)) return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys.filter((k): k is string => typeof k === 'string') };
  if (lt === 'atomic' || lt === 'set') return { 'x-kubernetes-list-type': lt };
  if (lt !== undefined) return {};
  const strategy = s['x-kubernetes-patch-strategy'];
  if (typeof strategy === 'string' && strategy.split(',').includes('merge')) {
    const key = s['x-kubernetes-patch-merge-key'];
    if (typeof key === 'string' && key !== '') return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [key] };
    return { 'x-kubernetes-list-type': 'set' };
  }
  return {};
}

/** The structural openAPIV3Schema for a CRD version, from the native kind's schema in an OpenAPI v3 group-version document (components.schemas). */
export function structuralSchema(doc: OpenAPIV3Doc, schemaName: string): JSONSchemaProps {
  const conv = new Converter(doc);
  const root = conv.convert({ $ref: REF_PREFIX + schemaName });
  if (root.type !== 'object' || !root.properties) throw new Error(`OpenAPI schema ${schemaName} is not an object with properties`);
  const properties: Record<string, JSONSchemaProps> = { ...root.properties };
  for (const k of ['apiVersion', 'kind'] as const) {
    const p = properties[k];
    if (p) properties[k] = p.description !== undefined ? { description: p.description, type: 'string' } : { type: 'string' };
  }
  // CRDs refuse any metadata schema but `type: object` (and name/generateName restrictions).
  if (properties.metadata) properties.metadata = { type: 'object' };
  const out: JSONSchemaProps = {};
  if (root.description !== undefined) out.description = root.description;
  out.type = 'object';
  out.properties = properties;
  if (root.required) out.required = root.required.filter((r) => r !== 'metadata');
  if (out.required?.length === 0) delete out.required;
  return out;
}

/** The name of the components.schemas entry declaring group/version/kind via x-kubernetes-group-version-kind. */
export function findSchemaName(doc: OpenAPIV3Doc, group: string, version: string, kind: string): string | undefined {
  for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) {
    const gvks = s['x-kubernetes-group-version-kind'];
    if (!Array.isArray(gvks)) continue;
    if (gvks.some((g) => isJsonObject(g) && g.group === group && g.version === version && g.kind === kind)) return name;
  }
  return undefined;
}

/**
 * The apiextensions.k8s.io/v1 CustomResourceDefinition for the denatured copy of a native kind.
 * Throws if the label value (`<plural>.<group or core>`) would not be a valid label value.
 */
export function denaturedCRD(doc: OpenAPIV3Doc, kind: NativeKind, schemaName: string): object {
  return denaturedCRDForVersions(kind, [{ version: kind.version, doc, schemaName }]);
}

/**
 * The CRD for a native kind served in several versions: one CRD version per native version, each
 * with its own schema; kind.version (the preferred one) is the storage version. Without a
 * conversion webhook the versions convert by apiVersion alone, which is what the native kinds'
 * versions of the same schema amount to.
 */
export function denaturedCRDForVersions(kind: NativeKind, versions: readonly { version: string; doc: OpenAPIV3Doc; schemaName: string }[]): object {
  const from = `${kind.plural}.${kind.group === '' ? 'core' : kind.group}`;
  if (labelValueErrors(from).length > 0) {
    throw new Error(`cannot label the denatured CRD for ${from}: not a valid label value`);
  }
  if (!versions.some((v) => v.version === kind.version)) throw new Error(`${from}: no schema for the storage version ${kind.version}`);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${kind.plural}.${DENATURED_GROUP}`,
      labels: { [DENATURED_FROM_LABEL]: from },
    },
    spec: {
      group: DENATURED_GROUP,
      names: { kind: kind.kind, listKind: `${kind.kind}List`, plural: kind.plural, singular: kind.singular },
      scope: kind.namespaced ? 'Namespaced' : 'Cluster',
      versions: versions.map((v) => {
        const out: Record<string, unknown> = {
          name: v.version,
          served: true,
          storage: v.version === kind.version,
          schema: { openAPIV3Schema: structuralSchema(v.doc, v.schemaName) },
        };
        if (kind.hasStatus) out.subresources = { status: {} };
        return out;
      }),
    },
  };
}
