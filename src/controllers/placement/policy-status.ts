// A BindingPolicy's own reconciliation, done by the leader only:
// - the cleanup finalizer goes on every live policy; on a deleting one it is removed once no work
//   of this WDS names the policy any more (every object has been re-resolved without it first);
// - status.errors = the policy's own selector errors + the errors reconciliation found for the
//   objects it selects (template, size, WDS conflicts, what a cluster could not apply; recorded
//   here per object), sorted, with
//   observedGeneration; written only when they differ from what the status says;
// - conditions: Synced (True, ReconcileSuccess, when the current generation was acted on without
//   errors of this controller's own — what a WEC could not apply counts in Ready, not here; else
//   False, ReconcileError) and Ready (True, Available, when every object is
//   Available in every destination; else False, Unavailable, saying which — ./destination-state.ts),
//   each with the generation it speaks of and the time its status last changed; Executor (under
//   which identity its works run in the WECs, ../model/executor.ts: True naming the ServiceAccount and
//   whether it is the policy's own or the server's default; False, AgentRights, when there is
//   none — so an admin can list every policy still applied with the agents' full rights); and `clusters`,
//   each destination's counts per state (the broken objects themselves are in the Binding).
// The errors come from every object and every cluster (a cluster's agent writes the words of what
// it could not apply, and its reports): the stored list is bounded, as KubeStellar's seed asks of
// such lists — at most MAX_POLICY_ERRORS, each cut at MAX_ERROR_LENGTH characters, then
// `… and N more errors` — so no cluster can make the policy's status too large to be written.
import type { UpsyncClusterStatus } from '../../kube/upsync-api.js';
import { isDeepStrictEqual } from 'node:util';
import type { Store } from '../../kube/informer.js';
import { setCondition } from '../../kube/conditions.js';
import type { Condition } from '../../kube/ocm-api.js';
import { LabelSelectorError, validateLabelSelector } from '../../kube/label-selector.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import type { Policy } from '../model/resolution.js';
import { POLICIES, type BindingPolicy } from '../model/api.js';
import { policyKey, type QueueKey } from '../model/keys.js';
import type { Works } from './works.js';
import type { Bindings } from './bindings.js';
import { readyCondition } from './destination-state.js';
import { isApplyFailureError } from './apply-failures.js';
import { executorErrors, policyExecutor, type ServiceAccountRef } from '../model/executor.js';

/** On each BindingPolicy while the controllers run: its deletion waits until its works are gone. */
export const CLEANUP_FINALIZER = 'control.kubestellar.io/placement-cleanup';

/** The errors kept in a policy's status.errors, and the characters kept of each. */
export const MAX_POLICY_ERRORS = 100;
export const MAX_ERROR_LENGTH = 1024;

/** A policy's errors as stored: sorted, bounded in number and length. */
export function boundedErrors(errors: readonly string[]): string[] {
  const clipped = errors.slice(0, MAX_POLICY_ERRORS).map((e) => (e.length > MAX_ERROR_LENGTH ? `${e.slice(0, MAX_ERROR_LENGTH)}…` : e));
  if (errors.length > MAX_POLICY_ERRORS) clipped.push(`… and ${errors.length - MAX_POLICY_ERRORS} more errors`);
  return clipped;
}

/** How soon a deleting policy whose works are not all gone is looked at again. */
const CLEANUP_RECHECK_MS = 500;

/** The malformed label selectors of a policy (a policy with any selects nothing). */
export function selectorErrors(p: Policy): string[] {
  const errors: string[] = [];
  const check = (sel: unknown, path: string) => {
    try {
      validateLabelSelector((sel ?? {}) as never, path);
    } catch (err) {
      if (err instanceof LabelSelectorError) errors.push(err.message);
      else throw err;
    }
  };
  (p.spec.clusterSelectors ?? []).forEach((s, i) => check(s, `spec.clusterSelectors[${i}]`));
  (p.spec.downsync ?? []).forEach((c, i) => {
    (c.namespaceSelectors ?? []).forEach((s, j) => check(s, `spec.downsync[${i}].namespaceSelectors[${j}]`));
    (c.objectSelectors ?? []).forEach((s, j) => check(s, `spec.downsync[${i}].objectSelectors[${j}]`));
  });
  return errors;
}

