// The `ksview` command line. Every command returns an exit code; a UserError or a usage mistake is
// one line on stderr and a non-zero exit, never a stack trace. What a command runs is imported
// when it runs: the Kubernetes client, fastify and node-forge take seconds to load, which
// `--help`, `--version` and a mistyped flag should not wait for.
import { Command, CommanderError, Option } from 'commander';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectVersion, repoRoot } from '../util/repo-root.js';
import { versionLine } from '../util/build-info.js';
import { optionsOfState, readState } from '../spaces/state.js';
import { defaultCacheDir, gotemplatePath, nativeCodePath, protojsonPath } from '../spaces/binaries.js';
import { DEFAULT_PORT_BASE, DEFAULT_WDSS, DEFAULT_WECS, MAX_WDSS, MAX_WECS, defaultSpacesDir, spacesLayout } from '../spaces/layout.js';
import { stderrProgress } from '../util/progress.js';
import { DEFAULT_DENATURED, type GroupResource } from '../storage/kind-categories.js';
import { DEFAULT_REQUEST_LIMITS } from '../apiserver/http/request-limits.js';
import { DEFAULT_ITS_MAX_IN_FLIGHT } from '../kube/request-limiter.js';
import { DEFAULT_BUNDLE_LIMITS, MAX_OBJECTS_PER_WORK } from '../controllers/placement/bundles.js';
import { DEFAULT_UPSYNC_MAX_OBJECT_BYTES, DEFAULT_UPSYNC_MAX_OBJECTS } from '../kube/upsync-api.js';
import { MAX_MANIFESTS_BYTES } from '../controllers/model/wrapping.js';
import { fsProblem } from '../util/fs-error.js';
import { UserError } from '../util/user-error.js';
import { dnsLabel, durationOption, formatResourceList, intOption, ipAddress, namespacedName, resourceList, serviceAccountRef, stateDir } from './options.js';
import type { ServiceAccountRef } from '../kube/service-account-ref.js';
import type { AgentFlags } from './agent.js';

interface DirOption { dir: string }
interface UpFlags extends DirOption { wecs: number; wdss: number; portBase: number; realNodes: boolean; maxObjectsPerWork?: number; maxBytesPerWork?: number }

/**
 * A failed start of `serve`, as the user should see it: what the user can act on becomes a
 * UserError; anything else is a bug and stays whole. serve() does not unwind a half-done start
 * (a listening socket, timers), so the process is told to end once the error is printed.
 */
function startFailure(err: unknown, flags: { port: number; bindAddress: string }): unknown {
  process.exitCode = 1;
  setImmediate(() => process.exit()).unref();
  if (err instanceof UserError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'EADDRINUSE') return new UserError(`port ${flags.port} on ${flags.bindAddress} is already in use`);
  if (e.syscall === 'listen') return new UserError(`cannot listen on ${flags.bindAddress}:${flags.port}: ${e.message}`);
  // The spaces answered the preflight, so this is a space refusing a request (e.g. 403: the
  // kubeconfig's user lacks a right) or going away while the server started.
  if (e.name === 'UpstreamError' || e.code === 'ECONNREFUSED' || e.code?.startsWith('UND_ERR_')) {
    return new UserError(`serve could not start: ${e.message.split('\n')[0]}`);
  }
  return err;
}

