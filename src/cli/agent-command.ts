// `ksview agent`: its flags, parsed into AgentFlags (the options of ./run-agent.ts, loaded only
// when the command runs), and the run until SIGTERM or SIGINT. Which flags each mode needs or
// refuses is checked when it runs (checkAgentFlags): commander cannot say it.
import { Option, type Command } from 'commander';
import { DEFAULT_ITS_MAX_IN_FLIGHT } from '../kube/request-limiter.js';
import { dnsLabel, durationOption, hiddenAlias, intOption, ipAddress } from './options.js';
import type { AgentFlags } from './run-agent.js';

async function runAgent(flags: AgentFlags): Promise<void> {
  const { runAgentCommand } = await import('./run-agent.js');
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
}

/** Adds `agent` to the program (as a subcommand, so it inherits the program's output and exit settings). */
export function addAgentCommand(program: Command): void {
  const cmd = program.command('agent')
    .description('the WEC side: apply the ManifestWorks of a cluster\'s mailbox (pull, default) or of every cluster with a <cluster>-kubeconfig Secret (--push)')
    .option('--push', 'push mode: run beside the ITS and serve every accepted cluster whose mailbox holds a Secret <cluster>-kubeconfig')
    .option('--cluster <name>', 'pull mode: the cluster served (its ManagedCluster and mailbox namespace)', dnsLabel)
    .option('--its-kubeconfig <file>', 'kubeconfig of the ITS (required)')
    .option('--its-context <name>', 'context in that kubeconfig (default: its current context)');
  const inflight = new Option('--max-its-requests-inflight <n>', 'this agent\'s requests to the ITS in flight at most (halved while the ITS answers 429, as long as its Retry-After asks)')
    .argParser(intOption(1, 10_000)).default(DEFAULT_ITS_MAX_IN_FLIGHT);
  cmd.addOption(inflight).addOption(hiddenAlias(inflight, '--its-max-in-flight <n>'))
    .option('--wec-kubeconfig <file>', 'pull mode: kubeconfig of the WEC (default: the in-cluster configuration of the pod the agent runs in)')
    .option('--wec-context <name>', 'context in that kubeconfig (default: its current context)')
    .option('--fleet-id <id>', 'push mode: the fleet named in each WEC\'s kube-system/kubestellar-fleet lease', dnsLabel, 'ksview')
    .option('--agent-id <id>', 'agent ID in AppliedManifestWorks and holder of fleet leases (default: ksview-agent-<cluster>, or ksview-push-<fleet>-<host>)')
    .option('--port <port>', 'port of the HTTPS endpoints /healthz /readyz /metrics /federatedresources (0: any free port)', intOption(0, 65535), 0)
    .option('--bind-address <ip>', 'address of the endpoints', ipAddress, '127.0.0.1')
    // kube's names for a given serving certificate (serve's --cert-dir is where it makes its own).
    .option('--tls-cert-file <file>', 'serving certificate of the endpoints, PEM (default: a self-signed one)')
    .option('--tls-private-key-file <file>', 'its private key, PEM')
    .option('--client-ca-file <file>', 'CAs whose client certificates the endpoints accept, PEM (default: the client-ca-file of kube-system/extension-apiserver-authentication in the WEC (pull) or the ITS (push))')
    .option('--health-interval <duration>', 'push mode: how often each WEC\'s /readyz is checked', durationOption(100, 3_600_000), 5000)
    .option('--insecure-kubeconfig-exec', 'push mode: run the exec and auth-provider credential plugins of the kubeconfigs in <cluster>-kubeconfig Secrets (refused by default: whoever writes such a Secret would run commands in this agent)')
    .action((flags: AgentFlags) => runAgent(flags));
}