/** The reason of the Executor condition of a policy whose works run with the agents' own rights. */
export const AGENT_RIGHTS = 'AgentRights';

/** The Executor condition of a policy (type Executor): under which identity its works run in the WECs. */
export function executorCondition(p: Pick<BindingPolicy, 'spec'>, fallback: ServiceAccountRef | undefined):
  { status: 'True' | 'False'; reason: string; message: string } {
  const invalid = executorErrors(p.spec);
  if (invalid.length > 0) {
    return { status: 'False', reason: 'InvalidExecutor', message: `spec.executor names no valid ServiceAccount (${invalid.join('; ')}): the policy selects nothing until it does` };
  }
  const e = policyExecutor(p.spec, fallback);
  if (!e) {
    return {
      status: 'False', reason: AGENT_RIGHTS,
      message: 'works of this policy are applied with the agents\' full rights in the WECs; name spec.executor or start ksview serve with --default-executor',
    };
  }
  return e.source === 'policy'
    ? { status: 'True', reason: 'PolicyExecutor', message: `works of this policy are applied in the WECs as ServiceAccount ${e.namespace}/${e.name} (spec.executor)` }
    : { status: 'True', reason: 'DefaultExecutor', message: `works of this policy are applied in the WECs as ServiceAccount ${e.namespace}/${e.name}, the server's default (--default-executor)` };
}

export class PolicyStatus {
  /** policy → object key → errors found while reconciling that object. */
  private readonly objectErrors = new Map<string, Map<string, string[]>>();
  /** policy → the status last written (with the policy's uid), when the stored one cannot show it all. */
  private readonly written = new Map<string, string>();

  constructor(private readonly wds: Upstream, private readonly policies: Store<BindingPolicy>, private readonly works: Works,
    private readonly bindings: Bindings, private readonly enqueue: (k: QueueKey, afterMs?: number) => void,
    private readonly defaultExecutor?: ServiceAccountRef) {}

  /** What computing the last policy's status took (ms). */
  lastCostMs = 0;

  /** A policy's status.upsync (the upsync controller's: each cluster's counts from its agent); none by default. */
  upsyncOf: (policy: string) => UpsyncClusterStatus[] = () => [];

  /** A new leader forgets what it wrote before: another replica may have written since. */
  forgetWrites(): void {
    this.written.clear();
  }

  /** The errors one object's reconciliation found, per policy; a policy whose errors changed is queued. */
  recordErrors(objectKey: string, byPolicy: ReadonlyMap<string, string[]>): void {
    const touched = new Set<string>(byPolicy.keys());
    for (const [policy, perObject] of this.objectErrors) if (perObject.has(objectKey)) touched.add(policy);
    for (const policy of touched) {
      const perObject = this.objectErrors.get(policy) ?? new Map<string, string[]>();
      const before = JSON.stringify(perObject.get(objectKey) ?? []);
      const now = byPolicy.get(policy) ?? [];
      if (now.length > 0) perObject.set(objectKey, now);
      else perObject.delete(objectKey);
      this.objectErrors.set(policy, perObject);
      if (before !== JSON.stringify(now)) this.enqueue(policyKey(policy));
    }
  }

