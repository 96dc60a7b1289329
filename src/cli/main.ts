// The `ksview` command line. Every command returns an exit code; a UserError or a usage mistake is
// one line on stderr and a non-zero exit, never a stack trace.
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { viewRoot } from '../apiserver/view-group.js';
import { renderKubeconfig, spaceKubeconfigEntries, viewKubeconfigEntry } from '../spaces/kubeconfig.js';
import { repoRoot } from '../util/repo-root.js';
import { readState } from '../spaces/state.js';
import { defaultCacheDir, protojsonPath } from '../spaces/binaries.js';
import { DEFAULT_PORT_BASE, DEFAULT_WECS, defaultSpacesDir, spacesLayout } from '../spaces/layout.js';
import { spacesDown, spacesStatus, spacesUp } from '../spaces/spaces.js';
import { runDemo } from './demo.js';
import { stderrProgress } from '../util/progress.js';
import { DEFAULT_DENATURED, type GroupResource } from '../storage/kind-categories.js';
import { UserError } from '../util/user-error.js';

function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

/** `clusterroles.rbac.authorization.k8s.io,serviceaccounts` → group/resource pairs. */
function parseResourceList(value: string): GroupResource[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  return items.map((item) => {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(item)) {
      throw new InvalidArgumentError(`${JSON.stringify(item)} is not <resource>.<group> (lowercase, e.g. clusterroles.rbac.authorization.k8s.io)`);
    }
    const dot = item.indexOf('.');
    return dot < 0 ? { group: '', resource: item } : { group: item.slice(dot + 1), resource: item.slice(0, dot) };
  });
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
    .option('--view', 'add the context wds1-view, whose server is the view root, and make it current')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action((flags: DirOption & { output?: string; view?: boolean }) => {
      const state = readState(path.join(flags.dir, 'state.json'));
      if (!state || !existsSync(path.join(flags.dir, 'kubeconfig'))) {
        throw new UserError(`no kubeconfig in ${flags.dir}: run 'ksview spaces up'`);
      }
      const layout = spacesLayout({ dir: flags.dir, portBase: state.portBase, wecs: state.wecs });
      const entries = spaceKubeconfigEntries(layout);
      if (flags.view) entries.push(viewKubeconfigEntry(layout, viewRoot));
      const text = renderKubeconfig(entries, flags.view ? entries.at(-1)!.name : undefined);
      if (flags.output) writeFileSync(flags.output, text, { mode: 0o600 });
      else process.stdout.write(text);
    });

  program.command('serve')
    .description('the aggregated API server of one WDS: the workload-as-data view at /apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy')
    .requiredOption('--wds-kubeconfig <file>', 'kubeconfig of the WDS (the server acts with these credentials, and impersonates users)')
    .option('--wds-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--wds-name <name>', 'name of the WDS, the space in the view path', 'wds1')
    .option('--bind-address <ip>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'HTTPS port', intOption(1, 65535), DEFAULT_PORT_BASE + 5)
    .option('--cert-dir <path>', 'where the serving certificate and its CA are kept', path.join(repoRoot(), 'certs', 'generated'))
    .option('--register', 'create the ExternalName Service, the APIService and the RBAC the server needs in the WDS')
    .option('--namespace <ns>', 'namespace of the Service the APIService points at', 'kubestellar-view')
    .option('--service <name>', 'name of that Service', 'ksview')
    .option('--external-name <host>', "the Service's externalName: where kube-apiserver reaches this server", 'localhost')
    .option('--denatured <resources>', 'the denatured kinds, comma-separated <resource>.<group> (core: <resource>); "" for none',
      parseResourceList, DEFAULT_DENATURED)
    .option('--its-kubeconfig <file>', 'kubeconfig of the ITS: run the placement controllers (BindingPolicies into ManifestWorks there)')
    .option('--its-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--protobuf-decoder <path>', 'ksview-protojson, which decodes protobuf bodies for denatured kinds (built with the spaces\' binaries)',
      protojsonPath(defaultCacheDir()))
    .action(async (flags: { wdsKubeconfig: string; wdsContext?: string; wdsName: string; bindAddress: string; port: number; certDir: string; register?: boolean; namespace: string; service: string; externalName: string; denatured: GroupResource[]; protobufDecoder: string; itsKubeconfig?: string; itsContext?: string }) => {
      if (flags.itsKubeconfig && !existsSync(flags.itsKubeconfig)) throw new UserError(`--its-kubeconfig ${flags.itsKubeconfig}: no such file`);
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(flags.wdsName)) throw new UserError(`--wds-name ${JSON.stringify(flags.wdsName)} is not a DNS label`);
      if (!existsSync(flags.wdsKubeconfig)) throw new UserError(`--wds-kubeconfig ${flags.wdsKubeconfig}: no such file`);
      let server;
      try {
        const { serve } = await import('./serve.js');
        server = await serve({ ...flags, register: flags.register === true });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'EADDRINUSE') throw new UserError(`port ${flags.port} on ${flags.bindAddress} is already in use`);
        if (e.code === 'ECONNREFUSED' || e.name === 'UpstreamError') throw new UserError(`cannot reach the WDS: ${e.message}`);
        throw err;
      }
      // A request must never take the server down: a stray rejection is logged, not fatal.
      process.on('unhandledRejection', (reason) => {
        process.stderr.write(`ksview serve: unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}\n`);
      });
      process.stderr.write(`ksview serve: listening on ${server.url}; view of ${flags.wdsName} at ${server.up.origin}${server.viewPath}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => { void server.close().then(resolve); };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
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
