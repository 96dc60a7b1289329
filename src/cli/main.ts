// The `ksview` command line. Every command returns an exit code; a UserError or a usage mistake is
// one line on stderr and a non-zero exit, never a stack trace.
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { readFileSync, writeFileSync } from 'node:fs';
import { defaultCacheDir } from '../spaces/binaries.js';
import { DEFAULT_PORT_BASE, DEFAULT_WECS, defaultSpacesDir } from '../spaces/layout.js';
import { spacesDown, spacesStatus, spacesUp } from '../spaces/spaces.js';
import { runDemo } from './demo.js';
import { stderrProgress } from './progress.js';
import { UserError } from './user-error.js';

function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

interface DirOption { dir: string }
interface UpFlags extends DirOption { wecs: number; portBase: number }

function buildProgram(): Command {
  const program = new Command('ksview')
    .description('kubestellar-view: multi-cluster delivery with a workload-as-data view of the WDS')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(`ksview: ${str.replace(/^error: /, '')}`) });

  const dirOption = ['--dir <path>', 'state folder of the local spaces', defaultSpacesDir()] as const;

  const spaces = program.command('spaces').description('local spaces: real kube-apiservers on loopback');
  spaces.command('up')
    .description('start (or reuse) etcd and one kube-apiserver per space: wds1, its1, wec1..wecN')
    .option('--wecs <n>', 'number of workload execution clusters', intOption(0, 20), DEFAULT_WECS)
    .option('--port-base <port>', 'first loopback port used', intOption(1024, 65000), DEFAULT_PORT_BASE)
    .option(...dirOption)
    .action(async (flags: UpFlags) => {
      const progress = stderrProgress();
      const layout = await spacesUp({ ...flags, cacheDir: defaultCacheDir(), progress });
      progress.step(`spaces up: ${layout.spaces.map((s) => s.name).join(', ')}`);
      process.stdout.write(`kubeconfig: ${layout.kubeconfigPath}\n`);
    });
  spaces.command('down')
    .description('stop every process of the local spaces and remove their state')
    .option(...dirOption)
    .action(async (flags: DirOption) => {
      const { stopped } = await spacesDown(flags.dir);
      process.stdout.write(stopped ? `stopped ${stopped} processes; state removed\n` : 'no spaces were running\n');
    });
  spaces.command('status')
    .description("print each space's health")
    .option(...dirOption)
    .action(async (flags: DirOption) => {
      const status = await spacesStatus(flags.dir);
      if (!status) throw new UserError(`no spaces in ${flags.dir}: run 'ksview spaces up'`);
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
      if (!healthy) process.exitCode = 1;
    });

  program.command('kubeconfig')
    .description('print the kubeconfig of the local spaces (a context per space)')
    .option(...dirOption)
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action((flags: DirOption & { output?: string }) => {
      let text: string;
      try {
        text = readFileSync(`${flags.dir}/kubeconfig`, 'utf8');
      } catch {
        throw new UserError(`no kubeconfig in ${flags.dir}: run 'ksview spaces up'`);
      }
      if (flags.output) writeFileSync(flags.output, text, { mode: 0o600 });
      else process.stdout.write(text);
    });

  program.command('demo')
    .description('the guided tour: local spaces up, kubectl against each, a Deployment Available in wec1')
    .option(...dirOption)
    .action(async (flags: DirOption) => {
      await runDemo({ dir: flags.dir, cacheDir: defaultCacheDir() });
    });
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
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
