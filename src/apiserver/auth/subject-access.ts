// What a reader may see of the objects the virtual resources speak of: a CombinedStatus is about
// one workload object, a Binding names every object its policy selects, so they show only what
// the reader may `get` natively (docs/security.md, "What the view shows", D3). For a batch of subjects (one answer: a
// list, a get, the events of a watch delivered together) the decisions are SubjectAccessReviews
// of the reader, coarse first, as RBAC grants:
//   1. `get` of the resource across the cluster (a ClusterRoleBinding, cluster-admin);
//   2. where denied, `get` in each namespace of the subjects (a RoleBinding);
//   3. where still denied, `get` of each object by name (RBAC may grant by resourceNames).
// Reviews are cached by the Authorizer (10 s); at most MAX_REVIEWS_PER_ANSWER not already cached
// are made for one answer, REVIEW_CONCURRENCY at a time: what could not be decided within that
// bound is hidden and counted (the caller says so in a Warning), so no request can make the
// server ask the WDS without end. A denatured kind is served from its denatured.kubestellar.io
// objects, so its right is asked there, as the view authorizes it.
import type { UserInfo } from '../../kube/user.js';
import { DENATURED_GROUP } from '../../storage/crd-schema.js';
import type { KindCategories } from '../../storage/kind-categories.js';
import type { Attributes, Decision, ResourceAttributes } from './authz.js';

/** An object a virtual object speaks of (native group and plural resource; no namespace: cluster-scoped). */
export interface Subject {
  group: string;
  resource: string;
  namespace?: string;
  name: string;
}

/** The Authorizer's part used here. */
export interface Decider {
  decide(user: UserInfo, attrs: Attributes): Promise<Decision>;
  cached?(user: UserInfo, attrs: Attributes): Decision | undefined;
}

/** What one reader may see of one batch of subjects. */
export interface Visibility {
  /** Whether the reader may get it (false for a subject never asked about or left undecided). */
  may(s: Subject): boolean;
  /** The reader may get every subject of the batch. */
  all: boolean;
  /** How many subjects were hidden only because the bound on reviews left them undecided. */
  leftOut: number;
}

/** Reviews the WDS may be asked for one answer, beyond those already cached. */
export const MAX_REVIEWS_PER_ANSWER = 256;
/** Reviews in flight at once for one answer. */
export const REVIEW_CONCURRENCY = 8;

const SEP = '\u0000';

