// Authorization of what `ksview serve` answers itself (the spaces resource, /metrics), by
// SubjectAccessReview against the WDS, cached for a few seconds. Passthrough requests are not
// authorized here: they impersonate the user, so the WDS decides.
import { LRUCache } from 'lru-cache';
import { upstreamJson, type Upstream } from '../kube/upstream.js';
import { errors } from '../kube/status.js';
import type { UserInfo } from '../kube/user.js';

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

export class Authorizer {
  private readonly cache = new LRUCache<string, Decision>({ max: 8192, ttl: 5_000 });

  constructor(private readonly up: Upstream) {}

  async decide(user: UserInfo, attrs: Attributes): Promise<Decision> {
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      extra: user.extra,
      ...('resource' in attrs ? { resourceAttributes: attrs.resource } : { nonResourceAttributes: attrs.nonResource }),
    };
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const review = await upstreamJson<{ status?: { allowed?: boolean; reason?: string } }>(this.up, 'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
    const decision = { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
    this.cache.set(key, decision);
    return decision;
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
