// The apply engine of `ksview agent` (WorkApplier): applies one ManifestWork's manifests to the WEC
// as OCM's work agent v1.2.0 does — dependency order (manifest-order.ts), each rank's manifests in
// parallel; the strategy of the first matching manifestConfig (OCM's FindManifestConfiguration,
// default Update); a custom resource whose CRD the same work carries waits (bounded) for discovery
// to serve it. A bad manifest never throws: its Applied=False condition carries the WEC's words,
// a failure that may pass by itself (discovery, a kind not served yet) sets retryAfterMs; every
// failed manifest, a conflict with another field manager (409) included, is retried with backoff
// by the work reconciler.
// A work with an executor (executor.ts) is applied as that ServiceAccount: every request of the
// apply path (the reads for an apply, the writes, the read after a failure) impersonates it, so a
// manifest it may not write fails alone with the WEC's Forbidden words; an object the work will own
// also needs its `delete` (OCM's rule: the agent deletes it when the work goes; when it lacks it, a
// dry run of the apply says whether the WEC refuses the write too, in its words). A malformed executor
// fails every manifest before any request. Discovery stays with the agent's identity.
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import type { Condition, FeedbackValue, ManifestConfigOption, ManifestResourceMeta, ManifestWork } from '../../kube/ocm-api.js';
import { upstreamRequest, type Upstream } from '../../kube/upstream.js';
import type { ManifestApplyResult, WorkApplier } from '../shared/contract.js';
import { applyOrder, isNeverApplied, rankOf } from './manifest-order.js';
import { manifestStatus, type LiveRead } from '../status/manifest-conditions.js';
import { RestMapper, objectPath, splitApiVersion, type Mapping } from '../shared/rest-mapper.js';
import { ApplyError, applyWithStrategy, wecMessage } from './apply-strategies.js';
import { DeleteRights, executorHeaders, executorOf, type ExecutorOf } from '../shared/work-executor.js';
import { ownedByTheWork } from './garbage-collector.js';

export interface EngineLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

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

