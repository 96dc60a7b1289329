// What users may hold open in `ksview serve` at once, bounded as kube-apiserver bounds its own
// requests. kube-apiserver caps ordinary requests in flight (--max-requests-inflight; long-running
// ones are not counted there) and API Priority and Fairness keeps one flow from taking every seat.
// Here, per user and in total:
// - long-running requests (watch, logs, exec/attach/port-forward, proxy: isLongRunning in
//   ../../kube/request-info.ts), each holding a connection to the WDS of its own for its life (the
//   Upstream's long-running pool) and one from its client;
// - ordinary requests in flight, so one user's many slow requests cannot take every connection of
//   the ordinary pool from the others.
// Past a cap the request is refused with a 429 TooManyRequests Status and Retry-After, as
// kube-apiserver refuses. Members of system:masters are never refused (kube-apiserver's max-in-flight
// filter lets them through too: they can stop the server anyway) but are counted. A slot is taken
// once the request is authenticated and given back when its response (or upgraded socket) closes.
// Taking and giving back costs a map lookup and two counters: this runs on every request.
import { errors } from '../../kube/status.js';
import type { UserInfo } from '../../kube/user.js';

export interface RequestLimitsOptions {
  /** Long-running requests one user may hold at once (0: no limit). */
  longRunningPerUser: number;
  /** Long-running requests of all users together (0: no limit). */
  longRunningTotal: number;
  /** Ordinary requests one user may have in flight (0: no limit). */
  inflightPerUser: number;
  /** Ordinary requests of all users in flight (0: no limit); kube-apiserver's default is 400 (+200 mutating). */
  inflightTotal: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimitsOptions = {
  longRunningPerUser: 300,
  longRunningTotal: 3000,
  inflightPerUser: 100,
  inflightTotal: 400,
};

/** Gives a slot back; called once, when the request's response or socket closes. */
export type Release = () => void;

const PRIVILEGED_GROUP = 'system:masters';

/** One user's slots in use; removed from the map when both counts are back at zero. */
class UserSlots {
  longRunning = 0;
  inflight = 0;
  /** Bound once per user, so taking a slot allocates nothing. */
  readonly releaseLongRunning: Release;
  readonly releaseInflight: Release;

  constructor(limits: RequestLimits, readonly username: string) {
    this.releaseLongRunning = () => limits.release(this, true);
    this.releaseInflight = () => limits.release(this, false);
  }
}

export class RequestLimits {
  private readonly users = new Map<string, UserSlots>();
  private longRunningTotal = 0;
  private inflightTotal = 0;

  constructor(private readonly caps: RequestLimitsOptions = DEFAULT_REQUEST_LIMITS) {}

  /**
   * Takes a slot for one request of `user`, or throws a 429 StatusError when a cap is reached.
   * The caller must call the returned Release exactly once, when the request is over.
   */
  acquire(user: UserInfo, longRunning: boolean): Release {
    let slots = this.users.get(user.username);
    const mine = longRunning ? slots?.longRunning ?? 0 : slots?.inflight ?? 0;
    const total = longRunning ? this.longRunningTotal : this.inflightTotal;
    const perUser = longRunning ? this.caps.longRunningPerUser : this.caps.inflightPerUser;
    const overall = longRunning ? this.caps.longRunningTotal : this.caps.inflightTotal;
    if (((perUser > 0 && mine >= perUser) || (overall > 0 && total >= overall)) && !user.groups.includes(PRIVILEGED_GROUP)) {
      const what = longRunning ? 'long-running requests (watches, logs, exec, attach, port-forward, proxy)' : 'requests in flight';
      throw errors.tooManyRequests(perUser > 0 && mine >= perUser
        ? `too many ${what} for user "${user.username}": at most ${perUser} at a time`
        : `too many ${what} on this server: at most ${overall} at a time; please try again later`);
    }
    if (!slots) {
      slots = new UserSlots(this, user.username);
      this.users.set(user.username, slots);
    }
    if (longRunning) {
      slots.longRunning++;
      this.longRunningTotal++;
      return slots.releaseLongRunning;
    }
    slots.inflight++;
    this.inflightTotal++;
    return slots.releaseInflight;
  }

  /** @internal UserSlots' release functions. */
  release(slots: UserSlots, longRunning: boolean): void {
    if (longRunning) {
      slots.longRunning--;
      this.longRunningTotal--;
    } else {
      slots.inflight--;
      this.inflightTotal--;
    }
    if (slots.longRunning === 0 && slots.inflight === 0 && this.users.get(slots.username) === slots) this.users.delete(slots.username);
  }

  /** What is held now, for /metrics and tests. */
  usage(username?: string): { longRunning: number; inflight: number } {
    if (username !== undefined) {
      const s = this.users.get(username);
      return { longRunning: s?.longRunning ?? 0, inflight: s?.inflight ?? 0 };
    }
    return { longRunning: this.longRunningTotal, inflight: this.inflightTotal };
  }
}
