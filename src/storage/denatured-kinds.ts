// The denatured kinds as the WDS serves them natively: for each configured group/resource the WDS
// serves, its kind, scope, versions (preferred first), status subresource, and the OpenAPI v3
// document of each version (the source of its CRD schema, its validation and its patch metadata).
// Read with the server's own identity from aggregated discovery and /openapi/v3. A configured
// kind the WDS does not serve (e.g. MutatingAdmissionPolicy while its feature gate is off) is
// left out: the view then has no such kind either.
import { aggregatedDiscoveryOf, discoveredResources } from '../kube/discovery.js';
import { groupVersionPath } from '../kube/request-info.js';
import { findSchemaName, type NativeKind, type OpenAPIV3Doc } from './crd-schema.js';
import type { GroupResource } from './kind-categories.js';
import { upstreamJson, type Upstream } from '../kube/upstream.js';

export interface NativeVersion {
  version: string;
  /** The OpenAPI v3 document of the group version. */
  doc: OpenAPIV3Doc;
  /** The components.schemas entry of the kind in `doc`. */
  schemaName: string;
}

/** A native kind stored denatured; `version` (from NativeKind) is the preferred (storage) one. */
export interface DenaturedKind extends NativeKind {
  versions: NativeVersion[];
}

const openAPIPath = (group: string, version: string) => `/openapi/v3${groupVersionPath(group, version)}`;

/** Reads the denatured kinds among `configured` from the WDS. */
export async function discoverDenaturedKinds(up: Upstream, configured: readonly GroupResource[]): Promise<DenaturedKind[]> {
  const [core, groups] = await aggregatedDiscoveryOf(up);
  const all = [...discoveredResources(core), ...discoveredResources(groups)];
  const docs = new Map<string, Promise<OpenAPIV3Doc>>();
  const docOf = (group: string, version: string) => {
    const key = `${group}/${version}`;
    let doc = docs.get(key);
    if (!doc) {
      doc = upstreamJson<OpenAPIV3Doc>(up, 'GET', openAPIPath(group, version));
      docs.set(key, doc);
    }
    return doc;
  };
  const kinds: DenaturedKind[] = [];
  for (const gr of configured) {
    const served = all.filter((r) => r.group === gr.group && r.resource === gr.resource);
    if (served.length === 0) continue;
    const preferred = served[0]!;
    const versions: NativeVersion[] = [];
    for (const r of served) {
      const doc = await docOf(r.group, r.version);
      const schemaName = findSchemaName(doc, r.group, r.version, r.kind);
      if (!schemaName) throw new Error(`the WDS's OpenAPI v3 for ${r.group || 'core'}/${r.version} has no schema for ${r.kind}`);
      versions.push({ version: r.version, doc, schemaName });
    }
    kinds.push({
      group: gr.group, version: preferred.version, kind: preferred.kind, plural: gr.resource,
      singular: preferred.singular, namespaced: preferred.namespaced, hasStatus: preferred.hasStatus, versions,
    });
  }
  const plurals = new Map<string, string>();
  for (const k of kinds) {
    const other = plurals.get(k.plural);
    if (other !== undefined) throw new Error(`denatured kinds ${other} and ${k.plural}.${k.group} would share the CRD ${k.plural}.denatured.kubestellar.io`);
    plurals.set(k.plural, `${k.plural}.${k.group || 'core'}`);
  }
  return kinds;
}
