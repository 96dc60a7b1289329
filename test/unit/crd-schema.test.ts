import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import {
  DENATURED_FROM_LABEL,
  QUANTITY_PATTERN,
  denaturedCRD,
  findSchemaName,
  structuralSchema,
  type JSONSchemaProps,
  type NativeKind,
  type OpenAPIV3Doc,
} from '../../src/storage/crd-schema.js';

// Fixtures: real OpenAPI v3 documents of a kube-apiserver v1.33.13 (`kubectl get --raw
// /openapi/v3/apis/<group>/v1`). core_v1.json (/openapi/v3/api/v1, 1.4 MB) is trimmed to the
// components.schemas reachable through $refs from LimitRange, ResourceQuota, ServiceAccount and
// ServicePort (for a real IntOrString), with `paths` emptied; the other documents are whole.
function fixture(name: string): OpenAPIV3Doc {
  return JSON.parse(readFileSync(new URL(`./fixtures/openapi/${name}_v1.json`, import.meta.url), 'utf8')) as OpenAPIV3Doc;
}
const docs: Record<string, OpenAPIV3Doc> = {};
const docFor = (group: string) => (docs[group] ??= fixture(group === '' ? 'core' : group));

type Row = [group: string, kind: string, plural: string, namespaced: boolean, hasStatus: boolean];
const DEFAULT_DENATURED: Row[] = [
  ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false, false],
  ['admissionregistration.k8s.io', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false, false],
  ['admissionregistration.k8s.io', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', false, true],
  ['admissionregistration.k8s.io', 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', false, false],
  ['apiregistration.k8s.io', 'APIService', 'apiservices', false, true],
  ['flowcontrol.apiserver.k8s.io', 'FlowSchema', 'flowschemas', false, true],
  ['flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration', 'prioritylevelconfigurations', false, true],
  ['rbac.authorization.k8s.io', 'ClusterRole', 'clusterroles', false, false],
  ['rbac.authorization.k8s.io', 'ClusterRoleBinding', 'clusterrolebindings', false, false],
  ['rbac.authorization.k8s.io', 'Role', 'roles', true, false],
  ['rbac.authorization.k8s.io', 'RoleBinding', 'rolebindings', true, false],
  ['', 'LimitRange', 'limitranges', true, false],
  ['', 'ResourceQuota', 'resourcequotas', true, true],
  ['', 'ServiceAccount', 'serviceaccounts', true, false],
];
const nativeKind = ([group, kind, plural, namespaced, hasStatus]: Row): NativeKind => ({
  group,
  version: 'v1',
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  hasStatus,
});

// Every keyword apiextensions.k8s.io/v1 JSONSchemaProps has that the conversion may emit.
const ALLOWED = new Set([
  'description', 'type', 'format', 'title', 'default', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties',
  'required', 'items', 'anyOf', 'properties', 'additionalProperties', 'nullable', 'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-map-keys', 'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);
const INT_OR_STRING_ANYOF = [{ type: 'integer' }, { type: 'string' }];

/** Structural-schema invariants (apiextensions-apiserver), returned as a list of violations. */
function violations(s: JSONSchemaProps, path: string, root: boolean): string[] {
  const out: string[] = [];
  for (const k of Object.keys(s)) if (!ALLOWED.has(k)) out.push(`${path}: keyword ${k}`);
  const ios = s['x-kubernetes-int-or-string'] === true;
  const puf = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (s.type === undefined && !ios && !puf) out.push(`${path}: no type`);
  if (ios && (s.type !== undefined || puf)) out.push(`${path}: int-or-string with type or preserve-unknown-fields`);
  if (s.anyOf !== undefined && !(ios && JSON.stringify(s.anyOf) === JSON.stringify(INT_OR_STRING_ANYOF))) out.push(`${path}: anyOf`);
  if (s.type === 'array' && !s.items) out.push(`${path}: array without items`);
  if (s.type !== 'array' && (s['x-kubernetes-list-type'] !== undefined || s['x-kubernetes-list-map-keys'] !== undefined)) out.push(`${path}: list extensions on non-array`);
  if (s.type !== 'object' && s['x-kubernetes-map-type'] !== undefined) out.push(`${path}: map-type on non-object`);
  if (s.properties && s.additionalProperties) out.push(`${path}: properties and additionalProperties`);
  if (root && s.additionalProperties) out.push(`${path}: additionalProperties at root`);
  if (s['x-kubernetes-list-map-keys'] !== undefined && s['x-kubernetes-list-type'] !== 'map') out.push(`${path}: map keys without map list`);
  if (s['x-kubernetes-list-type'] === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (keys.length === 0) out.push(`${path}: map list without keys`);
    for (const k of keys) {
      const p = s.items?.properties?.[k];
      if (!p) out.push(`${path}: map key ${k} not an item property`);
      else if (p.type === 'object' || p.type === 'array') out.push(`${path}: map key ${k} not scalar`);
      else if (p.default === undefined && !s.items?.required?.includes(k)) out.push(`${path}: map key ${k} neither required nor defaulted`);
    }
  }
  if (s.items) out.push(...violations(s.items, `${path}[]`, false));
  if (s.additionalProperties) out.push(...violations(s.additionalProperties, `${path}{}`, false));
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...violations(v, `${path}.${k}`, false));
  return out;
}

function collectDefaults(s: JSONSchemaProps, path: string, out: Array<[string, unknown]>): void {
  if (s.default !== undefined) out.push([path, s.default]);
  if (s.items) collectDefaults(s.items, `${path}[]`, out);
  if (s.additionalProperties) collectDefaults(s.additionalProperties, `${path}{}`, out);
  for (const [k, v] of Object.entries(s.properties ?? {})) collectDefaults(v, `${path}.${k}`, out);
}

// ---- the native side, read independently of the module under test ----
type Native = Record<string, unknown>;
function nativeResolve(doc: OpenAPIV3Doc, n: Native): Native {
  for (;;) {
    const allOf = n.allOf as Native[] | undefined;
    const ref = (n.$ref as string | undefined) ?? (allOf?.length === 1 ? (allOf[0]!.$ref as string | undefined) : undefined);
    if (!ref) return n;
    const { $ref: _r, allOf: _a, ...rest } = n;
    n = { ...doc.components!.schemas![ref.replace('#/components/schemas/', '')]!, ...rest };
  }
}

/** Every list in the native schema keeps its SSA topology (list-type and map keys) and every map its map-type. */
function compareTopology(t: Test, doc: OpenAPIV3Doc, native: Native, crd: JSONSchemaProps, path: string, depth: number): number {
  if (depth > 30) return 0;
  const n = nativeResolve(doc, native);
  let checked = 0;
  if (n.type === 'array') {
    t.equal(crd['x-kubernetes-list-type'], n['x-kubernetes-list-type'], `${path} list-type`);
    t.strictSame(crd['x-kubernetes-list-map-keys'], n['x-kubernetes-list-map-keys'], `${path} list-map-keys`);
    checked++;
    if (n.items && crd.items) checked += compareTopology(t, doc, n.items as Native, crd.items, `${path}[]`, depth + 1);
  }
  if (n.type === 'object') {
    if (n['x-kubernetes-map-type'] !== undefined) {
      t.equal(crd['x-kubernetes-map-type'], n['x-kubernetes-map-type'], `${path} map-type`);
      checked++;
    }
    for (const [k, v] of Object.entries((n.properties as Record<string, Native> | undefined) ?? {})) {
      if (path === '' && k === 'metadata') continue;
      const c = crd.properties?.[k];
      t.ok(c, `${path}.${k} kept`);
      if (c) checked += compareTopology(t, doc, v, c, `${path}.${k}`, depth + 1);
    }
    if (n.additionalProperties && typeof n.additionalProperties === 'object' && crd.additionalProperties) {
      checked += compareTopology(t, doc, n.additionalProperties as Native, crd.additionalProperties, `${path}{}`, depth + 1);
    }
  }
  return checked;
}

const at = (s: JSONSchemaProps, ...path: string[]): JSONSchemaProps => {
  let cur = s;
  for (const p of path) {
    const next = p === '[]' ? cur.items : p === '{}' ? cur.additionalProperties : cur.properties?.[p];
    if (!next) throw new Error(`no ${p} in ${path.join('.')}`);
    cur = next;
  }
  return cur;
};

t.test('findSchemaName finds every default denatured kind via x-kubernetes-group-version-kind', async (t) => {
  for (const [group, kind] of DEFAULT_DENATURED) {
    const name = findSchemaName(docFor(group), group, 'v1', kind);
    t.ok(name?.endsWith(`.${kind}`), `${kind}: ${name}`);
  }
  t.equal(findSchemaName(docFor('rbac.authorization.k8s.io'), 'rbac.authorization.k8s.io', 'v1beta1', 'Role'), undefined);
  t.equal(findSchemaName(docFor('rbac.authorization.k8s.io'), 'rbac.authorization.k8s.io', 'v1', 'Nope'), undefined);
  t.equal(findSchemaName(docFor(''), 'apps', 'v1', 'ServiceAccount'), undefined);
  t.equal(findSchemaName({}, '', 'v1', 'Pod'), undefined);
});

for (const row of DEFAULT_DENATURED) {
  const k = nativeKind(row);
  t.test(`${k.kind} (${k.group || 'core'}/v1)`, async (t) => {
    const doc = docFor(k.group);
    const schemaName = findSchemaName(doc, k.group, 'v1', k.kind)!;
    const crd = denaturedCRD(doc, k, schemaName) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; labels: Record<string, string> };
      spec: { group: string; names: Record<string, unknown>; scope: string; versions: Array<Record<string, unknown>> };
    };
    t.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    t.equal(crd.kind, 'CustomResourceDefinition');
    t.equal(crd.metadata.name, `${k.plural}.denatured.kubestellar.io`);
    t.strictSame(crd.metadata.labels, { [DENATURED_FROM_LABEL]: `${k.plural}.${k.group || 'core'}` });
    t.ok(crd.metadata.labels[DENATURED_FROM_LABEL]!.length <= 63, 'label value fits');
    t.equal(crd.spec.group, 'denatured.kubestellar.io');
    t.strictSame(crd.spec.names, { kind: k.kind, listKind: `${k.kind}List`, plural: k.plural, singular: k.singular });
    t.equal(crd.spec.scope, k.namespaced ? 'Namespaced' : 'Cluster');
    t.equal(crd.spec.versions.length, 1);
    const v = crd.spec.versions[0]!;
    t.equal(v.name, 'v1');
    t.equal(v.served, true);
    t.equal(v.storage, true);
    if (k.hasStatus) t.strictSame(v.subresources, { status: {} });
    else t.notOk('subresources' in v);
    const schema = (v.schema as { openAPIV3Schema: JSONSchemaProps }).openAPIV3Schema;

    const text = JSON.stringify(schema);
    for (const bad of ['$ref', 'allOf', 'oneOf', 'x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key', 'x-kubernetes-group-version-kind', 'x-kubernetes-unions', 'int-or-string"']) {
      t.notOk(text.includes(`"${bad}`), `no ${bad}`);
    }
    t.strictSame(violations(schema, k.kind, true), [], 'structural');
    t.equal(schema.type, 'object');
    t.strictSame(schema.properties!.metadata, { type: 'object' });
    t.equal(schema.properties!.apiVersion!.type, 'string');
    t.equal(schema.properties!.kind!.type, 'string');
    if (k.hasStatus) t.ok(schema.properties!.status, 'has status');

    // Defaults: only where a list-map key needs one (none of these kinds has a `+default`).
    const defaults: Array<[string, unknown]> = [];
    collectDefaults(schema, k.kind, defaults);
    for (const [p, d] of defaults) t.equal(d, '', `${p}: only the zero default of a map key`);

    const native = nativeResolve(doc, { $ref: `#/components/schemas/${schemaName}` });
    const checked = compareTopology(t, doc, native, schema, '', 0);
    t.ok(checked > 0, `compared ${checked} lists/maps`);
  });
}

