// The apply engine of `ksview agent` (WorkApplier): applies one ManifestWork's manifests to the WEC
// as OCM's work agent v1.2.0 does — dependency order (./manifest-order.ts), each rank's manifests
// in parallel, each by ./apply-manifest.ts — and turns what each found into the manifest's status
// (../status/manifest-conditions.ts). A bad manifest never throws: its Applied=False condition
// carries the WEC's words, a failure that may pass by itself sets retryAfterMs; every failed
// manifest, a conflict with another field manager (409) included, is retried with backoff by the
// work reconciler. A work with an executor (../shared/work-executor.ts) is applied as that
// ServiceAccount; a malformed executor fails every manifest before any request. Discovery stays
// with the agent's identity.
import type { KubeObject } from '../../kube/objects.js';
import type { ManifestWork } from '../../kube/ocm-api.js';
import type { Upstream } from '../../kube/upstream.js';
import type { ManifestApplyResult, WorkApplier } from '../shared/contract.js';
import { RestMapper } from '../shared/rest-mapper.js';
import { executorOf } from '../shared/work-executor.js';
import { manifestStatus, type LiveRead } from '../status/manifest-conditions.js';
import { ManifestApplier, type Attempt, type EngineLog } from './apply-manifest.js';
import { findManifestConfig, previousOf, type PreviousStatus } from './manifest-config.js';
import { applyOrder, rankOf } from './manifest-order.js';
import { crdKindsOf, metaOf } from './manifest-resource.js';

export interface ApplyEngineOptions {
  wec: Upstream;
  mapper?: RestMapper;
  log?: EngineLog;
  /** How long a custom resource waits for its CRD (carried in the same work) to be served. */
  crdWaitMs?: number;
  /** retryAfterMs of a failure that may pass by itself. */
  retryAfterMs?: number;
}

const quiet: EngineLog = { info: () => {}, warn: () => {} };

export class ApplyEngine implements WorkApplier {
  readonly mapper: RestMapper;
  private readonly retryAfterMs: number;
  private readonly manifests: ManifestApplier;

  constructor(opts: ApplyEngineOptions) {
    this.mapper = opts.mapper ?? new RestMapper(opts.wec);
    this.retryAfterMs = opts.retryAfterMs ?? 5000;
    this.manifests = new ManifestApplier({ wec: opts.wec, mapper: this.mapper, log: opts.log ?? quiet, crdWaitMs: opts.crdWaitMs ?? 5000 });
  }

  async applyWork(work: ManifestWork, unchanged?: (ordinal: number) => ManifestApplyResult | undefined): Promise<ManifestApplyResult[]> {
    const manifests = work.spec?.workload?.manifests ?? [];
    const crdKinds = crdKindsOf(manifests);
    const results: ManifestApplyResult[] = new Array(manifests.length);
    const order = applyOrder(manifests);
    const executor = executorOf(work);
    for (let i = 0; i < order.length;) {
      const rank = rankOf(manifests[order[i]!]?.kind);
      const batch: number[] = [];
      while (i < order.length && rankOf(manifests[order[i]!]?.kind) === rank) batch.push(order[i++]!);
      await Promise.all(batch.map(async (ordinal) => {
        const kept = unchanged?.(ordinal);
        if (kept) {
          results[ordinal] = kept;
          return;
        }
        const attempt = await this.manifests.apply(work, ordinal, manifests[ordinal]!, crdKinds, executor);
        results[ordinal] = this.resultOf(work, ordinal, attempt);
      }));
    }
    return results;
  }

  observe(work: ManifestWork, ordinal: number, live: KubeObject | undefined, prior?: ManifestApplyResult): ManifestApplyResult {
    const manifest = (work.spec?.workload?.manifests ?? [])[ordinal] ?? {};
    const prevMeta = prior?.resourceMeta ?? work.status?.resourceStatus?.manifests?.find((m) => m.resourceMeta.ordinal === ordinal)?.resourceMeta;
    const mapping = typeof manifest.apiVersion === 'string' && typeof manifest.kind === 'string'
      ? this.mapper.cached(manifest.apiVersion, manifest.kind) : undefined;
    const meta = metaOf(ordinal, manifest, mapping);
    const m = mapping ? meta : (prevMeta ?? meta);
    // The result we hold is newer than the cached work's status, which may not have our last write yet.
    const prev = prior ? { conditions: prior.conditions, values: prior.feedback } : previousOf(work, m);
    const applied = prev?.conditions?.find((c) => c.type === 'Applied');
    const error = applied && applied.status === 'False' ? applied.message.replace(/^Failed to apply manifest: /, '') : undefined;
    const read: LiveRead = !m.resource || !m.version || !m.name ? { incomplete: true } : live ? { found: live } : { notFound: true };
    return this.resultOf(work, ordinal, { meta: m, error, live, read, owned: prior ? prior.owned : applied?.status === 'True' }, prev);
  }

  private resultOf(work: ManifestWork, ordinal: number, a: Attempt, previous: PreviousStatus | undefined = previousOf(work, a.meta)): ManifestApplyResult {
    const option = findManifestConfig(a.meta, work.spec?.manifestConfigs);
    const { conditions, feedback } = manifestStatus({
      applyError: a.error, read: a.read ?? { incomplete: true }, option, generation: work.metadata.generation, previous,
    });
    return {
      ordinal, resourceMeta: a.meta, owned: a.error === undefined && a.owned, conditions, feedback,
      ...(a.live ? { live: a.live } : {}),
      ...(a.retry ? { retryAfterMs: this.retryAfterMs } : {}),
    };
  }
}
