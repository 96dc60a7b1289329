import { createHash } from 'node:crypto';
import t from 'tap';
import { FieldSelectorError } from '../../src/kube/field-selector.js';
import { deepFreeze } from '../../src/kube/json.js';
import {
  fieldSelectorToStored, isEncodedName, listToNative, NATIVE_NAME_ANNOTATION, statusToNative, storedName,
  toNative, toStored, TranslationError, watchEventToNative,
} from '../../src/storage/denatured-translation.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { Status } from '../../src/kube/status.js';


const enc = (n: string) => 'kv-' + createHash('sha256').update(n).digest('hex').slice(0, 40);

const rbac = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const core = { group: '', version: 'v1', resource: 'serviceaccounts' };
const apiservices = { group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices' };

const LAST_APPLIED = '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"annotations":{},' +
  '"name":"system:controller:foo"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list","watch"]}]}\n';

/** A ClusterRole as kube-apiserver returns it after `kubectl apply` (client-side apply). */
const nativeClusterRole = (): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: {
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': LAST_APPLIED },
    creationTimestamp: '2024-05-02T10:11:12Z',
    labels: { 'app.kubernetes.io/part-of': 'foo' },
    managedFields: [{
      apiVersion: 'rbac.authorization.k8s.io/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': {
          'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
          'f:labels': { '.': {}, 'f:app.kubernetes.io/part-of': {} },
        },
        'f:rules': {},
      },
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      time: '2024-05-02T10:11:12Z',
    }],
    name: 'system:controller:foo',
    resourceVersion: '4711',
    uid: '0f3c6a0e-8d3b-4e0f-9a55-6c1f0a9e2b11',
  },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }],
});

/** The same ClusterRole as the WDS holds it: the native-name annotation is in the field set too. */
const storedClusterRole = (): KubeObject => {
  const o = nativeClusterRole();
  const meta = o.metadata!;
  o.apiVersion = 'denatured.kubestellar.io/v1';
  meta.name = enc('system:controller:foo');
  meta.annotations = { ...meta.annotations, [NATIVE_NAME_ANNOTATION]: 'system:controller:foo' };
  meta.managedFields = [{
    ...meta.managedFields![0],
    apiVersion: 'denatured.kubestellar.io/v1',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': {
          '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {}, [`f:${NATIVE_NAME_ANNOTATION}`]: {},
        },
        'f:labels': { '.': {}, 'f:app.kubernetes.io/part-of': {} },
      },
      'f:rules': {},
    },
  }];
  return o;
};

t.test('storedName', async (t) => {
  const table: [string, string, string][] = [
    ['RBAC name with colons', 'system:controller:foo', enc('system:controller:foo')],
    ['RBAC aggregate name', 'system:aggregate-to-admin', enc('system:aggregate-to-admin')],
    ['valid name', 'view', 'view'],
    ['valid dotted name (APIService)', 'v1beta1.metrics.k8s.io', 'v1beta1.metrics.k8s.io'],
    ['uppercase', 'Admin', enc('Admin')],
    ['leading dash', '-x', enc('-x')],
    ['too long', 'a'.repeat(254), enc('a'.repeat(254))],
    ['253 chars', 'a'.repeat(253), 'a'.repeat(253)],
    ['looks encoded', 'kv-' + 'a'.repeat(40), enc('kv-' + 'a'.repeat(40))],
    ['almost encoded (39 hex)', 'kv-' + 'a'.repeat(39), 'kv-' + 'a'.repeat(39)],
  ];
  for (const [what, name, want] of table) {
    t.equal(storedName(name), want, what);
    t.ok(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(storedName(name)), `${what}: DNS-safe`);
  }
  t.ok(isEncodedName(enc('x:y')));
  t.notOk(isEncodedName('kv-' + 'A'.repeat(40)));
  t.notOk(isEncodedName('view'));
});

