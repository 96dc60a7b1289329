// `spaces status`: each space's components, probed (etcd, the kube-apiserver and its controllers,
// kwok, a real node's processes and Ready condition, ksview serve, the agents' /readyz).
import path from 'node:path';
import type { ProbeResult } from '../kube/wait.js';
import { probeAgent } from './agent-endpoints.js';
import { agentCommands } from './agents.js';
import { probeApiserver, probeComponent, probeEtcd } from './health.js';
import { runsScheduler, spacesLayout } from './layout.js';
import { nodeLayouts } from './node-layout.js';
import { serveSpaces } from './process-names.js';
import { isRunning } from './processes.js';
import { optionsOfState, readState } from './state.js';

export interface SpaceStatus {
  name: string;
  role: string;
  server: string;
  components: Array<{ name: string; ok: boolean; detail: string }>;
}

export async function spacesStatus(dir: string): Promise<SpaceStatus[] | undefined> {
  const state = readState(path.join(dir, 'state.json'));
  if (!state) return undefined;
  const layout = spacesLayout(optionsOfState(dir, state));
  const proc = (name: string) => state.processes.find((p) => p.name === name);
  const alive = (name: string) => {
    const p = proc(name);
    return p !== undefined && isRunning(p);
  };
  const etcdOk = alive('etcd') ? await probeEtcd(layout) : { ok: false, detail: 'not running' };
  return Promise.all(layout.spaces.map(async (s) => {
    const check = async (component: string, probe: () => Promise<ProbeResult>) => {
      const name = `${s.name}/${component}`;
      const r = alive(name) ? await probe() : { ok: false, detail: 'not running' };
      return { name: component, ok: r.ok, detail: r.detail };
    };
    const components = [
      { name: 'etcd', ok: etcdOk.ok, detail: etcdOk.detail },
      await check('kube-apiserver', () => probeApiserver(s.dir, s.apiserverPort)),
      await check('kube-controller-manager', () => probeComponent(s.controllerManagerPort)),
    ];
    if (runsScheduler(s)) components.push(await check('kube-scheduler', () => probeComponent(s.schedulerPort)));
    if (s.role === 'wec' && !s.realNode) components.push(await check('kwok', async () => ({ ok: true, detail: 'running' })));
    const node = nodeLayouts(layout).find((n) => n.space === s.name);
    if (node) {
      // The node's processes (pids), then its Ready condition as its kube-apiserver reports it.
      for (const c of ['containerd', 'kubelet', 'kube-proxy']) {
        components.push(await check(c, async () => ({ ok: true, detail: `running (pid ${proc(`${s.name}/${c}`)!.pid})` })));
      }
      const { nodeReady } = await import('./real-nodes.js');
      components.push({ name: `node ${node.name}`, ...(await nodeReady(layout, node)) });
    }
    if (serveSpaces(layout).includes(s)) components.push(await check('ksview-serve', () => probeComponent(s.viewServerPort ?? layout.viewServerPort)));
    // The agents answer /readyz (open; HTTPS, their certificate checked): ready means connected
    // to the ITS (and, pull, its WEC). Listed once started (KSVIEW_SPACES_NO_AGENTS=1 starts
    // none); a dead one stays recorded: "not running".
    for (const a of agentCommands(layout).filter((c) => c.name.startsWith(`${s.name}/`) && proc(c.name))) {
      components.push(await check(a.name.slice(s.name.length + 1), () => probeAgent(a, '/readyz')));
    }
    return { name: s.name, role: s.role, server: `https://127.0.0.1:${s.apiserverPort}`, components };
  }));
}
