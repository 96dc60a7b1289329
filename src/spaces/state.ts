// The state file of local spaces (state.json in the state folder): which processes run for which
// options. `up` reads it to reuse live processes, `down` to stop them, `status` to report.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { SpacesOptions } from './layout.js';
import type { ProcessRecord } from './processes.js';

export interface SpacesState {
  portBase: number;
  wecs: number;
  /** Absent in state written before there could be more than one WDS: 1. */
  wdss?: number;
  /** `up --real-nodes` (absent: false), so `status`, `down` and `kubeconfig` see host1 and the nodes. */
  realNodes?: boolean;
  /**
   * How each ksview serve packs objects into works (`up --max-objects-per-work`, `--max-bytes-per-work`;
   * absent: a work per object). Kept from one `up` to the next unless given again.
   */
  bundle?: { objects: number; bytes: number };
  /** The sysctls kubelet changes, as they were before the first kubelet started: `down` restores them. */
  nodeSysctls?: Record<string, string>;
  processes: ProcessRecord[];
}

/** The options the recorded spaces run with. */
export function optionsOfState(dir: string, state: SpacesState): SpacesOptions {
  return { dir, portBase: state.portBase, wecs: state.wecs, wdss: state.wdss ?? 1, realNodes: state.realNodes ?? false };
}

export function readState(file: string): SpacesState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SpacesState;
  } catch {
    return undefined;
  }
}

export function writeState(file: string, state: SpacesState): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2));
  renameSync(tmp, file);
}
