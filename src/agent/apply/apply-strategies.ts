// The update strategies of OCM's work agent v1.2.0 (pkg/work/spoke/apply), one HTTP exchange each
// against the WEC: ServerSideApply (PATCH apply-patch, the config's field manager or `work-agent`,
// force only when asked; a 409 conflict is the manifest's error, retried by the work reconciler
// with backoff), Update (create if
// absent, else PUT with the live labels/annotations merged under the manifest's, the live
// finalizers and resourceVersion; skipped when nothing differs), CreateOnly (create if absent,
// never update) and ReadOnly (only GET). Errors carry the WEC's own message. Every request carries
// `headers`: the impersonation of the work's executor (../shared/work-executor.ts), none for the agent's own identity.
import { DEFAULT_FIELD_MANAGER, type UpdateStrategy } from '../../kube/ocm-api.js';
import type { KubeObject } from '../../kube/objects.js';
import { upstreamRequest, type Upstream, type UpstreamResponse } from '../../kube/upstream.js';

export class ApplyError extends Error {
  constructor(message: string, readonly status = 0) { super(message); this.name = 'ApplyError'; }
}

/** The WEC's words for a failed response: the Status message when there is one. */
export function wecMessage(res: UpstreamResponse): string {
  const text = res.body.toString('utf8');
  try {
    const s = JSON.parse(text) as { message?: string };
    if (s && typeof s.message === 'string') return s.message;
  } catch { /* not JSON */ }
  return `${res.status} ${text.slice(0, 300)}`;
}

function parsed(res: UpstreamResponse): KubeObject {
  return JSON.parse(res.body.toString('utf8')) as KubeObject;
}

function fail(res: UpstreamResponse): never {
  throw new ApplyError(wecMessage(res), res.status);
}

export interface StrategyOutcome {
  live?: KubeObject;
  owned: boolean;
}

/**
 * path: the object's URL; collection: its collection's URL (for a create). dryRun: every write
 * with dryRun=All (the WEC decides and admits, stores nothing): what the WEC would answer.
 */
export async function applyWithStrategy(wec: Upstream, strategy: UpdateStrategy, path: string, collection: string,
  required: KubeObject, headers: Record<string, string> = {}, dryRun = false): Promise<StrategyOutcome> {
  const type = strategy.type ?? 'Update';
  const dry = dryRun ? '&dryRun=All' : '';
  switch (type) {
    case 'ServerSideApply': {
      const ssa = strategy.serverSideApply;
      const manager = ssa?.fieldManager || DEFAULT_FIELD_MANAGER;
      const res = await upstreamRequest(wec, 'PATCH', `${path}?fieldManager=${encodeURIComponent(manager)}&force=${ssa?.force === true}${dry}`, {
        headers: { ...headers, 'content-type': 'application/apply-patch+yaml' }, body: required,
      });
      if (res.status >= 300) fail(res);
      return { live: parsed(res), owned: true };
    }
    case 'CreateOnly': {
      const got = await upstreamRequest(wec, 'GET', path, { headers });
      if (got.status === 200) return { live: parsed(got), owned: true };
      if (got.status !== 404) fail(got);
      return { live: await create(wec, collection, required, headers, dry), owned: true };
    }
    case 'ReadOnly': {
      const got = await upstreamRequest(wec, 'GET', path, { headers });
      if (got.status === 200) return { live: parsed(got), owned: false };
      if (got.status === 404) return { owned: false };
      fail(got);
    }
    // falls through (unreachable: fail throws)
    case 'Update':
      return { live: await update(wec, path, collection, required, headers, dry), owned: true };
    default:
      throw new ApplyError(`unknown update strategy ${String(type)}`);
  }
}

async function create(wec: Upstream, collection: string, required: KubeObject, headers: Record<string, string>, dry = ''): Promise<KubeObject> {
  const res = await upstreamRequest(wec, 'POST', dry ? `${collection}?${dry.slice(1)}` : collection, { headers, body: required });
  if (res.status >= 300) fail(res);
  return parsed(res);
}

function sameContent(required: KubeObject, existing: KubeObject): boolean {
  for (const k of new Set([...Object.keys(required), ...Object.keys(existing)])) {
    if (k === 'metadata' || k === 'status' || k === 'apiVersion' || k === 'kind') continue;
    if (JSON.stringify(required[k]) !== JSON.stringify(existing[k])) return false;
  }
  return true;
}

async function update(wec: Upstream, path: string, collection: string, required: KubeObject, headers: Record<string, string>, dry = ''): Promise<KubeObject> {
  const got = await upstreamRequest(wec, 'GET', path, { headers });
  if (got.status === 404) return create(wec, collection, required, headers, dry);
  if (got.status !== 200) fail(got);
  const existing = parsed(got);
  const em = existing.metadata ?? {};
  const rm = required.metadata ?? {};
  const labels = { ...(em.labels ?? {}), ...(rm.labels ?? {}) };
  const annotations = { ...(em.annotations ?? {}), ...(rm.annotations ?? {}) };
  const modified = JSON.stringify(labels) !== JSON.stringify(em.labels ?? {})
    || JSON.stringify(annotations) !== JSON.stringify(em.annotations ?? {});
  if (!modified && sameContent(required, existing)) return existing;
  const body: KubeObject = {
    ...required,
    metadata: {
      ...rm, labels, annotations,
      ...(em.finalizers ? { finalizers: em.finalizers } : {}),
      ...(em.ownerReferences ? { ownerReferences: em.ownerReferences } : {}),
      resourceVersion: em.resourceVersion,
    },
  };
  const res = await upstreamRequest(wec, 'PUT', dry ? `${path}?${dry.slice(1)}` : path, { headers, body });
  if (res.status >= 300) fail(res);
  return parsed(res);
}
