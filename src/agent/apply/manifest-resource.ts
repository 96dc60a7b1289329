// Which resource of the WEC a manifest is: its identity as OCM reports it (resourceMeta, '' for
// what cannot be learnt) and its mapping from the WEC's discovery. A custom resource whose CRD the
// same work carries waits (bounded) for discovery to serve it, since the CRD is applied first.
import { splitApiVersion } from '../../kube/api-version.js';
import type { JsonObject } from '../../kube/objects.js';
import type { ManifestResourceMeta } from '../../kube/ocm-api.js';
import type { Mapping, RestMapper } from '../shared/rest-mapper.js';

/** resourceMeta of a manifest; `resource` only when its mapping is known. */
export function metaOf(ordinal: number, manifest: JsonObject, mapping: Mapping | undefined): ManifestResourceMeta {
  const md = (manifest.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const apiVersion = typeof manifest.apiVersion === 'string' ? manifest.apiVersion : '';
  const { group, version } = splitApiVersion(apiVersion);
  return {
    ordinal, group: apiVersion ? group : '', version: apiVersion ? version : '',
    kind: typeof manifest.kind === 'string' ? manifest.kind : '',
    resource: mapping?.resource ?? '',
    name: typeof md.name === 'string' ? md.name : '',
    namespace: typeof md.namespace === 'string' ? md.namespace : '',
  };
}

/** group|kind of every CRD carried in the manifests. */
export function crdKindsOf(manifests: readonly JsonObject[]): Set<string> {
  const out = new Set<string>();
  for (const m of manifests) {
    if (m?.kind !== 'CustomResourceDefinition') continue;
    const spec = (m.spec ?? {}) as { group?: unknown; names?: { kind?: unknown } };
    if (typeof spec.group === 'string' && typeof spec.names?.kind === 'string') out.add(`${spec.group}|${spec.names.kind}`);
  }
  return out;
}

/** The mapping; for a kind whose CRD this work carries (`crdKinds`), polls discovery for up to crdWaitMs. */
export async function mapWaiting(mapper: RestMapper, apiVersion: string, kind: string, crdKinds: Set<string>, crdWaitMs: number): Promise<Mapping | undefined> {
  const first = await mapper.map(apiVersion, kind);
  if (first || !crdKinds.has(`${splitApiVersion(apiVersion).group}|${kind}`)) return first;
  const deadline = Date.now() + crdWaitMs;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, deadline - Date.now()))));
    const m = await mapper.map(apiVersion, kind);
    if (m) return m;
  }
  return undefined;
}
