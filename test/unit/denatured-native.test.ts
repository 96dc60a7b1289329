// Unit tests of what the view does to native objects of denatured kinds besides translation:
// validation against the native OpenAPI schema (ajv), the Go defaulters, JSON and merge patches,
// and the native shape of managedFields.
import { readFileSync } from 'node:fs';
import t from 'tap';
import type { OpenAPIV3Doc } from '../../src/storage/crd-schema.js';
import { ManagedFieldsShaper } from '../../src/storage/managed-fields-shape.js';
import { applyNativeDefaults, presentNative } from '../../src/storage/native-defaults.js';
import { fieldPath, NativeValidator } from '../../src/storage/native-validation.js';
import { applyMergePatch, applyPatch } from '../../src/storage/patches.js';
import { NO_PATCH_META } from '../../src/storage/strategic-merge-patch.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/openapi/${name}_v1.json`, import.meta.url), 'utf8')) as OpenAPIV3Doc;
const rbac = fixture('rbac.authorization.k8s.io');
const admission = fixture('admissionregistration.k8s.io');
const core = fixture('core');

t.test('fieldPath turns JSON pointers into kube field paths', async (t) => {
  t.equal(fieldPath('/subjects/0/kind'), 'subjects[0].kind');
  t.equal(fieldPath('', 'roleRef'), 'roleRef');
  t.equal(fieldPath('/metadata/labels/a~1b'), 'metadata.labels["a/b"]');
  t.equal(fieldPath('/spec/hard/count~1widgets.example.com'), 'spec.hard["count/widgets.example.com"]');
});

t.test('NativeValidator: RoleBinding and webhook errors with kube field paths', async (t) => {
  const rb = new NativeValidator(rbac, 'io.k8s.api.rbac.v1.RoleBinding');
  t.same(rb.validate({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'x' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } }), [], 'a valid RoleBinding');
  t.same(rb.validate({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'x' } }),
    [{ reason: 'FieldValueRequired', message: 'Required value', field: 'roleRef' }], 'no roleRef');
  t.same(rb.validate({ metadata: { name: 'x' }, roleRef: { apiGroup: 'g', kind: 'Role', name: 'r' }, subjects: [{ name: 'u' }] }),
    [{ reason: 'FieldValueRequired', message: 'Required value', field: 'subjects[0].kind' }], 'a subject without kind');
  t.same(rb.validate({ metadata: { name: 7 }, roleRef: { apiGroup: 'g', kind: 'Role', name: 'r' } }),
    [{ reason: 'FieldValueTypeInvalid', message: 'Invalid value: 7: must be of type string', field: 'metadata.name' }], 'a number for a name');

  const hook = new NativeValidator(admission, 'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration');
  const causes = hook.validate({ metadata: { name: 'h' }, webhooks: [{ name: 'a.example.com', clientConfig: {}, sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Sometimes' }] });
  t.same(causes, [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"', field: 'webhooks[0].failurePolicy' }]);
});

t.test('NativeValidator: quantities and int-or-string take both forms, nothing else', async (t) => {
  const quota = new NativeValidator(core, 'io.k8s.api.core.v1.ResourceQuota');
  t.same(quota.validate({ metadata: { name: 'q' }, spec: { hard: { configmaps: '0', cpu: 2 } } }), [], 'strings and numbers');
  const bad = quota.validate({ metadata: { name: 'q' }, spec: { hard: { configmaps: true } } });
  t.equal(bad.length, 1, 'one cause for a bad quantity, not one per alternative');
  t.equal(bad[0]!.field, 'spec.hard.configmaps');
});

t.test('applyNativeDefaults: the Go defaulters of the kinds that have them', async (t) => {
  const hook = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'm' },
    webhooks: [{ name: 'a', rules: [{ apiGroups: [''], resources: ['pods'] }] }] };
  const out = applyNativeDefaults('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', hook) as any;
  t.same(out.webhooks[0], { name: 'a', rules: [{ apiGroups: [''], resources: ['pods'], scope: '*' }], failurePolicy: 'Fail', matchPolicy: 'Equivalent',
    namespaceSelector: {}, objectSelector: {}, timeoutSeconds: 10, reinvocationPolicy: 'Never' });
  t.notOk('scope' in hook.webhooks[0]!.rules[0]!, 'the input is not modified');

  const lr = applyNativeDefaults('', 'limitranges', { metadata: { name: 'l' }, spec: { limits: [{ type: 'Container', max: { memory: '1Gi' }, min: { cpu: '100m' } }, { type: 'Pod', max: { cpu: '1' } }] } }) as any;
  t.same(lr.spec.limits[0], { type: 'Container', max: { memory: '1Gi' }, min: { cpu: '100m' }, default: { memory: '1Gi' }, defaultRequest: { memory: '1Gi', cpu: '100m' } });
  t.same(lr.spec.limits[1], { type: 'Pod', max: { cpu: '1' } }, 'only Container items are defaulted');

  const plc = applyNativeDefaults('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations',
    { metadata: { name: 'p' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } }) as any;
  t.same(plc.spec.limited, { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } });

  const vap = applyNativeDefaults('admissionregistration.k8s.io', 'validatingadmissionpolicies',
    { metadata: { name: 'v' }, spec: { matchConstraints: { resourceRules: [{ resources: ['x'] }] } } }) as any;
  t.same(vap.spec, { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ resources: ['x'], scope: '*' }], matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} } });
  const role = { metadata: { name: 'r' }, rules: [] };
  t.same(applyNativeDefaults('rbac.authorization.k8s.io', 'roles', role), role, 'kinds without defaulters are unchanged');
});

