// What differs between denatured kinds, for the generic store (./denatured-store.ts), as
// kubernetes/sample-apiserver keeps a per-kind strategy beside its generic registry: the kind as
// the WDS serves it (./denatured-kinds.ts: versions, scope, shape), the kind's facts (./kinds/: its
// printer, the order of its Tables, which direct updates are metadata only), and what is computed
// once per served version (the managedFields shaper). A kind without a file in ./kinds/ (one added
// with `serve --denatured`) is printed with the default table convertor's columns, in list order,
// and any change of metadata alone is one.
import type { KubeObject } from '../kube/objects.js';
import type { DenaturedKind, NativeVersion } from './denatured-kinds.js';
import { kindFacts } from './kinds/index.js';
import type { MetadataOnlyUpdates } from './kinds/kind.js';
import { ManagedFieldsShaper } from './managed-fields-shape.js';
import { DEFAULT_PRINTER, type KindPrinter } from './printing/printer.js';

export interface KindStrategy {
  readonly kind: DenaturedKind;
  version(v: string): NativeVersion | undefined;
  /** Shapes managedFields of objects stored before ksview-native kept the native ones. */
  shaper(v: string): ManagedFieldsShaper;
  /** The kind's Table, as kube-apiserver prints it. */
  readonly printer: KindPrinter;
  /** A list's items in the order kube-apiserver prints their Table in. */
  tableOrder(items: KubeObject[]): KubeObject[];
  /** Which direct updates are metadata only, not judged by Kubernetes' validation again (./denatured-admission.ts). */
  readonly metadataOnlyUpdates: MetadataOnlyUpdates;
}

/** `make(version)` computed once per served version of the kind. */
function perVersion<T>(kind: DenaturedKind, make: (nv: NativeVersion) => T): (v: string) => T {
  const made = new Map<string, T>();
  return (v) => {
    let x = made.get(v);
    if (x === undefined) {
      const nv = kind.versions.find((n) => n.version === v);
      if (!nv) throw new Error(`${kind.plural}: version ${v} is not served`);
      x = make(nv);
      made.set(v, x);
    }
    return x;
  };
}

export function kindStrategy(kind: DenaturedKind): KindStrategy {
  const facts = kindFacts(kind.group, kind.plural);
  return {
    kind,
    version: (v) => kind.versions.find((x) => x.version === v),
    shaper: perVersion(kind, (nv) => new ManagedFieldsShaper(nv.doc.components?.schemas ?? {}, nv.schemaName)),
    printer: facts?.printer ?? DEFAULT_PRINTER,
    tableOrder: (items) => facts?.tableOrder?.(items) ?? items,
    metadataOnlyUpdates: facts?.metadataOnlyUpdates ?? 'any',
  };
}
