// `ksview demo` (behind `make demo` and, with --in-cluster, `make demo-cluster`): its flags; the
// tours themselves (./demo.ts, ./demo-cluster.ts) are loaded only when one runs.
import type { Command } from 'commander';
import { defaultCacheDir } from '../spaces/binaries.js';
import { defaultSpacesDir } from '../spaces/layout.js';
import { dirOption, type DirFlags } from './options.js';

/** What `demo`'s flags parse into. */
export interface DemoFlags extends DirFlags { inCluster: boolean }

/** Adds `demo` to the program. */
export function addDemoCommand(program: Command): void {
  program.command('demo')
    .description('the guided tour: local spaces up, kubectl against each, a Deployment Available in wec1')
    .addOption(dirOption())
    .option('--in-cluster', 'the tour of the installed product instead (root): real-node spaces, the image, the chart, the view served by pods (`make demo-cluster`; its own state folder unless --dir)', false)
    .action(async (flags: DemoFlags, cmd: Command) => {
      if (flags.inCluster) {
        const { runDemoCluster } = await import('./demo-cluster.js');
        // Apart from `make demo`'s spaces, which cannot turn into real-node ones while they run.
        const dir = cmd.getOptionValueSource('dir') === 'cli' ? flags.dir : `${defaultSpacesDir()}-real-nodes`;
        await runDemoCluster({ dir, cacheDir: defaultCacheDir() });
        return;
      }
      const { runDemo } = await import('./demo.js');
      await runDemo({ dir: flags.dir, cacheDir: defaultCacheDir() });
    });
}
