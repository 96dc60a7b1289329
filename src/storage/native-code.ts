// The client of ksview-native (build/kubernetes/ksview-native): Kubernetes' own registries for the
// kinds the view stores denatured, in a long-lived Go child process on a private unix socket.
// Contract:
// - start() spawns it and resolves once it answers /healthz; a binary that is missing or does not
//   come up is a UserError (ksview serve does not start: no weaker checks instead);
// - write() hands one native write (method, native path and query, Content-Type, body as sent)
//   with the live native object and the user who writes to Kubernetes' registry and returns its
//   answer: the object to store and what to do with it (create, update, none), or the Status
//   kube-apiserver would give. For Roles, ClusterRoles and their bindings that is also Kubernetes'
//   RBAC escalation check (ksview-native's escalation.go), asked of the WDS (given by
//   `wds`: ksview serve's kubeconfig) for that user; a write without a user is refused any
//   escalation, and VALIDATION_USER (system:masters) is the one that passes without the check;
// - normalize() turns objects read from storage into what kube-apiserver shows (defaults, null
//   and omitted fields, canonical quantities, field order), each on its own: an object Kubernetes
//   cannot decode is answered with why, beside the others;
// - a helper that dies or stops answering /healthz is started again (backoff 0.5 s → 10 s);
//   requests meanwhile fail with 503.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { errors } from '../kube/status.js';
import { waitFor } from '../kube/wait.js';
import { UserError } from '../util/user-error.js';
import type { UserInfo } from '../kube/user.js';

export type WriteKind = 'create' | 'update' | 'none';

export interface NativeWrite {
  method: 'POST' | 'PUT' | 'PATCH';
  /** The native path with its query, e.g. /apis/rbac.authorization.k8s.io/v1/clusterroles/x?fieldManager=m. */
  path: string;
  contentType: string;
  userAgent?: string;
  body: Buffer;
  /** The live object in native form (JSON), or undefined when there is none. */
  live?: Buffer;
  /** Who writes: Kubernetes' RBAC escalation check asks about this user. */
  user?: UserInfo;
}

/**
 * The user of a write ksview-native only validates, of an object already stored and checked when
 * it was written (placement's validity): in system:masters, which Kubernetes' escalation check lets
 * through without asking (pkg/registry/rbac.EscalationAllowed), as it lets kube-apiserver's own
 * loopback writes through. Never the user of a write someone asks for.
 */
export const VALIDATION_USER: UserInfo = { username: 'system:kubestellar-view:validation', groups: ['system:masters'], extra: {} };

/** The WDS ksview-native asks for the escalation checks (its kubeconfig, ksview serve's identity). */
export interface NativeCodeWds {
  kubeconfig: string;
  context?: string;
}

export interface NativeAnswer {
  status: number;
  /** Parsed JSON: the object to store (2xx) or a Status. */
  json: unknown;
  warnings: string[];
  write: WriteKind;
}

/** One object as kube-apiserver shows it, or why Kubernetes' code cannot read it. */
export type Normalized = { object: unknown } | { error: string };

export interface NativeCodeLog {
  info(msg: string): void;
  error(msg: string): void;
}

const HEALTH_INTERVAL_MS = 10_000;
const START_TIMEOUT_MS = 30_000;

/** What the stores use of ksview-native (tests give a fake). */
export type NativeRegistries = Pick<NativeCode, 'write' | 'normalize'>;

