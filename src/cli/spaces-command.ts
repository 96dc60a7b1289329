// `ksview spaces up|stop|down|status`: the local spaces' commands, their flags and the values they
// parse into. What they run (src/spaces/spaces.ts, spaces-down.ts, spaces-status.ts) is loaded
// only when one runs.
import type { Command } from 'commander';
import { defaultCacheDir } from '../spaces/binaries.js';
import { DEFAULT_PORT_BASE, DEFAULT_WDSS, DEFAULT_WECS, MAX_WDSS, MAX_WECS } from '../spaces/layout.js';
import type { SpaceStatus } from '../spaces/spaces-status.js';
import { stderrProgress } from '../util/progress.js';
import { DEFAULT_BUNDLE_LIMITS, MAX_OBJECTS_PER_WORK } from '../controllers/placement/bundles.js';
import { MAX_MANIFESTS_BYTES } from '../controllers/model/wrapping.js';
import { UserError } from '../util/user-error.js';
import { dirOption, intOption, type DirFlags } from './options.js';

/** What `spaces up`'s flags parse into. */
export interface UpFlags extends DirFlags { wecs: number; wdss: number; portBase: number; realNodes: boolean; maxObjectsPerWork?: number; maxBytesPerWork?: number }

async function up(flags: UpFlags): Promise<void> {
  const progress = stderrProgress();
  const { spacesUp } = await import('../spaces/spaces.js');
  if (flags.maxBytesPerWork !== undefined && flags.maxObjectsPerWork === undefined) throw new UserError('--max-bytes-per-work goes with --max-objects-per-work');
  const bundle = flags.maxObjectsPerWork === undefined ? undefined
    : { objects: flags.maxObjectsPerWork, bytes: flags.maxBytesPerWork ?? DEFAULT_BUNDLE_LIMITS.bytes };
  const layout = await spacesUp({ ...flags, cacheDir: defaultCacheDir(), progress, ...(bundle ? { bundle } : {}) });
  progress.step(`spaces up: ${layout.spaces.map((s) => s.name).join(', ')}`);
  process.stdout.write(`kubeconfig: ${layout.kubeconfigPath}\n`);
}

/** `spaces status`: a row per space, then each real node's processes; exit 1 when one is unhealthy. */
function printStatus(status: SpaceStatus[]): void {
  const rows = [['SPACE', 'ROLE', 'SERVER', 'HEALTH']];
  let healthy = true;
  for (const s of status) {
    const bad = s.components.filter((c) => !c.ok);
    healthy &&= bad.length === 0;
    rows.push([s.name, s.role, s.server,
      bad.length === 0 ? `ok (${s.components.map((c) => c.name).join(', ')})`
        : bad.map((c) => `${c.name}: ${c.detail}`).join('; ')]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
  // Real nodes (`up --real-nodes`): Ready or not, and the pids of their processes.
  for (const s of status) {
    const node = s.components.find((c) => c.name.startsWith('node '));
    if (!node) continue;
    const pids = ['containerd', 'kubelet', 'kube-proxy'].map((n) => `${n} ${s.components.find((c) => c.name === n)?.detail ?? 'unknown'}`);
    process.stdout.write(`${node.detail} in ${s.name}: ${pids.join(', ')}\n`);
  }
  if (!healthy) process.exitCode = 1;
}

/** Adds `spaces` and its subcommands to the program. */
export function addSpacesCommand(program: Command): void {
  const spaces = program.command('spaces').description('local spaces: real kube-apiservers on loopback');
  spaces.command('up')
    .description('start (or reuse, or restart what died) the local system: etcd, a kube-apiserver per space (wds1..wdsM, its1, wec1..wecN), ksview serve for each WDS, the accepted ManagedClusters and the agents')
    .option('--wecs <n>', 'number of workload execution clusters', intOption(0, MAX_WECS), DEFAULT_WECS)
    .option('--wdss <n>', 'number of workload definition spaces, each with its own ksview serve', intOption(1, MAX_WDSS), DEFAULT_WDSS)
    .option('--port-base <port>', 'first loopback port used', intOption(1024, 65000), DEFAULT_PORT_BASE)
    .option('--real-nodes', 'real nodes (root): a hosting space host1 and wec1 run kubelet, containerd and kube-proxy, so containers really run; wds1\'s serve and wec1\'s pull agent are left to the chart (docs/spaces.md)', false)
    .option('--max-objects-per-work <n>', 'each ksview serve packs up to n objects into one ManifestWork (serve\'s flag; default: as the spaces ran before, else 1); a change restarts serve', intOption(1, MAX_OBJECTS_PER_WORK))
    .option('--max-bytes-per-work <n>', 'with --max-objects-per-work: bytes of manifests per work, at most', intOption(1024, MAX_MANIFESTS_BYTES))
    .addOption(dirOption())
    .action(up);
  spaces.command('stop')
    .description('stop one process cleanly, keeping its data (`spaces up` starts it again), e.g. its1/kube-apiserver, wec1/ksview-agent')
    .argument('<process>', 'etcd or <space>/<component>')
    .addOption(dirOption())
    .action(async (name: string, flags: DirFlags) => {
      const { spacesStop } = await import('../spaces/spaces-down.js');
      const { stopped } = await spacesStop(flags.dir, name);
      process.stdout.write(stopped ? `stopped ${name}\n` : `${name} was not running\n`);
    });
  spaces.command('down')
    .description('stop every process of the local spaces and remove their state')
    .addOption(dirOption())
    .action(async (flags: DirFlags) => {
      const { spacesDown } = await import('../spaces/spaces-down.js');
      const { stopped } = await spacesDown(flags.dir);
      process.stdout.write(stopped ? `stopped ${stopped} processes; state removed\n` : 'no spaces were running\n');
    });
  spaces.command('status')
    .description("print each space's health")
    .addOption(dirOption())
    .action(async (flags: DirFlags) => {
      const { spacesStatus } = await import('../spaces/spaces-status.js');
      const status = await spacesStatus(flags.dir);
      if (!status) throw new UserError(`no spaces in ${flags.dir}: run 'ksview spaces up'`);
      printStatus(status);
    });
}
