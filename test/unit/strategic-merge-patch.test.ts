import t from 'tap';
import { deepFreeze } from '../../src/kube/json.js';
import {
  applyStrategicMergePatch,
  NO_PATCH_META,
  schemaPatchMeta,
  StrategicMergePatchError,
  type PatchMeta,
} from '../../src/storage/strategic-merge-patch.js';

// Small hand-written OpenAPI v3 schemas shaped like the real ones (kube-apiserver's
// /openapi/v3/apis/apps/v1 etc.): properties point to components through `allOf: [{$ref}]`, and the
// patch extensions sit on the property. Only the fields the cases use are described.
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const allOf = (name: string, extra: object = {}) => ({ allOf: [ref(name)], default: {}, ...extra });
const str = { type: 'string' };
const strList = (extra: object = {}) => ({ type: 'array', items: { type: 'string', default: '' }, ...extra });
const atomic = { 'x-kubernetes-list-type': 'atomic' };
const listMap = (key: string, items: string, extra: object = {}) => ({
  type: 'array',
  items: allOf(items),
  'x-kubernetes-list-map-keys': [key],
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-patch-merge-key': key,
  'x-kubernetes-patch-strategy': 'merge',
  ...extra,
});

const schemas: Record<string, object> = {
  ObjectMeta: {
    type: 'object',
    properties: {
      name: str,
      namespace: str,
      labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
      annotations: { type: 'object', additionalProperties: { type: 'string', default: '' } },
      // finalizers: patchStrategy merge, list of primitives.
      finalizers: strList({ 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' }),
      ownerReferences: listMap('uid', 'OwnerReference'),
    },
  },
  OwnerReference: { type: 'object', properties: { uid: str, kind: str, name: str, controller: { type: 'boolean' } } },
  Deployment: {
    type: 'object',
    properties: { apiVersion: str, kind: str, metadata: allOf('ObjectMeta'), spec: allOf('DeploymentSpec') },
    'x-kubernetes-group-version-kind': [{ group: 'apps', kind: 'Deployment', version: 'v1' }],
  },
  DeploymentSpec: {
    type: 'object',
    properties: {
      replicas: { type: 'integer' },
      strategy: allOf('DeploymentStrategy', { 'x-kubernetes-patch-strategy': 'retainKeys' }),
      template: allOf('PodTemplateSpec'),
    },
  },
  DeploymentStrategy: { type: 'object', properties: { type: str, rollingUpdate: allOf('RollingUpdateDeployment') } },
  RollingUpdateDeployment: { type: 'object', properties: { maxSurge: {}, maxUnavailable: {} } },
  PodTemplateSpec: { type: 'object', properties: { metadata: allOf('ObjectMeta'), spec: allOf('PodSpec') } },
  PodSpec: {
    type: 'object',
    properties: {
      containers: listMap('name', 'Container'),
      initContainers: listMap('name', 'Container'),
      volumes: listMap('name', 'Volume', { 'x-kubernetes-patch-strategy': 'merge,retainKeys' }),
      tolerations: { type: 'array', items: allOf('Toleration'), ...atomic },
      securityContext: allOf('PodSecurityContext'),
    },
  },
  Container: {
    type: 'object',
    properties: {
      name: str,
      image: str,
      args: strList(atomic),
      // Real: merge key containerPort, list-map-keys [containerPort, protocol]; the patch strategy wins.
      ports: {
        ...listMap('containerPort', 'ContainerPort'),
        'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
      },
      env: listMap('name', 'EnvVar'),
      resources: allOf('ResourceRequirements'),
    },
    required: ['name'],
  },
  ContainerPort: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: str, name: str } },
  EnvVar: { type: 'object', properties: { name: str, value: str, valueFrom: { type: 'object' } } },
  ResourceRequirements: { type: 'object' },
  Toleration: { type: 'object' },
  PodSecurityContext: { type: 'object' },
  Volume: {
    type: 'object',
    properties: { name: str, emptyDir: allOf('EmptyDirVolumeSource'), configMap: allOf('ConfigMapVolumeSource') },
  },
  EmptyDirVolumeSource: { type: 'object' },
  ConfigMapVolumeSource: { type: 'object', properties: { name: str } },
  // rbac/v1: rules and subjects carry no patch extension at all: replaced.
  ClusterRole: {
    type: 'object',
    properties: {
      metadata: allOf('ObjectMeta'),
      rules: { type: 'array', items: allOf('PolicyRule') },
      aggregationRule: allOf('AggregationRule'),
    },
  },
  AggregationRule: { type: 'object', properties: { clusterRoleSelectors: { type: 'array', items: allOf('LabelSelector') } } },
  LabelSelector: { type: 'object' },
  PolicyRule: { type: 'object', properties: { apiGroups: strList(), resources: strList(), verbs: strList() } },
  RoleBinding: {
    type: 'object',
    properties: { metadata: allOf('ObjectMeta'), roleRef: allOf('RoleRef'), subjects: { type: 'array', items: allOf('Subject') } },
  },
  RoleRef: { type: 'object', properties: { apiGroup: str, kind: str, name: str } },
  Subject: { type: 'object', properties: { apiGroup: str, kind: str, name: str } },
  ValidatingWebhookConfiguration: {
    type: 'object',
    properties: { metadata: allOf('ObjectMeta'), webhooks: listMap('name', 'ValidatingWebhook') },
  },
  ValidatingWebhook: {
    type: 'object',
    properties: {
      name: str,
      clientConfig: allOf('WebhookClientConfig'),
      rules: { type: 'array', items: allOf('RuleWithOperations'), ...atomic },
      failurePolicy: str,
    },
  },
  WebhookClientConfig: { type: 'object', properties: { caBundle: str, service: { type: 'object' } } },
  RuleWithOperations: { type: 'object' },
  ServiceAccount: {
    type: 'object',
    properties: {
      metadata: allOf('ObjectMeta'),
      secrets: listMap('name', 'ObjectReference'),
      imagePullSecrets: { type: 'array', items: allOf('LocalObjectReference'), ...atomic },
    },
  },
  ObjectReference: { type: 'object', properties: { name: str } },
  LocalObjectReference: { type: 'object', properties: { name: str } },
  // A custom-resource-like schema: list-type only, no patch extensions.
  Widget: {
    type: 'object',
    properties: {
      metadata: allOf('ObjectMeta'),
      spec: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        properties: {
          endpoints: {
            type: 'array',
            items: { type: 'object' },
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['host', 'port'],
          },
          members: { type: 'array', items: { type: 'object' }, 'x-kubernetes-patch-strategy': 'merge' },
          opaque: { type: 'object', 'x-kubernetes-patch-strategy': 'replace' },
        },
      },
      status: {
        type: 'object',
        properties: {
          conditions: {
            type: 'array',
            items: { type: 'object', properties: { type: str, status: str } },
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['type'],
          },
        },
      },
    },
  },
};

