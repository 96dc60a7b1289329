// Decodes Kubernetes protobuf bodies (what typed clients send by default) into JSON objects, with
// the helper ksview-protojson (build/kubernetes/ksview-protojson: client-go's own scheme), run as
// one long-lived child process. Requests are answered in order, one frame each way (4-byte
// big-endian length, then the bytes). A helper that dies is started again on the next request;
// a body the helper cannot decode is a DecodeError.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecodeError';
  }
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class ProtobufDecoder {
  private child: ChildProcessWithoutNullStreams | undefined;
  private pending: Pending[] = [];
  private buffered = Buffer.alloc(0);

  constructor(private readonly binary: string) {}

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn(this.binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-2000); });
    child.stdout.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 4) {
        const n = this.buffered.readUInt32BE(0);
        if (this.buffered.length < 4 + n) break;
        const frame = this.buffered.subarray(4, 4 + n).toString('utf8');
        this.buffered = this.buffered.subarray(4 + n);
        const p = this.pending.shift();
        if (!p) continue;
        const answer = JSON.parse(frame) as { object?: unknown; error?: string };
        if (answer.error !== undefined) p.reject(new DecodeError(answer.error));
        else p.resolve(answer.object);
      }
    });
    const fail = (why: string) => {
      if (this.child === child) this.child = undefined;
      this.buffered = Buffer.alloc(0);
      for (const p of this.pending.splice(0)) p.reject(new Error(`ksview-protojson ${why}${stderr ? `: ${stderr.trim()}` : ''}`));
    };
    child.on('error', (err) => fail(`failed: ${err.message}`));
    child.on('exit', (code, signal) => fail(`exited (${signal ?? code})`));
    child.stdin.on('error', () => { /* reported by 'exit' */ });
    return child;
  }

  decode(body: Buffer): Promise<unknown> {
    this.child ??= this.start();
    const child = this.child;
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      const header = Buffer.alloc(4);
      header.writeUInt32BE(body.length, 0);
      child.stdin.write(Buffer.concat([header, body]));
    });
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }
}
