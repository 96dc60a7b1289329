// OpenAPI documents of the WDS as the view shows them: operations on hidden resources removed,
// with the schemas only they used; the v3 index limited to visible group versions and its
// serverRelativeURLs moved under the view root so clients under the prefix fetch them there.
import type { JsonValue } from '../kube/objects.js';
import { parseRequestInfo } from '../kube/request-info.js';
import type { GroupResource, KindCategories } from './kind-categories.js';

/** The group and resource an OpenAPI path ("/apis/apps/v1/namespaces/{namespace}/deployments") operates on. */
export function pathGroupResource(path: string): GroupResource | undefined {
  const info = parseRequestInfo(path);
  return info.resource ? { group: info.group, resource: info.resource } : undefined;
}

function collectRefs(node: JsonValue, prefix: string, out: Set<string>): void {
  if (Array.isArray(node)) {
    for (const n of node) collectRefs(n, prefix, out);
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) out.add(v.slice(prefix.length));
      else collectRefs(v, prefix, out);
    }
  }
}

/** Names reachable from `roots` through $refs into `schemas`. */
function reachable(roots: JsonValue[], schemas: Record<string, JsonValue>, prefix: string): Set<string> {
  const seen = new Set<string>();
  const queue: string[] = [];
  const first = new Set<string>();
  for (const r of roots) collectRefs(r, prefix, first);
  queue.push(...first);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const next = new Set<string>();
    collectRefs(schemas[name], prefix, next);
    for (const n of next) if (!seen.has(n)) queue.push(n);
  }
  return seen;
}

interface Doc {
  paths?: Record<string, JsonValue>;
  definitions?: Record<string, JsonValue>;
  components?: { schemas?: Record<string, JsonValue>; [k: string]: JsonValue };
  [k: string]: JsonValue;
}

/** Works on OpenAPI v2 (definitions) and v3 (components.schemas) documents alike. */
export function filterOpenAPIDocument(doc: Doc, cats: KindCategories): Doc {
  const v3 = doc.components !== undefined;
  const schemas = (v3 ? doc.components?.schemas : doc.definitions) ?? {};
  const prefix = v3 ? '#/components/schemas/' : '#/definitions/';
  const kept: Record<string, JsonValue> = {};
  const dropped: JsonValue[] = [];
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    const gr = pathGroupResource(p);
    if (gr && cats.categorize(gr) === 'hidden') dropped.push(item);
    else kept[p] = item;
  }
  if (dropped.length === 0) return doc;
  // Drop a schema only if hidden operations used it and nothing visible still reaches it.
  const usedByHidden = reachable(dropped, schemas, prefix);
  const stillUsed = reachable([...Object.values(kept), ...Object.entries(schemas).filter(([n]) => !usedByHidden.has(n)).map(([, s]) => s)], schemas, prefix);
  const keptSchemas: Record<string, JsonValue> = {};
  for (const [name, s] of Object.entries(schemas)) {
    if (!usedByHidden.has(name) || stillUsed.has(name)) keptSchemas[name] = s;
  }
  return v3
    ? { ...doc, paths: kept, components: { ...doc.components, schemas: keptSchemas } }
    : { ...doc, paths: kept, definitions: keptSchemas };
}

interface V3Index {
  paths?: Record<string, { serverRelativeURL?: string; [k: string]: JsonValue }>;
  [k: string]: JsonValue;
}

/** The /openapi/v3 index: group versions the view hides are removed, URLs moved under `root`. */
export function filterOpenAPIV3Index(index: V3Index, visible: Set<string>, cats: KindCategories, root: string): V3Index {
  const paths: V3Index['paths'] = {};
  for (const [p, entry] of Object.entries(index.paths ?? {})) {
    const parts = p.split('/');
    if (parts[0] === 'apis' && parts.length >= 2) {
      if (cats.isHiddenGroup(parts[1]!)) continue;
      if (parts.length === 3 && !visible.has(`${parts[1]}/${parts[2]}`)) continue;
      if (parts.length === 2 && ![...visible].some((gv) => gv.startsWith(`${parts[1]}/`))) continue;
    }
    paths[p] = entry.serverRelativeURL ? { ...entry, serverRelativeURL: root + entry.serverRelativeURL } : entry;
  }
  return { ...index, paths };
}
