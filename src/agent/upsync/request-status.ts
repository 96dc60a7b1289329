// Writes each UpsyncRequest's status (the agent's only write to a request): coalesced per request
// (../shared/coalescer.ts: a burst of changes makes one or two writes, each of the latest status), a
// merge patch of the status subresource, only when it differs from what the request holds (or
// from our last write, while the informer has not caught up with it). A request deleted
// meanwhile (404) is nothing to write.
import { newerResourceVersion } from '../../kube/objects.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { upsyncRequestsPath, type UpsyncRequest, type UpsyncRequestStatus } from '../../kube/upsync-api.js';
import { Coalescer } from '../shared/coalescer.js';

export interface RequestStatusWriterOptions {
  cluster: string;
  its: Upstream;
  request: (name: string) => UpsyncRequest | undefined;
  /** The status the planner computed (undefined: not known yet, nothing written). */
  status: (name: string) => UpsyncRequestStatus | undefined;
  onError: (name: string, err: unknown) => void;
  debounceMs?: number;
}

const comparable = (s: UpsyncRequestStatus | undefined): string =>
  JSON.stringify([s?.observedGeneration ?? null, s?.objects ?? null, s?.selected ?? null, s?.tooLarge ?? null, s?.message ?? '']);

export class RequestStatusWriter {
  private readonly coalescer: Coalescer;
  /** Per request: what our last write stored, and the resourceVersion the request got. */
  private readonly written = new Map<string, { status: string; rv: string }>();
  /** Count of writes, for tests. */
  writes = 0;

  constructor(private readonly options: RequestStatusWriterOptions) {
    this.coalescer = new Coalescer((k) => this.write(k), options.debounceMs ?? 100, options.onError);
  }

  mark(name: string): void {
    this.coalescer.mark(name);
  }

  /** The request is gone: drop what is kept of it. */
  forget(name: string): void {
    this.written.delete(name);
    this.coalescer.forget(name);
  }

  idle(): boolean {
    return this.coalescer.idle();
  }

  stop(): void {
    this.coalescer.stop();
  }

  private async write(name: string): Promise<void> {
    const req = this.options.request(name);
    const want = this.options.status(name);
    if (!req || !want) return;
    const target = comparable(want);
    if (comparable(req.status) === target) return;
    const mine = this.written.get(name);
    if (mine?.status === target && !newerResourceVersion(req.metadata.resourceVersion, mine.rv)) return;
    const path = `${upsyncRequestsPath(this.options.cluster)}/${encodeURIComponent(name)}/status`;
    const res = expectOk(await upstreamRequest(this.options.its, 'PATCH', path, {
      headers: { 'content-type': 'application/merge-patch+json' }, body: { status: { ...want, message: want.message ?? '' } },
    }), `patch ${path}`, [404]);
    if (res.status === 404) return;
    this.writes++;
    const stored = JSON.parse(res.body.toString('utf8')) as UpsyncRequest;
    this.written.set(name, { status: target, rv: stored.metadata?.resourceVersion ?? '' });
  }
}