const resolveRef = (r: string) => schemas[r.replace('#/components/schemas/', '')];
const metaFor = (kind: string): PatchMeta => schemaPatchMeta(schemas[kind]!, resolveRef);

/** A Deployment fragment holding only spec.template.spec. */
const pod = (spec: object) => ({ spec: { template: { spec } } });
const container = (name: string, extra: object = {}) => ({ name, image: `${name}:1`, ...extra });

interface Case {
  name: string;
  kind: string;
  original: unknown;
  patch: unknown;
  expected: unknown;
}

const cases: Case[] = [
  // ---- maps ----------------------------------------------------------------------------------
  {
    name: 'maps merge recursively, null deletes a key',
    kind: 'Deployment',
    original: { metadata: { name: 'web', labels: { app: 'web', tier: 'front' }, annotations: { a: '1' } }, spec: { replicas: 2 } },
    patch: { metadata: { labels: { tier: null, track: 'stable' }, annotations: null, nope: null }, spec: { replicas: 3, paused: true } },
    expected: { metadata: { name: 'web', labels: { app: 'web', track: 'stable' } }, spec: { replicas: 3, paused: true } },
  },
  {
    name: 'a value of another JSON type replaces the original',
    kind: 'Deployment',
    original: { spec: { replicas: 2, strategy: 'odd' } },
    patch: { spec: { replicas: '3', strategy: { type: 'Recreate' } } },
    expected: { spec: { replicas: '3', strategy: { type: 'Recreate' } } },
  },
  {
    name: '$patch: replace on a map takes the patch map, without its nulls',
    kind: 'Deployment',
    original: { spec: { template: { metadata: { labels: { app: 'web', tier: 'front' } } } } },
    patch: { spec: { template: { metadata: { labels: { $patch: 'replace', app: 'web2', gone: null } } } } },
    expected: { spec: { template: { metadata: { labels: { app: 'web2' } } } } },
  },
  {
    name: '$patch: delete on a map leaves {} where the original had it, nothing where it did not',
    kind: 'Deployment',
    original: { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
    patch: { spec: { strategy: { rollingUpdate: { $patch: 'delete' } }, template: { spec: { securityContext: { $patch: 'delete' } } } } },
    expected: { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: {} }, template: { spec: {} } } },
  },
  {
    name: '$patch: delete at the top empties the object',
    kind: 'Deployment',
    original: { kind: 'Deployment', metadata: { name: 'web' } },
    patch: { $patch: 'delete' },
    expected: {},
  },
  {
    name: '$patch: replace at the top takes the patch',
    kind: 'Deployment',
    original: { kind: 'Deployment', metadata: { name: 'web', labels: { a: 'b' } }, spec: { replicas: 1 } },
    patch: { $patch: 'replace', kind: 'Deployment', metadata: { name: 'web' } },
    expected: { kind: 'Deployment', metadata: { name: 'web' } },
  },
  {
    name: '$patch: merge on a map is the default merge',
    kind: 'Deployment',
    original: { metadata: { labels: { app: 'web' } } },
    patch: { metadata: { labels: { $patch: 'merge', track: 'canary' } } },
    expected: { metadata: { labels: { app: 'web', track: 'canary' } } },
  },
  {
    name: '$retainKeys (strategy retainKeys): RollingUpdate -> Recreate clears rollingUpdate',
    kind: 'Deployment',
    original: { spec: { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } },
    patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
    expected: { spec: { replicas: 1, strategy: { type: 'Recreate' } } },
  },

  // ---- lists merged by key --------------------------------------------------------------------
  {
    name: 'containers merge by name (kubectl patch)',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({ containers: [{ name: 'app', image: 'app:2' }] }),
    expected: pod({ containers: [container('app', { image: 'app:2' }), container('sidecar')] }),
  },
  {
    name: 'a new container without $setElementOrder goes before the live-only ones (as apimachinery)',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({ containers: [container('log')] }),
    expected: pod({ containers: [container('log'), container('app'), container('sidecar')] }),
  },
  {
    name: 'kubectl apply: $setElementOrder/containers with a changed and an added container',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({
      '$setElementOrder/containers': [{ name: 'app' }, { name: 'log' }, { name: 'sidecar' }],
      containers: [{ name: 'app', image: 'app:2' }, container('log')],
    }),
    expected: pod({ containers: [container('app', { image: 'app:2' }), container('log'), container('sidecar')] }),
  },
  {
    name: 'kubectl apply: deleting a container with $patch: delete',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({ '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'sidecar', $patch: 'delete' }] }),
    expected: pod({ containers: [container('app')] }),
  },
  {
    name: '$setElementOrder keeps a live-only container at its live position',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('istio-proxy'), container('worker')] }),
    patch: pod({
      '$setElementOrder/containers': [{ name: 'app' }, { name: 'worker' }],
      containers: [{ name: 'worker', image: 'worker:2' }],
    }),
    expected: pod({ containers: [container('app'), container('istio-proxy'), container('worker', { image: 'worker:2' })] }),
  },
  {
    name: '$setElementOrder reorders; a live-only item goes before the first ordered item that follows it live',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('istio-proxy'), container('worker')] }),
    patch: pod({
      '$setElementOrder/containers': [{ name: 'worker' }, { name: 'app' }],
      containers: [{ name: 'worker', image: 'worker:2' }],
    }),
    expected: pod({ containers: [container('istio-proxy'), container('worker', { image: 'worker:2' }), container('app')] }),
  },
  {
    name: '$setElementOrder/env alone reorders env',
    kind: 'Deployment',
    original: pod({ containers: [container('app', { env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }, { name: 'C', value: '3' }] })] }),
    patch: pod({
      '$setElementOrder/containers': [{ name: 'app' }],
      containers: [{ name: 'app', '$setElementOrder/env': [{ name: 'C' }, { name: 'A' }, { name: 'B' }] }],
    }),
    expected: pod({ containers: [container('app', { env: [{ name: 'C', value: '3' }, { name: 'A', value: '1' }, { name: 'B', value: '2' }] })] }),
  },
  {
    name: 'env merges by name; null clears a field of an item',
    kind: 'Deployment',
    original: pod({ containers: [container('app', { env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] })] }),
    patch: pod({ containers: [{ name: 'app', env: [{ name: 'B', value: null, valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }),
    expected: pod({
      containers: [container('app', { env: [{ name: 'A', value: '1' }, { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] })],
    }),
  },
  {
    name: 'ports merge by containerPort (the patch strategy wins over list-map-keys); delete by number',
    kind: 'Deployment',
    original: pod({ containers: [container('app', { ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443, protocol: 'TCP' }] })] }),
    patch: pod({ containers: [{ name: 'app', ports: [{ containerPort: 80, $patch: 'delete' }, { containerPort: 443, name: 'https' }] }] }),
    expected: pod({ containers: [container('app', { ports: [{ containerPort: 443, protocol: 'TCP', name: 'https' }] })] }),
  },
  {
    name: 'volumes (merge,retainKeys): kubectl apply switches a volume from emptyDir to configMap',
    kind: 'Deployment',
    original: pod({ volumes: [{ name: 'data', emptyDir: {} }, { name: 'cfg', configMap: { name: 'cfg' } }] }),
    patch: pod({
      '$setElementOrder/volumes': [{ name: 'data' }, { name: 'cfg' }],
      volumes: [{ $retainKeys: ['configMap', 'name'], name: 'data', configMap: { name: 'data-cm' } }],
    }),
    expected: pod({ volumes: [{ name: 'data', configMap: { name: 'data-cm' } }, { name: 'cfg', configMap: { name: 'cfg' } }] }),
  },
  {
    name: '$patch: replace as a list item replaces the merge list',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({ containers: [container('only'), { $patch: 'replace' }] }),
    expected: pod({ containers: [container('only')] }),
  },
  {
    name: '$patch: replace as a list item, with $setElementOrder (kubectl replace of a merge list)',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({
      '$setElementOrder/containers': [{ name: 'y' }, { name: 'x' }],
      containers: [container('y'), container('x'), { $patch: 'replace' }],
    }),
    expected: pod({ containers: [container('y'), container('x')] }),
  },
  {
    name: '$patch: merge as a list item is a no-op marker',
    kind: 'Deployment',
    original: pod({ containers: [container('app'), container('sidecar')] }),
    patch: pod({ containers: [{ name: 'app', image: 'app:3' }, { $patch: 'merge' }] }),
    expected: pod({ containers: [container('app', { image: 'app:3' }), container('sidecar')] }),
  },
  {
    name: 'a new item is taken without directives or nulls',
    kind: 'Deployment',
    original: pod({ containers: [container('app')] }),
    patch: pod({
      containers: [
        {
          name: 'new',
          image: 'new:1',
          resources: null,
          '$setElementOrder/env': [{ name: 'Y' }, { name: 'X' }],
          env: [{ name: 'Y', value: 'y', valueFrom: null }, { name: 'X', value: 'x' }],
          ports: [{ containerPort: 1, $patch: 'delete' }],
          '$deleteFromPrimitiveList/args': ['--gone'],
        },
      ],
    }),
    expected: pod({
      containers: [{ name: 'new', image: 'new:1', env: [{ name: 'Y', value: 'y' }, { name: 'X', value: 'x' }], ports: [] }, container('app')],
    }),
  },
  {
    name: 'ownerReferences merge by uid',
    kind: 'Deployment',
    original: { metadata: { ownerReferences: [{ uid: 'u1', kind: 'Thing', name: 't1' }, { uid: 'u2', kind: 'Thing', name: 't2' }] } },
    patch: { metadata: { ownerReferences: [{ uid: 'u2', controller: true }] } },
    expected: { metadata: { ownerReferences: [{ uid: 'u1', kind: 'Thing', name: 't1' }, { uid: 'u2', kind: 'Thing', name: 't2', controller: true }] } },
  },
  {
    name: 'ValidatingWebhookConfiguration: webhooks merge by name, their atomic rules are replaced',
    kind: 'ValidatingWebhookConfiguration',
    original: {
      webhooks: [
        {
          name: 'a.example.com',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          clientConfig: { service: { name: 'svc', namespace: 'ns' }, caBundle: 'AAA' },
          failurePolicy: 'Fail',
        },
        { name: 'b.example.com', failurePolicy: 'Ignore' },
      ],
    },
    patch: { webhooks: [{ name: 'a.example.com', rules: [{ operations: ['UPDATE'] }], clientConfig: { caBundle: 'BBB' } }] },
    expected: {
      webhooks: [
        {
          name: 'a.example.com',
          rules: [{ operations: ['UPDATE'] }],
          clientConfig: { service: { name: 'svc', namespace: 'ns' }, caBundle: 'BBB' },
          failurePolicy: 'Fail',
        },
        { name: 'b.example.com', failurePolicy: 'Ignore' },
      ],
    },
  },
  {
    name: 'ValidatingWebhookConfiguration: $patch: delete removes a webhook by name',
    kind: 'ValidatingWebhookConfiguration',
    original: { webhooks: [{ name: 'a.example.com' }, { name: 'b.example.com' }] },
    patch: { webhooks: [{ name: 'b.example.com', $patch: 'delete' }] },
    expected: { webhooks: [{ name: 'a.example.com' }] },
  },
  {
    name: 'ServiceAccount: secrets merge by name',
    kind: 'ServiceAccount',
    original: { secrets: [{ name: 'token-1' }] },
    patch: { secrets: [{ name: 'token-2' }] },
    expected: { secrets: [{ name: 'token-2' }, { name: 'token-1' }] },
  },

  // ---- lists replaced -------------------------------------------------------------------------
  {
    name: 'ClusterRole: rules (no patch strategy) are replaced',
    kind: 'ClusterRole',
    original: {
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
      ],
    },
    patch: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch'] }] },
    expected: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch'] }] },
  },
  {
    name: 'ClusterRole: aggregationRule.clusterRoleSelectors are replaced',
    kind: 'ClusterRole',
    original: { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'true' } }] } },
    patch: { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { b: 'true' } }] } },
    expected: { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { b: 'true' } }] } },
  },
  {
    name: 'RoleBinding: subjects (no patch strategy in the OpenAPI) are replaced; roleRef merges',
    kind: 'RoleBinding',
    original: {
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'alice' }, { kind: 'User', name: 'bob' }],
    },
    patch: { roleRef: { name: 'r2' }, subjects: [{ kind: 'Group', name: 'devs' }] },
    expected: {
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r2' },
      subjects: [{ kind: 'Group', name: 'devs' }],
    },
  },
  {
    name: 'ServiceAccount: imagePullSecrets (list-type atomic) are replaced',
    kind: 'ServiceAccount',
    original: { imagePullSecrets: [{ name: 'r1' }] },
    patch: { imagePullSecrets: [{ name: 'r2' }] },
    expected: { imagePullSecrets: [{ name: 'r2' }] },
  },
  {
    name: 'args and tolerations (atomic) are replaced; directive items in them are dropped',
    kind: 'Deployment',
    original: pod({ containers: [container('app', { args: ['--a', '--b'] })], tolerations: [{ key: 'k1', operator: 'Exists' }] }),
    patch: pod({ containers: [{ name: 'app', args: ['--c'] }], tolerations: [{ key: 'k2', operator: 'Exists' }, { $patch: 'replace' }] }),
    expected: pod({ containers: [container('app', { args: ['--c'] })], tolerations: [{ key: 'k2', operator: 'Exists' }] }),
  },

  // ---- lists of primitives ----------------------------------------------------------------------
  {
    name: 'finalizers (merge) are a set union; new values first, in patch order',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a.io/x', 'b.io/y', 'a.io/x'] } },
    patch: { metadata: { finalizers: ['c.io/z', 'a.io/x'] } },
    expected: { metadata: { finalizers: ['c.io/z', 'a.io/x', 'b.io/y'] } },
  },
  {
    name: '$deleteFromPrimitiveList/finalizers removes values',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a', 'b', 'c', 'b'] } },
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zz'] } },
    expected: { metadata: { finalizers: ['a', 'c'] } },
  },
  {
    name: 'kubectl apply on finalizers: $setElementOrder + $deleteFromPrimitiveList + additions',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a', 'b', 'c'] } },
    patch: {
      metadata: { '$setElementOrder/finalizers': ['a', 'c', 'd'], '$deleteFromPrimitiveList/finalizers': ['b'], finalizers: ['d'] },
    },
    expected: { metadata: { finalizers: ['a', 'c', 'd'] } },
  },
  {
    name: '$setElementOrder alone reorders; values it names that the list lacks are ignored',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a', 'c'] } },
    patch: { metadata: { '$setElementOrder/finalizers': ['c', 'b', 'a'] } },
    expected: { metadata: { finalizers: ['c', 'a'] } },
  },
  {
    name: '$setElementOrder with a list the original lacks',
    kind: 'Deployment',
    original: { metadata: {} },
    patch: { metadata: { '$setElementOrder/finalizers': ['y', 'x'], finalizers: ['y', 'x'] } },
    expected: { metadata: { finalizers: ['y', 'x'] } },
  },

  // ---- metadata from list-type only / no schema ------------------------------------------------
  {
    name: 'list-type map with a single key and no patch strategy merges on that key',
    kind: 'Widget',
    original: { status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'Synced', status: 'True' }] } },
    patch: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    expected: { status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Synced', status: 'True' }] } },
  },
  {
    name: 'list-type map with two keys (not expressible in SMP) is replaced',
    kind: 'Widget',
    original: { spec: { endpoints: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }] } },
    patch: { spec: { endpoints: [{ host: 'a', port: 1, weight: 3 }] } },
    expected: { spec: { endpoints: [{ host: 'a', port: 1, weight: 3 }] } },
  },
  {
    name: 'a map with strategy replace is replaced',
    kind: 'Widget',
    original: { spec: { opaque: { a: 1, b: { c: 2 } } } },
    patch: { spec: { opaque: { b: { d: 3 }, e: null } } },
    expected: { spec: { opaque: { b: { d: 3 } } } },
  },
  {
    name: 'fields the schema lacks: maps merge, lists replace',
    kind: 'Widget',
    original: { spec: { extra: { list: [1, 2], keep: true } } },
    patch: { spec: { extra: { list: [3], added: 'x' } } },
    expected: { spec: { extra: { list: [3], keep: true, added: 'x' } } },
  },
];

