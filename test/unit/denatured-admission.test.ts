// The checks of a write made to a denatured.kubestellar.io object straight in the WDS
// (src/storage/denatured-admission.ts): what the view's store sets cannot be forged or changed,
// encoded names stay consistent, Kubernetes' validation of the native object runs (not on a
// change of metadata alone), and the first refusal is the answer.
import t, { type Test } from 'tap';
import { admitDirectWrite, DIRECT_WRITE_CHECKS, type DirectWrite } from '../../src/storage/denatured-admission.js';
import { DenaturedStore } from '../../src/storage/denatured-store.js';
import { kindStrategy } from '../../src/storage/denatured-strategy.js';
import { storedName } from '../../src/storage/denatured-translation.js';
import type { KubeObject } from '../../src/kube/objects.js';
import { denaturedKind } from '../fixtures/denatured-kinds.js';
import { FakeNativeCode } from '../fixtures/fake-native-code.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const METADATA = 'view.kubestellar.io/native-metadata';
const NAME = 'view.kubestellar.io/native-name';
const FORGED = JSON.stringify({ generation: 42, managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'rbac.authorization.k8s.io/v1', time: '2020-01-01T00:00:00Z' }] });
const mallory = { username: 'mallory', groups: ['system:authenticated'], extra: {} };

function setup(t: Test) {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const native = new FakeNativeCode();
  native.answer = (w) => ({ status: w.method === 'POST' ? 201 : 200, json: {}, warnings: [], write: w.method === 'POST' ? 'create' : 'update' });
  const store = new DenaturedStore({ up: m.up, strategy: kindStrategy(denaturedKind('roles')), native });
  const role = (name: string, annotations?: Record<string, string>, rules: unknown[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]): KubeObject => ({
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'Role',
    metadata: { name, namespace: 'ns1', uid: 'u1', resourceVersion: '3', ...(annotations ? { annotations } : {}) }, rules,
  });
  const write = (object: KubeObject, oldObject?: KubeObject): DirectWrite =>
    ({ operation: oldObject ? 'UPDATE' : 'CREATE', subresource: '', version: 'v1', object, oldObject, user: mallory, store });
  return { native, role, write };
}

t.test('native-metadata: never set or changed by a direct write; kept as it was, or removed, it is allowed', async (t) => {
  const { native, role, write } = setup(t);
  const forged = await admitDirectWrite(write(role('r', { [METADATA]: FORGED })));
  t.match(forged, { code: 422, reason: 'Invalid', details: { group: 'denatured.kubestellar.io', kind: 'Role', name: 'r', causes: [{ reason: 'FieldValueForbidden', field: `metadata.annotations[${METADATA}]` }] } });
  t.equal(forged?.message, `Role.denatured.kubestellar.io "r" is invalid: metadata.annotations[${METADATA}]: Forbidden: set only by the view ` +
    '(the native object\'s managedFields and generation, which Kubernetes computes); write the object through the view, or keep the annotation as it was or remove it');
  t.match(await admitDirectWrite(write(role('r', { [METADATA]: 'not-json' }))), { code: 422 }, 'a malformed one');
  const viewWritten = role('r', { [METADATA]: '{"generation":1}' });
  t.match(await admitDirectWrite(write(role('r', { [METADATA]: FORGED }), viewWritten)), { code: 422 }, 'changed by an update');
  t.equal(await admitDirectWrite(write(role('r', { [METADATA]: '{"generation":1}', x: 'y' }), viewWritten)), undefined, 'kept as it was');
  t.equal(await admitDirectWrite(write(role('r'), viewWritten)), undefined, 'removed');
  t.equal(native.writes.length, 1, 'one needed Kubernetes\' checks: the update that added an annotation (for RBAC kinds only owner references, finalizers and managed fields are "metadata alone", as in Kubernetes\' IsOnlyMutatingGCFields); the others changed only the view\'s annotation or were refused first');
});

