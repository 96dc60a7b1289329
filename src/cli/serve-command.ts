// `ksview serve`: its flags, the values they parse into (ServeFlags), and how those become the
// server's options (./serve.ts, loaded only when the command runs: fastify and the Kubernetes
// client take seconds to load, which `--help` should not wait for). The action checks what
// commander cannot, asks each space whether it answers, starts the server and runs it until
// SIGTERM or SIGINT (a second signal exits at once).
import { Option, type Command } from 'commander';
import path from 'node:path';
import { repoRoot } from '../util/repo-root.js';
import { defaultCacheDir, gotemplatePath, nativeCodePath, protojsonPath } from '../spaces/binaries.js';
import { DEFAULT_PORT_BASE } from '../spaces/layout.js';
import { DEFAULT_DENATURED, type GroupResource } from '../storage/kind-categories.js';
import { DEFAULT_REQUEST_LIMITS } from '../apiserver/http/request-limits.js';
import { DEFAULT_ITS_MAX_IN_FLIGHT } from '../kube/request-limiter.js';
import { DEFAULT_BUNDLE_LIMITS, MAX_OBJECTS_PER_WORK } from '../controllers/placement/bundles.js';
import { DEFAULT_UPSYNC_MAX_OBJECT_BYTES, DEFAULT_UPSYNC_MAX_OBJECTS } from '../kube/upsync-api.js';
import { MAX_MANIFESTS_BYTES } from '../controllers/model/wrapping.js';
import { UserError } from '../util/user-error.js';
import type { ServiceAccountRef } from '../kube/service-account-ref.js';
import { dnsLabel, durationOption, formatResourceList, hiddenAlias, intOption, ipAddress, namespacedName, resourceList, serviceAccountRef, stateDir } from './options.js';
import type { RunningServer, ServeOptions } from './serve.js';

/** What serve's flags parse into (commander's attribute names). */
export interface ServeFlags {
  wdsKubeconfig?: string;
  wdsContext?: string;
  wdsName: string;
  bindAddress: string;
  port: number;
  certDir: string;
  register?: boolean;
  namespace: string;
  service: string;
  externalName: string;
  registerEndpointsFrom?: { namespace: string; name: string };
  hostingKubeconfig?: string;
  shutdownDelayDuration: number;
  denatured: GroupResource[];
  itsKubeconfig?: string;
  itsContext?: string;
  maxItsRequestsInflight: number;
  maxObjectsPerWork: number;
  maxBytesPerWork: number;
  maxUpsyncObjects: number;
  maxUpsyncObjectBytes: number;
  defaultExecutor?: ServiceAccountRef;
  ksviewProtojson: string;
  ksviewNative: string;
  ksviewGotemplate: string;
  maxLongRunningRequestsPerUser: number;
  maxLongRunningRequests: number;
  maxRequestsInflightPerUser: number;
  maxRequestsInflight: number;
}

/** A flag with its former spellings, each kept as a hidden alias. */
function withAliases(cmd: Command, option: Option, ...former: string[]): Command {
  cmd.addOption(option);
  for (const f of former) cmd.addOption(hiddenAlias(option, f));
  return cmd;
}

/** Where the server listens and registers, and the hosted registration. */
function addServingFlags(cmd: Command): void {
  cmd
    // Required, but checked in the action: commander checks required options before unknown
    // ones, and `--wds-kubconfig F` should be answered with the typo, not with "not specified".
    .option('--wds-kubeconfig <file>', 'kubeconfig of the WDS (required; the server acts with these credentials, and impersonates users)')
    .option('--wds-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--wds-name <name>', 'name of the WDS, the space in the view path', dnsLabel, 'wds1')
    .option('--bind-address <ip>', 'address to listen on', ipAddress, '127.0.0.1')
    .option('--port <port>', 'HTTPS port', intOption(1, 65535), DEFAULT_PORT_BASE + 5)
    // kube-apiserver's name: where a server keeps the certificate it makes itself.
    .option('--cert-dir <path>', 'where the serving certificate and its CA are kept', stateDir, path.join(repoRoot(), 'certs', 'generated'))
    .option('--register', 'create the ExternalName Service, the APIService and the RBAC the server needs in the WDS')
    .option('--namespace <ns>', 'namespace of the Service the APIService points at', dnsLabel, 'kubestellar-view')
    .option('--service <name>', 'name of that Service', dnsLabel, 'ksview')
    .option('--external-name <host>', "the Service's externalName: where kube-apiserver reaches this server", 'localhost')
    .option('--register-endpoints-from <namespace/service>', 'hosted registration: the server runs as pods of a cluster other than the WDS; the leader keeps the endpoints of the WDS\'s Service (--namespace/--service) those of this Service of the cluster the pods run in (the WDS needs --enable-aggregator-routing=true); with --register that Service is written without selector, and no RBAC', namespacedName)
    .option('--hosting-kubeconfig <file>', 'with --register-endpoints-from: kubeconfig of the cluster the pods run in (default: the pod\'s in-cluster configuration)');
  withAliases(cmd, new Option('--shutdown-delay-duration <duration>', 'on SIGTERM: answer /readyz with 503 and release leadership at once, keep serving this long, then drain and exit (as kube-apiserver\'s --shutdown-delay-duration)')
    .argParser(durationOption(0, 600_000)).default(0), '--shutdown-delay <duration>');
  cmd.addOption(new Option('--denatured <resources>', 'the denatured kinds, comma-separated <resource>.<group> (core: <resource>); "" for none')
    .argParser(resourceList).default(DEFAULT_DENATURED, formatResourceList(DEFAULT_DENATURED)));
}

