// Before `ksview serve` starts anything, each space it was pointed at (the WDS, and the ITS when
// placement runs) must be usable: its kubeconfig loads, its server answers GET /version within
// PROBE_TIMEOUT_MS and accepts the credentials. Checking all of them first means a mistake in any
// flag is one line naming the space and its server, and nothing was half-started.
import { destroyUpstream, upstreamFromKubeconfig, upstreamRequest, type UpstreamResponse } from '../kube/upstream.js';
import { withTimeout } from '../kube/wait.js';
import { UserError } from '../util/user-error.js';

const PROBE_TIMEOUT_MS = 10_000;

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = (e?.message ?? String(err)).split('\n')[0]!;
  // TLS failures say what is wrong in the code more than in the message.
  return e?.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}

export async function checkSpace(role: 'WDS' | 'ITS', kubeconfig: string, context?: string): Promise<void> {
  const up = await upstreamFromKubeconfig(kubeconfig, context);
  const where = `the ${role} at ${up.origin}${up.basePath}`;
  let res: UpstreamResponse;
  try {
    res = await withTimeout(upstreamRequest(up, 'GET', '/version'), PROBE_TIMEOUT_MS);
  } catch (err) {
    throw new UserError(`cannot reach ${where}: ${reason(err)}`);
  } finally {
    await destroyUpstream(up);
  }
  if (res.status === 401) throw new UserError(`${where} does not accept the credentials of kubeconfig ${kubeconfig} (401 Unauthorized)`);
  if (res.status !== 200) throw new UserError(`${where} answers GET /version with ${res.status}: is it a kube-apiserver?`);
}