t.test('applyStrategicMergePatch', async (t) => {
  for (const c of cases) {
    t.test(c.name, async (t) => {
      t.strictSame(applyStrategicMergePatch(c.original, c.patch, metaFor(c.kind)), c.expected);
    });
  }
});

interface ErrorCase {
  name: string;
  kind: string;
  original: unknown;
  patch: unknown;
  error: RegExp;
}

const errorCases: ErrorCase[] = [
  {
    name: 'merge list item without its merge key',
    kind: 'Deployment',
    original: pod({ containers: [container('app')] }),
    patch: pod({ containers: [{ image: 'x:1' }] }),
    error: /does not contain declared merge key: name/,
  },
  {
    name: '$patch: delete list item without its merge key',
    kind: 'Deployment',
    original: pod({ containers: [container('app')] }),
    patch: pod({ containers: [{ $patch: 'delete', image: 'app:1' }] }),
    error: /does not contain declared merge key: name/,
  },
  {
    name: 'unknown $patch directive on a map',
    kind: 'Deployment',
    original: { metadata: { labels: { a: 'b' } } },
    patch: { metadata: { labels: { $patch: 'explode' } } },
    error: /unknown \$patch directive "explode"/,
  },
  {
    name: 'unknown $patch directive in a list',
    kind: 'Deployment',
    original: pod({ containers: [container('app')] }),
    patch: pod({ containers: [{ name: 'app', $patch: 'explode' }] }),
    error: /unknown \$patch directive/,
  },
  {
    name: 'unknown $patch directive in a value the original lacks',
    kind: 'Deployment',
    original: {},
    patch: { spec: { $patch: 42 } },
    error: /unknown \$patch directive 42/,
  },
  {
    name: 'patch list order contradicting $setElementOrder',
    kind: 'Deployment',
    original: pod({ containers: [container('a'), container('b')] }),
    patch: pod({
      '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
      containers: [{ name: 'b', image: 'b:2' }, { name: 'a', image: 'a:2' }],
    }),
    error: /doesn't match/,
  },
  {
    name: '$setElementOrder item without the merge key',
    kind: 'Deployment',
    original: pod({ containers: [container('a')] }),
    patch: pod({ '$setElementOrder/containers': [{ image: 'a:1' }] }),
    error: /does not contain declared merge key: name/,
  },
  {
    name: '$setElementOrder that is not a list',
    kind: 'Deployment',
    original: pod({ containers: [container('a')] }),
    patch: pod({ '$setElementOrder/containers': { name: 'a' } }),
    error: /\$setElementOrder\/containers: must be a list/,
  },
  {
    name: '$setElementOrder on a list of maps without a merge key',
    kind: 'ClusterRole',
    original: { rules: [{ verbs: ['get'] }] },
    patch: { '$setElementOrder/rules': [{ verbs: ['get'] }] },
    error: /ordering a list of maps needs a merge key/,
  },
  {
    name: '$retainKeys not listing a key the patch sets',
    kind: 'Deployment',
    original: pod({ volumes: [{ name: 'data', emptyDir: {} }] }),
    patch: pod({ volumes: [{ $retainKeys: ['name'], name: 'data', configMap: { name: 'cm' } }] }),
    error: /sets "configMap", which \$retainKeys does not list/,
  },
  {
    name: '$retainKeys that is not a list',
    kind: 'Deployment',
    original: { spec: { strategy: { type: 'Recreate' } } },
    patch: { spec: { strategy: { $retainKeys: 'type', type: 'Recreate' } } },
    error: /\$retainKeys: must be a list of field names/,
  },
  {
    name: '$deleteFromPrimitiveList that is not a list',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a'] } },
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
    error: /must be a list of primitives/,
  },
  {
    name: '$deleteFromPrimitiveList on a list of maps',
    kind: 'Deployment',
    original: pod({ containers: [container('a')] }),
    patch: pod({ '$deleteFromPrimitiveList/containers': ['a'] }),
    error: /applies to lists of primitives only/,
  },
  {
    name: 'directive key without a field name',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a'] } },
    patch: { metadata: { $deleteFromPrimitiveList: ['a'] } },
    error: /invalid directive key "\$deleteFromPrimitiveList"/,
  },
  {
    name: 'merge list with items of different types',
    kind: 'Deployment',
    original: { metadata: { finalizers: ['a'] } },
    patch: { metadata: { finalizers: [1] } },
    error: /not all of the same type/,
  },
  {
    name: 'merge list of lists',
    kind: 'Deployment',
    original: { metadata: { finalizers: [['a']] } },
    patch: { metadata: { finalizers: [['b']] } },
    error: /lists of lists/,
  },
  {
    name: 'list of maps with strategy merge but no merge key',
    kind: 'Widget',
    original: { spec: { members: [{ a: 1 }] } },
    patch: { spec: { members: [{ a: 2 }] } },
    error: /needs a merge key/,
  },
  {
    name: 'a patch that is not an object',
    kind: 'Deployment',
    original: {},
    patch: [{ op: 'add' }],
    error: /must be a JSON object/,
  },
];

