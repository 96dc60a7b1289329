// meta.k8s.io Tables (server-side printing, what `kubectl get` asks for) of native objects, with a
// kind's printer: rows carry the object as includeObject says (None, Metadata — the default, as
// PartialObjectMetadata — or Object).
import type { KubeObject } from '../kube/objects.js';
import type { KindPrinter } from '../storage/denatured-printers.js';

export type TableVersion = 'v1' | 'v1beta1';

export interface TableOptions {
  version: TableVersion;
  includeObject: string | undefined;
  /** Watch events after the first carry no column definitions, as kube-apiserver sends them. */
  noHeaders?: boolean;
}

function rowObject(obj: KubeObject, o: TableOptions): unknown {
  if (o.includeObject === 'None') return undefined;
  if (o.includeObject === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${o.version}`, metadata: obj.metadata ?? {} };
}

export function objectsTable(objs: KubeObject[], printer: KindPrinter, o: TableOptions, listMeta: Record<string, unknown> = {}, now = new Date()) {
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
