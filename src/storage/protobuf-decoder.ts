// Decodes Kubernetes protobuf bodies (what typed clients send by default) into JSON objects, with
// the helper ksview-protojson (build/kubernetes/ksview-protojson: client-go's own scheme), run as
// one long-lived child process (src/kube/framed-process.ts: one frame each way, in order; a
// helper that dies is started again on the next request). A body the helper cannot decode is a
// DecodeError; a helper that cannot run or dies is a plain Error naming it.
import { FramedProcess } from '../kube/framed-process.js';

export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecodeError';
  }
}

export class ProtobufDecoder {
  private readonly helper: FramedProcess;

  constructor(binary: string) {
    this.helper = new FramedProcess(binary, { name: 'ksview-protojson' });
  }

  async decode(body: Buffer): Promise<unknown> {
    const frame = await this.helper.request(body);
    const answer = JSON.parse(frame.toString('utf8')) as { object?: unknown; error?: string };
    if (answer.error !== undefined) throw new DecodeError(answer.error);
    return answer.object;
  }

  close(): void {
    this.helper.close();
  }
}
