// meta.k8s.io Tables (server-side printing, what `kubectl get` asks for) of objects, with a kind's
// printer: rows carry the object as includeObject says (None, Metadata — the default, as
// PartialObjectMetadata — or Object). The one Table builder of the server: denatured kinds,
// spaces, the virtual resources and the per-cluster views; `tableAnswer` is how a read-only
// resource answers a list, a get or a watch event, as a Table or as the objects.
import type { KubeObject } from '../../kube/objects.js';
import { errors } from '../../kube/status.js';
import type { KindPrinter } from '../../storage/printing/printer.js';
import { wantsTable } from './negotiation.js';

export type TableVersion = 'v1' | 'v1beta1';

export interface TableOptions {
  version: TableVersion;
  includeObject: string | undefined;
  /** Watch events after the first carry no column definitions, as kube-apiserver sends them. */
  noHeaders?: boolean;
}

/** Checks `includeObject` as kube-apiserver does: None, Metadata (the default) or Object. */
export function checkIncludeObject(v: string | undefined): void {
  if (v !== undefined && v !== 'None' && v !== 'Metadata' && v !== 'Object') {
    throw errors.badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
  }
}

function rowObject(obj: KubeObject, o: TableOptions): unknown {
  if (o.includeObject === 'None') return undefined;
  if (o.includeObject === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${o.version}`, metadata: obj.metadata ?? {} };
}

export function objectsTable<T extends KubeObject>(objs: T[], printer: KindPrinter<T>, o: TableOptions, listMeta: Record<string, unknown> = {}, now = new Date()) {
  const metadata: Record<string, unknown> = {};
  for (const k of ['resourceVersion', 'continue', 'remainingItemCount']) {
    if (listMeta[k] !== undefined && listMeta[k] !== '') metadata[k] = listMeta[k];
  }
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${o.version}`,
    metadata,
    ...(o.noHeaders ? {} : { columnDefinitions: printer.columns }),
    rows: objs.map((obj) => {
      const object = rowObject(obj, o);
      return { cells: printer.cells(obj, now), ...(object === undefined ? {} : { object }) };
    }),
  };
}

/** How the objects of a list, get or watch are answered: a Table when the request's Accept asks for one, else as they are. */
export interface TableAnswer<T> {
  /** A list: the Table of `items` at `resourceVersion`, or, with no Table asked for, `asList()`. */
  list(items: T[], resourceVersion: string | undefined, asList: () => unknown): unknown;
  /** One object (a get, a watch event): a Table of its one row at its own resourceVersion, or the object. */
  one(o: T): unknown;
}

/**
 * The answers of a request of a read-only resource (the virtual ones, the per-cluster views):
 * `includeObject` is checked by the caller, after authorizing; `now` is when ages count to
 * (default: the system clock's, at each Table).
 */
export function tableAnswer<T extends KubeObject>(accept: string | undefined, includeObject: string | undefined, printer: KindPrinter<T>, now?: () => Date): TableAnswer<T> {
  const version = wantsTable(accept);
  const table = (items: T[], resourceVersion: string | undefined) => objectsTable(items, printer, { version: version!, includeObject }, { resourceVersion }, now?.());
  return {
    list: (items, resourceVersion, asList) => (version ? table(items, resourceVersion) : asList()),
    one: (o) => (version ? table([o], o.metadata?.resourceVersion) : o),
  };
}
