// One manifest's way into the WEC, read top to bottom as it runs:
// 1. shape: a JSON object with a kind and an apiVersion;
// 2. resource: mapped by the WEC's discovery (./manifest-resource.ts), named, namespaced when it
//    must be, not the fleet lease (./manifest-order.ts), the work's executor well formed;
// 3. a manifest whose Complete condition is True (a finished Job) is only read again (OCM);
// 4. an object the work will own needs the executor's `delete` (OCM's rule: the agent deletes it
//    when the work goes); when it lacks it, a dry run of the apply says whether the WEC refuses the
//    write too, in its words;
// 5. the update strategy of its manifestConfig (./manifest-config.ts, ./apply-strategies.ts);
//    after a failure the object is read as it is, so a failed apply never reads as a manifest
//    dropped from the work.
// Every request but discovery impersonates the executor. A failure never throws: the Attempt
// carries the WEC's words, and `retry` when it may pass by itself (discovery, a kind not served
// yet, 429, 5xx, a connection error).
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import type { ManifestResourceMeta, ManifestWork, UpdateStrategy } from '../../kube/ocm-api.js';
import { splitApiVersion } from '../../kube/api-version.js';
import { upstreamRequest, type Upstream } from '../../kube/upstream.js';
import type { LiveRead } from '../status/manifest-conditions.js';
import { objectPath, type Mapping, type RestMapper } from '../shared/rest-mapper.js';
import { DeleteRights, executorHeaders, type Executor, type ExecutorOf } from '../shared/work-executor.js';
import { ApplyError, applyWithStrategy, wecMessage } from './apply-strategies.js';
import { ownedByTheWork } from './garbage-collector.js';
import { findManifestConfig, previousOf } from './manifest-config.js';
import { isNeverApplied } from './manifest-order.js';
import { mapWaiting, metaOf } from './manifest-resource.js';

export interface EngineLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** What applying (or only reading) one manifest found. */
export interface Attempt {
  meta: ManifestResourceMeta;
  mapping?: Mapping;
  error?: string;
  live?: KubeObject;
  read?: LiveRead;
  owned: boolean;
  retry?: boolean;
}

/** The object a read found, as an Attempt's `live`. */
const liveOf = (read: LiveRead): { live?: KubeObject } => ('found' in read && read.found ? { live: read.found } : {});

/** Where one manifest goes in the WEC, and as whom. */
interface Target {
  meta: ManifestResourceMeta;
  mapping: Mapping;
  /** The manifest's own version (the mapping's may be another version of the resource). */
  version: string;
  path: string;
  collection: string;
  headers: Record<string, string>;
}

export interface ManifestApplierOptions {
  wec: Upstream;
  mapper: RestMapper;
  log: EngineLog;
  /** How long a custom resource waits for its CRD (carried in the same work) to be served. */
  crdWaitMs: number;
}

export class ManifestApplier {
  private readonly deleteRights: DeleteRights;

  constructor(private readonly opts: ManifestApplierOptions) {
    this.deleteRights = new DeleteRights(opts.wec);
  }

  async apply(work: ManifestWork, ordinal: number, manifest: JsonObject, crdKinds: Set<string>, executor: ExecutorOf): Promise<Attempt> {
    const found = await this.target(ordinal, manifest, crdKinds, executor);
    if ('error' in found) return found;
    const { meta, mapping, path, headers } = found;
    if (previousOf(work, meta)?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) {
      const read = await this.readLive(path, headers);
      return { meta, mapping, owned: true, read, ...liveOf(read) };
    }
    const strategy = findManifestConfig(meta, work.spec?.manifestConfigs)?.updateStrategy ?? { type: 'Update' };
    const required = structuredClone(manifest) as KubeObject;
    if (required.metadata?.uid) delete required.metadata.uid; // OCM ignores a manifest's uid
    if ('executor' in executor && strategy.type !== 'ReadOnly' && ownedByTheWork({ ...meta }, work.spec?.deleteOption)) {
      const refused = await this.deleteRefused(found, executor.executor, strategy, required);
      if (refused) return refused;
    }
    try {
      const out = await applyWithStrategy(this.opts.wec, strategy, path, found.collection, required, headers);
      return { meta, mapping, live: out.live, owned: out.owned, read: out.live ? { found: out.live } : { notFound: true } };
    } catch (err) {
      const status = err instanceof ApplyError ? err.status : 0;
      const message = (err as Error).message;
      this.opts.log.warn('apply failed', { work: work.metadata.name, ordinal, status, message });
      const retry = !(err instanceof ApplyError) || status === 429 || status >= 500;
      // The object as it is (e.g. kept by another manager after a conflict): still recorded.
      const read = await this.readLive(path, headers);
      return { ...failed(found, message), retry, read, ...liveOf(read) };
    }
  }