/** Runs `tasks` at most `limit` at a time. */
async function runLimited(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

export class SubjectAccess {
  constructor(private readonly decider: Decider, private readonly cats?: Pick<KindCategories, 'categorize'>) {}

  /** The group whose RBAC decides reads of a kind through the view. */
  private groupOf(group: string, resource: string): string {
    return this.cats?.categorize({ group, resource }) === 'denatured' ? DENATURED_GROUP : group;
  }

  /**
   * Whether the reader may get every object of these kinds, across the cluster (one review per
   * kind, cached): then a batch of them needs no look at each object.
   */
  async everywhere(user: UserInfo, kinds: Iterable<{ group: string; resource: string }>): Promise<boolean> {
    const decisions = await Promise.all([...kinds].map(async (k) => {
      const attrs = { resource: { verb: 'get', group: this.groupOf(k.group, k.resource), resource: k.resource } };
      return (this.decider.cached?.(user, attrs) ?? await this.decider.decide(user, attrs)).allowed;
    }));
    return decisions.every(Boolean);
  }

  async resolve(user: UserInfo, subjects: Iterable<Subject>): Promise<Visibility> {
    let budget = MAX_REVIEWS_PER_ANSWER;
    /** Asks one question unless the budget is spent (then undefined: undecided). */
    const ask = async (attrs: ResourceAttributes): Promise<boolean | undefined> => {
      const a = { resource: attrs };
      const known = this.decider.cached?.(user, a);
      if (known) return known.allowed;
      if (budget <= 0) return undefined;
      budget--;
      return (await this.decider.decide(user, a)).allowed;
    };

    // 1. Across the cluster, per resource.
    const byResource = new Map<string, { group: string; resource: string; subjects: Subject[] }>();
    for (const s of subjects) {
      const group = this.groupOf(s.group, s.resource);
      const k = `${group}${SEP}${s.resource}`;
      let e = byResource.get(k);
      if (!e) byResource.set(k, (e = { group, resource: s.resource, subjects: [] }));
      e.subjects.push(s);
    }
    const clusterWide = new Map<string, boolean | undefined>();
    await runLimited([...byResource].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, e]) => async () => {
      clusterWide.set(k, await ask({ verb: 'get', group: e.group, resource: e.resource }));
    }), REVIEW_CONCURRENCY);

    // 2. In each namespace, for the resources denied across the cluster.
    const inNamespace = new Map<string, boolean | undefined>();
    const nsTasks: [string, () => Promise<void>][] = [];
    for (const [k, e] of byResource) {
      if (clusterWide.get(k) !== false) continue;
      for (const ns of new Set(e.subjects.flatMap((s) => (s.namespace ? [s.namespace] : [])))) {
        const nk = `${k}${SEP}${ns}`;
        nsTasks.push([nk, async () => { inNamespace.set(nk, await ask({ verb: 'get', group: e.group, resource: e.resource, namespace: ns })); }]);
      }
    }
    await runLimited(nsTasks.sort(([a], [b]) => (a < b ? -1 : 1)).map(([, f]) => f), REVIEW_CONCURRENCY);

    // 3. By name, for what is still denied (not undecided: the budget is spent then).
    const byName = new Map<string, boolean | undefined>();
    const nameTasks: [string, () => Promise<void>][] = [];
    for (const [k, e] of byResource) {
      if (clusterWide.get(k) !== false) continue;
      for (const s of e.subjects) {
        if (s.namespace && inNamespace.get(`${k}${SEP}${s.namespace}`) !== false) continue;
        const key = `${k}${SEP}${s.namespace ?? ''}${SEP}${s.name}`;
        if (byName.has(key)) continue;
        byName.set(key, undefined);
        nameTasks.push([key, async () => {
          byName.set(key, await ask({ verb: 'get', group: e.group, resource: e.resource, ...(s.namespace ? { namespace: s.namespace } : {}), name: s.name }));
        }]);
      }
    }
    await runLimited(nameTasks.sort(([a], [b]) => (a < b ? -1 : 1)).map(([, f]) => f), REVIEW_CONCURRENCY);

    const decided = (s: Subject): boolean | undefined => {
      const k = `${this.groupOf(s.group, s.resource)}${SEP}${s.resource}`;
      const c = clusterWide.get(k);
      if (c !== false) return c;
      if (s.namespace) {
        const n = inNamespace.get(`${k}${SEP}${s.namespace}`);
        if (n !== false) return n;
      }
      return byName.get(`${k}${SEP}${s.namespace ?? ''}${SEP}${s.name}`);
    };
    let leftOut = 0;
    let all = true;
    for (const e of byResource.values()) {
      for (const s of e.subjects) {
        const d = decided(s);
        if (d !== true) all = false;
        if (d === undefined) leftOut++;
      }
    }
    return { may: (s) => decided(s) === true, all, leftOut };
  }
}

/** The Warning header (RFC 7234, as kube-apiserver sends warnings) for subjects left undecided. */
export function leftOutWarning(leftOut: number): string {
  const text = `${leftOut} object${leftOut === 1 ? ' was' : 's were'} left out of this answer: deciding whether you may read `
    + `${leftOut === 1 ? 'it' : 'each'} would take more than ${MAX_REVIEWS_PER_ANSWER} access reviews in one request; ask again, or narrow the request`;
  return `299 - ${JSON.stringify(text)}`;
}
