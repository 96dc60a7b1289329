// Our OCM CRDs (manifests/crds) are structurally identical to Open Cluster Management's own, at the
// version of test/fixtures/ocm.ts, field by field; only descriptions are our own. A difference is
// listed by its path, so a drift says exactly where.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { OCM_API, OCM_CRD_FILES, ocmApiYaml } from '../fixtures/ocm.js';

type Node = unknown;

const withoutDescriptions = (n: Node): Node => {
  if (Array.isArray(n)) return n.map(withoutDescriptions);
  if (n && typeof n === 'object') return Object.fromEntries(Object.entries(n).filter(([k]) => k !== 'description').map(([k, v]) => [k, withoutDescriptions(v)]));
  return n;
};

/** The paths where a and b differ. */
function differences(a: Node, b: Node, at: string, out: string[]): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  const objects = (x: Node): x is Record<string, Node> => !!x && typeof x === 'object' && !Array.isArray(x);
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every(objects)) {
    a.forEach((x, i) => differences(x, b[i], `${at}[${i}]`, out));
  } else if (objects(a) && objects(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[k], b[k], `${at}.${k}`, out);
  } else {
    out.push(`${at}: ours ${JSON.stringify(a)}, OCM's ${JSON.stringify(b)}`);
  }
  return out;
}

for (const [ours, theirs] of Object.entries(OCM_CRD_FILES)) {
  t.test(`${ours} is ${OCM_API}'s, descriptions aside`, async (t) => {
    const mine = YAML.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'manifests', 'crds', ours), 'utf8')) as { metadata: { name: string }; spec: Node };
    const ocm = ocmApiYaml(theirs) as { metadata: { name: string }; spec: Node };
    t.equal(mine.metadata.name, ocm.metadata.name);
    t.same(differences(withoutDescriptions(mine.spec), withoutDescriptions(ocm.spec), 'spec', []), [], 'no structural difference');
  });
}
