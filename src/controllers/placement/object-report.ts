// What the policies selecting one object are told of it, and as whom its works run — the
// reporting half of reconciling an object (./reconcile.ts computes, this says): WDS conflicts and
// objects written around the view or shadowing a native twin (errors, and Warning Events from the
// leader: ./events.ts), a singleton asked of more than one cluster, the executor each work runs as
// (a conflict between policies naming different ones keeps the object from that cluster), and what
// the clusters' agents could not apply (./apply-failures.ts). Reads caches only; never writes works.
import type { Store } from '../../kube/informer.js';
import type { BindingPolicy } from '../model/api.js';
import { clusterExecutor, policyExecutor, workExecutor, type Executor, type ServiceAccountRef } from '../model/executor.js';
import { describeObject as describe } from '../model/keys.js';
import type { Resolution } from '../model/resolution.js';
import type { SentObject } from '../model/sent.js';
import { policyLabel, type ManifestWork } from '../model/wrapping.js';
import { applyFailureError, applyFailures } from './apply-failures.js';
import { Conflicts } from './conflicts.js';
import type { ObjectEvents } from './events.js';
import type { Works } from './works.js';

export interface ObjectReporterOptions {
  wdsName: string;
  works: Works;
  conflicts: Conflicts;
  events: ObjectEvents;
  policies: Store<BindingPolicy>;
  /** The executor of the works of policies that name none (absent: none). */
  defaultExecutor?: ServiceAccountRef;
  /** Whether this replica leads (only the leader emits Events). */
  leading: () => boolean;
}

export class ObjectReporter {
  constructor(private readonly inputs: ObjectReporterOptions) {}

  /** Errors and Warning Events the selecting policies should know of. */
  async report(found: SentObject, resolution: Resolution, desired: ReadonlyMap<string, ManifestWork>, addError: (policy: string, message: string) => void): Promise<void> {
    const selecting = resolution.policies;
    const what = describe(found.id);
    // The Event is about the object, in its own namespace (./events.ts).
    const about = {
      apiVersion: found.native.apiVersion ?? (found.id.group ? `${found.id.group}/${found.id.version}` : found.id.version),
      kind: found.native.kind ?? '', namespace: found.id.namespace, name: found.id.name, uid: found.native.metadata.uid,
    };
    const warn = async (subject: string, reason: string, message: string, to: readonly string[] = selecting) => {
      for (const p of to) addError(p, message);
      if (this.inputs.leading()) await this.inputs.events.warnOnce(subject, about, to, reason, message);
    };
    for (const cluster of desired.keys()) {
      const others = this.inputs.conflicts.otherWDSs(cluster, found.id);
      if (others.length === 0) continue;
      await warn(Conflicts.subject(cluster, found.id, others), 'WDSConflict', `conflict: cluster ${cluster} also receives ${what} from WDS ${others.join(', ')}`);
    }
    if (found.bypassesView && selecting.length > 0) {
      await warn(`direct|${what}|${found.native.metadata.uid ?? ''}`, 'WrittenToWDS',
        `${what} was written to the WDS directly, so it has also taken effect in the WDS; write it through the view (kubectl --context ${this.inputs.wdsName}-view) to have it only in the clusters`);
    }
    if (found.shadowsNative && selecting.length > 0) {
      await warn(`shadow|${what}`, 'ViewAndWDSConflict',
        `conflict: ${what} exists both through the view and natively in the WDS; the view's object is sent`);
    }
    const singleton = Object.entries(resolution.byPolicy).filter(([, m]) => m.wantSingletonReportedState);
    const qualified = new Set(singleton.flatMap(([, m]) => m.clusters));
    if (qualified.size > 1) {
      for (const [p] of singleton) {
        addError(p, `${what}: wantSingletonReportedState, but ${qualified.size} clusters qualify (${[...qualified].sort().join(', ')}); it goes to all of them and no single cluster's status can be returned`);
      }
    }
  }

  /**
   * The executor of each wanted work (../model/executor.ts): that of the policies sending the object to
   * the cluster (for a Namespace sent only for what is in it, of every policy sending it). Where
   * they name different ones the object is not sent there: its work stays as it was, and each of
   * those policies says why.
   */
  applyExecutors(found: SentObject, desired: Map<string, ManifestWork>, kept: Set<string>,
    resolution: Resolution, policies: ReadonlySet<string>, addError: (policy: string, message: string) => void): void {
    if (desired.size === 0) return;
    const executors = new Map<string, Executor | undefined>();
    const executorOf = (name: string) => {
      if (!executors.has(name)) executors.set(name, policyExecutor(this.inputs.policies.get('', name)?.spec, this.inputs.defaultExecutor));
      return executors.get(name);
    };
    // Mostly every policy names the same one (or none does): one answer for every cluster, no
    // per-cluster look at who sends it there (1,000 clusters × their policies, for each object).
    const all = clusterExecutor([...policies], executorOf);
    const perCluster = 'conflict' in all ? new Map(Object.entries(resolution.byPolicy).map(([p, m]) => [p, new Set(m.clusters)])) : undefined;
    for (const [cluster, work] of [...desired]) {
      let r = all;
      if (perCluster) {
        let senders = [...perCluster].filter(([, cs]) => cs.has(cluster)).map(([p]) => p);
        if (senders.length === 0) senders = [...policies];
        r = clusterExecutor(senders, executorOf);
      }
      if ('conflict' in r) {
        desired.delete(cluster);
        if (this.inputs.works.carrying(cluster, found.id)) kept.add(cluster);
        for (const p of r.policies) addError(p, `conflict: ${describe(found.id)} is not sent to cluster ${cluster}: ${r.conflict}`);
        continue;
      }
      if (r.executor) work.spec = { ...work.spec, executor: workExecutor(r.executor) };
    }
  }

  /**
   * What the clusters' agents could not apply (./apply-failures.ts), on the policies that send the
   * object there: each work that stays (wanted or frozen) is read from the cache, and every policy
   * selecting that cluster for the object (else, for a Namespace sent for its objects or a frozen
   * work, every policy its labels name) gets `cluster <c> did not apply <object>: <the WEC's
   * words>` — e.g. a server-side apply conflict with another WDS's field manager. Gone once the
   * agent applies it.
   */
  reportApplyFailures(found: SentObject, desired: ReadonlyMap<string, ManifestWork>, kept: ReadonlySet<string>,
    resolution: Resolution, policies: ReadonlySet<string>, addError: (policy: string, message: string) => void): void {
    for (const cluster of this.inputs.works.clustersOf(found.id)) {
      if (!desired.has(cluster) && !kept.has(cluster)) continue;
      const stored = this.inputs.works.carrying(cluster, found.id);
      const failures = applyFailures(stored);
      if (failures.length === 0) continue;
      let senders = sendersTo(resolution, cluster, []);
      if (senders.length === 0) {
        const labels = desired.get(cluster)?.metadata.labels ?? stored?.metadata.labels ?? {};
        senders = [...policies].filter((p) => labels[policyLabel(p)] !== undefined);
      }
      for (const p of senders) {
        for (const f of failures) addError(p, applyFailureError(cluster, describe(found.id), f.message));
      }
    }
  }
}

/** The policies sending the object to the cluster as resolved now; `otherwise` when none does (a Namespace sent for its objects). */
export function sendersTo(resolution: Resolution, cluster: string, otherwise: Iterable<string>): string[] {
  const senders = Object.entries(resolution.byPolicy).filter(([, m]) => m.clusters.includes(cluster)).map(([p]) => p);
  return senders.length > 0 ? senders : [...otherwise];
}