t.test('kind-specific expectations from the real documents', async (t) => {
  const conv = (group: string, kind: string) => structuralSchema(docFor(group), findSchemaName(docFor(group), group, 'v1', kind)!);

  const cr = conv('rbac.authorization.k8s.io', 'ClusterRole');
  t.equal(at(cr, 'aggregationRule', 'clusterRoleSelectors')['x-kubernetes-list-type'], 'atomic');
  t.equal(at(cr, 'aggregationRule', 'clusterRoleSelectors', '[]')['x-kubernetes-map-type'], 'atomic', 'LabelSelector is an atomic map');
  t.equal(at(cr, 'rules')['x-kubernetes-list-type'], 'atomic');
  t.equal(at(cr, 'rules', '[]', 'verbs')['x-kubernetes-list-type'], 'atomic');
  t.strictSame(at(cr, 'rules', '[]').required, ['verbs']);
  t.strictSame(at(cr, 'aggregationRule', 'clusterRoleSelectors', '[]', 'matchLabels'), {
    description: at(cr, 'aggregationRule', 'clusterRoleSelectors', '[]', 'matchLabels').description,
    type: 'object',
    additionalProperties: { type: 'string' },
  });
  const crb = conv('rbac.authorization.k8s.io', 'ClusterRoleBinding');
  t.strictSame(at(crb, 'roleRef').required, ['apiGroup', 'kind', 'name']);
  t.notOk('default' in at(crb, 'roleRef'), 'no `{}` default on roleRef');
  t.notOk('default' in at(crb, 'roleRef', 'apiGroup'), 'no `""` default on roleRef.apiGroup');

  const mwc = conv('admissionregistration.k8s.io', 'MutatingWebhookConfiguration');
  t.strictSame(at(mwc, 'webhooks')['x-kubernetes-list-map-keys'], ['name']);
  t.equal(at(mwc, 'webhooks')['x-kubernetes-list-type'], 'map');
  t.equal(at(mwc, 'webhooks', '[]', 'clientConfig', 'caBundle').format, 'byte');
  t.strictSame(at(mwc, 'webhooks', '[]', 'matchConditions')['x-kubernetes-list-map-keys'], ['name']);
  t.ok(at(mwc, 'webhooks', '[]').required?.includes('name'));
  t.ok(at(mwc, 'webhooks', '[]', 'rules', '[]', 'operations', '[]').enum?.includes('CREATE'), 'enums kept');

  const vapb = conv('admissionregistration.k8s.io', 'ValidatingAdmissionPolicyBinding');
  t.equal(at(vapb, 'spec', 'validationActions')['x-kubernetes-list-type'], 'set');

  const fs = conv('flowcontrol.apiserver.k8s.io', 'FlowSchema');
  t.equal(at(fs, 'spec', 'rules', '[]', 'resourceRules', '[]', 'verbs')['x-kubernetes-list-type'], 'set');
  const conds = at(fs, 'status', 'conditions');
  t.equal(conds['x-kubernetes-list-type'], 'map');
  t.strictSame(conds['x-kubernetes-list-map-keys'], ['type']);
  t.equal(at(conds, '[]', 'type').default, '', 'map key `type` defaulted as on the native kind');
  t.equal(at(conds, '[]', 'lastTransitionTime').format, 'date-time');

  const sa = conv('', 'ServiceAccount');
  t.strictSame(at(sa, 'secrets')['x-kubernetes-list-map-keys'], ['name']);
  t.equal(at(sa, 'secrets', '[]', 'name').default, '', 'ObjectReference.name has no native default: zero value');
  t.equal(at(sa, 'imagePullSecrets')['x-kubernetes-list-type'], 'atomic');

  const apisvc = conv('apiregistration.k8s.io', 'APIService');
  t.equal(at(apisvc, 'spec', 'service', 'port').format, 'int32');
  t.strictSame(at(apisvc, 'status', 'conditions')['x-kubernetes-list-map-keys'], ['type']);
});