  /** Finalizer, status.errors and observedGeneration of one policy (the caller leads). */
  async reconcile(name: string): Promise<void> {
    const p = this.policies.get('', name);
    if (!p) {
      this.objectErrors.delete(name);
      this.written.delete(name);
      return;
    }
    const finalizers = p.metadata.finalizers ?? [];
    if (p.metadata.deletionTimestamp) {
      if (!finalizers.includes(CLEANUP_FINALIZER)) return;
      if (this.works.namePolicy(name)) {
        this.enqueue(policyKey(name), CLEANUP_RECHECK_MS);
        return;
      }
      await this.setFinalizers(p, finalizers.filter((f) => f !== CLEANUP_FINALIZER));
      return;
    }
    if (!finalizers.includes(CLEANUP_FINALIZER)) await this.setFinalizers(p, [...finalizers, CLEANUP_FINALIZER]);
    const all = [...selectorErrors({ name, spec: p.spec ?? {} }), ...executorErrors(p.spec)];
    for (const list of (this.objectErrors.get(name) ?? new Map<string, string[]>()).values()) all.push(...list);
    all.sort();
    const errors = boundedErrors(all);
    const status = p.status ?? {};
    const started = performance.now();
    const dests = this.bindings.destinations(name, this.bindings.policyDestinations(p));
    const generation = p.metadata.generation ?? 0;
    const ready = readyCondition(dests);
    // What a WEC could not apply is delivery, said by Ready; Synced is about this controller's own work.
    const own = all.filter((e) => !isApplyFailureError(e));
    const synced = own.length === 0
      ? { status: 'True' as const, reason: 'ReconcileSuccess', message: `generation ${generation} acted on without errors` }
      : { status: 'False' as const, reason: 'ReconcileError', message: `${own.length} error${own.length === 1 ? '' : 's'} (status.errors); the first: ${boundedErrors([own[0]!])[0]}` };
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const executor = executorCondition(p, this.defaultExecutor);
    const conditions = [{ type: 'Ready', ...ready }, { type: 'Synced', ...synced }, { type: 'Executor', ...executor }]
      .reduce((list, c) => setCondition(list, { ...c, observedGeneration: generation }, now), (status.conditions ?? []) as unknown as Condition[])
      .filter((c) => c.type === 'Ready' || c.type === 'Synced' || c.type === 'Executor');
    const clusters = dests.map(({ brokenObjects: _b, ...counts }) => counts);
    this.lastCostMs = performance.now() - started;
    const upsync = this.upsyncOf(name);
    if (status.observedGeneration === generation && isDeepStrictEqual(status.errors ?? [], errors)
      && isDeepStrictEqual(status.conditions ?? [], conditions) && isDeepStrictEqual((status as { clusters?: unknown }).clusters ?? [], clusters)
      && isDeepStrictEqual((status as { upsync?: unknown }).upsync ?? [], upsync)) return;
    const body = {
      status: {
        observedGeneration: generation, errors: errors.length > 0 ? errors : null, conditions, clusters: clusters.length > 0 ? clusters : null,
        upsync: upsync.length > 0 ? upsync : null,
      },
    };
    // KubeStellar's own BindingPolicy CRD (which ensureCRDs leaves in place) prunes `clusters` and
    // the conditions' observedGeneration, so the stored status never equals ours: what was last
    // written, unchanged, is not written again.
    const text = JSON.stringify([p.metadata.uid, body]);
    if (this.written.get(name) === text) return;
    const res = await upstreamRequest(this.wds, 'PATCH', `${POLICIES}/${name}/status`, {
      headers: { 'content-type': 'application/merge-patch+json' }, body,
    });
    expectOk(res, `status of BindingPolicy ${name}`, [404]);
    this.written.set(name, text);
  }

  private async setFinalizers(p: BindingPolicy, finalizers: string[]): Promise<void> {
    const res = await upstreamRequest(this.wds, 'PATCH', `${POLICIES}/${p.metadata.name}`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { finalizers, resourceVersion: p.metadata.resourceVersion } },
    });
    if (res.status === 409) throw new Error(`BindingPolicy ${p.metadata.name} changed meanwhile; retrying`);
    expectOk(res, `finalizers of BindingPolicy ${p.metadata.name}`, [404]);
  }
}