t.test('toStored / toNative of a ClusterRole with a colon name', async (t) => {
  const native = deepFreeze(nativeClusterRole());
  const stored = toStored(native, rbac);
  t.equal(stored.apiVersion, 'denatured.kubestellar.io/v1');
  t.equal(stored.metadata!.name, enc('system:controller:foo'));
  t.equal(stored.metadata!.annotations![NATIVE_NAME_ANNOTATION], 'system:controller:foo');
  t.equal(stored.metadata!.annotations!['kubectl.kubernetes.io/last-applied-configuration'], LAST_APPLIED);
  t.equal(stored.metadata!.managedFields, undefined, 'the WDS keeps its own managedFields');
  t.same(JSON.parse(stored.metadata!.annotations!['view.kubestellar.io/native-metadata']!).managedFields, native.metadata!.managedFields,
    'the native ones are kept in the annotation, with their native apiVersion');
  t.same(stored.rules, native.rules);
  t.strictSame(toNative(deepFreeze(stored), rbac), nativeClusterRole(), 'round trip');

  // As the WDS returns it: the annotation shows in fieldsV1 and must not leak back.
  const back = toNative(deepFreeze(storedClusterRole()), rbac);
  t.strictSame(back, nativeClusterRole());
  t.notMatch(JSON.stringify(back), /kubestellar/);
});

t.test('toNative drops field sets left empty by the annotation', async (t) => {
  const stored = storedClusterRole();
  stored.metadata!.annotations = { [NATIVE_NAME_ANNOTATION]: 'system:controller:foo' };
  stored.metadata!.managedFields = [
    {
      apiVersion: 'denatured.kubestellar.io/v1', fieldsType: 'FieldsV1', manager: 'kubectl-create', operation: 'Update',
      fieldsV1: {
        'f:metadata': { 'f:annotations': { '.': {}, [`f:${NATIVE_NAME_ANNOTATION}`]: {} }, 'f:labels': { '.': {} } },
        'f:rules': {},
      },
    },
    {
      apiVersion: 'denatured.kubestellar.io/v1', fieldsType: 'FieldsV1', manager: 'ksview', operation: 'Update',
      fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, [`f:${NATIVE_NAME_ANNOTATION}`]: {} } } },
    },
  ];
  const back = toNative(deepFreeze(stored), rbac);
  t.equal(back.metadata!.annotations, undefined, 'empty annotations removed');
  t.equal(back.metadata!.name, 'system:controller:foo');
  t.strictSame(back.metadata!.managedFields, [{
    apiVersion: 'rbac.authorization.k8s.io/v1', fieldsType: 'FieldsV1', manager: 'kubectl-create', operation: 'Update',
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } }, 'f:rules': {} },
  }]);
});

t.test('valid names are left alone', async (t) => {
  const sa = deepFreeze({
    apiVersion: 'v1', kind: 'ServiceAccount',
    metadata: { name: 'builder', namespace: 'ci', labels: { a: 'b' } },
    secrets: [{ name: 'builder-token' }],
  });
  const stored = toStored(sa, core);
  t.strictSame(stored, { ...sa, apiVersion: 'denatured.kubestellar.io/v1', metadata: { ...sa.metadata, annotations: { 'view.kubestellar.io/native-metadata': '{}' } } },
    'the name is kept; the annotation says there is no native managedFields or generation');
  t.strictSame(toNative(stored, core), sa);

  const api = deepFreeze({ apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.apps' }, spec: {} });
  t.equal(toStored(api, apiservices).metadata.name, 'v1.apps');
  t.strictSame(toNative(toStored(api, apiservices), apiservices), api);
});

t.test('a native name that looks encoded is encoded too', async (t) => {
  const name = 'kv-' + '0123456789'.repeat(4);
  const role = deepFreeze({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: 'x' } });
  const stored = toStored(role, rbac);
  t.equal(stored.metadata.name, enc(name));
  t.not(stored.metadata.name, name);
  t.equal((stored.metadata as { annotations?: Record<string, string> }).annotations?.[NATIVE_NAME_ANNOTATION], name);
  t.strictSame(toNative(stored, rbac), role);
});

t.test('toStored errors', async (t) => {
  const gen = (generateName: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { generateName } });
  t.equal(toStored(deepFreeze(gen('reader-')), rbac).metadata.generateName, 'reader-');
  t.equal(toStored(deepFreeze(gen('a.b')), rbac).metadata.generateName, 'a.b');
  t.throws(() => toStored(deepFreeze(gen('system:reader-')), rbac), TranslationError);
  t.throws(() => toStored(gen('Reader-'), rbac), /generateName: "Reader-" is not supported/);
  t.throws(() => toStored({ metadata: { name: 'x', annotations: { [NATIVE_NAME_ANNOTATION]: 'y' } } }, rbac),
    /reserved/);
  const tampered = storedClusterRole();
  tampered.metadata!.annotations![NATIVE_NAME_ANNOTATION] = 'system:other';
  t.throws(() => toNative(tampered, rbac), TranslationError);
});