t.test('presentNative: generation and status as the native registry has them', async (t) => {
  const stored = { metadata: { name: 'x', generation: 1 } };
  t.same(presentNative('rbac.authorization.k8s.io', 'clusterroles', false, stored), { metadata: { name: 'x' } }, 'RBAC has no generation');
  t.same(presentNative('', 'resourcequotas', true, stored), { metadata: { name: 'x' }, status: {} }, 'quota: no generation, an empty status');
  t.same(presentNative('flowcontrol.apiserver.k8s.io', 'flowschemas', true, stored), { metadata: { name: 'x', generation: 1 }, status: {} });
});

t.test('merge and JSON patches', async (t) => {
  t.same(applyMergePatch({ a: 1, b: { c: 2, d: 3 } }, { a: null, b: { c: 4 }, e: [1] }), { b: { c: 4, d: 3 }, e: [1] });
  t.same(applyPatch('json', { a: { b: 1 } }, [{ op: 'add', path: '/a/c', value: 2 }, { op: 'remove', path: '/a/b' }], NO_PATCH_META), { a: { c: 2 } });
  const original = { a: 1 };
  applyPatch('json', original, [{ op: 'replace', path: '/a', value: 2 }], NO_PATCH_META);
  t.same(original, { a: 1 }, 'the original is not modified');
  t.throws(() => applyPatch('json', {}, { op: 'add' }, NO_PATCH_META), { name: 'PatchError', reason: 'BadRequest' }, 'not a list');
  t.throws(() => applyPatch('json', {}, [{ op: 'jump', path: '/a' }], NO_PATCH_META), { name: 'PatchError', reason: 'BadRequest' }, 'an unknown op');
  t.throws(() => applyPatch('json', { a: 1 }, [{ op: 'test', path: '/a', value: 2 }], NO_PATCH_META), { name: 'PatchError', reason: 'Invalid' }, 'a failed test');
  t.throws(() => applyPatch('json', {}, [{ op: 'remove', path: '/nope' }], NO_PATCH_META), { name: 'PatchError', reason: 'Invalid' }, 'a missing path');
  t.throws(() => applyPatch('merge', {}, [1], NO_PATCH_META), { name: 'PatchError', reason: 'BadRequest' });
  t.throws(() => applyPatch('strategic', {}, { $patch: 'explode' }, NO_PATCH_META), { name: 'PatchError', reason: 'BadRequest' });
});

