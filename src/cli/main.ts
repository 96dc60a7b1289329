// The `ksview` command line. Every command returns an exit code; a UserError or a usage mistake is
// one line on stderr and a non-zero exit, never a stack trace. What a command runs is imported
// when it runs: the Kubernetes client, fastify and node-forge take seconds to load, which
// `--help`, `--version` and a mistyped flag should not wait for.
import { Command, CommanderError } from 'commander';
import { projectVersion } from '../util/repo-root.js';
import { versionLine } from '../util/build-info.js';
import { UserError } from '../util/user-error.js';
import { addSpacesCommand } from './spaces-command.js';
import { addKubeconfigCommand } from './kubeconfig-command.js';
import { addServeCommand } from './serve-command.js';
import { addAgentCommand } from './agent-command.js';
import { addDemoCommand } from './demo-command.js';

/**
 * The whole program, built and not run (test/unit/docs-truth.test.ts walks its commands and
 * flags). Each command, its flags and the values they parse into are declared in its own
 * ./<command>-command.ts; here they are assembled under the program's settings.
 */
export function buildProgram(argv: string[]): Command {
  // The commit comes from git in a checkout: ask it only when the version is asked for.
  const versionAsked = argv.slice(2).some((a) => a === '-V' || a === '--version');
  const program = new Command('ksview')
    .description('kubestellar-view: multi-cluster delivery with a workload-as-data view of the WDS')
    .version(versionAsked ? versionLine() : projectVersion(), '-V, --version', 'output the version and the commit it was built from')
    .showSuggestionAfterError(true)
    .exitOverride()
    // One line per mistake: commander puts its suggestion ("Did you mean ...?") on a line of its own.
    .configureOutput({ outputError: (str, write) => write(`ksview: ${str.replace(/^error: /, '').trim().replace(/\n+\(Did/g, ' (did')}\n`) });
  // Subcommands inherit these settings: each is added with program.command(), after them.
  addSpacesCommand(program);
  addKubeconfigCommand(program);
  addServeCommand(program);
  addAgentCommand(program);
  addDemoCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram(argv);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof UserError) {
      process.stderr.write(`ksview: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}