t.test('a native-metadata annotation that is not what toStored writes is a TranslationError saying so, never shown as Kubernetes\' metadata', async (t) => {
  const withMetadata = (value: string): KubeObject => {
    const o = storedClusterRole();
    o.metadata!.annotations = { ...o.metadata!.annotations, 'view.kubestellar.io/native-metadata': value };
    return o;
  };
  const cases: [string, RegExp][] = [
    ['not-json', /native-metadata is not JSON$/],
    ['null', /native-metadata is not a JSON object$/],
    ['42', /native-metadata is not a JSON object$/],
    ['[]', /native-metadata is not a JSON object$/],
    ['{"managedFields":"kube-controller-manager"}', /managedFields that is not a list of entries$/],
    ['{"managedFields":[7]}', /managedFields that is not a list of entries$/],
    ['{"generation":"42"}', /generation that is not a non-negative integer$/],
    ['{"generation":-1}', /generation that is not a non-negative integer$/],
    ['{"generation":1.5}', /generation that is not a non-negative integer$/],
  ];
  for (const [value, message] of cases) {
    t.throws(() => toNative(withMetadata(value), rbac), { name: 'TranslationError', message }, value);
  }
  const back = toNative(withMetadata('{"generation":3,"managedFields":[{"manager":"kubectl","operation":"Apply"}]}'), rbac);
  t.equal(back.metadata?.generation, 3, 'a well-formed one is read back');
  t.same(back.metadata?.managedFields, [{ manager: 'kubectl', operation: 'Apply' }]);
});

t.test('listToNative', async (t) => {
  const list = deepFreeze({
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRoleList',
    metadata: { resourceVersion: '4712', continue: 'abc' },
    items: [storedClusterRole(), { apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole', metadata: { name: 'view' }, rules: [] }],
  });
  const out = listToNative(list, rbac);
  t.strictSame(out, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleList',
    metadata: { resourceVersion: '4712', continue: 'abc' },
    items: [nativeClusterRole(), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'view' }, rules: [] }],
  });
  t.strictSame(listToNative(deepFreeze({ apiVersion: 'denatured.kubestellar.io/v1', kind: 'ServiceAccountList', metadata: {}, items: [] }), core),
    { apiVersion: 'v1', kind: 'ServiceAccountList', metadata: {}, items: [] });
});

t.test('watchEventToNative', async (t) => {
  for (const type of ['ADDED', 'MODIFIED', 'DELETED']) {
    t.strictSame(watchEventToNative(deepFreeze({ type, object: storedClusterRole() }), rbac), { type, object: nativeClusterRole() }, type);
  }
  const bookmark = deepFreeze({
    type: 'BOOKMARK',
    object: {
      apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
      metadata: { resourceVersion: '5000', annotations: { 'k8s.io/initial-events-end': 'true' } },
    },
  });
  t.strictSame(watchEventToNative(bookmark, rbac), {
    type: 'BOOKMARK',
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
      metadata: { resourceVersion: '5000', annotations: { 'k8s.io/initial-events-end': 'true' } },
    },
  });
  const gone = deepFreeze({
    type: 'ERROR',
    object: {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 410, reason: 'Expired',
      message: 'too old resource version: 1 (4711)',
    },
  });
  t.strictSame(watchEventToNative(gone, rbac), gone);
  const err = deepFreeze({
    type: 'ERROR',
    object: {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 500, reason: 'InternalError',
      message: 'Internal error occurred: clusterroles.denatured.kubestellar.io watch failed',
      details: { group: 'denatured.kubestellar.io', kind: 'clusterroles' },
    },
  });
  t.strictSame(watchEventToNative(err, rbac).object, {
    ...err.object,
    message: 'Internal error occurred: clusterroles.rbac.authorization.k8s.io watch failed',
    details: { group: 'rbac.authorization.k8s.io', kind: 'clusterroles' },
  });
});

