import t from 'tap';
import { matchesSelectors, spaceList, spaceObject, spaceTable } from '../../src/apiserver/groups/spaces-resource.js';
import { checkIncludeObject } from '../../src/apiserver/http/table.js';

const VIEW_PATH = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
const info = (over: Partial<Parameters<typeof spaceObject>[0]> = {}) => ({
  name: 'wds1', wdsServer: 'https://127.0.0.1:6443', viewPath: VIEW_PATH, startedAt: new Date('2024-05-01T10:20:30.456Z'), ...over,
});
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('spaceObject', async (t) => {
  const o = spaceObject(info());
  t.equal(o.apiVersion, 'view.kubestellar.io/v1alpha1');
  t.equal(o.kind, 'Space');
  t.equal(o.metadata.name, 'wds1');
  t.match(o.metadata.uid, UID);
  t.equal(o.metadata.creationTimestamp, '2024-05-01T10:20:30Z', 'RFC 3339 without fractional seconds');
  t.equal(o.metadata.resourceVersion, '1');
  t.strictSame(o.spec, { type: 'WDS', server: 'https://127.0.0.1:6443' });
  t.equal(o.status.viewPath, VIEW_PATH);
  t.equal(o.status.viewURL, `https://127.0.0.1:6443${VIEW_PATH}`);
  t.equal(spaceObject(info({ startedAt: new Date() })).metadata.uid, o.metadata.uid, 'uid stable across restarts');
  t.not(spaceObject(info({ name: 'wds2' })).metadata.uid, o.metadata.uid, 'uid differs per space');
  t.not(spaceObject(info({ wdsServer: 'https://10.0.0.1:6443' })).metadata.uid, o.metadata.uid, 'uid differs per server');
  const l = spaceList([o]);
  t.equal(l.kind, 'SpaceList');
  t.equal(l.apiVersion, 'view.kubestellar.io/v1alpha1');
  t.equal(l.items[0], o);
});

t.test('spaceTable', async (t) => {
  const o = spaceObject(info({ startedAt: new Date(Date.now() - 3 * 3600 * 1000) }));
  const tbl = spaceTable([o], 'v1', 'Object');
  t.equal(tbl.kind, 'Table');
  t.equal(tbl.apiVersion, 'meta.k8s.io/v1');
  t.strictSame(tbl.columnDefinitions!.map((c) => [c.name, c.priority]), [['Name', 0], ['Type', 0], ['View URL', 0], ['Age', 0], ['WDS', 1]]);
  t.equal(tbl.columnDefinitions![0]!.format, 'name');
  t.equal(tbl.rows.length, 1);
  t.strictSame(tbl.rows[0]!.cells, ['wds1', 'WDS', `https://127.0.0.1:6443${VIEW_PATH}`, '3h', 'https://127.0.0.1:6443']);
  t.equal(tbl.rows[0]!.object, o, 'includeObject=Object: the whole object');
  t.equal(spaceTable([o], 'v1beta1', 'Object').apiVersion, 'meta.k8s.io/v1beta1');
  t.equal(spaceTable([o], 'v1', 'None').rows[0]!.object, undefined);
  for (const inc of ['Metadata', undefined]) {
    t.strictSame(spaceTable([o], 'v1', inc).rows[0]!.object,
      { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata }, `includeObject=${inc}`);
  }
  // kube-apiserver (endpoints/handlers/response.go asTable) gives PartialObjectMetadata the Table's own group version.
  t.strictSame(spaceTable([o], 'v1beta1', 'Metadata').rows[0]!.object,
    { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1', metadata: o.metadata }, 'v1beta1 Table: v1beta1 metadata');
  t.strictSame(spaceTable([], 'v1', 'None').rows, []);
  t.throws(() => checkIncludeObject('Everything'), { name: 'StatusError', message: 'includeObject: Unsupported value: "Everything": supported values: "Metadata", "None", "Object"' }, 'an unknown includeObject is a 400');
  for (const ok of [undefined, 'None', 'Metadata', 'Object']) checkIncludeObject(ok);
  const old = spaceObject(info({ startedAt: new Date(Date.now() - 5 * 86400 * 1000) }));
  t.equal(spaceTable([old], 'v1', 'None').rows[0]!.cells[3], '5d');
});

t.test('matchesSelectors', async (t) => {
  const o = spaceObject(info());
  const yes = (l?: string, f?: string) => t.ok(matchesSelectors(o, l, f), `matches l=${l} f=${f}`);
  const no = (l?: string, f?: string) => t.notOk(matchesSelectors(o, l, f), `does not match l=${l} f=${f}`);
  yes();
  yes('', '');
  yes('view.kubestellar.io/space-type=wds');
  yes('view.kubestellar.io/space-type==wds');
  yes('view.kubestellar.io/space-type = wds');
  no('view.kubestellar.io/space-type=its');
  no('view.kubestellar.io/space-type!=wds');
  yes('view.kubestellar.io/space-type!=its');
  yes('other!=x', undefined);
  yes('view.kubestellar.io/space-type');
  no('other');
  yes('!other');
  no('!view.kubestellar.io/space-type');
  no('view.kubestellar.io/space-type=wds,other');
  no('other=');
  yes(undefined, 'metadata.name=wds1');
  yes(undefined, 'metadata.name==wds1');
  no(undefined, 'metadata.name=wds2');
  no(undefined, 'metadata.name!=wds1');
  yes(undefined, 'metadata.name!=wds2');
  no('view.kubestellar.io/space-type=wds', 'metadata.name=wds2');
  t.throws(() => matchesSelectors(o, undefined, 'spec.type=WDS'), { name: 'StatusError', message: 'field label not supported: spec.type' }, 'an unsupported field label is a 400, as kube-apiserver answers');
  t.throws(() => matchesSelectors(o, 'other', 'spec.type=WDS'), { name: 'StatusError', message: 'field label not supported: spec.type' }, 'whether or not the labels match');
  yes('view.kubestellar.io/space-type in (its,wds)');
  no('view.kubestellar.io/space-type notin (wds)');
  t.throws(() => matchesSelectors(o, 'a b'), { name: 'StatusError', message: "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt" },
    'a malformed label selector is a 400 with kube\'s message');
  t.throws(() => matchesSelectors(o, undefined, 'metadata.name'), { name: 'StatusError', message: "invalid selector: 'metadata.name'; can't understand 'metadata.name'" },
    'a malformed field selector too');
});