t.test('Quantity becomes int-or-string with the quantity grammar', async (t) => {
  for (const [kind, path] of [
    ['LimitRange', ['spec', 'limits', '[]', 'max', '{}']],
    ['LimitRange', ['spec', 'limits', '[]', 'maxLimitRequestRatio', '{}']],
    ['ResourceQuota', ['spec', 'hard', '{}']],
    ['ResourceQuota', ['status', 'used', '{}']],
  ] as const) {
    const s = structuralSchema(docFor(''), findSchemaName(docFor(''), '', 'v1', kind)!);
    const q = at(s, ...path);
    t.equal(q['x-kubernetes-int-or-string'], true, `${kind} ${path.join('.')}`);
    t.strictSame(q.anyOf, INT_OR_STRING_ANYOF);
    t.equal(q.type, undefined);
    t.equal(q.pattern, QUANTITY_PATTERN);
    t.ok(q.description?.startsWith('Quantity is'), 'description kept');
  }
  const re = new RegExp(QUANTITY_PATTERN);
  for (const ok of ['100m', '1Gi', '2', '0', '1.5', '.5', '5.', '+1Ki', '-3', '1e3', '1E-3', '12n', '3u', '4k', '5M', '6Ei', '7P']) t.ok(re.test(ok), ok);
  for (const bad of ['', 'abc', '1 Gi', '1iB', 'Gi', '1KI', '1e', '1.2.3', '--1', '1mi']) t.notOk(re.test(bad), bad);
});