function wildcardMatch(value: string, pattern: string | undefined): boolean {
  const p = pattern ?? '';
  if (p === value) return true;
  if (!p.includes('*')) return false;
  return new RegExp(`^${p.split('*').map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(value);
}

/** OCM's helper.FindManifestConfiguration: first matching non-empty part of every matching config. */
export function findManifestConfig(meta: ManifestResourceMeta, configs: ManifestConfigOption[] | undefined): ManifestConfigOption | undefined {
  const out: ManifestConfigOption = { resourceIdentifier: { group: meta.group, resource: meta.resource, name: meta.name, namespace: meta.namespace } };
  for (const c of configs ?? []) {
    const id = c.resourceIdentifier;
    if ((id.group ?? '') !== meta.group || id.resource !== meta.resource
      || !wildcardMatch(meta.namespace, id.namespace) || !wildcardMatch(meta.name, id.name)) continue;
    if (!out.conditionRules?.length && c.conditionRules?.length) out.conditionRules = c.conditionRules;
    if (!out.feedbackRules?.length && c.feedbackRules?.length) out.feedbackRules = c.feedbackRules;
    if (!out.updateStrategy && c.updateStrategy) out.updateStrategy = c.updateStrategy;
    out.feedbackScrapeType = c.feedbackScrapeType;
  }
  return out.feedbackRules?.length || out.conditionRules?.length || out.updateStrategy ? out : undefined;
}

/** The object a read found, as an Attempt's `live`. */
const liveOf = (read: LiveRead): { live?: KubeObject } => ('found' in read && read.found ? { live: read.found } : {});

/** OCM's FindManifestCondition: the previous status of the same resource, ordinal aside. */
function previousOf(work: ManifestWork, meta: ManifestResourceMeta): { conditions?: Condition[]; values?: FeedbackValue[] } | undefined {
  const key = (m: ManifestResourceMeta) => `${m.group}|${m.version}|${m.kind}|${m.resource}|${m.namespace}|${m.name}`;
  const found = (work.status?.resourceStatus?.manifests ?? []).find((m) => key(m.resourceMeta) === key(meta));
  return found ? { conditions: found.conditions, values: found.statusFeedback?.values } : undefined;
}

interface Attempt {
  meta: ManifestResourceMeta;
  mapping?: Mapping;
  error?: string;
  live?: KubeObject;
  read?: LiveRead;
  owned: boolean;
  retry?: boolean;
}

export class ApplyEngine implements WorkApplier {
  readonly mapper: RestMapper;
  private readonly wec: Upstream;
  private readonly log: EngineLog;
  private readonly crdWaitMs: number;
  private readonly retryAfterMs: number;
  private readonly deleteRights: DeleteRights;

  constructor(opts: ApplyEngineOptions) {
    this.wec = opts.wec;
    this.mapper = opts.mapper ?? new RestMapper(opts.wec);
    this.log = opts.log ?? quiet;
    this.crdWaitMs = opts.crdWaitMs ?? 5000;
    this.retryAfterMs = opts.retryAfterMs ?? 5000;
    this.deleteRights = new DeleteRights(opts.wec);
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
        const attempt = await this.applyOne(work, ordinal, manifests[ordinal]!, crdKinds, executor);
        results[ordinal] = this.resultOf(work, ordinal, attempt);
      }));
    }
    return results;
  }

  observe(work: ManifestWork, ordinal: number, live: KubeObject | undefined, prior?: ManifestApplyResult): ManifestApplyResult {
    const manifest = (work.spec?.workload?.manifests ?? [])[ordinal] ?? {};
    const prevMeta = prior?.resourceMeta ?? work.status?.resourceStatus?.manifests?.find((m) => m.resourceMeta.ordinal === ordinal)?.resourceMeta;
    const { meta, mapping } = this.metaOf(ordinal, manifest, typeof manifest.apiVersion === 'string' && typeof manifest.kind === 'string'
      ? this.mapper.cached(manifest.apiVersion, manifest.kind) : undefined);
    const m = mapping ? meta : (prevMeta ?? meta);
    // The result we hold is newer than the cached work's status, which may not have our last write yet.
    const prev = prior ? { conditions: prior.conditions, values: prior.feedback } : previousOf(work, m);
    const applied = prev?.conditions?.find((c) => c.type === 'Applied');
    const error = applied && applied.status === 'False' ? applied.message.replace(/^Failed to apply manifest: /, '') : undefined;
    const read: LiveRead = !m.resource || !m.version || !m.name ? { incomplete: true } : live ? { found: live } : { notFound: true };
    return this.resultOf(work, ordinal, { meta: m, error, live, read, owned: prior ? prior.owned : applied?.status === 'True' }, prev);
  }

  private resultOf(work: ManifestWork, ordinal: number, a: Attempt, previous = previousOf(work, a.meta)): ManifestApplyResult {
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

  private metaOf(ordinal: number, manifest: JsonObject, mapping: Mapping | undefined): { meta: ManifestResourceMeta; mapping?: Mapping } {
    const md = (manifest.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    const apiVersion = typeof manifest.apiVersion === 'string' ? manifest.apiVersion : '';
    const { group, version } = splitApiVersion(apiVersion);
    return {
      meta: {
        ordinal, group: apiVersion ? group : '', version: apiVersion ? version : '',
        kind: typeof manifest.kind === 'string' ? manifest.kind : '',
        resource: mapping?.resource ?? '',
        name: typeof md.name === 'string' ? md.name : '',
        namespace: typeof md.namespace === 'string' ? md.namespace : '',
      },
      mapping,
    };
  }

  private async applyOne(work: ManifestWork, ordinal: number, manifest: JsonObject, crdKinds: Set<string>, executor: ExecutorOf): Promise<Attempt> {
    const base = this.metaOf(ordinal, manifest, undefined).meta;
    const fail = (error: string, extra: Partial<Attempt> = {}): Attempt => ({ meta: base, error, owned: false, read: { incomplete: true }, ...extra });
    if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) return fail('manifest is not a JSON object');
    if (typeof manifest.kind !== 'string' || !manifest.kind) return fail(`Object 'Kind' is missing in '${JSON.stringify(manifest).slice(0, 200)}'`);
    if (typeof manifest.apiVersion !== 'string' || !manifest.apiVersion) return fail(`Object 'apiVersion' is missing in '${JSON.stringify(manifest).slice(0, 200)}'`);
    let mapping: Mapping | undefined;
    try {
      mapping = await this.mapWaiting(manifest.apiVersion, manifest.kind, crdKinds);
    } catch (err) {
      return fail(`discovery of the WEC failed: ${(err as Error).message}`, { retry: true });
    }
    const { version } = splitApiVersion(manifest.apiVersion);
    if (!mapping) {
      return fail(`no matches for kind "${manifest.kind}" in version "${manifest.apiVersion}": the resource is not served by the WEC`, { retry: true });
    }
    const meta = this.metaOf(ordinal, manifest, mapping).meta;
    const failM = (error: string, extra: Partial<Attempt> = {}): Attempt => ({ meta, mapping, error, owned: false, read: { incomplete: true }, ...extra });
    if (!meta.name) return failM('resource name may not be empty');
    if (mapping.namespaced && !meta.namespace) return failM('the namespace of a namespaced resource may not be empty');
    if (isNeverApplied(meta)) {
      return failM('kube-system/kubestellar-fleet is the fleet lease of the WEC and is never applied by a work');
    }
    if ('error' in executor) return failM(executor.error);
    const headers = executorHeaders(executor);
    // OCM: a manifest whose Complete condition is True (a finished Job) is never applied again.
    if (previousOf(work, meta)?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) {
      const read = await this.readLive(objectPath({ ...mapping, version }, meta.namespace, meta.name), headers);
      return { meta, mapping, owned: true, read, ...liveOf(read) };
    }
    const option = findManifestConfig(meta, work.spec?.manifestConfigs);
    const strategy = option?.updateStrategy ?? { type: 'Update' };
    const required = structuredClone(manifest) as KubeObject;
    if (required.metadata?.uid) delete required.metadata.uid; // OCM ignores a manifest's uid
    const path = objectPath({ ...mapping, version }, meta.namespace, meta.name);
    const collection = objectPath({ ...mapping, version }, meta.namespace, '');
    if ('executor' in executor && strategy.type !== 'ReadOnly' && ownedByTheWork({ ...meta }, work.spec?.deleteOption)) {
      let refusal: string | undefined;
      try {
        refusal = await this.deleteRights.refusal(executor.executor, { ...meta, version });
      } catch (err) {
        return failM(`checking the executor's right to delete: ${(err as Error).message}`, { retry: true });
      }
      if (refusal) {
        // When the WEC refuses the write itself, its words say more than the missing delete: ask it
        // by a dry run of the same apply (nothing is stored).
        const words = await applyWithStrategy(this.wec, strategy, path, collection, required, headers, true)
          .then(() => refusal!, (err: Error) => (err instanceof ApplyError ? err.message : refusal!));
        const read = await this.readLive(path, headers);
        return failM(words, { read, ...liveOf(read) });
      }
    }
    try {
      const out = await applyWithStrategy(this.wec, strategy, path, collection, required, headers);
      return { meta, mapping, live: out.live, owned: out.owned, read: out.live ? { found: out.live } : { notFound: true } };
    } catch (err) {
      const status = err instanceof ApplyError ? err.status : 0;
      const message = (err as Error).message;
      this.log.warn('apply failed', { work: work.metadata.name, ordinal, status, message });
      const retry = !(err instanceof ApplyError) || status === 429 || status >= 500;
      // The object as it is (e.g. kept by another manager after a conflict): still recorded, so
      // a failed apply never reads as a manifest dropped from the work.
      const read = await this.readLive(path, headers);
      return failM(message, { retry, read, ...liveOf(read) });
    }
  }

  /** Available after a failed apply: whether the object is there anyway (OCM reads it separately). */
  private async readLive(path: string, headers: Record<string, string>): Promise<LiveRead> {
    try {
      const res = await upstreamRequest(this.wec, 'GET', path, { headers });
      if (res.status === 200) return { found: JSON.parse(res.body.toString('utf8')) as KubeObject };
      if (res.status === 404) return { notFound: true };
      return { error: wecMessage(res) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  /** The mapping; for a kind whose CRD this work carries, polls discovery for up to crdWaitMs. */
  private async mapWaiting(apiVersion: string, kind: string, crdKinds: Set<string>): Promise<Mapping | undefined> {
    const first = await this.mapper.map(apiVersion, kind);
    if (first || !crdKinds.has(`${splitApiVersion(apiVersion).group}|${kind}`)) return first;
    const deadline = Date.now() + this.crdWaitMs;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, deadline - Date.now()))));
      const m = await this.mapper.map(apiVersion, kind);
      if (m) return m;
    }
    return undefined;
  }
}

/** group|kind of every CRD carried in the manifests. */
function crdKindsOf(manifests: readonly JsonObject[]): Set<string> {
  const out = new Set<string>();
  for (const m of manifests) {
    if (m?.kind !== 'CustomResourceDefinition') continue;
    const spec = (m.spec ?? {}) as { group?: unknown; names?: { kind?: unknown } };
    if (typeof spec.group === 'string' && typeof spec.names?.kind === 'string') out.add(`${spec.group}|${spec.names.kind}`);
  }
  return out;
}
