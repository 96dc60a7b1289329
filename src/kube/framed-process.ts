// A long-lived helper child process spoken to in frames: each request is one frame on its stdin
// and each answer one frame on its stdout (a frame is a 4-byte big-endian length, then that many
// bytes), answered in order. The child is started on the first request and again on the request
// after it died; when it dies, the requests still waiting are rejected with an Error naming the
// helper and carrying the tail of its stderr. A request not answered within `timeoutMs` kills the
// child (so a runaway helper cannot hold every later request). An answer frame over
// `maxAnswerBytes` is refused as its header arrives: its bytes are skipped as they come, never
// held, and its request is rejected with an Error saying so (the next answers are read as usual).
// close() ends its stdin; nothing pending is lost by that, the child answers what it has read
// before it sees EOF.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface FramedProcessOptions {
  /** The name errors use (default: the binary's base name). */
  name?: string;
  args?: readonly string[];
  /** Kill the child when one request waits longer than this (default: no limit). */
  timeoutMs?: number;
  /** Refuse (skip unread) an answer frame longer than this (default: no limit). */
  maxAnswerBytes?: number;
}

interface Pending {
  resolve: (frame: Buffer) => void;
  reject: (e: Error) => void;
}

/** One child and the requests it owes answers to. */
interface Child {
  proc: ChildProcessWithoutNullStreams;
  pending: Pending[];
  buffered: Buffer;
  /** Bytes of a refused answer frame still to skip. */
  skipping: number;
  stderr: string;
  timer?: NodeJS.Timeout;
  done: boolean;
}

const STDERR_TAIL = 2000;

export class FramedProcess {
  private current: Child | undefined;
  readonly name: string;

  constructor(readonly binary: string, private readonly opts: FramedProcessOptions = {}) {
    this.name = opts.name ?? binary.split('/').pop()!;
  }

  private start(): Child {
    const proc = spawn(this.binary, [...(this.opts.args ?? [])], { stdio: ['pipe', 'pipe', 'pipe'] });
    const c: Child = { proc, pending: [], buffered: Buffer.alloc(0), skipping: 0, stderr: '', done: false };
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => { c.stderr = (c.stderr + chunk).slice(-STDERR_TAIL); });
    const max = this.opts.maxAnswerBytes;
    proc.stdout.on('data', (chunk: Buffer) => {
      if (c.skipping > 0) {
        const skipped = Math.min(c.skipping, chunk.length);
        c.skipping -= skipped;
        chunk = chunk.subarray(skipped);
        if (chunk.length === 0) return;
      }
      c.buffered = c.buffered.length ? Buffer.concat([c.buffered, chunk]) : chunk;
      while (c.buffered.length >= 4) {
        const n = c.buffered.readUInt32BE(0);
        if (max !== undefined && n > max) {
          // Refused on its header: the frame is skipped as it arrives, never held.
          const skipped = Math.min(n, c.buffered.length - 4);
          c.skipping = n - skipped;
          c.buffered = c.buffered.subarray(4 + skipped);
          c.pending.shift()?.reject(new Error(`${this.name} answered ${n} bytes, over the limit of ${max}`));
          this.armTimer(c);
          continue;
        }
        if (c.buffered.length < 4 + n) break;
        const frame = Buffer.from(c.buffered.subarray(4, 4 + n));
        c.buffered = c.buffered.subarray(4 + n);
        c.pending.shift()?.resolve(frame);
        this.armTimer(c);
      }
    });
    proc.on('error', (err) => this.fail(c, `failed: ${err.message}`));
    proc.on('close', (code, signal) => this.fail(c, `exited (${signal ?? code})`));
    proc.stdin.on('error', () => { /* reported by 'close' */ });
    return c;
  }

  /** The child is gone: what it still owed is rejected, and the next request starts another. */
  private fail(c: Child, why: string): void {
    if (c.done) return;
    c.done = true;
    if (this.current === c) this.current = undefined;
    if (c.timer) clearTimeout(c.timer);
    const tail = c.stderr.trim();
    for (const p of c.pending.splice(0)) p.reject(new Error(`${this.name} ${why}${tail ? `: ${tail}` : ''}`));
  }

  /** Times the oldest waiting request (answers come in order, so it is the one to watch). */
  private armTimer(c: Child): void {
    if (c.timer) clearTimeout(c.timer);
    c.timer = undefined;
    const limit = this.opts.timeoutMs;
    if (!limit || c.pending.length === 0 || c.done) return;
    c.timer = setTimeout(() => {
      this.fail(c, `did not answer within ${limit}ms (killed)`);
      c.proc.kill('SIGKILL');
    }, limit);
    c.timer.unref();
  }

  /** Sends one frame; resolves with the answer frame. */
  request(body: Buffer): Promise<Buffer> {
    const c = (this.current ??= this.start());
    return new Promise((resolve, reject) => {
      c.pending.push({ resolve, reject });
      if (c.pending.length === 1) this.armTimer(c);
      const header = Buffer.alloc(4);
      header.writeUInt32BE(body.length, 0);
      c.proc.stdin.write(Buffer.concat([header, body]));
    });
  }

  /** request() with JSON both ways. */
  async requestJson<T>(value: unknown): Promise<T> {
    const frame = await this.request(Buffer.from(JSON.stringify(value), 'utf8'));
    return JSON.parse(frame.toString('utf8')) as T;
  }

  /**
   * Ends the child's stdin: it answers what it has read, then exits. A later request starts a
   * new child.
   */
  close(): void {
    this.current?.proc.stdin.end();
    this.current = undefined;
  }
}
