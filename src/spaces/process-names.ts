// The processes the local spaces run, by name (`etcd`, `<space>/<component>`): which there are for
// a layout, in start order, and which WDSs have a `ksview serve` process of their own.
import { UserError } from '../util/user-error.js';
import { agentCommands } from './agents.js';
import { runsScheduler, serveProcessName, wdsSpaces, type SpaceLayout, type SpacesLayout } from './layout.js';
import { nodeLayouts, nodeProcessNames } from './node-layout.js';

/** `<space>/<component>` or `etcd`, checked against the names the layout runs; a UserError otherwise. */
export function parseProcessName(name: string, known: readonly string[]): string {
  if (known.includes(name)) return name;
  throw new UserError(`no process '${name}' in these spaces; one of: ${known.join(', ')}`);
}

/** Every process name the spaces of `layout` run, in start order. */
export function processNames(layout: SpacesLayout): string[] {
  const names = ['etcd'];
  for (const s of layout.spaces) {
    names.push(`${s.name}/kube-apiserver`, `${s.name}/kube-controller-manager`);
    if (runsScheduler(s)) names.push(`${s.name}/kube-scheduler`);
    if (s.role === 'wec' && !s.realNode) names.push(`${s.name}/kwok`);
  }
  for (const n of nodeLayouts(layout)) names.push(...nodeProcessNames(n));
  names.push(...serveSpaces(layout).map((s) => serveProcessName(s.name)), ...agentCommands(layout).map((a) => a.name));
  return names;
}

/** The WDSs whose `ksview serve` runs as a process: all but wds1 with real nodes (there, a pod of the chart). */
export function serveSpaces(layout: SpacesLayout): SpaceLayout[] {
  return wdsSpaces(layout).filter((s, i) => !(layout.realNodes && i === 0));
}

