// Every key the placement controller makes, encoded and decoded only here:
// - queue keys (typed QueueKey ↔ string): `o|<group>|<version>|<resource>|<namespace>|<name>` for a
//   workload object — the resource it is listed under, and its native name (a deleted object's
//   works are found by it) — and `p|<name>` for a BindingPolicy. The object key is also written on
//   each ManifestWork (SOURCE_ANNOTATION), so its format is part of what the ITS holds: it stays.
// - resource keys `<group>|<version>|<resource>` (one informer each);
// - work keys `<namespace>/<name>` (a ManifestWork in the ITS);
// - identity keys `<cluster>|<group>|<resource>|<namespace>|<name>` (an object sent to a cluster,
//   whichever WDS sends it).
// Kubernetes names never contain '|', so splitting is unambiguous.

/** On each ManifestWork: the queue key of the object it carries. */
export const SOURCE_ANNOTATION = 'view.kubestellar.io/source';

export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
}

export interface ObjectKey {
  kind: 'object';
  resource: ResourceRef;
  namespace: string;
  name: string;
}

export interface PolicyKey {
  kind: 'policy';
  name: string;
}

export type QueueKey = ObjectKey | PolicyKey;

export const objectKey = (resource: ResourceRef, namespace: string, name: string): ObjectKey =>
  ({ kind: 'object', resource: { group: resource.group, version: resource.version, resource: resource.resource }, namespace, name });

export const policyKey = (name: string): PolicyKey => ({ kind: 'policy', name });

/** The resource Namespaces are listed under. */
export const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };

/** The queue key of a Namespace object. */
export const namespaceKey = (namespace: string): ObjectKey => objectKey(NAMESPACES, '', namespace);

export function encodeKey(k: QueueKey): string {
  return k.kind === 'policy' ? `p|${k.name}` : `o|${resourceKey(k.resource)}|${k.namespace}|${k.name}`;
}

/** The key a string encodes, or undefined when it encodes none (e.g. a foreign annotation). */
export function decodeKey(s: string): QueueKey | undefined {
  const parts = s.split('|');
  if (parts[0] === 'p' && parts.length === 2 && parts[1]) return policyKey(parts[1]);
  if (parts[0] === 'o' && parts.length === 6 && parts[3] && parts[5]) {
    const [, group, version, resource, namespace, name] = parts as [string, string, string, string, string, string];
    return objectKey({ group, version, resource }, namespace, name);
  }
  return undefined;
}

export const resourceKey = (r: ResourceRef): string => `${r.group}|${r.version}|${r.resource}`;

export const workKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** How an object is named in messages: `deployments.apps demo/web`. */
export function describeObject(id: { group?: string; resource?: string; namespace?: string; name?: string }): string {
  return `${id.resource ?? ''}${id.group ? `.${id.group}` : ''} ${id.namespace ? `${id.namespace}/` : ''}${id.name ?? ''}`;
}

/** The identity key of the object a work carries to `cluster` (absent fields are ''). */
export function identityKey(cluster: string, id: { group?: string; resource?: string; namespace?: string; name?: string }): string {
  return `${cluster}|${id.group ?? ''}|${id.resource ?? ''}|${id.namespace ?? ''}|${id.name ?? ''}`;
}
