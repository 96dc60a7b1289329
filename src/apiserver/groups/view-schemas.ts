// The OpenAPI schemas of the kinds this server serves (Space, and the virtual Binding,
// CombinedStatus and UpsyncedObject in view.kubestellar.io and control.kubestellar.io), named as kube-apiserver names a
// CRD's (io.kubestellar.view.v1alpha1.Binding), for OpenAPI v2 definitions and v3 components alike
// (`ref` makes a reference in either form). KubeStellar's field names and shapes; descriptions our own.
import { BINDINGS, COMBINED_STATUSES, GROUP, UPSYNCED_OBJECTS, VERSION, VIRTUAL_KINDS } from './view-group.js';
import type { VirtualKind } from '../virtual/read-only-resource.js';

type Ref = (n: string) => string;

/** The schema of a kind: apiVersion, kind, ObjectMeta, and its own fields (spec and status, or CombinedStatus's results). */
function kindSchema(ref: Ref, kind: string, description: string, own: Record<string, object>, group = GROUP) {
  return {
    description,
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta') },
      ...own,
    },
    'x-kubernetes-group-version-kind': [{ group, version: VERSION, kind }],
  };
}

function spaceSchema(ref: Ref) {
  return kindSchema(ref, 'Space', 'Space is a Workload Definition Space served through the view. status.viewURL is the server URL of a kubeconfig for the view.', {
    spec: {
      type: 'object',
      properties: { type: { type: 'string', description: 'WDS' }, server: { type: 'string', description: 'URL of the WDS kube-apiserver.' } },
    },
    status: {
      type: 'object',
      properties: {
        phase: { type: 'string' },
        viewPath: { type: 'string', description: 'Path of the view root on the WDS kube-apiserver.' },
        viewURL: { type: 'string', description: 'URL of the view root.' },
      },
    },
  });
}

/** OpenAPI schema names of a group's kinds, as kube-apiserver names a CRD's: io.kubestellar.view.v1alpha1.Binding. */
export const schemaPrefix = (group: string) => `${group.split('.').reverse().join('.')}.${VERSION}`;