  /** Steps 1 and 2: the manifest's resource and path, or why it cannot be applied at all. */
  private async target(ordinal: number, manifest: JsonObject, crdKinds: Set<string>, executor: ExecutorOf): Promise<Target | Attempt & { error: string }> {
    const fail = (error: string, extra: Partial<Attempt> = {}) => ({ meta: metaOf(ordinal, manifest, undefined), error, owned: false, read: { incomplete: true } as LiveRead, ...extra });
    if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) return fail('manifest is not a JSON object');
    if (typeof manifest.kind !== 'string' || !manifest.kind) return fail(`Object 'Kind' is missing in '${JSON.stringify(manifest).slice(0, 200)}'`);
    if (typeof manifest.apiVersion !== 'string' || !manifest.apiVersion) return fail(`Object 'apiVersion' is missing in '${JSON.stringify(manifest).slice(0, 200)}'`);
    let mapping: Mapping | undefined;
    try {
      mapping = await mapWaiting(this.opts.mapper, manifest.apiVersion, manifest.kind, crdKinds, this.opts.crdWaitMs);
    } catch (err) {
      return fail(`discovery of the WEC failed: ${(err as Error).message}`, { retry: true });
    }
    if (!mapping) {
      return fail(`no matches for kind "${manifest.kind}" in version "${manifest.apiVersion}": the resource is not served by the WEC`, { retry: true });
    }
    const meta = metaOf(ordinal, manifest, mapping);
    const failM = (error: string) => ({ meta, mapping, error, owned: false, read: { incomplete: true } as LiveRead });
    if (!meta.name) return failM('resource name may not be empty');
    if (mapping.namespaced && !meta.namespace) return failM('the namespace of a namespaced resource may not be empty');
    if (isNeverApplied(meta)) return failM('kube-system/kubestellar-fleet is the fleet lease of the WEC and is never applied by a work');
    if ('error' in executor) return failM(executor.error);
    const { version } = splitApiVersion(manifest.apiVersion);
    const served = { ...mapping, version };
    return {
      meta, mapping, version, headers: executorHeaders(executor),
      path: objectPath(served, meta.namespace, meta.name), collection: objectPath(served, meta.namespace, ''),
    };
  }

  /** Step 4: the failed Attempt when the executor may not delete what the work would own. */
  private async deleteRefused(to: Target, executor: Executor, strategy: UpdateStrategy, required: KubeObject): Promise<Attempt | undefined> {
    let refusal: string | undefined;
    try {
      refusal = await this.deleteRights.refusal(executor, { ...to.meta, version: to.version });
    } catch (err) {
      return { ...failed(to, `checking the executor's right to delete: ${(err as Error).message}`), retry: true };
    }
    if (!refusal) return undefined;
    // When the WEC refuses the write itself, its words say more than the missing delete: ask it
    // by a dry run of the same apply (nothing is stored).
    const words = await applyWithStrategy(this.opts.wec, strategy, to.path, to.collection, required, to.headers, true)
      .then(() => refusal!, (err: Error) => (err instanceof ApplyError ? err.message : refusal!));
    const read = await this.readLive(to.path, to.headers);
    return { ...failed(to, words), read, ...liveOf(read) };
  }

  /** Available after a failed apply: whether the object is there anyway (OCM reads it separately). */
  private async readLive(path: string, headers: Record<string, string>): Promise<LiveRead> {
    try {
      const res = await upstreamRequest(this.opts.wec, 'GET', path, { headers });
      if (res.status === 200) return { found: JSON.parse(res.body.toString('utf8')) as KubeObject };
      if (res.status === 404) return { notFound: true };
      return { error: wecMessage(res) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }
}

/** A failed Attempt on a known target. */
const failed = (to: Target, error: string): Attempt => ({ meta: to.meta, mapping: to.mapping, error, owned: false, read: { incomplete: true } });