/** The ITS and what the controllers writing into it may do. */
function addControllerFlags(cmd: Command): void {
  cmd
    .option('--its-kubeconfig <file>', 'kubeconfig of the ITS: run the placement controllers (BindingPolicies into ManifestWorks there)')
    .option('--its-context <name>', 'context in that kubeconfig (default: its current context)');
  withAliases(cmd, new Option('--max-its-requests-inflight <n>', 'the placement controllers\' requests to the ITS in flight at most (halved while the ITS answers 429, as long as its Retry-After asks)')
    .argParser(intOption(1, 10_000)).default(DEFAULT_ITS_MAX_IN_FLIGHT), '--its-max-in-flight <n>');
  cmd
    .option('--max-objects-per-work <n>', 'objects a cluster receives from the same policies packed into one ManifestWork, at most (1: a work per object; more: fewer, bigger works, one object\'s change rewrites its bundle — docs/placement.md "Bundled works")', intOption(1, MAX_OBJECTS_PER_WORK), DEFAULT_BUNDLE_LIMITS.objects)
    .option('--max-bytes-per-work <n>', 'bytes of manifests in one bundled ManifestWork, at most (OCM refuses a work over 500 KiB)', intOption(1024, MAX_MANIFESTS_BYTES), DEFAULT_BUNDLE_LIMITS.bytes);
  withAliases(cmd, new Option('--max-upsync-objects <n>', 'objects one cluster\'s agent upsyncs for one policy, at most (past it the policy\'s status.upsync says how many were selected)')
    .argParser(intOption(0, 10_000_000)).default(DEFAULT_UPSYNC_MAX_OBJECTS), '--upsync-max-objects <n>');
  withAliases(cmd, new Option('--max-upsync-object-bytes <n>', 'bytes of one upsynced object (its JSON), at most: a larger one is left out and counted in the policy\'s status.upsync')
    .argParser(intOption(1024, 1_048_576)).default(DEFAULT_UPSYNC_MAX_OBJECT_BYTES), '--upsync-max-object-bytes <n>');
  cmd.option('--default-executor <namespace/name>', 'the ServiceAccount of the WECs that applies the works of BindingPolicies naming no spec.executor (default: none, the agents\' own rights, said in each policy\'s status)', serviceAccountRef);
}

/** The Go helpers, each flag named for the binary it points at. */
function addHelperFlags(cmd: Command): void {
  withAliases(cmd, new Option('--ksview-protojson <path>', 'ksview-protojson, which decodes protobuf bodies for denatured kinds (built with the spaces\' binaries)')
    .default(protojsonPath(defaultCacheDir())), '--protobuf-decoder <path>');
  withAliases(cmd, new Option('--ksview-native <path>', 'ksview-native, Kubernetes\' own registries (decoding, defaulting, validation, field manager) for the denatured kinds (built with the spaces\' binaries)')
    .default(nativeCodePath(defaultCacheDir())), '--native-code <path>');
  withAliases(cmd, new Option('--ksview-gotemplate <path>', 'ksview-gotemplate, which expands KubeStellar templates with Go\'s text/template for the placement controllers (built with the spaces\' binaries)')
    .default(gotemplatePath(defaultCacheDir())), '--template-expander <path>');
}

/** What users may hold open at once (src/apiserver/http/request-limits.ts); past a cap: 429. 0: no limit. */
function addUserLimitFlags(cmd: Command): void {
  cmd
    .option('--max-long-running-requests-per-user <n>', 'watches, logs, exec, attach, port-forward and proxy requests one user may hold open at once (0: no limit)',
      intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.longRunningPerUser)
    .option('--max-long-running-requests <n>', 'long-running requests of all users together (0: no limit)', intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.longRunningTotal)
    .option('--max-requests-inflight-per-user <n>', 'other requests one user may have in flight at once (0: no limit)', intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.inflightPerUser)
    .option('--max-requests-inflight <n>', 'other requests of all users in flight at once (0: no limit)', intOption(0, 1_000_000), DEFAULT_REQUEST_LIMITS.inflightTotal);
}

