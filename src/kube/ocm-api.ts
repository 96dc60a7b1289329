// The one set of TypeScript types for the OCM and KubeStellar objects that cross between the WDS
// side (src/controllers) and the WEC side (src/agent): ManifestWork, AppliedManifestWork,
// ManagedCluster (open-cluster-management.io/api v1.2.0, `work/v1` and `cluster/v1`, JSON names as
// in its Go types) and KubeStellar's WorkStatus. Shapes only, plus the names both sides must agree
// on (finalizers, condition types, collection paths); no behaviour.
import { createHash } from 'node:crypto';
import type { JsonObject, KubeObject, ObjectMeta } from './objects.js';

export const WORK_GROUP = 'work.open-cluster-management.io';
export const CLUSTER_GROUP = 'cluster.open-cluster-management.io';

/** Collection paths (all namespaces / cluster-scoped). */
export const APPLIED_MANIFESTWORKS_PATH = '/apis/work.open-cluster-management.io/v1/appliedmanifestworks';
export const MANAGEDCLUSTERS_PATH = '/apis/cluster.open-cluster-management.io/v1/managedclusters';
export const WORKSTATUSES_PATH = '/apis/control.kubestellar.io/v1alpha1/workstatuses';

export const manifestWorksPath = (cluster: string): string => `/apis/${WORK_GROUP}/v1/namespaces/${cluster}/manifestworks`;
export const workStatusesPath = (cluster: string): string => `/apis/control.kubestellar.io/v1alpha1/namespaces/${cluster}/workstatuses`;

/** Finalizer OCM's agent puts on a ManifestWork and holds until the WEC is clean. */
export const MANIFEST_WORK_FINALIZER = 'cluster.open-cluster-management.io/manifest-work-cleanup';
/** OCM's default field manager; every work field manager must start with it. */
export const DEFAULT_FIELD_MANAGER = 'work-agent';

/** ManagedCluster condition types (cluster/v1 constants). */
export const ClusterCondition = {
  Joined: 'ManagedClusterJoined',
  HubAccepted: 'HubAcceptedManagedCluster',
  HubDenied: 'HubDeniedManagedCluster',
  Available: 'ManagedClusterConditionAvailable',
  ClockSynced: 'ManagedClusterConditionClockSynced',
} as const;

/** The Lease an agent renews in its cluster's namespace of the hub (OCM's name). */
export const CLUSTER_LEASE_NAME = 'managed-cluster-lease';

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface ResourceIdentifier {
  group: string;
  resource: string;
  name: string;
  namespace: string;
}

export type UpdateStrategyType = 'Update' | 'CreateOnly' | 'ServerSideApply' | 'ReadOnly';

export interface UpdateStrategy {
  type?: UpdateStrategyType | string;
  serverSideApply?: {
    force: boolean;
    fieldManager?: string;
    ignoreFields?: { condition: 'OnSpokeChange' | 'OnSpokePresent'; jsonPaths: string[] }[];
  };
}

export interface JsonPathRule {
  name: string;
  version?: string;
  path: string;
}

export interface FeedbackRule {
  type: 'WellKnownStatus' | 'JSONPaths';
  jsonPaths?: JsonPathRule[];
}

export interface ConditionRule {
  condition: string;
  type: 'WellKnownConditions' | 'CEL';
  celExpressions?: string[];
  messageExpression?: string;
}

export interface ManifestConfigOption {
  resourceIdentifier: Partial<ResourceIdentifier> & { resource: string; name: string };
  feedbackRules?: FeedbackRule[];
  updateStrategy?: UpdateStrategy;
  conditionRules?: ConditionRule[];
  feedbackScrapeType?: 'Poll' | 'Watch';
}

export type DeletePropagationPolicy = 'Foreground' | 'Orphan' | 'SelectivelyOrphan';

export interface DeleteOption {
  propagationPolicy: DeletePropagationPolicy;
  selectivelyOrphans?: { orphaningRules?: ResourceIdentifier[] };
  ttlSecondsAfterFinished?: number;
}

export interface ManifestWorkSpec {
  workload?: { manifests?: JsonObject[] };
  deleteOption?: DeleteOption;
  manifestConfigs?: ManifestConfigOption[];
  executor?: JsonObject;
}