/** The whole program, built and not run (test/unit/docs-truth.test.ts walks its commands and flags). */
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

  const dirOption = ['--dir <path>', 'state folder of the local spaces', stateDir, defaultSpacesDir()] as const;

  const spaces = program.command('spaces').description('local spaces: real kube-apiservers on loopback');
  spaces.command('up')
    .description('start (or reuse, or restart what died) the local system: etcd, a kube-apiserver per space (wds1..wdsM, its1, wec1..wecN), ksview serve for each WDS, the accepted ManagedClusters and the agents')
    .option('--wecs <n>', 'number of workload execution clusters', intOption(0, MAX_WECS), DEFAULT_WECS)
    .option('--wdss <n>', 'number of workload definition spaces, each with its own ksview serve', intOption(1, MAX_WDSS), DEFAULT_WDSS)
    .option('--port-base <port>', 'first loopback port used', intOption(1024, 65000), DEFAULT_PORT_BASE)
    .option('--real-nodes', 'real nodes (root): a hosting space host1 and wec1 run kubelet, containerd and kube-proxy, so containers really run; wds1\'s serve and wec1\'s pull agent are left to the chart (docs/spaces.md)', false)
    .option('--max-objects-per-work <n>', 'each ksview serve packs up to n objects into one ManifestWork (serve\'s flag; default: as the spaces ran before, else 1); a change restarts serve', intOption(1, MAX_OBJECTS_PER_WORK))
    .option('--max-bytes-per-work <n>', 'with --max-objects-per-work: bytes of manifests per work, at most', intOption(1024, MAX_MANIFESTS_BYTES))
    .option(...dirOption)
    .action(async (flags: UpFlags) => {
      const progress = stderrProgress();
      const { spacesUp } = await import('../spaces/spaces.js');
      if (flags.maxBytesPerWork !== undefined && flags.maxObjectsPerWork === undefined) throw new UserError('--max-bytes-per-work goes with --max-objects-per-work');
      const bundle = flags.maxObjectsPerWork === undefined ? undefined
        : { objects: flags.maxObjectsPerWork, bytes: flags.maxBytesPerWork ?? DEFAULT_BUNDLE_LIMITS.bytes };
      const layout = await spacesUp({ ...flags, cacheDir: defaultCacheDir(), progress, ...(bundle ? { bundle } : {}) });
      progress.step(`spaces up: ${layout.spaces.map((s) => s.name).join(', ')}`);
      process.stdout.write(`kubeconfig: ${layout.kubeconfigPath}\n`);
    });
  spaces.command('stop')
    .description('stop one process cleanly, keeping its data (`spaces up` starts it again), e.g. its1/kube-apiserver, wec1/ksview-agent')
    .argument('<process>', 'etcd or <space>/<component>')
    .option(...dirOption)
    .action(async (name: string, flags: DirOption) => {
      const { spacesStop } = await import('../spaces/spaces.js');
      const { stopped } = await spacesStop(flags.dir, name);
      process.stdout.write(stopped ? `stopped ${name}\n` : `${name} was not running\n`);
    });
  spaces.command('down')
    .description('stop every process of the local spaces and remove their state')
    .option(...dirOption)
    .action(async (flags: DirOption) => {
      const { spacesDown } = await import('../spaces/spaces.js');
      const { stopped } = await spacesDown(flags.dir);
      process.stdout.write(stopped ? `stopped ${stopped} processes; state removed\n` : 'no spaces were running\n');
    });
  spaces.command('status')
    .description("print each space's health")
    .option(...dirOption)
    .action(async (flags: DirOption) => {
      const { spacesStatus } = await import('../spaces/spaces.js');
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
      // Real nodes (`up --real-nodes`): Ready or not, and the pids of their processes.
      for (const s of status) {
        const node = s.components.find((c) => c.name.startsWith('node '));
        if (!node) continue;
        const pids = ['containerd', 'kubelet', 'kube-proxy'].map((n) => `${n} ${s.components.find((c) => c.name === n)?.detail ?? 'unknown'}`);
        process.stdout.write(`${node.detail} in ${s.name}: ${pids.join(', ')}\n`);
      }
      if (!healthy) process.exitCode = 1;
    });

  program.command('kubeconfig')
    .description('print the kubeconfig of the local spaces (a context per space)')
    .option(...dirOption)
    .option('--view', 'add the context <wds>-view of each WDS, whose server is its view root, and make wds1-view current; and <wds>-view-<wec> of each WEC: its upsynced objects')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (flags: DirOption & { output?: string; view?: boolean }) => {
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
    });

  program.command('serve')
    .description('the aggregated API server of one WDS: the workload-as-data view at /apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy')
    // Required, but checked in the action: commander checks required options before unknown
    // ones, and `--wds-kubconfig F` should be answered with the typo, not with "not specified".
    .option('--wds-kubeconfig <file>', 'kubeconfig of the WDS (required; the server acts with these credentials, and impersonates users)')
    .option('--wds-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--wds-name <name>', 'name of the WDS, the space in the view path', dnsLabel, 'wds1')
    .option('--bind-address <ip>', 'address to listen on', ipAddress, '127.0.0.1')
    .option('--port <port>', 'HTTPS port', intOption(1, 65535), DEFAULT_PORT_BASE + 5)
    .option('--cert-dir <path>', 'where the serving certificate and its CA are kept', stateDir, path.join(repoRoot(), 'certs', 'generated'))
    .option('--register', 'create the ExternalName Service, the APIService and the RBAC the server needs in the WDS')
    .option('--namespace <ns>', 'namespace of the Service the APIService points at', dnsLabel, 'kubestellar-view')
    .option('--service <name>', 'name of that Service', dnsLabel, 'ksview')
    .option('--external-name <host>', "the Service's externalName: where kube-apiserver reaches this server", 'localhost')
    .option('--register-endpoints-from <namespace/service>', 'hosted registration: the server runs as pods of a cluster other than the WDS; the leader keeps the endpoints of the WDS\'s Service (--namespace/--service) those of this Service of the cluster the pods run in (the WDS needs --enable-aggregator-routing=true); with --register that Service is written without selector, and no RBAC', namespacedName)
    .option('--hosting-kubeconfig <file>', 'with --register-endpoints-from: kubeconfig of the cluster the pods run in (default: the pod\'s in-cluster configuration)')
    .option('--shutdown-delay <duration>', 'on SIGTERM: answer /readyz with 503 and release leadership at once, keep serving this long, then drain and exit (as kube-apiserver\'s --shutdown-delay-duration)', durationOption(0, 600_000), 0)
    .addOption(new Option('--denatured <resources>', 'the denatured kinds, comma-separated <resource>.<group> (core: <resource>); "" for none')
      .argParser(resourceList).default(DEFAULT_DENATURED, formatResourceList(DEFAULT_DENATURED)))
    .option('--its-kubeconfig <file>', 'kubeconfig of the ITS: run the placement controllers (BindingPolicies into ManifestWorks there)')
    .option('--its-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--its-max-in-flight <n>', 'the placement controllers\' requests to the ITS in flight at most (halved while the ITS answers 429, as long as its Retry-After asks)', intOption(1, 10_000), DEFAULT_ITS_MAX_IN_FLIGHT)
    .option('--max-objects-per-work <n>', 'objects a cluster receives from the same policies packed into one ManifestWork, at most (1: a work per object; more: fewer, bigger works, one object\'s change rewrites its bundle — docs/placement.md "Bundled works")', intOption(1, MAX_OBJECTS_PER_WORK), DEFAULT_BUNDLE_LIMITS.objects)
    .option('--max-bytes-per-work <n>', 'bytes of manifests in one bundled ManifestWork, at most (OCM refuses a work over 500 KiB)', intOption(1024, MAX_MANIFESTS_BYTES), DEFAULT_BUNDLE_LIMITS.bytes)
    .option('--upsync-max-objects <n>', 'objects one cluster\'s agent upsyncs for one policy, at most (past it the policy\'s status.upsync says how many were selected)', intOption(0, 10_000_000), DEFAULT_UPSYNC_MAX_OBJECTS)
    .option('--upsync-max-object-bytes <n>', 'bytes of one upsynced object (its JSON), at most: a larger one is left out and counted in the policy\'s status.upsync', intOption(1024, 1_048_576), DEFAULT_UPSYNC_MAX_OBJECT_BYTES)
    .option('--default-executor <namespace/name>', 'the ServiceAccount of the WECs that applies the works of BindingPolicies naming no spec.executor (default: none, the agents\' own rights, said in each policy\'s status)', serviceAccountRef)
    .option('--protobuf-decoder <path>', 'ksview-protojson, which decodes protobuf bodies for denatured kinds (built with the spaces\' binaries)',
      protojsonPath(defaultCacheDir()))
    .option('--native-code <path>', 'ksview-native, Kubernetes\' own registries (decoding, defaulting, validation, field manager) for the denatured kinds (built with the spaces\' binaries)',
      nativeCodePath(defaultCacheDir()))
    .option('--template-expander <path>', 'ksview-gotemplate, which expands KubeStellar templates with Go\'s text/template for the placement controllers (built with the spaces\' binaries)',
      gotemplatePath(defaultCacheDir()))
    // What users may hold open at once (src/apiserver/http/request-limits.ts); past a cap: 429. 0: no limit.
    .option('--max-long-running-requests-per-user <n>', 'watches, logs, exec, attach, port-forward and proxy requests one user may hold open at once (0: no limit)',
      intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.longRunningPerUser)
    .option('--max-long-running-requests <n>', 'long-running requests of all users together (0: no limit)', intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.longRunningTotal)
    .option('--max-requests-inflight-per-user <n>', 'other requests one user may have in flight at once (0: no limit)', intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.inflightPerUser)
    .option('--max-requests-inflight <n>', 'other requests of all users in flight at once (0: no limit)', intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.inflightTotal)
    .action(async (flags: { wdsKubeconfig?: string; wdsContext?: string; wdsName: string; bindAddress: string; port: number; certDir: string; register?: boolean; registerEndpointsFrom?: { namespace: string; name: string }; hostingKubeconfig?: string; shutdownDelay: number; namespace: string; service: string; externalName: string; denatured: GroupResource[]; protobufDecoder: string; nativeCode: string; templateExpander: string; itsKubeconfig?: string; itsContext?: string; itsMaxInFlight: number; maxObjectsPerWork: number; maxBytesPerWork: number; upsyncMaxObjects: number; upsyncMaxObjectBytes: number; defaultExecutor?: ServiceAccountRef; maxLongRunningRequestsPerUser: number; maxLongRunningRequests: number; maxRequestsInflightPerUser: number; maxRequestsInflight: number }) => {
      const { wdsKubeconfig } = flags;
      if (!wdsKubeconfig) throw new UserError("required option '--wds-kubeconfig <file>' not specified");
      if (flags.hostingKubeconfig && !flags.registerEndpointsFrom) throw new UserError('--hosting-kubeconfig is for hosted registration: give --register-endpoints-from too');
      const { checkSpace } = await import('./preflight.js');
      await checkSpace('WDS', wdsKubeconfig, flags.wdsContext);
      if (flags.itsKubeconfig) await checkSpace('ITS', flags.itsKubeconfig, flags.itsContext);
      let server;
      try {
        const { serve } = await import('./serve.js');
        server = await serve({
          ...flags, wdsKubeconfig, register: flags.register === true,
          bundleLimits: { objects: flags.maxObjectsPerWork, bytes: flags.maxBytesPerWork },
          upsyncLimits: { maxObjects: flags.upsyncMaxObjects, maxObjectBytes: flags.upsyncMaxObjectBytes },
          limits: {
            longRunningPerUser: flags.maxLongRunningRequestsPerUser, longRunningTotal: flags.maxLongRunningRequests,
            inflightPerUser: flags.maxRequestsInflightPerUser, inflightTotal: flags.maxRequestsInflight,
          },
        });
      } catch (err) {
        throw startFailure(err, flags);
      }
      // A request must never take the server down: a stray rejection is logged, not fatal.
      process.on('unhandledRejection', (reason) => {
        process.stderr.write(`ksview serve: unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}\n`);
      });
      process.stderr.write(`ksview serve: listening on ${server.url}; view of ${flags.wdsName} at ${server.up.origin}${server.viewPath}\n`);
      const running = server;
      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: NodeJS.Signals) => {
          // A second signal: the operator wants out now (as Kubernetes' components' signal handler).
          if (stopping) {
            process.stderr.write(`ksview serve: ${signal} again: exiting at once\n`);
            process.exit(1);
          }
          stopping = true;
          running.shutdown(flags.shutdownDelay).catch((err: Error) => {
            process.stderr.write(`ksview serve: shutdown: ${err.message.split('\n')[0]}\n`);
          }).finally(resolve);
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      });
      process.stderr.write('ksview serve: stopped\n');
      // Anything still holding the event loop (an upgraded connection's peer) does not keep a stopped server alive.
      setImmediate(() => process.exit(process.exitCode ?? 0)).unref();
    });

  program.command('agent')
    .description('the WEC side: apply the ManifestWorks of a cluster\'s mailbox (pull, default) or of every cluster with a <cluster>-kubeconfig Secret (--push)')
    // Required per mode, checked in the action (see checkAgentFlags).
    .option('--push', 'push mode: run beside the ITS and serve every accepted cluster whose mailbox holds a Secret <cluster>-kubeconfig')
    .option('--cluster <name>', 'pull mode: the cluster served (its ManagedCluster and mailbox namespace)', dnsLabel)
    .option('--its-kubeconfig <file>', 'kubeconfig of the ITS (required)')
    .option('--its-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--its-max-in-flight <n>', 'this agent\'s requests to the ITS in flight at most (halved while the ITS answers 429, as long as its Retry-After asks)', intOption(1, 10_000), DEFAULT_ITS_MAX_IN_FLIGHT)
    .option('--wec-kubeconfig <file>', 'pull mode: kubeconfig of the WEC (default: the in-cluster configuration of the pod the agent runs in)')
    .option('--wec-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--fleet-id <id>', 'push mode: the fleet named in each WEC\'s kube-system/kubestellar-fleet lease', dnsLabel, 'ksview')
    .option('--agent-id <id>', 'agent ID in AppliedManifestWorks and holder of fleet leases (default: ksview-agent-<cluster>, or ksview-push-<fleet>-<host>)')
    .option('--port <port>', 'port of the HTTPS endpoints /healthz /readyz /metrics /federatedresources (0: any free port)', intOption(0, 65535), 0)
    .option('--bind-address <ip>', 'address of the endpoints', ipAddress, '127.0.0.1')
    .option('--tls-cert-file <file>', 'serving certificate of the endpoints, PEM (default: a self-signed one)')
    .option('--tls-private-key-file <file>', 'its private key, PEM')
    .option('--client-ca-file <file>', 'CAs whose client certificates the endpoints accept, PEM (default: the client-ca-file of kube-system/extension-apiserver-authentication in the WEC (pull) or the ITS (push))')
    .option('--health-interval <duration>', 'push mode: how often each WEC\'s /readyz is checked', durationOption(100, 3_600_000), 5000)
    .option('--insecure-kubeconfig-exec', 'push mode: run the exec and auth-provider credential plugins of the kubeconfigs in <cluster>-kubeconfig Secrets (refused by default: whoever writes such a Secret would run commands in this agent)')
    .action(async (flags: AgentFlags) => {
      const { runAgentCommand } = await import('./agent.js');
      const close = await runAgentCommand(flags);
      // A stray rejection is logged, not fatal: the agent keeps serving its other clusters.
      process.on('unhandledRejection', (reason) => {
        process.stderr.write(`ksview agent: unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}\n`);
      });
      await new Promise<void>((resolve) => {
        const stop = () => { void close().then(resolve); };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });

  program.command('demo')
    .description('the guided tour: local spaces up, kubectl against each, a Deployment Available in wec1')
    .option(...dirOption)
    .option('--in-cluster', 'the tour of the installed product instead (root): real-node spaces, the image, the chart, the view served by pods (`make demo-cluster`; its own state folder unless --dir)', false)
    .action(async (flags: DirOption & { inCluster: boolean }, cmd: Command) => {
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
