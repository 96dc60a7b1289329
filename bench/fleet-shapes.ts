// The objects of the fleet bench (./fleet-scale.ts) and what its simulated agent writes
// (./fleet-agent.ts), kept in one place so that the cache-heap bench (./cache-heap.ts) measures
// caches holding exactly these shapes: the Deployments, a ManifestWork's status for one Deployment
// with all replicas available, and the Deployment's WorkStatus.
import { splitApiVersion } from '../src/kube/api-version.js';
import type { Obj } from './agent-common.js';

/** The i-th Deployment of a fleet bench run, labelled fleet=<fleet>. */
export function fleetDeployment(namespace: string, i: number, fleet: string): Obj {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `d-${i}`, namespace, labels: { fleet } },
    spec: { replicas: 1, selector: { matchLabels: { app: `d-${i}` } }, template: { metadata: { labels: { app: `d-${i}` } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } };
}

/**
 * The ManifestWork status an agent reports once the Deployments `manifests` (one, or a bundle's) run
 * at `generation`; `carried(manifest, ordinal)`: values added to that manifest's feedback (a bundle's
 * agent reports each object's status there: src/kube/status-in-work.ts).
 */
export function workStatusOf(manifests: readonly Obj[], generation: number, now: string, carried?: (manifest: Obj, ordinal: number) => readonly Obj[]): Obj {
  const cond = (type: string, reason: string) => ({ type, status: 'True', reason, message: `simulated: ${reason}`, observedGeneration: generation, lastTransitionTime: now });
  const int = (n: string, v: number) => ({ name: n, fieldValue: { type: 'Integer', integer: v } });
  return {
    conditions: [cond('Applied', 'AppliedManifestWorkComplete'), cond('Available', 'ResourcesAvailable')],
    resourceStatus: { manifests: manifests.map((manifest, ordinal) => {
      const replicas = replicasOf(manifest);
      const ref = sourceRefOf(manifest);
      return { resourceMeta: { ordinal, group: ref.group, version: ref.version, kind: ref.kind, resource: ref.resource, namespace: ref.namespace, name: ref.name },
        conditions: [cond('Applied', 'AppliedManifestComplete'), cond('Available', 'ResourceAvailable'), cond('StatusFeedbackSynced', 'StatusFeedbackSynced')],
        statusFeedback: { values: [int('ReadyReplicas', replicas), int('Replicas', replicas), int('AvailableReplicas', replicas), int('UpdatedReplicas', replicas), ...(carried?.(manifest, ordinal) ?? [])] } };
    }) },
  };
}

/** The WorkStatus (without its status) of the Deployment `manifest` delivered by the work `workName`. */
export function workStatusObjectOf(manifest: Obj, workName: string): Obj {
  const ref = sourceRefOf(manifest);
  return { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
    metadata: { name: workStatusNameOf(manifest), labels: { 'transport.kubestellar.io/manifestwork': workName } },
    spec: { sourceRef: ref } };
}

/** The WorkStatus's status: the Deployment with all replicas available (at observedGeneration 1, unless said). */
export function deploymentStatusOf(manifest: Obj, observedGeneration = 1): Obj {
  const replicas = replicasOf(manifest);
  return { observedGeneration, replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas };
}

export function workStatusNameOf(manifest: Obj): string {
  return `deployment-${manifest.metadata?.namespace ?? ''}-${manifest.metadata?.name}`.slice(0, 253);
}

const replicasOf = (m: Obj): number => Number(m.spec?.replicas ?? 1);

function sourceRefOf(m: Obj): Obj {
  const { group, version } = splitApiVersion(String(m.apiVersion));
  // Only Deployments are simulated (the bench sends nothing else).
  return { group, version, resource: 'deployments', kind: m.kind, namespace: m.metadata?.namespace ?? '', name: m.metadata?.name };
}