export interface ManifestResourceMeta {
  ordinal: number;
  group: string;
  version: string;
  kind: string;
  resource: string;
  name: string;
  namespace: string;
}

export interface FieldValue {
  type: 'Integer' | 'String' | 'Boolean' | 'JsonRaw';
  integer?: number;
  string?: string;
  boolean?: boolean;
  jsonRaw?: string;
}

export interface FeedbackValue {
  name: string;
  fieldValue: FieldValue;
}

export interface ManifestCondition {
  resourceMeta: ManifestResourceMeta;
  /** JSON name `statusFeedback` (Go field StatusFeedbacks). */
  statusFeedback?: { values?: FeedbackValue[] };
  conditions: Condition[];
}

export interface ManifestWorkStatus {
  conditions?: Condition[];
  resourceStatus?: { manifests?: ManifestCondition[] };
}

export interface ManifestWork extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec?: ManifestWorkSpec;
  status?: ManifestWorkStatus;
}

export interface AppliedManifestResourceMeta extends ResourceIdentifier {
  version: string;
  uid?: string;
}

export interface AppliedManifestWork extends KubeObject {
  metadata: ObjectMeta & { name: string };
  spec: { hubHash: string; agentID: string; manifestWorkName: string };
  status?: { appliedResources?: AppliedManifestResourceMeta[]; evictionStartTime?: string };
}

export interface ManagedCluster extends KubeObject {
  metadata: ObjectMeta & { name: string };
  spec?: {
    hubAcceptsClient?: boolean;
    leaseDurationSeconds?: number;
    managedClusterClientConfigs?: { url: string; caBundle?: string }[];
    taints?: JsonObject[];
  };
  status?: {
    conditions?: Condition[];
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    version?: { kubernetes?: string };
    clusterClaims?: { name: string; value: string }[];
  };
}

/**
 * On a ManifestWork written by `ksview serve`: the metadata.generation of the WDS object its
 * manifest was made from. Our agent reports it back in the WorkStatus's statusDetails, so the
 * returned observedGeneration can be told in the WDS object's terms (docs/status.md).
 */
export const SOURCE_GENERATION_ANNOTATION = 'view.kubestellar.io/source-generation';
/** On a ManifestWork written by `ksview serve`: the WDS whose placement wrote it. */
export const WDS_LABEL = 'view.kubestellar.io/wds';
/**
 * On a bundled work (ksview serve --max-objects-per-work N > 1): the group of objects it belongs to
 * (controllers/placement/bundles.ts: the objects sent to a cluster by the same policies, with the
 * same executor). Our agent reports the status of a bundle's objects in the work (./status-in-work.ts).
 */
export const BUNDLE_ANNOTATION = 'view.kubestellar.io/bundle';
/** The same for a work of several manifests (bundled): a JSON array, one generation (or null) per manifest, in manifest order. */
export const SOURCE_GENERATIONS_ANNOTATION = 'view.kubestellar.io/source-generations';

/**
 * KubeStellar's WorkStatus StatusDetails (kubestellar/ocm-status-addon): which generation of the
 * WDS object the WEC holds. `lastGenerationIsApplied`: that generation is applied and, for a
 * kind whose status has an observedGeneration, the WEC's controller has observed it.
 * (KubeStellar's lastCurrencyUpdateTime is not written: it would make every write differ.)
 */
export interface WorkStatusDetails {
  lastGeneration: number;
  lastGenerationIsApplied: boolean;
}

/** KubeStellar's WorkStatus (control.kubestellar.io/v1alpha1), one per applied object, in the mailbox namespace. */
export interface WorkStatus extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: {
    sourceRef: { group: string; version: string; resource: string; kind: string; namespace: string; name: string };
  };
  status?: JsonObject;
  statusDetails?: WorkStatusDetails;
}

/** OCM's hub hash: hex sha256 of the hub's server URL as the agent's kubeconfig names it. */
export function hubHash(hubServerUrl: string): string {
  return createHash('sha256').update(hubServerUrl).digest('hex');
}

/** OCM's AppliedManifestWork name: `<hub hash>-<ManifestWork name>`. */
export const appliedManifestWorkName = (hash: string, workName: string): string => `${hash}-${workName}`;
