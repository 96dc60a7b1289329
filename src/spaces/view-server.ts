// Runs `ksview serve --register` for one WDS of the local spaces (wds1 unless told) as a process of
// the spaces (`<wds>/ksview-serve`, recorded in their state, so `ksview spaces down` stops it too)
// and waits until that WDS reports the APIService v1alpha1.view.kubestellar.io Available. Each WDS's
// serve has its own port, certificates and `--wds-name`, hence its own ManifestWork names, labels,
// field managers and leader Lease; all share the ITS. `restart` replaces a running one, so tests
// always exercise the code just built.
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';
import { closeUpstream, upstreamFromKubeconfig, upstreamJson, type Upstream } from '../kube/upstream.js';
import { serveProcessName, wdsSpaces, type SpacesLayout } from './layout.js';
import { waitFor } from '../kube/wait.js';
import { probeComponent } from './health.js';
import { portFree } from './ports.js';
import { isRunning, logTail, startDetached, stopAll, waitReady } from './processes.js';
import { repoRoot } from '../util/repo-root.js';
import { readState, writeState } from './state.js';
import { VIEW_NAMESPACE, VIEW_SERVICE } from './webhook-client.js';
import { DEFAULT_EXECUTOR } from './wec-executors.js';

/** The process of wds1's serve. */
export const VIEW_SERVER_PROCESS = serveProcessName('wds1');
export const APISERVICE_NAME = 'v1alpha1.view.kubestellar.io';

/** Whether a WDS says the view's APIService is Available (its message when not). */
export async function apiServiceAvailable(up: Upstream): Promise<{ ok: boolean; detail: string }> {
  try {
    const svc = await upstreamJson<{ status?: { conditions?: Array<{ type: string; status: string; message?: string }> } }>(
      up, 'GET', `/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}`);
    const available = svc.status?.conditions?.find((c) => c.type === 'Available');
    return { ok: available?.status === 'True', detail: available?.message ?? 'no Available condition' };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}

export async function ensureViewServer(layout: SpacesLayout, progress: Progress,
  opts: { restart?: boolean; timeoutMs?: number; wds?: string; wdsKubeconfig?: string; register?: boolean; extraArgs?: string[] } = {}): Promise<void> {
  const wdsName = opts.wds ?? 'wds1';
  const wds = wdsSpaces(layout).find((s) => s.name === wdsName);
  if (!wds) throw new UserError(`no WDS ${wdsName} in these spaces`);
  const name = serveProcessName(wds.name);
  const port = wds.viewServerPort ?? layout.viewServerPort;
  const state = readState(layout.statePath);
  if (!state) throw new UserError(`no spaces in ${layout.dir}: run 'ksview spaces up'`);
  const existing = state.processes.find((p) => p.name === name);
  if (existing && isRunning(existing) && opts.restart) await stopAll([existing]);
  const running = existing && isRunning(existing);
  if (!running) {
    if (!(await portFree(port))) {
      throw new UserError(`port ${port} on 127.0.0.1 (for ksview serve of ${wds.name}) is already in use`);
    }
    const args = [
      path.join(repoRoot(), 'bin', 'ksview.js'), 'serve',
      // The space's admin unless told otherwise (bench/in-cluster.ts gives the chart's least-privilege identity).
      '--wds-kubeconfig', opts.wdsKubeconfig ?? path.join(wds.dir, 'kubeconfig'), '--wds-name', wds.name,
      '--port', String(port), '--cert-dir', path.join(wds.dir, 'view-certs'), ...(opts.register === false ? [] : ['--register']),
      // The Service its kube-apiserver's webhook client configuration names (./webhook-client.ts).
      '--namespace', VIEW_NAMESPACE, '--service', VIEW_SERVICE,
    ];
    // With an ITS, the placement controllers run too.
    const its = layout.spaces.find((s) => s.role === 'its');
    if (its) args.push('--its-kubeconfig', path.join(its.dir, 'kubeconfig'));
    // Works of policies naming no executor run as the WECs' restricted default (./wec-executors.ts).
    args.push('--default-executor', `${DEFAULT_EXECUTOR.namespace}/${DEFAULT_EXECUTOR.name}`);
    // Bundled works when `spaces up --max-objects-per-work` asked for them.
    if (state.bundle) args.push('--max-objects-per-work', String(state.bundle.objects), '--max-bytes-per-work', String(state.bundle.bytes));
    // A bench's settings (e.g. --max-its-requests-inflight): kept until the next restart.
    args.push(...opts.extraArgs ?? []);
    const rec = startDetached(name, process.execPath, args, path.join(layout.dir, 'logs', `${wds.name}-ksview-serve.log`));
    state.processes = [...state.processes.filter((p) => p.name !== name), rec];
    writeState(layout.statePath, state);
    progress.step(`started ksview serve for ${wds.name} (pid ${rec.pid}) on 127.0.0.1:${port}`);
  }
  const rec = readState(layout.statePath)!.processes.find((p) => p.name === name)!;
  // The server itself first: after a restart the APIService may still say Available from before.
  await waitReady(`ksview serve of ${wds.name}`, rec, () => probeComponent(port), opts.timeoutMs ?? 60_000);
  const up = await upstreamFromKubeconfig(path.join(wds.dir, 'kubeconfig'));
  let result;
  try {
    result = await waitFor(async () => {
      if (!isRunning(rec)) return { ok: false, detail: `ksview serve exited; log ${rec.log}: ${logTail(rec.log, 1)}`, final: true };
      return apiServiceAvailable(up);
    }, opts.timeoutMs ?? 60_000);
  } finally {
    await closeUpstream(up);
  }
  if (result.ok) {
    progress.step(`APIService ${APISERVICE_NAME} is Available in ${wds.name}`);
    return;
  }
  if (result.final) throw new UserError(result.detail);
  throw new UserError(`APIService ${APISERVICE_NAME} is not Available in ${wds.name}: ${result.detail.slice(0, 200)}; log ${rec.log}`);
}