t.test('IntOrString (real ServicePort.targetPort)', async (t) => {
  const s = structuralSchema(docFor(''), 'io.k8s.api.core.v1.ServicePort');
  const tp = at(s, 'targetPort');
  t.equal(tp['x-kubernetes-int-or-string'], true);
  t.strictSame(tp.anyOf, INT_OR_STRING_ANYOF);
  t.equal(tp.type, undefined);
  t.equal(tp.format, undefined, 'format int-or-string dropped');
  t.equal(tp.pattern, undefined);
  t.ok(tp.description?.startsWith('Number or name'), 'the field description wins over the type description');
  t.equal(at(s, 'protocol').default, 'TCP', 'a `+default` scalar is kept');
  t.strictSame(at(s, 'protocol').enum, ['SCTP', 'TCP', 'UDP']);
  t.notOk('default' in at(s, 'name'), 'zero-value default dropped');
  t.notOk('apiVersion' in s.properties! || 'metadata' in s.properties!, 'no kind fields added to a non-kind schema');
});

t.test('RawExtension accepts arbitrary content (real WatchEvent)', async (t) => {
  const s = structuralSchema(docFor('rbac.authorization.k8s.io'), 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent');
  const o = at(s, 'object');
  t.equal(o.type, 'object');
  t.equal(o['x-kubernetes-preserve-unknown-fields'], true);
  t.strictSame(violations(s, 'WatchEvent', true), []);
});

const ref = (n: string) => ({ $ref: `#/components/schemas/${n}` });
const wrap = (n: string, extra: Record<string, unknown> = {}) => ({ ...extra, allOf: [ref(n)] });

t.test('cycles are cut with x-kubernetes-preserve-unknown-fields', async (t) => {
  const doc: OpenAPIV3Doc = {
    components: {
      schemas: {
        Root: { type: 'object', properties: { kind: { type: 'string' }, apiVersion: { type: 'string' }, metadata: wrap('Meta'), spec: wrap('Node', { description: 'the tree' }) } },
        Meta: { type: 'object', properties: { name: { type: 'string' } } },
        Node: {
          type: 'object',
          description: 'a node',
          properties: {
            value: { type: 'string' },
            children: { type: 'array', items: wrap('Node', { default: {} }) },
            byName: { type: 'object', additionalProperties: ref('Node') },
            other: wrap('Other'),
          },
        },
        Other: { type: 'object', properties: { back: wrap('Node') } },
        Self: ref('Self'),
      },
    },
  };
  const s = structuralSchema(doc, 'Root');
  t.strictSame(violations(s, 'Root', true), []);
  const spec = at(s, 'spec');
  t.equal(spec.description, 'the tree');
  t.equal(at(spec, 'value').type, 'string');
  t.strictSame(at(spec, 'children', '[]'), { description: 'a node', type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  t.strictSame(at(spec, 'byName', '{}'), { description: 'a node', type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  t.strictSame(at(spec, 'other', 'back'), { description: 'a node', type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  t.strictSame(at(s, 'metadata'), { type: 'object' });
  t.throws(() => structuralSchema(doc, 'Self'), /refers to itself/);
  t.throws(() => structuralSchema(doc, 'Missing'), /not found/);
});

t.test('keywords CRDs refuse are dropped, patch strategies become list types', async (t) => {
  const doc: OpenAPIV3Doc = {
    components: {
      schemas: {
        K: {
          type: 'object',
          required: ['metadata', 'spec'],
          'x-kubernetes-group-version-kind': [{ group: 'g.io', version: 'v1', kind: 'K' }],
          'x-kubernetes-unions': [{ discriminator: 'type' }],
          properties: {
            metadata: { type: 'object', properties: { name: { type: 'string' } }, default: {} },
            spec: {
              type: 'object',
              readOnly: true,
              'x-kubernetes-patch-strategy': 'retainKeys',
              properties: {
                merged: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer', format: 'int32' } } }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'port' },
                set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
                plain: { type: 'array', items: { type: 'string' } },
                both: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-patch-strategy': 'merge' },
                wrongList: { type: 'string', 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-map-type': 'atomic' },
                any: { type: 'object', additionalProperties: true },
                anything: { description: 'no type at all' },
                weird: { oneOf: [{ type: 'string' }, { type: 'boolean' }] },
                num: { type: 'integer', minimum: 1, maximum: 10, default: 5, nullable: true },
                zero: { type: 'integer', default: 0 },
                obj: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x' } },
                empty: { type: 'object' },
              },
            },
          },
        },
      },
    },
  };
  const s = structuralSchema(doc, 'K');
  t.strictSame(violations(s, 'K', true), []);
  t.strictSame(s.required, ['spec'], 'metadata dropped from required');
  t.strictSame(s.properties!.metadata, { type: 'object' });
  const spec = at(s, 'spec');
  t.notOk('readOnly' in spec);
  t.strictSame(at(spec, 'merged')['x-kubernetes-list-type'], 'map');
  t.strictSame(at(spec, 'merged')['x-kubernetes-list-map-keys'], ['port']);
  t.equal(at(spec, 'merged', '[]', 'port').default, 0, 'integer map key defaulted to 0');
  t.equal(at(spec, 'set')['x-kubernetes-list-type'], 'set');
  t.equal(at(spec, 'plain')['x-kubernetes-list-type'], undefined);
  t.equal(at(spec, 'both')['x-kubernetes-list-type'], 'atomic');
  t.strictSame(at(spec, 'wrongList'), { type: 'string' });
  t.strictSame(at(spec, 'any'), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  t.strictSame(at(spec, 'anything'), { description: 'no type at all', 'x-kubernetes-preserve-unknown-fields': true });
  t.strictSame(at(spec, 'weird'), { 'x-kubernetes-preserve-unknown-fields': true });
  t.strictSame(at(spec, 'num'), { type: 'integer', minimum: 1, maximum: 10, nullable: true, default: 5 });
  t.strictSame(at(spec, 'zero'), { type: 'integer' });
  t.notOk('default' in at(spec, 'obj'), 'object defaults dropped');
  t.strictSame(at(spec, 'empty'), { type: 'object' }, 'an empty struct prunes as on the native kind');
});

t.test('denaturedCRD refuses a label value longer than 63 characters', async (t) => {
  const doc = docFor('rbac.authorization.k8s.io');
  const k: NativeKind = { group: 'a'.repeat(50) + '.example.com', version: 'v1', kind: 'Role', plural: 'roles', singular: 'role', namespaced: true, hasStatus: false };
  t.throws(() => denaturedCRD(doc, k, 'io.k8s.api.rbac.v1.Role'), /label/);
});
