// `ksview kubeconfig`: the kubeconfig of the local spaces, a context per space (and, with --view,
// the view's contexts), printed or written to a file.
import type { Command } from 'commander';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { optionsOfState, readState } from '../spaces/state.js';
import { spacesLayout } from '../spaces/layout.js';
import { fsProblem } from '../util/fs-error.js';
import { UserError } from '../util/user-error.js';
import { dirOption, type DirFlags } from './options.js';

/** What `kubeconfig`'s flags parse into. */
export interface KubeconfigFlags extends DirFlags { output?: string; view?: boolean }

async function printKubeconfig(flags: KubeconfigFlags): Promise<void> {
  const state = readState(path.join(flags.dir, 'state.json'));
  if (!state || !existsSync(path.join(flags.dir, 'kubeconfig'))) {
    throw new UserError(`no kubeconfig in ${flags.dir}: run 'ksview spaces up'`);
  }
  const { renderKubeconfig, spaceKubeconfigEntries, viewClusterKubeconfigEntries, viewKubeconfigEntries } = await import('../spaces/kubeconfig.js');
  const { viewRoot } = await import('../apiserver/groups/view-group.js');
  const layout = spacesLayout(optionsOfState(flags.dir, state));
  const entries = spaceKubeconfigEntries(layout);
  if (flags.view) entries.push(...viewKubeconfigEntries(layout, viewRoot), ...viewClusterKubeconfigEntries(layout, viewRoot));
  const text = renderKubeconfig(entries, flags.view ? 'wds1-view' : undefined);
  if (!flags.output) {
    process.stdout.write(text);
    return;
  }
  try {
    writeFileSync(flags.output, text, { mode: 0o600 });
  } catch (err) {
    throw new UserError(`cannot write ${flags.output}: ${fsProblem(err)}`);
  }
}

/** Adds `kubeconfig` to the program. */
export function addKubeconfigCommand(program: Command): void {
  program.command('kubeconfig')
    .description('print the kubeconfig of the local spaces (a context per space)')
    .addOption(dirOption())
    .option('--view', 'add the context <wds>-view of each WDS, whose server is its view root, and make wds1-view current; and <wds>-view-<wec> of each WEC: its upsynced objects')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(printKubeconfig);
}