t.test('statusToNative', async (t) => {
  const name = 'system:controller:foo';
  const notFound = deepFreeze<Status>({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NotFound', code: 404,
    message: `clusterroles.denatured.kubestellar.io "${enc(name)}" not found`,
    details: { name: enc(name), group: 'denatured.kubestellar.io', kind: 'clusterroles' },
  });
  t.strictSame(statusToNative(notFound, rbac, name), {
    ...notFound,
    message: 'clusterroles.rbac.authorization.k8s.io "system:controller:foo" not found',
    details: { name, group: 'rbac.authorization.k8s.io', kind: 'clusterroles' },
  });
  // Without the original name, only the group is rewritten.
  t.equal(statusToNative(notFound, rbac).message, `clusterroles.rbac.authorization.k8s.io "${enc(name)}" not found`);
  // An original name that does not encode to the name in the Status is not substituted.
  t.equal(statusToNative(notFound, rbac, 'other:name').details?.name, enc(name));

  const exists = deepFreeze<Status>({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'AlreadyExists', code: 409,
    message: 'serviceaccounts.denatured.kubestellar.io "builder" already exists',
    details: { name: 'builder', group: 'denatured.kubestellar.io', kind: 'serviceaccounts' },
  });
  t.strictSame(statusToNative(exists, core, 'builder'), {
    ...exists,
    message: 'serviceaccounts "builder" already exists',
    details: { name: 'builder', kind: 'serviceaccounts' },
  });

  const invalid = deepFreeze<Status>({
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
    message: `ClusterRole.denatured.kubestellar.io "${enc(name)}" is invalid: rules[0].verbs: Required value`,
    details: {
      name: enc(name), group: 'denatured.kubestellar.io', kind: 'ClusterRole',
      causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'rules[0].verbs' }],
    },
  });
  const inv = statusToNative(invalid, rbac, name);
  t.equal(inv.message, 'ClusterRole.rbac.authorization.k8s.io "system:controller:foo" is invalid: rules[0].verbs: Required value');
  t.same(inv.details?.causes, invalid.details!.causes);
});

t.test('fieldSelectorToStored', async (t) => {
  const n = 'system:controller:foo';
  const table: [string, string][] = [
    ['', ''],
    ['metadata.name=view', 'metadata.name=view'],
    [`metadata.name=${n}`, `metadata.name=${enc(n)}`],
    [`metadata.name==${n}`, `metadata.name==${enc(n)}`],
    [`metadata.name!=${n}`, `metadata.name!=${enc(n)}`],
    [`metadata.namespace=ci,metadata.name=${n}`, `metadata.namespace=ci,metadata.name=${enc(n)}`],
    ['metadata.namespace!=kube-system', 'metadata.namespace!=kube-system'],
    ['metadata.name=a\\,b', `metadata.name=${enc('a,b')}`],
    ['metadata.name=a\\=b,spec.x=y', `metadata.name=${enc('a=b')},spec.x=y`],
    [`metadata.name=kv-${'a'.repeat(40)}`, `metadata.name=${enc('kv-' + 'a'.repeat(40))}`],
    ['spec.x=a\\,b,,', 'spec.x=a\\,b'],
  ];
  for (const [sel, want] of table) t.equal(fieldSelectorToStored(sel), want, sel);
  t.throws(() => fieldSelectorToStored('metadata.name=a\\b'), new FieldSelectorError('invalid field selector: invalid escape sequence: \\b'));
  t.throws(() => fieldSelectorToStored('metadata.name'), new FieldSelectorError("invalid selector: 'metadata.name'; can't understand 'metadata.name'"));
});