/** The server's options from the flags (the WDS kubeconfig checked present by the caller). */
export function serveOptionsOf(flags: ServeFlags & { wdsKubeconfig: string }): ServeOptions {
  return {
    wdsKubeconfig: flags.wdsKubeconfig, wdsContext: flags.wdsContext, wdsName: flags.wdsName,
    bindAddress: flags.bindAddress, port: flags.port, certDir: flags.certDir, register: flags.register === true,
    registerEndpointsFrom: flags.registerEndpointsFrom, hostingKubeconfig: flags.hostingKubeconfig,
    namespace: flags.namespace, service: flags.service, externalName: flags.externalName, denatured: flags.denatured,
    protobufDecoder: flags.ksviewProtojson, nativeCode: flags.ksviewNative, templateExpander: flags.ksviewGotemplate,
    itsKubeconfig: flags.itsKubeconfig, itsContext: flags.itsContext, itsMaxInFlight: flags.maxItsRequestsInflight,
    defaultExecutor: flags.defaultExecutor,
    bundleLimits: { objects: flags.maxObjectsPerWork, bytes: flags.maxBytesPerWork },
    upsyncLimits: { maxObjects: flags.maxUpsyncObjects, maxObjectBytes: flags.maxUpsyncObjectBytes },
    limits: {
      longRunningPerUser: flags.maxLongRunningRequestsPerUser, longRunningTotal: flags.maxLongRunningRequests,
      inflightPerUser: flags.maxRequestsInflightPerUser, inflightTotal: flags.maxRequestsInflight,
    },
  };
}

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

/** Serves until SIGTERM or SIGINT, then shuts down gracefully; a second signal exits at once. */
async function serveUntilSignalled(server: RunningServer, shutdownDelayMs: number): Promise<void> {
  // A request must never take the server down: a stray rejection is logged, not fatal.
  process.on('unhandledRejection', (reason) => {
    process.stderr.write(`ksview serve: unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}\n`);
  });
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      // A second signal: the operator wants out now (as Kubernetes' components' signal handler).
      if (stopping) {
        process.stderr.write(`ksview serve: ${signal} again: exiting at once\n`);
        process.exit(1);
      }
      stopping = true;
      server.shutdown(shutdownDelayMs).catch((err: Error) => {
        process.stderr.write(`ksview serve: shutdown: ${err.message.split('\n')[0]}\n`);
      }).finally(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

async function runServe(flags: ServeFlags): Promise<void> {
  const { wdsKubeconfig } = flags;
  if (!wdsKubeconfig) throw new UserError("required option '--wds-kubeconfig <file>' not specified");
  if (flags.hostingKubeconfig && !flags.registerEndpointsFrom) throw new UserError('--hosting-kubeconfig is for hosted registration: give --register-endpoints-from too');
  const { checkSpace } = await import('./preflight.js');
  await checkSpace('WDS', wdsKubeconfig, flags.wdsContext);
  if (flags.itsKubeconfig) await checkSpace('ITS', flags.itsKubeconfig, flags.itsContext);
  let server;
  try {
    const { serve } = await import('./serve.js');
    server = await serve(serveOptionsOf({ ...flags, wdsKubeconfig }));
  } catch (err) {
    throw startFailure(err, flags);
  }
  process.stderr.write(`ksview serve: listening on ${server.url}; view of ${flags.wdsName} at ${server.up.origin}${server.viewPath}\n`);
  await serveUntilSignalled(server, flags.shutdownDelayDuration);
  process.stderr.write('ksview serve: stopped\n');
  // Anything still holding the event loop (an upgraded connection's peer) does not keep a stopped server alive.
  setImmediate(() => process.exit(process.exitCode ?? 0)).unref();
}

/** Adds `serve` to the program (as a subcommand, so it inherits the program's output and exit settings). */
export function addServeCommand(program: Command): void {
  const cmd = program.command('serve')
    .description('the aggregated API server of one WDS: the workload-as-data view at /apis/view.kubestellar.io/v1alpha1/spaces/<wds>/proxy');
  addServingFlags(cmd);
  addControllerFlags(cmd);
  addHelperFlags(cmd);
  addUserLimitFlags(cmd);
  cmd.action((flags: ServeFlags) => runServe(flags));
}
