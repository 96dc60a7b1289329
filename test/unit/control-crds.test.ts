// ensureCRDs over a recording mock upstream: absent CRDs are created labelled as ours; ours are
// updated to the shipped schema; somebody else's (a real OCM hub's, KubeStellar's) stay untouched.
import t from 'tap';
import { ensureCRDs, MANAGED_BY_LABEL, readCRD } from '../../src/controllers/install/controller-crds.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const FILE = 'control.kubestellar.io_bindingpolicies.yaml';
const NAME = 'bindingpolicies.control.kubestellar.io';
const PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${NAME}`;
const established = { status: { conditions: [{ type: 'Established', status: 'True' }] } };

function serving(existing: Record<string, unknown> | undefined) {
  const m = mockUpstream();
  let first = true;
  m.pool.intercept({ path: PATH, method: 'GET' }).reply((): { statusCode: number; data: object } => {
    const answer = first && !existing ? { statusCode: 404, data: { kind: 'Status', code: 404 } } : { statusCode: 200, data: { ...(existing ?? {}), ...established } };
    first = false;
    return answer;
  }).persist();
  m.pool.intercept({ path: () => true, method: (x) => x !== 'GET' }).reply(201, {}).persist();
  return m;
}

const writes = (m: ReturnType<typeof mockUpstream>) => m.calls().filter((c) => c.method !== 'GET');

t.test('absent: created, labelled as ours, with KubeStellar\'s rule that a clause names a selection field', async (t) => {
  const m = serving(undefined);
  t.teardown(() => m.close());
  t.same(await ensureCRDs(m.up, [FILE]), [NAME]);
  const [post] = writes(m);
  const body = post?.body as { metadata: { labels: Record<string, string> }; spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } };
  t.equal(post?.method, 'POST');
  t.equal(body.metadata.labels[MANAGED_BY_LABEL], 'kubestellar-view');
  const clause = (body.spec.versions[0]!.schema.openAPIV3Schema as { properties: { spec: { properties: { downsync: { items: { anyOf: unknown } } } } } }).properties.spec.properties.downsync.items;
  t.same(clause.anyOf, ['apiGroup', 'resources', 'namespaces', 'namespaceSelectors', 'objectSelectors', 'objectNames'].map((f) => ({ required: [f] })));
});

t.test('ours, older: updated in place (same object, our schema)', async (t) => {
  const m = serving({ ...readCRD(FILE), metadata: { name: NAME, uid: 'u1', resourceVersion: '7', labels: { [MANAGED_BY_LABEL]: 'kubestellar-view' } }, spec: { old: true } });
  t.teardown(() => m.close());
  t.same(await ensureCRDs(m.up, [FILE]), [], 'nothing created');
  const [put] = writes(m);
  t.equal(put?.method, 'PUT');
  t.match(put?.body, { metadata: { name: NAME, uid: 'u1', resourceVersion: '7' }, spec: { group: 'control.kubestellar.io' } }, 'the stored object, our spec');
});

t.test('somebody else\'s: never replaced', async (t) => {
  const m = serving({ metadata: { name: NAME, uid: 'u2', resourceVersion: '3' }, spec: { theirs: true } });
  t.teardown(() => m.close());
  t.same(await ensureCRDs(m.up, [FILE]), []);
  t.same(writes(m), []);
});