t.test('ManagedFieldsShaper drops "." where the native kind never records it', async (t) => {
  const schemas = admission.components!.schemas! as Record<string, Record<string, unknown>>;
  const shaper = new ManagedFieldsShaper(schemas, 'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy');
  const [entry] = shaper.entries([{ manager: 'm', fieldsV1: {
    'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
    'f:spec': { '.': {}, 'f:failurePolicy': {}, 'f:matchConstraints': { '.': {}, 'f:matchPolicy': {} }, 'f:validations': {} },
  } }]);
  t.same(entry!.fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
    'f:spec': { 'f:failurePolicy': {}, 'f:matchConstraints': { '.': {}, 'f:matchPolicy': {} }, 'f:validations': {} },
  }, 'spec (a non-pointer struct) loses its "."; labels (a map) and matchConstraints (a pointer) keep theirs');
  const [onlyDot] = shaper.entries([{ manager: 'm', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } }, 'f:spec': { '.': {} } } }]);
  t.same(onlyDot!.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {} } } }, 'a struct field set left empty goes');
  const hooks = new ManagedFieldsShaper(schemas, 'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration');
  const inItem = { 'f:webhooks': { '.': {}, 'k:{"name":"a"}': { '.': {}, 'f:clientConfig': { '.': {}, 'f:url': {} } } } };
  t.same(hooks.entries([{ fieldsV1: inItem }])[0]!.fieldsV1, inItem, 'structs inside list items keep "."');
  t.same(new ManagedFieldsShaper(schemas, 'nope').entries([{ fieldsV1: inItem }])[0]!.fieldsV1, inItem, 'an unknown schema changes nothing');
});

t.test('ManagedFieldsShaper keeps atomic structs owned as a whole', async (t) => {
  const schemas = rbac.components!.schemas! as Record<string, Record<string, unknown>>;
  const shaper = new ManagedFieldsShaper(schemas, 'io.k8s.api.rbac.v1.RoleBinding');
  const fields = { 'f:roleRef': {}, 'f:subjects': {} };
  t.same(shaper.entries([{ fieldsV1: fields }])[0]!.fieldsV1, fields);
});

t.test('toNative: the native-name annotation leaves managedFields as kube-apiserver would have them', async (t) => {
  const { toNative, NATIVE_NAME_ANNOTATION, storedName } = await import('../../src/storage/denatured-translation.js');
  const nameField = { [`f:${NATIVE_NAME_ANNOTATION}`]: {} };
  const storedWith = (annotations: Record<string, string>) => ({
    apiVersion: 'denatured.kubestellar.io/v1', kind: 'ClusterRole',
    metadata: { name: storedName('a:b'), annotations: { ...annotations, [NATIVE_NAME_ANNOTATION]: 'a:b' }, managedFields: [
      { manager: 'create', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, ...nameField } }, 'f:rules': {} } },
      { manager: 'apply', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:annotations': { ...nameField }, 'f:labels': { 'f:x': {} } } } },
    ] },
  });
  const gv = { group: 'rbac.authorization.k8s.io', version: 'v1' };
  t.same(toNative(storedWith({}), gv).metadata!.managedFields!.map((e) => e.fieldsV1), [
    { 'f:rules': {} },
    { 'f:metadata': { 'f:labels': { 'f:x': {} } } },
  ], 'no annotation left: the annotations field sets go');
  t.same(toNative(storedWith({ other: 'x' }), gv).metadata!.managedFields!.map((e) => e.fieldsV1), [
    { 'f:metadata': { 'f:annotations': {} }, 'f:rules': {} },
    { 'f:metadata': { 'f:labels': { 'f:x': {} } } },
  ], 'annotations left: a manager owning the map keeps it, written {} as FieldsV1 writes a member without children');
});
