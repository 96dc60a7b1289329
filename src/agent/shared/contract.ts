// The seams between the parts of the agent, so each is built and unit-tested on its own:
// - WorkApplier (../apply/apply-engine.ts): applies one ManifestWork's manifests to the WEC, in dependency
//   order, and says per manifest what happened, in OCM's status vocabulary.
// - ClusterWorker (../cluster-agent.ts): everything one cluster's works need (watch the mailbox,
//   apply, record AppliedManifestWorks, collect garbage, report status), started and stopped by
//   the pull or push front (../agent-process.ts, ../push-supervisor.ts).
// - PlacedResource: what /federatedresources lists.
import type { KubeObject } from '../../kube/objects.js';
import type { Condition, FeedbackValue, ManifestResourceMeta, ManifestWork } from '../../kube/ocm-api.js';

/** What applying one manifest of a work did. */
export interface ManifestApplyResult {
  /** Index of the manifest in spec.workload.manifests (OCM's ordinal). */
  ordinal: number;
  /** Identity as OCM reports it; fields it could not learn (unknown kind) are ''. */
  resourceMeta: ManifestResourceMeta;
  /** The object as the WEC holds it after the apply (absent when it failed or ReadOnly found nothing). */
  live?: KubeObject;
  /** Whether this agent created or updated it (false for ReadOnly): only these are recorded as applied. */
  owned: boolean;
  /** Per-manifest conditions: Applied, Available, StatusFeedbackSynced, and any conditionRules' results. */
  conditions: Condition[];
  /** statusFeedback values from the manifest's feedbackRules (empty when none). */
  feedback: FeedbackValue[];
  /** Set when the failure may pass by itself (CRD not yet Established, WEC unreachable): the work is retried. */
  retryAfterMs?: number;
}

export interface WorkApplier {
  /** Applies every manifest of `work`; never throws for a bad manifest (its result says why). */
  /**
   * `unchanged(ordinal)`: the result to keep for a manifest that need not be applied again (applied
   * as it is now, and untouched in the WEC since), or undefined to apply it.
   */
  applyWork(work: ManifestWork, unchanged?: (ordinal: number) => ManifestApplyResult | undefined): Promise<ManifestApplyResult[]>;
  /**
   * A watch event's object: that manifest's conditions and feedback recomputed without applying
   * (a status refresh). `prior` is the
   * result the agent holds for it (from the last apply or observation); without it the work's
   * status as cached is the reference, which may not have our last status write yet.
   */
  observe(work: ManifestWork, ordinal: number, live: KubeObject | undefined, prior?: ManifestApplyResult): ManifestApplyResult;
}

/** One object this agent placed, for /federatedresources. */
export interface PlacedResource {
  cluster: string;
  work: string;
  group: string;
  version: string;
  kind: string;
  namespace: string;
  name: string;
  ready: boolean;
  /** Why not ready (the failing condition's reason: message), '' when ready. */
  reason: string;
}

export interface ClusterWorker {
  readonly cluster: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether the mailbox informers have synced and the WEC answered the last check. */
  ready(): boolean;
  /** Push mode: the WEC stopped (or resumed) answering; while set, works report Available=Unknown with `reason`. */
  setWecUnreachable(reason: string | undefined): void;
  placed(): PlacedResource[];
}
