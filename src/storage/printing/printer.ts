// Server-side Table printing (what `kubectl get` shows): the printer contract, the Name and Age
// columns as kube-apiserver v1.33 defines them, and the default printer of kinds without one.
// Contract:
// - a KindPrinter gives exactly the column definitions and the cells kube-apiserver produces for
//   its kind; cells(obj, now) reads obj as the v1 JSON kube-apiserver returns (defaults applied,
//   quantities canonical), reproduces Go's zero values for absent fields (./go-json.ts) and never
//   mutates obj. Ages are duration.HumanDuration(now - creationTimestamp).
// - Server-side printing is always "wide" (printers.GenerateOptions{Wide: true}), so priority-1
//   columns have cells too.
// Column definitions and printers are shared: callers must not mutate them. The printers of the
// denatured kinds are in ../kinds/ (one file per kind), those of upsynced workload kinds in
// ../workload-printers.ts, those of the virtual resources beside them in src/apiserver.
import { age as ageSince, GO_ZERO_TIME } from '../../kube/duration.js';
import type { KubeObject } from '../../kube/objects.js';
import { str } from './go-json.js';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface KindPrinter<T extends KubeObject = KubeObject> {
  columns: TableColumnDefinition[];
  cells(obj: T, now: Date): unknown[];
}

// metav1.ObjectMeta{}.SwaggerDoc()["name"] and ["creationTimestamp"], as kube-apiserver sends them.
const NAME_DOC = 'Name must be unique within a namespace. Is required when creating resources, although some ' +
  'resources may allow a client to request the generation of an appropriate name automatically. Name is ' +
  'primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: ' +
  'https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATION_TIMESTAMP_DOC = 'CreationTimestamp is a timestamp representing the server time when this object ' +
  'was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may ' +
  'not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. ' +
  'Null for lists. More info: ' +
  'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A column definition (format '' — only Name columns have one, `name`). */
export function column(name: string, type: string, description: string, priority = 0): TableColumnDefinition {
  return { name, type, format: '', description, priority };
}
export const NAME: TableColumnDefinition = { ...column('Name', 'string', NAME_DOC), format: 'name' };
export const AGE: TableColumnDefinition = column('Age', 'string', CREATION_TIMESTAMP_DOC);

export function nameOf(o: KubeObject): string {
  return str(o.metadata?.name);
}

function creationTime(o: KubeObject): number {
  const ms = Date.parse(str(o.metadata?.creationTimestamp));
  return Number.isNaN(ms) ? GO_ZERO_TIME : ms;
}

/** time.Time.UTC().Format(time.RFC3339), as metav1.Time serializes: whole seconds, `Z` suffix. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The AGE cell (the aggregator's ConvertToHumanReadableDateType is the same). */
export function age(o: KubeObject, now: Date): string {
  return ageSince(str(o.metadata?.creationTimestamp), now.getTime());
}

/** The generic printer kube-apiserver uses for kinds without one (Name, Created At). */
export const DEFAULT_PRINTER: KindPrinter = {
  columns: [NAME, column('Created At', 'date', CREATION_TIMESTAMP_DOC)],
  cells: (o) => [nameOf(o), rfc3339(creationTime(o))],
};