/** KubeStellar v0.29's Binding (api/control/v1alpha1/types.go), descriptions our own. */
function bindingSchema(ref: Ref, group: string) {
  const clause = (namespaced: boolean) => ({
    type: 'object',
    required: ['group', 'version', 'resource', ...(namespaced ? ['namespace'] : []), 'name', 'resourceVersion'],
    properties: {
      group: { type: 'string' }, version: { type: 'string' }, resource: { type: 'string' },
      ...(namespaced ? { namespace: { type: 'string', description: 'Namespace of the object.' } } : {}),
      name: { type: 'string', description: 'Name of the object.' },
      resourceVersion: { type: 'string', description: 'The resourceVersion of the object that was placed.' },
      createOnly: { type: 'boolean', description: 'In each cluster, the object is created but never updated once it exists.' },
      statusCollectors: { type: 'array', items: { type: 'string' }, description: 'Names of the StatusCollectors applied to the object.' },
      wantSingletonReportedState: { type: 'boolean', description: 'The status from the one cluster the object goes to is wanted back in the WDS.' },
      wantMultiWECReportedState: { type: 'boolean', description: 'The status from several clusters is wanted back, combined, in the WDS.' },
    },
  });
  return kindSchema(ref, 'Binding', 'Binding is the resolution of one BindingPolicy (same name, its owner): which workload objects go to which clusters, and how. Virtual: computed by kubestellar-view\'s placement controllers, never stored.', {
    spec: {
      type: 'object',
      properties: {
        workload: {
          type: 'object',
          properties: {
            clusterScope: { type: 'array', items: clause(false), description: 'Cluster-scoped objects the policy selects, with the policy\'s modulation of each.' },
            namespaceScope: { type: 'array', items: clause(true), description: 'Namespaced objects the policy selects, with the policy\'s modulation of each.' },
          },
        },
        destinations: { type: 'array', items: { type: 'object', required: ['clusterId'], properties: { clusterId: { type: 'string' } } }, description: 'The clusters the policy selects.' },
      },
    },
    status: {
      type: 'object',
      required: ['observedGeneration'],
      properties: {
        observedGeneration: { type: 'integer', format: 'int64', description: 'The generation of the BindingPolicy the placement controllers have acted on.' },
        errors: { type: 'array', items: { type: 'string' }, description: 'The BindingPolicy\'s errors.' },
        conditions: {
          type: 'array', description: 'The BindingPolicy\'s conditions (Ready, Synced).',
          items: {
            type: 'object', required: ['type', 'status'],
            properties: {
              type: { type: 'string' }, status: { type: 'string' }, observedGeneration: { type: 'integer', format: 'int64' },
              lastTransitionTime: { type: 'string', format: 'date-time' }, reason: { type: 'string' }, message: { type: 'string' },
            },
          },
        },
        destinations: {
          type: 'array',
          description: 'kubestellar-view\'s addition: per destination cluster, whether it is ready, how many objects the policy sends there, how many are in each state (Available, Applied, Pending, ApplyFailed, Conflict, ClusterNotReady, WaitingForRemoval), and the first 10 that are not Available, with why.',
          items: {
            type: 'object', required: ['clusterId', 'ready', 'objects', 'states'],
            properties: {
              clusterId: { type: 'string' }, ready: { type: 'boolean' }, objects: { type: 'integer' },
              states: { type: 'object', additionalProperties: { type: 'integer' } },
              brokenObjects: {
                type: 'array',
                items: {
                  type: 'object', required: ['group', 'resource', 'name', 'state'],
                  properties: { group: { type: 'string' }, resource: { type: 'string' }, namespace: { type: 'string' }, name: { type: 'string' }, state: { type: 'string' }, message: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
  }, group);
}

/**
 * KubeStellar's CombinedStatus (api/control/v1alpha1/types.go): `results` at the top level, no spec
 * nor status; a Value is a union tagged by `type`, a Number's value a decimal string under `float`.
 * `errors` is our addition.
 */
function combinedStatusSchema(ref: Ref, group: string) {
  const json = { 'x-kubernetes-preserve-unknown-fields': true };
  const value = {
    type: 'object', required: ['type'],
    description: 'One JSON value, tagged by its type; only the field of that type is set.',
    properties: {
      type: { type: 'string', enum: ['String', 'Number', 'Bool', 'Null', 'Object', 'Array'] },
      string: { type: 'string' },
      float: { type: 'string', description: 'A Number, in decimal (JSON\'s syntax, or NaN, +Inf, -Inf).' },
      bool: { type: 'boolean' },
      object: { ...json, description: 'An Object: any JSON object.' },
      array: { ...json, description: 'An Array: any JSON list.' },
    },
  };
  const result = {
    type: 'object', required: ['name', 'columnNames'],
    description: 'What one StatusCollector computes: rows of values, one column per name.',
    properties: {
      name: { type: 'string', description: 'The StatusCollector\'s name.' },
      columnNames: { type: 'array', items: { type: 'string' } },
      rows: { type: 'array', items: { type: 'object', required: ['columns'], properties: { columns: { type: 'array', items: value } } } },
      errors: { type: 'array', items: { type: 'string' }, description: 'Expressions that failed, per cluster, and aggregation errors (kubestellar-view\'s addition).' },
    },
  };
  return kindSchema(ref, 'CombinedStatus', 'CombinedStatus is the status of one workload object from the clusters one BindingPolicy sends it to, combined by the policy\'s StatusCollectors. Named <object uid>.<policy uid>, in the object\'s namespace (kubestellar-report for a cluster-scoped object), labelled with the object and the policy (status.kubestellar.io/api-group, resource, namespace, name, binding-policy). Virtual: computed by kubestellar-view\'s status controllers, never stored.', {
    results: { type: 'array', items: result, description: 'One entry per StatusCollector the policy names for the object, by name.' },
  }, group);
}

/** The view's UpsyncedObject (./upsyncedobjects-resource.ts): one object of a WEC, as its agent copied it. */
function upsyncedObjectSchema(ref: Ref, group: string) {
  const str = { type: 'string' };
  return kindSchema(ref, 'UpsyncedObject', 'UpsyncedObject is one object of a WEC that an upsync clause of a BindingPolicy selects, as the cluster\'s agent last copied it. Named <cluster>:<resource>[.<group>]:<name>, in the object\'s namespace, labelled view.kubestellar.io/cluster and view.kubestellar.io/kind. Virtual: read from the agents\' copies, never stored; read-only.', {
    spec: {
      type: 'object', required: ['cluster', 'source', 'object'],
      properties: {
        cluster: { type: 'string', description: 'The WEC the object lives in.' },
        source: {
          type: 'object', description: 'The object\'s identity in the WEC.',
          properties: { group: str, version: str, resource: str, kind: str, namespace: str, name: str, uid: str, resourceVersion: { type: 'string', description: 'The object\'s resourceVersion in the WEC.' } },
        },
        policies: { type: 'array', items: str, description: 'The BindingPolicies whose upsync clauses select the object.' },
        object: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'The object as the WEC holds it (managedFields left out).' },
      },
    },
    status: {
      type: 'object',
      properties: {
        lastSeen: { type: 'string', format: 'date-time', description: 'When the agent last saw this version of the object.' },
        stale: { type: 'boolean', description: 'The cluster\'s agent stopped renewing its lease: the copy may be out of date.' },
        conditions: {
          type: 'array',
          items: { type: 'object', required: ['type', 'status'], properties: { type: str, status: str, reason: str, message: str, lastTransitionTime: { type: 'string', format: 'date-time' } } },
        },
      },
    },
  }, group);
}

/** The schema of `<kind>List` for a kind of this group. */
function listSchema(ref: Ref, kind: string, group = GROUP) {
  return {
    type: 'object', required: ['items'],
    properties: {
      apiVersion: { type: 'string' }, kind: { type: 'string' },
      metadata: { $ref: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta') },
      items: { type: 'array', items: { $ref: ref(`${schemaPrefix(group)}.${kind}`) } },
    },
    'x-kubernetes-group-version-kind': [{ group, version: VERSION, kind: `${kind}List` }],
  };
}

const ownerReference = {
  type: 'object', required: ['apiVersion', 'kind', 'name', 'uid'],
  properties: {
    apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, uid: { type: 'string' },
    controller: { type: 'boolean' }, blockOwnerDeletion: { type: 'boolean' },
  },
};
export const objectMeta = {
  type: 'object',
  properties: {
    name: { type: 'string' }, namespace: { type: 'string' }, uid: { type: 'string' }, resourceVersion: { type: 'string' }, generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' }, labels: { type: 'object', additionalProperties: { type: 'string' } },
    ownerReferences: { type: 'array', items: ownerReference },
  },
};
export const listMeta = { type: 'object', properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' } } };

const OWN_SCHEMAS: Record<string, (ref: Ref, group: string) => object> = {
  [BINDINGS.kind]: bindingSchema,
  [COMBINED_STATUSES.kind]: combinedStatusSchema,
  [UPSYNCED_OBJECTS.kind]: upsyncedObjectSchema,
};

/** Space and SpaceList (view.kubestellar.io only). */
export function spaceSchemas(ref: Ref) {
  return {
    [`${schemaPrefix(GROUP)}.Space`]: spaceSchema(ref),
    [`${schemaPrefix(GROUP)}.SpaceList`]: listSchema(ref, 'Space'),
  };
}

/** Each virtual kind and its list, in `group`. */
export function virtualSchemas(ref: Ref, group: string, kinds: readonly VirtualKind[] = VIRTUAL_KINDS): Record<string, object> {
  return Object.fromEntries(kinds.flatMap((k: VirtualKind) => [
    [`${schemaPrefix(group)}.${k.kind}`, OWN_SCHEMAS[k.kind]!(ref, group)],
    [`${schemaPrefix(group)}.${k.kind}List`, listSchema(ref, k.kind, group)],
  ]));
}
