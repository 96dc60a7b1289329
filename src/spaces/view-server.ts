// Runs `ksview serve --register` for wds1 as a process of the local spaces (recorded in their
// state, so `ksview spaces down` stops it too) and waits until the WDS reports the APIService
// v1alpha1.view.kubestellar.io Available. `restart` replaces a running one, so tests always
// exercise the code just built.
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import type { Progress } from '../util/progress.js';
import { upstreamFromKubeconfig, upstreamJson } from '../kube/upstream.js';
import type { SpacesLayout } from './layout.js';
import { waitFor } from '../kube/wait.js';
import { probeComponent } from './health.js';
import { portFree } from './ports.js';
import { isRunning, logTail, startDetached, stopAll, waitReady } from './processes.js';
import { repoRoot } from '../util/repo-root.js';
import { readState, writeState } from './state.js';

export const VIEW_SERVER_PROCESS = 'wds1/ksview-serve';
export const APISERVICE_NAME = 'v1alpha1.view.kubestellar.io';

export async function ensureViewServer(layout: SpacesLayout, progress: Progress, opts: { restart?: boolean; timeoutMs?: number } = {}): Promise<void> {
  const state = readState(layout.statePath);
  if (!state) throw new UserError(`no spaces in ${layout.dir}: run 'ksview spaces up'`);
  const existing = state.processes.find((p) => p.name === VIEW_SERVER_PROCESS);
  if (existing && isRunning(existing) && opts.restart) await stopAll([existing]);
  const running = existing && isRunning(existing);
  if (!running) {
    if (!(await portFree(layout.viewServerPort))) {
      throw new UserError(`port ${layout.viewServerPort} on 127.0.0.1 (for ksview serve) is already in use`);
    }
    const wds = layout.spaces.find((s) => s.role === 'wds')!;
    const args = [
      path.join(repoRoot(), 'bin', 'ksview.js'), 'serve',
      '--wds-kubeconfig', path.join(wds.dir, 'kubeconfig'), '--wds-name', wds.name,
      '--port', String(layout.viewServerPort), '--cert-dir', path.join(wds.dir, 'view-certs'), '--register',
    ];
    // With an ITS, the placement controllers run too.
    const its = layout.spaces.find((s) => s.role === 'its');
    if (its) args.push('--its-kubeconfig', path.join(its.dir, 'kubeconfig'));
    const rec = startDetached(VIEW_SERVER_PROCESS, process.execPath, args, path.join(layout.dir, 'logs', 'wds1-ksview-serve.log'));
    state.processes = [...state.processes.filter((p) => p.name !== VIEW_SERVER_PROCESS), rec];
    writeState(layout.statePath, state);
    progress.step(`started ksview serve for wds1 (pid ${rec.pid}) on 127.0.0.1:${layout.viewServerPort}`);
  }
  const rec = readState(layout.statePath)!.processes.find((p) => p.name === VIEW_SERVER_PROCESS)!;
  // The server itself first: after a restart the APIService may still say Available from before.
  await waitReady('ksview serve', rec, () => probeComponent(layout.viewServerPort), opts.timeoutMs ?? 60_000);
  const wds = layout.spaces.find((s) => s.role === 'wds')!;
  const up = await upstreamFromKubeconfig(path.join(wds.dir, 'kubeconfig'));
  let result;
  try {
    result = await waitFor(async () => {
      if (!isRunning(rec)) return { ok: false, detail: `ksview serve exited; log ${rec.log}: ${logTail(rec.log, 1)}`, final: true };
      try {
        const svc = await upstreamJson<{ status?: { conditions?: Array<{ type: string; status: string; message?: string }> } }>(
          up, 'GET', `/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}`);
        const available = svc.status?.conditions?.find((c) => c.type === 'Available');
        return { ok: available?.status === 'True', detail: available?.message ?? 'no Available condition' };
      } catch (err) {
        return { ok: false, detail: (err as Error).message };
      }
    }, opts.timeoutMs ?? 60_000);
  } finally {
    await up.pool.close();
  }
  if (result.ok) {
    progress.step(`APIService ${APISERVICE_NAME} is Available`);
    return;
  }
  if (result.final) throw new UserError(result.detail);
  throw new UserError(`APIService ${APISERVICE_NAME} is not Available: ${result.detail.slice(0, 200)}; log ${rec.log}`);
}
