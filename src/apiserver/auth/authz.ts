// Authorization of what `ksview serve` answers itself (the spaces resource, /metrics, the virtual
// resources and the objects they speak of: ./subject-access.ts), by SubjectAccessReview against
// the WDS, cached 10 s as k8s.io/apiserver's delegating authorizer caches (allowed and denied
// alike), and one review in flight per question however many requests ask it at once.
// Passthrough requests are not authorized here: they impersonate the user, so the WDS decides.
import { LRUCache } from 'lru-cache';
import { upstreamJson, type Upstream } from '../../kube/upstream.js';
import { errors } from '../../kube/status.js';
import type { UserInfo } from '../../kube/user.js';

export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type Attributes = { resource: ResourceAttributes } | { nonResource: NonResourceAttributes };

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** How long a decision is kept: k8s.io/apiserver's delegating authorizer's default, allowed and denied. */
const DECISION_TTL_MS = 10_000;

function reviewSpec(user: UserInfo, attrs: Attributes) {
  return {
    user: user.username,
    ...(user.uid ? { uid: user.uid } : {}),
    groups: user.groups,
    extra: user.extra,
    ...('resource' in attrs ? { resourceAttributes: attrs.resource } : { nonResourceAttributes: attrs.nonResource }),
  };
}

export class Authorizer {
  /** Decisions by review spec; the subject checks of large lists (./subject-access.ts) fill many. */
  private readonly cache = new LRUCache<string, Decision>({ max: 32_768, ttl: DECISION_TTL_MS });
  private readonly inFlight = new Map<string, Promise<Decision>>();

  constructor(private readonly up: Upstream) {}

  /** The decision kept for this question, if any (no review is made). */
  cached(user: UserInfo, attrs: Attributes): Decision | undefined {
    return this.cache.get(JSON.stringify(reviewSpec(user, attrs)));
  }

  async decide(user: UserInfo, attrs: Attributes): Promise<Decision> {
    const spec = reviewSpec(user, attrs);
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached) return cached;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = upstreamJson<{ status?: { allowed?: boolean; reason?: string } }>(this.up, 'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } })
        .then((review) => {
          const decision = { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
          this.cache.set(key, decision);
          return decision;
        })
        .finally(() => { this.inFlight.delete(key); });
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** Throws a 403 Status, worded like kube-apiserver's, unless the user may. */
  async authorize(user: UserInfo, attrs: Attributes): Promise<void> {
    const d = await this.decide(user, attrs);
    if (d.allowed) return;
    if ('resource' in attrs) {
      const a = attrs.resource;
      const what = `${a.resource}${a.subresource ? `/${a.subresource}` : ''}`;
      throw errors.forbidden(
        `${a.resource}${a.group ? `.${a.group}` : ''}${a.name ? ` "${a.name}"` : ''} is forbidden: User "${user.username}" cannot ${a.verb} resource "${what}" in API group "${a.group}"${a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope'}`,
        { ...(a.name ? { name: a.name } : {}), group: a.group, kind: a.resource });
    }
    throw errors.forbidden(`forbidden: User "${user.username}" cannot ${attrs.nonResource.verb} path "${attrs.nonResource.path}"`);
  }
}
