// The REST path of an object or collection from its group/version/resource, namespace and name.
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
  namespace: string;
  name: string;
}

export function collectionPath(r: { group: string; version: string; resource: string }, namespace = ''): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}` : `${base}/${r.resource}`;
}

export const objectPath = (r: ResourceRef): string => `${collectionPath(r, r.namespace)}/${encodeURIComponent(r.name)}`;

export const gvrKey = (r: { group: string; version: string; resource: string }): string => `${r.group}/${r.version}/${r.resource}`;
