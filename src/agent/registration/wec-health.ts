// Health of one WEC as push mode sees it: GET /readyz with a short timeout. Returns undefined when
// ready, else a one-line reason (connection error, timeout, status code, or 401/403: credentials).
import { upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { errorLine } from '../shared/log.js';

export async function checkWec(wec: Upstream, timeoutMs = 3000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => { timer = setTimeout(() => resolve(`no answer from ${wec.origin}/readyz within ${timeoutMs} ms`), timeoutMs); });
  const probe = upstreamRequest(wec, 'GET', '/readyz').then((res) => {
    if (res.status === 200) return undefined;
    if (res.status === 401) return `${wec.origin} rejects the kubeconfig's credentials (401 Unauthorized): wrong or expired`;
    if (res.status === 403) return `${wec.origin} forbids /readyz to the kubeconfig's user (403)`;
    return `${wec.origin}/readyz answered ${res.status}: ${res.body.toString('utf8').split('\n')[0]!.slice(0, 200)}`;
  }, (err: unknown) => `${wec.origin} unreachable: ${errorLine(err)}`);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reachability with credentials of the ITS: any answer but 401/403 (and a connection) is fine. */
export async function checkIts(its: Upstream, path: string, timeoutMs = 3000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => { timer = setTimeout(() => resolve(`ITS ${its.origin}: no answer within ${timeoutMs} ms`), timeoutMs); });
  const probe = upstreamRequest(its, 'GET', path).then((res) => {
    if (res.status === 401) return `ITS ${its.origin} rejects the kubeconfig's credentials (401 Unauthorized): wrong or expired`;
    if (res.status === 403) return `ITS ${its.origin}: the kubeconfig's user may not read ${path} (403 Forbidden)`;
    if (res.status >= 500) return `ITS ${its.origin} answered ${res.status}`;
    return undefined;
  }, (err: unknown) => `ITS ${its.origin} unreachable: ${errorLine(err)}`);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
