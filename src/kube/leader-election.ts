// Leader election with a coordination.k8s.io Lease, as client-go's leaderelection does it: the
// leader renews the Lease every `retryMs`; a candidate takes it over when the record it last
// observed has not changed for `leaseMs` by its own clock (so clocks need not agree), with an
// optimistic-concurrency update, so two candidates never both win. A leader that cannot renew
// for `leaseMs` steps down. Stopping releases the Lease so a standby takes over at once.
// Defaults: lease 10 s, retry 2 s: a standby takes over within about 12 s of the leader's death.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { expectOk, upstreamRequest, type Upstream } from './upstream.js';

/** Lease requests pass any limiter on the upstream: a renewal late behind a burst of writes loses the lease. */
const LEASE = { unlimited: true } as const;

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  leaseMs?: number;
  retryMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: (msg: string) => void;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

/** client-go's defaults scaled down: a standby takes over an expired Lease within lease + retry. */
export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_RETRY_MS = 2_000;

const microTime = (d = new Date()) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly identity = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private observed: { record: string; at: number } | undefined;
  private lastRenew = 0;
  /** The try under way, if any: stop() waits for it, so a Lease won while stopping is released too. */
  private attempt: Promise<void> | undefined;
  private readonly leaseMs: number;
  private readonly retryMs: number;

  constructor(private readonly up: Upstream, private readonly lease: LeaderElectionOptions) {
    this.leaseMs = lease.leaseMs ?? DEFAULT_LEASE_MS;
    this.retryMs = lease.retryMs ?? DEFAULT_RETRY_MS;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.lease.namespace}/leases`;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.attempt = this.tryAcquireOrRenew().catch((err) => this.lease.log?.(`leader election: ${(err as Error).message}`)).finally(() => {
        this.attempt = undefined;
        if (this.leading && Date.now() - this.lastRenew > this.leaseMs) this.setLeading(false);
        if (!this.stopped) this.timer = setTimeout(tick, this.retryMs);
      });
    };
    tick();
  }

  /** Stops campaigning; a leader releases the Lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.attempt;
    if (!this.leading) return;
    this.setLeading(false);
    const res = await upstreamRequest(this.up, 'GET', `${this.path}/${this.lease.name}`, LEASE);
    if (res.status !== 200) return;
    const lease = JSON.parse(res.body.toString('utf8')) as Lease;
    if (lease.spec.holderIdentity !== this.identity) return;
    // Released: no holder, and a duration of 1 s, so candidates take over on their next try.
    lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 };
    await upstreamRequest(this.up, 'PUT', `${this.path}/${this.lease.name}`, { ...LEASE, body: lease });
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.lease.log?.(`leader election: ${leading ? 'leading' : 'no longer leading'} (${this.identity})`);
    if (leading) this.lease.onStartedLeading();
    else this.lease.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const now = new Date();
    const res = await upstreamRequest(this.up, 'GET', `${this.path}/${this.lease.name}`, LEASE);
    if (res.status === 404) {
      const created = await upstreamRequest(this.up, 'POST', this.path, { ...LEASE, body: {
        apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.lease.name, namespace: this.lease.namespace },
        spec: { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.leaseMs / 1000), acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
      } });
      if (created.status === 201) this.renewed();
      return;
    }
    const lease = JSON.parse(expectOk(res, `get Lease ${this.lease.namespace}/${this.lease.name}`).body.toString('utf8')) as Lease;
    const record = JSON.stringify(lease.spec);
    if (this.observed?.record !== record) this.observed = { record, at: Date.now() };
    const holder = lease.spec.holderIdentity ?? '';
    const duration = (lease.spec.leaseDurationSeconds ?? Math.ceil(this.leaseMs / 1000)) * 1000;
    const expired = holder === '' || Date.now() - this.observed.at > duration;
    if (holder !== this.identity && !expired) {
      this.setLeading(false);
      return;
    }
    const spec = holder === this.identity
      ? { ...lease.spec, renewTime: microTime(now), leaseDurationSeconds: Math.ceil(this.leaseMs / 1000) }
      : { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.leaseMs / 1000), acquireTime: microTime(now), renewTime: microTime(now),
        leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1 };
    const put = await upstreamRequest(this.up, 'PUT', `${this.path}/${this.lease.name}`, { ...LEASE, body: { ...lease, spec } });
    // 409: another candidate wrote first; the next try sees its record.
    if (expectOk(put, `update Lease ${this.lease.namespace}/${this.lease.name}`, [409]).status === 200) this.renewed();
  }

  private renewed(): void {
    this.lastRenew = Date.now();
    this.setLeading(true);
  }
}
