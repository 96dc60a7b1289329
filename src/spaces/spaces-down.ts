// Stopping the local spaces: one process, keeping its data (`spaces stop`: `up` starts it again),
// or everything (`spaces down`): the real nodes first and what they made, then clients before
// servers, then the state `up` wrote, and only that.
import { existsSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/user-error.js';
import { spacesLayout } from './layout.js';
import { nodeLayouts } from './node-layout.js';
import { parseProcessName, processNames } from './process-names.js';
import { isRunning, stopAll, type ProcessRecord } from './processes.js';
import { optionsOfState, readState, type SpacesState } from './state.js';

/** Stops one process cleanly (TERM, then KILL after the grace), keeping its data: `up` starts it again. */
export async function spacesStop(dir: string, name: string): Promise<{ stopped: boolean }> {
  const state = readState(path.join(dir, 'state.json'));
  if (!state) throw new UserError(`no spaces in ${dir}: run 'ksview spaces up'`);
  const layout = spacesLayout(optionsOfState(dir, state));
  const wanted = parseProcessName(name, processNames(layout));
  const rec = state.processes.find((p) => p.name === wanted);
  if (!rec || !isRunning(rec)) return { stopped: false };
  await stopAll([rec]);
  return { stopped: true };
}


export interface DownResult {
  stopped: number;
}

export async function spacesDown(dir: string): Promise<DownResult> {
  const state = readState(path.join(dir, 'state.json'));
  if (!state) {
    if (existsSync(path.join(dir, 'etcd'))) removeState(dir, 0);
    return { stopped: 0 };
  }
  const live = state.processes.filter(isRunning);
  // Real nodes first: kubelet and kube-proxy, the pods, containerd, then what they made (./node-cleanup.ts).
  const failed = state.realNodes ? await realNodesDown(dir, state, live) : [];
  // Stop clients before servers: kwok, scheduler and controller-manager, then kube-apiservers, then etcd.
  const rank = (r: ProcessRecord) => (r.name === 'etcd' ? 2 : r.name.endsWith('/kube-apiserver') ? 1 : 0);
  for (const level of [0, 1, 2]) await stopAll(live.filter((r) => rank(r) === level));
  if (failed.length > 0) {
    // The state stays, so `down` again retries what is left.
    throw new UserError(`spaces down could not remove everything the real nodes made: ${failed.join('; ')}`);
  }
  removeState(dir, state.wecs, state.wdss ?? 1, state.realNodes ?? false);
  return { stopped: live.length };
}

/** Stops the nodes' processes and removes what they made; restores kubelet's sysctls. Returns what failed. */
async function realNodesDown(dir: string, state: SpacesState, live: ProcessRecord[]): Promise<string[]> {
  const layout = spacesLayout(optionsOfState(dir, state));
  const nodes = nodeLayouts(layout);
  const named = (suffix: string) => live.filter((r) => nodes.some((n) => r.name === `${n.space}/${suffix}`));
  await stopAll([...named('kubelet'), ...named('kube-proxy')]);
  const { planNodeCleanup, readMachineFacts, runCleanup } = await import('./node-cleanup.js');
  // The pods' processes and the shims go before containerd, so it does not restart them.
  const kills = planNodeCleanup(nodes, state.portBase, readMachineFacts(nodes, state.portBase)).filter((s) => s.kind === 'kill');
  const failed = await runCleanup(kills);
  await stopAll(named('containerd'));
  failed.push(...await runCleanup(planNodeCleanup(nodes, state.portBase, readMachineFacts(nodes, state.portBase))));
  if (state.nodeSysctls) {
    // The last real-node spaces of the machine to stop restores them (./node-host.ts).
    const { NODE_SYSCTLS, restoreMachineSysctls } = await import('./node-host.js');
    const { failed: notRestored, ignored } = restoreMachineSysctls(nodes.map((n) => path.dirname(n.containerdSocket)), state.nodeSysctls);
    if (ignored.length > 0) process.stderr.write(`spaces down: ignored recorded sysctls ${ignored.join(', ')} (only ${NODE_SYSCTLS.join(', ')} with integer values are restored)\n`);
    failed.push(...notRestored.map((k) => `sysctl ${k} not restored`));
  }
  return failed;
}

/** Removes what `up` wrote, and only that: never a folder the user pointed at by mistake. */
function removeState(dir: string, wecs: number, wdss = 1, realNodes = false): void {
  const layout = spacesLayout({ dir, portBase: 0, wecs, wdss, realNodes });
  const ours = new Set(['state.json', 'state.json.tmp', 'kubeconfig', 'etcd', 'etcd-pki', 'logs', ...layout.spaces.map((s) => s.name)]);
  for (const entry of readdirSync(dir)) {
    if (ours.has(entry) || /^(wec|wds|host)\d+$/.test(entry) || entry.startsWith('kubeconfig')) rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
  try { rmdirSync(dir); } catch { /* not empty: something else lives there */ }
}