t.test('native-name: must be the name the stored name encodes; an encoded stored name must carry it', async (t) => {
  const { role, write } = setup(t);
  const enc = storedName('system:reader');
  t.equal(await admitDirectWrite(write(role(enc, { [NAME]: 'system:reader' }))), undefined, 'consistent: as the view would store it');
  const wrong = await admitDirectWrite(write(role(enc, { [NAME]: 'system:other' })));
  t.match(wrong?.details?.causes, [{ reason: 'FieldValueInvalid', field: `metadata.annotations[${NAME}]` }]);
  t.match(wrong?.message, `Invalid value: "system:other": must be the native name that the name "${enc}" encodes (set by the view)`);
  const bare = await admitDirectWrite(write(role(enc)));
  t.match(bare?.details?.causes, [{ field: 'metadata.name', message: /names of this form are the view's encoding of a native name/ }]);
  t.match(await admitDirectWrite(write(role('plain', { [NAME]: 'other' }))), { code: 422 }, 'a plain name with someone else\'s native name');
});

t.test('Kubernetes\' validation of the native object: its refusal is the answer; a change of metadata alone is not judged again', async (t) => {
  const { native, role, write } = setup(t);
  native.answer = (w) => (JSON.parse(w.body.toString()).rules.length === 0
    ? { status: 422, json: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 422, reason: 'Invalid', message: 'Role.rbac.authorization.k8s.io "r" is invalid: rules: Required value' }, warnings: [], write: 'none' }
    : { status: 201, json: {}, warnings: [], write: 'create' });
  t.match(await admitDirectWrite(write(role('r', undefined, []))), { code: 422, message: 'Role.rbac.authorization.k8s.io "r" is invalid: rules: Required value' });
  t.equal(await admitDirectWrite(write(role('r'))), undefined, 'valid');
  t.equal(native.writes.length, 2);
  const storedInvalid = { ...role('r', undefined, []), metadata: { ...role('r').metadata, finalizers: ['example.com/hold'] } };
  const released = { ...storedInvalid, metadata: { ...storedInvalid.metadata, finalizers: [], ownerReferences: [] } };
  t.equal(await admitDirectWrite(write(released, storedInvalid)), undefined, 'an object stored invalid can still be released');
  t.equal(native.writes.length, 2, 'without asking Kubernetes');
  const labelled = { ...storedInvalid, metadata: { ...storedInvalid.metadata, labels: { a: 'b' } } };
  t.match(await admitDirectWrite(write(labelled, storedInvalid)), { code: 422 }, 'labelling one is judged, as natively (for an RBAC kind labels are not "metadata alone")');
  t.match(await admitDirectWrite(write(role('r', undefined, []), role('r'))), { code: 422 }, 'an update that makes it invalid');
});

t.test('the checks run in order and the first refusal answers (the place for more, as RBAC escalation)', async (t) => {
  const { native, role, write } = setup(t);
  const seen: string[] = [];
  const refuse = async () => { seen.push('extra'); return undefined; };
  t.match(await admitDirectWrite(write(role('r', { [METADATA]: FORGED }, [])), [...DIRECT_WRITE_CHECKS, refuse]), { details: { causes: [{ field: `metadata.annotations[${METADATA}]` }] } });
  t.same(seen, [], 'later checks do not run after a refusal');
  t.equal(native.writes.length, 0);
  t.equal(await admitDirectWrite(write(role('r')), [...DIRECT_WRITE_CHECKS, refuse]), undefined);
  t.same(seen, ['extra']);
});

t.test('RBAC kinds: Kubernetes\' checks (escalation included) are asked for the writer; a change of labels is checked, one of finalizers or owner references is not', async (t) => {
  const { native, role, write } = setup(t);
  const stored = role('r');
  t.equal(await admitDirectWrite(write({ ...stored, metadata: { ...stored.metadata, labels: { app: 'demo-rbac' } } }, stored)), undefined);
  t.equal(native.writes.length, 1, 'a relabelling is sent to Kubernetes\' registry (labels decide where placement sends a grant)');
  t.same(native.writes[0]!.user, mallory, 'with the user who writes, for the escalation check');
  t.equal(native.writes[0]!.method, 'PUT', 'as the native update from the old object');
  t.equal(await admitDirectWrite(write({ ...stored, metadata: { ...stored.metadata, finalizers: ['example.com/x'], ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u' }] } }, stored)), undefined);
  t.equal(native.writes.length, 1, 'finalizers and owner references alone are not checked again (IsOnlyMutatingGCFields)');
  native.answer = () => ({ status: 403, json: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', message: 'roles.rbac.authorization.k8s.io "r" is forbidden: user "mallory" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held' }, warnings: [], write: 'none' });
  t.match(await admitDirectWrite(write(role('r2', undefined, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]))), { code: 403, reason: 'Forbidden', message: /is attempting to grant RBAC permissions not currently held/ },
    'Kubernetes\' Forbidden is the answer');
  t.same(native.writes[1]!.user, mallory);
});

t.test('other kinds: a change of metadata alone, labels included, is not judged again', async (t) => {
  const m = mockUpstream();
  t.teardown(() => m.close());
  const native = new FakeNativeCode();
  const store = new DenaturedStore({ up: m.up, strategy: kindStrategy(denaturedKind('resourcequotas')), native });
  const quota: KubeObject = { apiVersion: 'denatured.kubestellar.io/v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns1', uid: 'u', resourceVersion: '1' }, spec: { hard: { pods: '1' } } };
  const labelled = { ...quota, metadata: { ...quota.metadata, labels: { a: 'b' } } };
  t.equal(await admitDirectWrite({ operation: 'UPDATE', subresource: '', version: 'v1', object: labelled, oldObject: quota, user: mallory, store }), undefined);
  t.equal(native.writes.length, 0);
});
