// AppliedManifestWorks in the WEC (work.open-cluster-management.io/v1, cluster-scoped), as OCM's
// work agent keeps them: one per ManifestWork, named appliedManifestWorkName(hubHash, work), spec
// {hubHash, agentID, manifestWorkName}, status.appliedResources[] with the uid of each object
// applied. This module holds the agent's own copy of them (loaded once, then kept by its writes:
// nobody else writes ours) and the owner reference OCM puts on applied objects.
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import {
  APPLIED_MANIFESTWORKS_PATH, WORK_GROUP, appliedManifestWorkName,
  type AppliedManifestResourceMeta, type AppliedManifestWork,
} from '../../kube/ocm-api.js';
import type { KubeList } from '../../kube/objects.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** OCM's NewAppliedManifestWorkOwner: the reference applied objects carry to their AppliedManifestWork. */
export function ownerOf(amw: AppliedManifestWork): OwnerReference {
  return { apiVersion: `${WORK_GROUP}/v1`, kind: 'AppliedManifestWork', name: amw.metadata.name, uid: amw.metadata.uid ?? '' };
}

type ResourceKey = Pick<AppliedManifestResourceMeta, 'group' | 'resource' | 'namespace' | 'name'>;

const sameResource = (a: ResourceKey, b: ResourceKey): boolean =>
  a.group === b.group && a.resource === b.resource && a.namespace === b.namespace && a.name === b.name;

/** OCM's FindUntrackedResources: what `before` holds and `after` does not (by group, resource, namespace, name). */
export function untracked(before: readonly AppliedManifestResourceMeta[], after: readonly AppliedManifestResourceMeta[]): AppliedManifestResourceMeta[] {
  return before.filter((b) => !after.some((a) => sameResource(a, b)));
}

export class AppliedWorks {
  private readonly byName = new Map<string, AppliedManifestWork>();

  constructor(private readonly wec: Upstream, private readonly hubHash: string, private readonly agentID: string) {}

  /** Reads every AppliedManifestWork of our hub (start, and after the WEC came back). */
  async load(): Promise<AppliedManifestWork[]> {
    const res = expectOk(await upstreamRequest(this.wec, 'GET', APPLIED_MANIFESTWORKS_PATH), 'list appliedmanifestworks');
    const list = JSON.parse(res.body.toString('utf8')) as KubeList<AppliedManifestWork>;
    this.byName.clear();
    for (const a of list.items) if (a.spec?.hubHash === this.hubHash) this.byName.set(a.metadata.name, a);
    return this.list();
  }

  list(): AppliedManifestWork[] {
    return [...this.byName.values()];
  }

  get(workName: string): AppliedManifestWork | undefined {
    return this.byName.get(appliedManifestWorkName(this.hubHash, workName));
  }

  /** Whether an AppliedManifestWork of ours other than `except` records the resource. */
  carriedElsewhere(r: AppliedManifestResourceMeta, except: string): boolean {
    return this.recordedBy(r, except) !== undefined;
  }

  /** The ManifestWork whose AppliedManifestWork (of ours, other than `except`) records the resource. */
  recordedBy(r: ResourceKey, except: string): string | undefined {
    for (const a of this.byName.values()) {
      if (a.metadata.name === except) continue;
      if ((a.status?.appliedResources ?? []).some((x) => sameResource(x, r))) return a.spec.manifestWorkName;
    }
    return undefined;
  }

  /** The AppliedManifestWork of `workName`, created (or its spec put right) when needed. */
  async ensure(workName: string): Promise<AppliedManifestWork> {
    const name = appliedManifestWorkName(this.hubHash, workName);
    const spec = { hubHash: this.hubHash, agentID: this.agentID, manifestWorkName: workName };
    let amw = this.byName.get(name);
    if (!amw) {
      // Not in what load() found: most likely new, so create it, and read it only if it exists after all.
      const body = { apiVersion: `${WORK_GROUP}/v1`, kind: 'AppliedManifestWork', metadata: { name }, spec };
      const res = await upstreamRequest(this.wec, 'POST', APPLIED_MANIFESTWORKS_PATH, { body });
      if (res.status === 409) {
        const got = await upstreamRequest(this.wec, 'GET', `${APPLIED_MANIFESTWORKS_PATH}/${name}`);
        amw = JSON.parse(expectOk(got, `get appliedmanifestwork ${name}`).body.toString('utf8')) as AppliedManifestWork;
      } else {
        amw = JSON.parse(expectOk(res, `create appliedmanifestwork ${name}`).body.toString('utf8')) as AppliedManifestWork;
      }
    }
    if (amw.spec?.agentID !== spec.agentID || amw.spec?.manifestWorkName !== spec.manifestWorkName || amw.spec?.hubHash !== spec.hubHash) {
      // Another agent of the same hub held it (OCM updates agentID the same way).
      const res = await upstreamRequest(this.wec, 'PUT', `${APPLIED_MANIFESTWORKS_PATH}/${name}`, { body: { ...amw, spec } });
      amw = JSON.parse(expectOk(res, `update appliedmanifestwork ${name}`).body.toString('utf8')) as AppliedManifestWork;
    }
    this.byName.set(name, amw);
    return amw;
  }

  /** Writes status.appliedResources when it differs from what the AppliedManifestWork holds. */
  async setApplied(amw: AppliedManifestWork, resources: AppliedManifestResourceMeta[]): Promise<AppliedManifestWork> {
    if (sameAppliedResources(amw.status?.appliedResources ?? [], resources)) return amw;
    const name = amw.metadata.name;
    const body = { ...amw, status: { ...amw.status, appliedResources: resources } };
    const res = await upstreamRequest(this.wec, 'PUT', `${APPLIED_MANIFESTWORKS_PATH}/${name}/status`, { body });
    const stored = JSON.parse(expectOk(res, `update appliedmanifestwork ${name} status`).body.toString('utf8')) as AppliedManifestWork;
    const next = { ...stored, status: stored.status ?? { appliedResources: resources } };
    this.byName.set(name, next);
    return next;
  }

  async delete(amw: AppliedManifestWork): Promise<void> {
    const name = amw.metadata.name;
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: amw.metadata.uid } };
    const res = await upstreamRequest(this.wec, 'DELETE', `${APPLIED_MANIFESTWORKS_PATH}/${name}`, amw.metadata.uid ? { body } : {});
    expectOk(res, `delete appliedmanifestwork ${name}`, [404, 409]);
    this.byName.delete(name);
  }
}

/**
 * Field by field (the server returns each entry with its keys in another order than we build them),
 * and as sets: the same objects recorded in another order (deletions pending come back as their
 * requests end) are no change to write, nor a reason to look at works awaiting a handover again.
 */
export function sameAppliedResources(a: readonly AppliedManifestResourceMeta[], b: readonly AppliedManifestResourceMeta[]): boolean {
  const key = (r: AppliedManifestResourceMeta) => [r.group, r.version, r.resource, r.namespace ?? '', r.name, r.uid ?? ''].join('|');
  const keys = (l: readonly AppliedManifestResourceMeta[]) => l.map(key).sort();
  const [x, y] = [keys(a), keys(b)];
  return x.length === y.length && x.every((k, i) => k === y[i]);
}
