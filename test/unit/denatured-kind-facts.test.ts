// The facts of the denatured kinds, one file per kind in src/storage/kinds/: every kind a file
// there defines is listed once in the index (so adding a kind is its file and one line), no two
// kinds would share a CRD, and the store's strategy reads a kind's facts from its file, with the
// defaults for a kind configured denatured that has none.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../src/kube/objects.js';
import type { DenaturedKind } from '../../src/storage/denatured-kinds.js';
import { kindStrategy } from '../../src/storage/denatured-strategy.js';
import { DENATURED_KINDS, kindFacts } from '../../src/storage/kinds/index.js';
import type { KindFacts } from '../../src/storage/kinds/kind.js';
import { DEFAULT_PRINTER } from '../../src/storage/printing/printer.js';

const KINDS_DIR = path.resolve(import.meta.dirname, '..', '..', 'src', 'storage', 'kinds');

const isKindFacts = (v: unknown): v is KindFacts =>
  typeof v === 'object' && v !== null && typeof (v as KindFacts).resource === 'string' && typeof (v as KindFacts).printer === 'object';

const denaturedKind = (group: string, plural: string, kind: string): DenaturedKind =>
  ({ group, version: 'v1', kind, plural, singular: kind.toLowerCase(), namespaced: false, hasStatus: false, versions: [] });

t.test('every kind defined in src/storage/kinds/ is listed once in its index', async (t) => {
  const defined: KindFacts[] = [];
  for (const file of readdirSync(KINDS_DIR).filter((f) => f.endsWith('.ts'))) {
    const module = await import(path.join(KINDS_DIR, file)) as Record<string, unknown>;
    defined.push(...Object.values(module).filter(isKindFacts));
  }
  const listed = new Set(DENATURED_KINDS);
  for (const k of defined) t.ok(listed.has(k), `${k.resource}.${k.group || 'core'} is in DENATURED_KINDS`);
  t.equal(listed.size, DENATURED_KINDS.length, 'no kind listed twice');
});

t.test('no two kinds share a resource, nor a plural (their CRDs are <plural>.denatured.kubestellar.io)', async (t) => {
  const plurals = DENATURED_KINDS.map((k) => k.resource);
  t.equal(new Set(plurals).size, plurals.length);
  for (const k of DENATURED_KINDS) t.equal(kindFacts(k.group, k.resource), k, `${k.resource}.${k.group || 'core'} is found by its group and resource`);
  t.equal(kindFacts('example.com', 'roles'), undefined, 'a resource of another group is none of them');
});

t.test('the strategy of a kind reads its facts from its file', async (t) => {
  const s = kindStrategy(denaturedKind('flowcontrol.apiserver.k8s.io', 'flowschemas', 'FlowSchema'));
  t.equal(s.printer, kindFacts('flowcontrol.apiserver.k8s.io', 'flowschemas')!.printer);
  const fs = (name: string, matchingPrecedence: number): KubeObject => ({ metadata: { name }, spec: { matchingPrecedence } });
  t.same(s.tableOrder([fs('b', 500), fs('c', 10), fs('a', 500)]).map((o) => o.metadata?.name), ['c', 'a', 'b'], 'FlowSchemas by precedence, then name');
  t.equal(s.metadataOnlyUpdates, 'any');
  t.equal(kindStrategy(denaturedKind('rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding')).metadataOnlyUpdates, 'gc-fields',
    'RBAC: only GC fields are metadata alone');
});

t.test('a kind configured denatured without a file gets the defaults', async (t) => {
  const s = kindStrategy(denaturedKind('example.com', 'widgets', 'Widget'));
  t.equal(s.printer, DEFAULT_PRINTER, 'the default table convertor\'s columns');
  const items: KubeObject[] = [{ metadata: { name: 'b' } }, { metadata: { name: 'a' } }];
  t.same(s.tableOrder(items), items, 'list order');
  t.equal(s.metadataOnlyUpdates, 'any');
});