/** The user as ksview-native reads it (X-Ksview-User): JSON, ASCII only (a header value). */
export function userHeader(u: UserInfo): string {
  return JSON.stringify({ name: u.username, uid: u.uid ?? '', groups: u.groups, extra: u.extra })
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export class NativeCode {
  private child: ChildProcess | undefined;
  private pool: Pool | undefined;
  /** A private folder for the socket, made by start(). */
  private dir = '';
  private healthTimer: NodeJS.Timeout | undefined;
  private restartDelay = 500;
  private closed = false;
  private started = false;
  private stderrTail = '';

  constructor(readonly binary: string, private readonly log: NativeCodeLog, private readonly wds?: NativeCodeWds) {}

  private get socket(): string {
    return path.join(this.dir, 'sock');
  }

  /** Starts the helper and waits for it to answer; then keeps it alive. */
  async start(): Promise<void> {
    if (!existsSync(this.binary)) {
      throw new UserError(`ksview-native is missing: ${this.binary} (it is built with the spaces' binaries: ksview spaces up, or --ksview-native <path>)`);
    }
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-native-'));
    await this.spawnAndWait();
    this.started = true;
    this.healthTimer = setInterval(() => { void this.checkHealth(); }, HEALTH_INTERVAL_MS);
    this.healthTimer.unref();
  }

  /**
   * Starts a child and waits until it answers. The end of a started helper (its exit, or a spawn
   * error) is the one place a restart is scheduled from, so a restart that fails schedules no
   * second one beside it.
   */
  private async spawnAndWait(): Promise<void> {
    rmSync(this.socket, { force: true });
    const args = ['--socket', this.socket];
    if (this.wds) args.push('--kubeconfig', this.wds.kubeconfig, ...(this.wds.context ? ['--context', this.wds.context] : []));
    const child = spawn(this.binary, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child = child;
    this.stderrTail = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => { this.stderrTail = (this.stderrTail + c).slice(-2000); });
    child.stdin!.on('error', () => { /* reported by exit */ });
    const gone = (how: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      // Before start() succeeded its caller reports the failure; after close() nothing is owed.
      if (!this.started || this.closed) return;
      this.log.error(`ksview-native ${how}: ${this.lastLine()}; starting it again in ${this.restartDelay} ms`);
      this.scheduleRestart();
    };
    child.on('error', (err) => gone(`failed (${err.message})`));
    child.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
    void this.pool?.close().catch(() => undefined);
    this.pool = new Pool('http://ksview-native', { connect: { socketPath: this.socket }, connections: 16, pipelining: 1 });
    const r = await waitFor(async () => {
      if (this.child !== child) return { ok: false, final: true, detail: `ksview-native did not start: ${this.lastLine()}` };
      if (await this.healthy()) return { ok: true, detail: '' };
      return { ok: false, detail: `ksview-native did not answer on ${this.socket} within ${START_TIMEOUT_MS / 1000} s: ${this.lastLine()}` };
    }, START_TIMEOUT_MS, 100);
    if (!r.ok) {
      if (!r.final) child.kill();
      throw new UserError(r.detail);
    }
  }

  private lastLine(): string {
    return this.stderrTail.trim().split('\n').pop() ?? '';
  }

  /** After restartDelay (doubling to 10 s while starts keep failing), a new child; its failure ends it, and that schedules the next. */
  private scheduleRestart(): void {
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, 10_000);
    setTimeout(() => {
      if (this.closed) return;
      this.spawnAndWait().then(() => { this.restartDelay = 500; this.log.info('ksview-native started again'); },
        (err: Error) => this.log.error(err.message));
    }, delay).unref();
  }

  private async healthy(): Promise<boolean> {
    try {
      const res = await this.pool!.request({ method: 'GET', path: '/healthz', headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.text();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  /** A helper that stops answering is killed; its exit starts it again. */
  private async checkHealth(): Promise<void> {
    if (this.closed || !this.child) return;
    if (!(await this.healthy()) && this.child && !(await this.healthy())) {
      this.log.error('ksview-native does not answer /healthz: killing it');
      this.child.kill('SIGKILL');
    }
  }

  private async call(method: 'POST' | 'PUT' | 'PATCH', reqPath: string, headers: Record<string, string>, body: Buffer) {
    if (!this.child || !this.pool) throw errors.serviceUnavailable('ksview-native (Kubernetes\' registries for denatured kinds) is starting again');
    try {
      return await this.pool.request({ method, path: reqPath, headers, body });
    } catch (err) {
      throw errors.serviceUnavailable(`ksview-native did not answer: ${(err as Error).message}`);
    }
  }

  async write(w: NativeWrite): Promise<NativeAnswer> {
    const live = w.live ?? Buffer.alloc(0);
    const headers: Record<string, string> = {
      'content-type': w.contentType, accept: 'application/json', 'x-ksview-live-length': String(live.length),
    };
    if (w.userAgent) headers['user-agent'] = w.userAgent;
    if (w.user) headers['x-ksview-user'] = userHeader(w.user);
    const res = await this.call(w.method, w.path, headers, Buffer.concat([live, w.body]));
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw errors.internal(`ksview-native answered ${res.statusCode} without JSON: ${text.slice(0, 200)}`);
    }
    const warnings = ([] as string[]).concat(res.headers.warning ?? []);
    const write = String(res.headers['x-ksview-write'] ?? 'none') as WriteKind;
    return { status: res.statusCode, json, warnings, write };
  }

  /** Objects of one apiVersion as kube-apiserver shows them (or why one cannot be read), in order. */
  async normalize(apiVersion: string, objects: readonly unknown[]): Promise<Normalized[]> {
    if (objects.length === 0) return [];
    const res = await this.call('POST', `/ksview/normalize?apiVersion=${encodeURIComponent(apiVersion)}`,
      { 'content-type': 'application/json' }, Buffer.from(JSON.stringify(objects)));
    const text = await res.body.text();
    if (res.statusCode !== 200) throw errors.internal(`ksview-native could not read stored objects: ${text.trim()}`);
    const items = JSON.parse(text) as Normalized[];
    if (!Array.isArray(items) || items.length !== objects.length) throw errors.internal(`ksview-native answered ${Array.isArray(items) ? items.length : 'no'} items for ${objects.length} objects`);
    return items;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.healthTimer) clearInterval(this.healthTimer);
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
    }
    await this.pool?.close().catch(() => undefined);
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