t.test('invalid patches throw StrategicMergePatchError', async (t) => {
  for (const c of errorCases) {
    t.test(c.name, async (t) => {
      t.throws(() => applyStrategicMergePatch(c.original, c.patch, metaFor(c.kind)), StrategicMergePatchError);
      t.throws(() => applyStrategicMergePatch(c.original, c.patch, metaFor(c.kind)), { message: c.error });
    });
  }
});


function objectsIn(v: unknown, out = new Set<object>()): Set<object> {
  if (v && typeof v === 'object') {
    out.add(v);
    for (const x of Object.values(v)) objectsIn(x, out);
  }
  return out;
}

t.test('inputs are never modified and never shared with the result', async (t) => {
  for (const c of [...cases, ...errorCases]) {
    const original = deepFreeze(structuredClone(c.original));
    const patch = deepFreeze(structuredClone(c.patch));
    const before = JSON.stringify([original, patch]);
    let result: unknown;
    try {
      result = applyStrategicMergePatch(original, patch, metaFor(c.kind));
    } catch (err) {
      // Writing to a frozen input would be a TypeError, not a patch error.
      t.type(err, StrategicMergePatchError, c.name);
    }
    t.equal(JSON.stringify([original, patch]), before, c.name);
    const inputs = objectsIn([original, patch]);
    t.notOk([...objectsIn(result)].some((o) => inputs.has(o)), `${c.name}: result shares no object with the inputs`);
  }
});

