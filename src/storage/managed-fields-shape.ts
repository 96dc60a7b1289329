// managedFields of a denatured object shaped as the native kind's: kube-apiserver records no "."
// (the map's own presence) for a struct that even an empty object of the Go type holds, i.e. one
// reached from the root through non-pointer struct fields only (the OpenAPI marks each with
// `default: {}`); under a pointer, a list item or a map value the "." is recorded. A CRD records
// "." for every object. A field set left empty by that goes, as natively it never was.
// The stored fieldsV1 keep theirs (the WDS's bookkeeping); only what clients see is reshaped.
// Pure; unknown schema nodes are left alone.
import type { JsonObject, ManagedFieldsEntry } from '../kube/objects.js';
import { isJsonObject } from '../kube/json.js';
import { resolveSchema, type OpenAPIV3Schema } from './crd-schema.js';

/** A fieldsV1 set (or a member of one). */
type Fields = JsonObject;

export class ManagedFieldsShaper {
  constructor(private readonly schemas: Record<string, OpenAPIV3Schema>, private readonly rootName: string) {}

  /** The schema with its $ref wrappers resolved; a reference that cannot be is left alone. */
  private resolve(node: OpenAPIV3Schema): OpenAPIV3Schema {
    try {
      return resolveSchema(node, this.schemas).schema;
    } catch {
      return node;
    }
  }

  /** `alwaysThere`: this node exists in an empty object of the kind (the root, and non-pointer structs under it). */
  private shape(fields: Fields, schemaNode: OpenAPIV3Schema | undefined, alwaysThere: boolean): Fields {
    const schema = schemaNode ? this.resolve(schemaNode) : undefined;
    const props = schema && isJsonObject(schema.properties) ? schema.properties as Record<string, OpenAPIV3Schema> : undefined;
    const additional = schema && isJsonObject(schema.additionalProperties) ? schema.additionalProperties as OpenAPIV3Schema : undefined;
    const items = schema && isJsonObject(schema.items) ? schema.items as OpenAPIV3Schema : undefined;
    const out: Fields = {};
    for (const [k, v] of Object.entries(fields)) {
      if (!isJsonObject(v)) { out[k] = v; continue; }
      let child: OpenAPIV3Schema | undefined;
      let childThere = false;
      if (k.startsWith('f:')) {
        const declared = props?.[k.slice(2)];
        child = declared ?? additional;
        childThere = alwaysThere && declared !== undefined && isJsonObject(declared.default) && Object.keys(declared.default).length === 0;
      } else if (k.startsWith('k:') || k.startsWith('i:')) {
        child = items;
      }
      let shaped = this.shape(v, child, childThere);
      if (childThere && child && this.resolve(child)['x-kubernetes-map-type'] !== 'atomic') {
        // A granular struct is never owned as a whole (an atomic one is: `f:roleRef: {}`).
        const { '.': _dot, ...rest } = shaped;
        if (Object.keys(rest).length === 0) continue;
        shaped = rest;
      }
      out[k] = shaped;
    }
    return out;
  }

  /** The entries with their fieldsV1 shaped as on the native kind. */
  entries(managed: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
    const root = this.schemas[this.rootName];
    if (!root) return managed;
    return managed.map((e) => isJsonObject(e.fieldsV1) ? { ...e, fieldsV1: this.shape(e.fieldsV1, root, true) } : e);
  }
}
