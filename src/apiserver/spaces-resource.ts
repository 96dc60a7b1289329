// The virtual resource `spaces` (cluster-scoped): one item, this server's WDS, telling where its
// view is. Computed on each request, never stored; get, list and watch, as JSON or as a Table.
import { createHash } from 'node:crypto';
import { errors } from '../kube/status.js';
import { GROUP_VERSION } from './view-group.js';
import { age } from '../kube/duration.js';

export interface SpaceInfo {
  name: string;
  wdsServer: string;
  viewPath: string;
  startedAt: Date;
}

export const SPACE_RESOURCE_VERSION = '1';

export function spaceObject(s: SpaceInfo) {
  const uid = createHash('sha256').update(`space/${s.name}/${s.wdsServer}`).digest('hex');
  return {
    apiVersion: GROUP_VERSION,
    kind: 'Space',
    metadata: {
      name: s.name,
      uid: `${uid.slice(0, 8)}-${uid.slice(8, 12)}-${uid.slice(12, 16)}-${uid.slice(16, 20)}-${uid.slice(20, 32)}`,
      resourceVersion: SPACE_RESOURCE_VERSION,
      creationTimestamp: s.startedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      labels: { 'view.kubestellar.io/space-type': 'wds' },
    },
    spec: { type: 'WDS', server: s.wdsServer },
    status: { phase: 'Ready', viewPath: s.viewPath, viewURL: s.wdsServer + s.viewPath },
  };
}

export type SpaceObject = ReturnType<typeof spaceObject>;

export function spaceList(items: SpaceObject[]) {
  return { apiVersion: GROUP_VERSION, kind: 'SpaceList', metadata: { resourceVersion: SPACE_RESOURCE_VERSION }, items };
}


/** Checks `includeObject` as kube-apiserver does: None, Metadata (the default) or Object. */
export function checkIncludeObject(v: string | undefined): void {
  if (v !== undefined && v !== 'None' && v !== 'Metadata' && v !== 'Object') {
    throw errors.badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
  }
}

/** meta.k8s.io Table of spaces, with the columns `kubectl get spaces` prints. */
export function spaceTable(items: SpaceObject[], version: 'v1' | 'v1beta1', includeObject: string | undefined) {
  return {
    kind: 'Table', apiVersion: `meta.k8s.io/${version}`,
    metadata: { resourceVersion: SPACE_RESOURCE_VERSION },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the space', priority: 0 },
      { name: 'Type', type: 'string', format: '', description: 'Kind of space', priority: 0 },
      { name: 'View URL', type: 'string', format: '', description: 'Server URL of the view', priority: 0 },
      { name: 'Age', type: 'string', format: '', description: 'Time since the server started serving it', priority: 0 },
      { name: 'WDS', type: 'string', format: '', description: 'The WDS kube-apiserver', priority: 1 },
    ],
    rows: items.map((o) => ({
      cells: [o.metadata.name, o.spec.type, o.status.viewURL, age(o.metadata.creationTimestamp), o.spec.server],
      object: includeObject === 'None'
        ? undefined
        : includeObject === 'Object'
          ? o
          : { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: o.metadata },
    })),
  };
}

/** Equality-based label and field selectors, enough for kubectl (`metadata.name=` and labels). */
export function matchesSelectors(o: SpaceObject, labelSelector?: string, fieldSelector?: string): boolean {
  const parse = (sel: string) => sel.split(',').map((t) => t.trim()).filter(Boolean).map((t) => {
    const m = /^([^!=]+?)\s*(==|!=|=)\s*(.*)$/.exec(t);
    return m ? { key: m[1]!.trim(), op: m[2]!, value: m[3]!.trim() } : { key: t.replace(/^!/, ''), op: t.startsWith('!') ? 'absent' : 'exists', value: '' };
  });
  const labels: Record<string, string> = o.metadata.labels;
  for (const r of parse(labelSelector ?? '')) {
    const v = labels[r.key];
    if (r.op === 'exists' && v === undefined) return false;
    if (r.op === 'absent' && v !== undefined) return false;
    if ((r.op === '=' || r.op === '==') && v !== r.value) return false;
    if (r.op === '!=' && v === r.value) return false;
  }
  const fields: Record<string, string> = { 'metadata.name': o.metadata.name };
  for (const r of parse(fieldSelector ?? '')) {
    const v = fields[r.key];
    if (v === undefined) throw errors.badRequest(`field label not supported: ${r.key}`);
    if ((r.op === '=' || r.op === '==') && v !== r.value) return false;
    if (r.op === '!=' && v === r.value) return false;
  }
  return true;
}