t.test('null or undefined original is an empty object', async (t) => {
  t.strictSame(applyStrategicMergePatch(undefined, { a: { b: 1, c: null } }, NO_PATCH_META), { a: { b: 1 } });
  t.strictSame(applyStrategicMergePatch(null, { $patch: 'delete' }, NO_PATCH_META), {});
  t.throws(() => applyStrategicMergePatch([1], {}, NO_PATCH_META), StrategicMergePatchError);
});

t.test('schemaPatchMeta', async (t) => {
  const deployment = metaFor('Deployment');
  const podSpec = deployment.lookup('spec').lookup('template').lookup('spec');
  const containers = podSpec.lookup('containers');
  t.match(containers, { strategy: 'merge', mergeKey: 'name', retainKeys: false });
  t.match(containers.items().lookup('ports'), { strategy: 'merge', mergeKey: 'containerPort' });
  t.match(containers.items().lookup('args'), { strategy: 'replace', mergeKey: undefined });
  t.match(podSpec.lookup('volumes'), { strategy: 'merge', mergeKey: 'name', retainKeys: true });
  t.match(deployment.lookup('spec').lookup('strategy'), { strategy: undefined, retainKeys: true });
  t.match(deployment.lookup('metadata').lookup('finalizers'), { strategy: 'merge', mergeKey: undefined });
  t.match(deployment.lookup('metadata').lookup('labels').lookup('anything'), { strategy: undefined });
  t.equal(deployment.lookup('nope'), NO_PATCH_META);
  t.equal(deployment.lookup('spec'), deployment.lookup('spec'), 'lookups are memoized');
  t.match(metaFor('ClusterRole').lookup('rules'), { strategy: undefined, mergeKey: undefined });
  t.match(metaFor('RoleBinding').lookup('subjects'), { strategy: undefined, mergeKey: undefined });
  t.match(metaFor('Widget').lookup('status').lookup('conditions'), { strategy: 'merge', mergeKey: 'type' });

  // Recursive schemas (JSONSchemaProps-like) resolve lazily.
  const recursive: Record<string, object> = {
    Props: { properties: { properties: { additionalProperties: ref('Props') }, items: allOf('Props') } },
  };
  const props = schemaPatchMeta(recursive.Props!, (r) => recursive[r.replace('#/components/schemas/', '')]);
  t.equal(props.lookup('properties').lookup('x').lookup('items').lookup('properties').lookup('y').strategy, undefined);

  const broken = schemaPatchMeta({ properties: { a: ref('Missing') } }, () => undefined);
  t.throws(() => broken.lookup('a'), /cannot be resolved/);
  const bad = schemaPatchMeta({ properties: { a: { 'x-kubernetes-patch-strategy': 'merge,replace' } } }, () => undefined);
  t.throws(() => bad.lookup('a'), /unexpected x-kubernetes-patch-strategy/);
});
