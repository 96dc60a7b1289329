// `ksview demo` (behind `make demo`): the guided tour. Local spaces up, kubectl against every
// space, a Deployment in wec1 becoming Available thanks to kwok's fake nodes; then `ksview serve`
// registered in wds1 and kubectl working through the workload-as-data view; placement into the ITS
// mailboxes; and the agents applying it: the Deployment running in wec1 (pull) and wec2 (push), a
// denatured ClusterRoleBinding granting in wec1 only, and an agent's /federatedresources; status
// coming home; and upsync: a StatefulSet's Pods and PVCs, born in wec1 and wec2, read from wds1.
import { Agent, fetch } from 'undici';
import { agentUrl, readAgentEndpoint } from '../spaces/agent-endpoints.js';
import { agentCommands } from '../spaces/agents.js';
import { spacePkiFiles } from '../spaces/space-pki.js';
import { spacesUp } from '../spaces/spaces.js';
import { DEFAULT_PORT_BASE, DEFAULT_WECS } from '../spaces/layout.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { viewRoot } from '../apiserver/groups/view-group.js';
import { renderKubeconfig, spaceKubeconfigEntries, viewClusterKubeconfigEntries, viewKubeconfigEntry } from '../spaces/kubeconfig.js';
import { ensureViewServer } from '../spaces/view-server.js';
import YAML from 'yaml';
import type { SpacesLayout } from '../spaces/layout.js';
import type { Progress } from '../util/progress.js';
import { kubectl } from './kubectl.js';
import { kubectlShow, type Show } from './demo-show.js';
import {
  DEMO_BINDING_POLICY, DEMO_COMBINED, DEMO_DENATURED_BUNDLE, DEMO_DEPLOYMENT, DEMO_MALLORY_BINDING, DEMO_MALLORY_RIGHTS, DEMO_RBAC,
  DEMO_RBAC_POLICY, DEMO_STATUS_POLICY, DEMO_UPSYNC, DEMO_UPSYNC_POLICY, DEMO_VIEW_WORKLOAD, demoPersistentVolumes,
} from './demo-objects.js';
import { stderrProgress } from '../util/progress.js';
import { UserError } from '../util/user-error.js';
import { waitFor } from '../kube/wait.js';

const STEPS = 11;

/** What every step of the tour uses: the spaces, one kubeconfig for all of it, and how a command is shown. */
interface Tour { progress: Progress; layout: SpacesLayout; kc: string; show: Show; wecs: string[] }

/** Step 1: the local spaces up, from this build, and the tour's kubeconfig. */
async function upSpaces(opts: { dir: string; cacheDir: string }, progress: Progress): Promise<Tour> {
  progress.step(`1/${STEPS} local spaces: etcd, a kube-apiserver for wds1, its1, wec1, wec2, ksview serve and the agents`);
  // restartNode: serve and the agents run this build, whatever ran before.
  const layout = await spacesUp({ dir: opts.dir, portBase: DEFAULT_PORT_BASE, wecs: DEFAULT_WECS, cacheDir: opts.cacheDir, progress, restartNode: true });
  // One kubeconfig for the whole tour: a context per space, and wds1-view (current) for the view.
  const kc = path.join(layout.dir, 'kubeconfig-view');
  writeFileSync(kc, renderKubeconfig([...spaceKubeconfigEntries(layout), viewKubeconfigEntry(layout, viewRoot),
    ...viewClusterKubeconfigEntries(layout, viewRoot).filter((e) => e.name.startsWith('wds1-view-'))], 'wds1-view'), { mode: 0o600 });
  const wecs = layout.spaces.filter((s) => s.role === 'wec').map((s) => s.name);
  return { progress, layout, kc, show: kubectlShow(kc), wecs };
}

/** Steps 2 and 3: kubectl against every space; a Deployment made Available by kwok in wec1 only. */
function spacesStep({ progress, layout, kc, show }: Tour): void {
  progress.step(`2/${STEPS} kubectl against every space`);
  for (const s of layout.spaces) {
    show(['--context', s.name, 'get', 'namespaces']);
  }
  show(['--context', 'wec1', 'get', 'nodes', '-o', 'wide']);

  progress.step(`3/${STEPS} a Deployment in wec1, scheduled on kwok nodes, becoming Available`);
  show(['--context', 'wec1', 'apply', '-f', '-'], DEMO_DEPLOYMENT);
  show(['--context', 'wec1', 'wait', '--for=condition=Available', 'deployment/demo-nginx', '--timeout=120s']);
  show(['--context', 'wec1', 'get', 'deployment,pods', '-l', 'app=nginx', '-o', 'wide']);
  const absent = kubectl(kc, ['--context', 'wec2', 'get', 'deployment', 'demo-nginx', '--ignore-not-found', '-o', 'name']);
  process.stdout.write(`\nwec2 has ${absent.stdout.trim() ? 'the deployment too (unexpected)' : 'no such deployment: the spaces are isolated'}\n`);
}

/** Steps 4 and 5: ksview serve registered in wds1, and kubectl through the view. */
async function viewStep({ progress, layout, kc, show }: Tour): Promise<void> {
  progress.step(`4/${STEPS} ksview serve: the view of wds1, registered as APIService v1alpha1.view.kubestellar.io`);
  // `spaces up` started it from this build (with its placement controllers); here it is checked Available.
  await ensureViewServer(layout, progress);
  show(['--context', 'wds1', 'get', 'apiservice', 'v1alpha1.view.kubestellar.io']);
  show(['--context', 'wds1', 'get', 'spaces.view.kubestellar.io']);

  progress.step(`5/${STEPS} kubectl through the view (context wds1-view): the workload lands natively in wds1`);
  show(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
  process.stdout.write('\n');
  const kinds = kubectl(kc, ['--context', 'wds1-view', 'api-resources', '-o', 'name']).stdout.split('\n').filter(Boolean);
  process.stdout.write(`\nthe view serves ${kinds.length} resource types; hidden: ${['events', 'nodes', 'leases.coordination.k8s.io'].filter((k) => !kinds.includes(k)).join(', ')}\n`);
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_VIEW_WORKLOAD);
  show(['--context', 'wds1-view', '-n', 'demo', 'get', 'deployment,configmap', '-l', 'app=nginx']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'deployment', 'demo-nginx', '-o', 'jsonpath={.metadata.name} is in wds1 natively, {.spec.replicas} replicas wanted and none made: a WDS runs no workload controllers']);
  process.stdout.write('\n');
}

/** Step 6: denatured kinds are data in wds1, yet written under Kubernetes' escalation rules. */
async function denaturedStep({ progress, kc, show }: Tour): Promise<void> {
  progress.step(`6/${STEPS} denatured kinds: RBAC, a webhook and a quota through the view are data, not policy, in wds1`);
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_DENATURED_BUNDLE);
  show(['--context', 'wds1-view', 'get', 'clusterrolebinding,validatingwebhookconfiguration']);
  show(['--context', 'wds1', 'auth', 'can-i', '--as', 'alice', '*', '*'], undefined, true);
  show(['--context', 'wds1', '-n', 'demo', 'create', 'configmap', `demo-still-allowed-${Date.now()}`, '--from-literal=x=1']);
  show(['--context', 'wds1', 'get', 'clusterrolebindings.denatured.kubestellar.io,validatingwebhookconfigurations.denatured.kubestellar.io', '-o', 'name']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'resourcequotas.denatured.kubestellar.io', '-o', 'name']);
  process.stdout.write('\nalice is no admin in wds1, the webhook rejects nothing, the quota limits nothing: they exist there only as denatured.kubestellar.io objects\n');
  // Data, but not a way around Kubernetes' rules: the view checks denatured RBAC as kube-apiserver
  // checks the native kind, because placement sends it where it does take effect.
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_MALLORY_RIGHTS);
  const canMallory = () => kubectl(kc, ['--context', 'wds1', 'auth', 'can-i', '--as', 'mallory', 'create', 'clusterrolebindings.denatured.kubestellar.io']).stdout.trim();
  await waitFor(async () => ({ ok: canMallory() === 'yes', detail: canMallory() }), 30_000, 250);
  const refused = show(['--context', 'wds1-view', '--as', 'mallory', 'apply', '-f', '-'], DEMO_MALLORY_BINDING, true);
  process.stdout.write(refused.stderr);
  if (refused.status === 0 || !/attempting to grant RBAC permissions not currently held/.test(refused.stderr)) {
    throw new UserError(`mallory's binding to cluster-admin was not refused by the escalation check: ${(refused.stderr || refused.stdout).trim().split('\n').pop()}`);
  }
  process.stdout.write('\nmallory may write denatured RBAC, yet not grant what she does not hold: the view runs Kubernetes\' escalation check, as wec1 would refuse her natively\n');
}

/** Step 7: a BindingPolicy turned into ManifestWorks in the clusters' mailboxes. */
async function placementStep({ progress, kc, show, wecs }: Tour): Promise<void> {
  progress.step(`7/${STEPS} placement: a BindingPolicy sends the demo workload to wec1 and wec2 as ManifestWorks in its1`);
  // `spaces up` created and accepted its own clusters (hubAcceptsClient: true), as their hub admin; the agents report their status.
  show(['--context', 'its1', 'get', 'managedclusters', '--show-labels']);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_BINDING_POLICY);
  const worksOf = (ns: string) => kubectl(kc, ['--context', 'its1', '-n', ns, 'get', 'manifestworks', '-l', 'bindingpolicy.view.kubestellar.io/demo-nginx', '-o', 'name']).stdout.split('\n').filter(Boolean);
  const placed = await waitFor(async () => ({ ok: wecs.every((w) => worksOf(w).length >= 3), detail: 'works missing' }), 60_000, 500);
  if (!placed.ok) throw new UserError('the BindingPolicy demo-nginx did not produce its ManifestWorks within 60 s (see the ksview serve log)');
  show(['--context', 'its1', 'get', 'manifestworks', '-A', '-l', 'bindingpolicy.view.kubestellar.io/demo-nginx',
    '-o', 'custom-columns=CLUSTER:.metadata.namespace,WORK:.metadata.name,KIND:.spec.workload.manifests[0].kind,OBJECT:.spec.workload.manifests[0].metadata.name']);
  // --raw: right after ksview serve (re)starts, kube-apiserver's discovery of the group may lag a minute.
  const binding = kubectl(kc, ['--context', 'wds1', 'get', '--raw', '/apis/view.kubestellar.io/v1alpha1/bindings/demo-nginx']);
  process.stdout.write(`\n$ KUBECONFIG=${kc} kubectl --context wds1 get bindings.view.kubestellar.io demo-nginx -o yaml\n`);
  process.stdout.write(binding.status === 0 ? YAML.stringify(JSON.parse(binding.stdout)) : binding.stderr);
}

/** Step 8: the agents apply the works; a ClusterRoleBinding grants in wec1 only. */
async function agentsStep({ progress, layout, kc, show, wecs }: Tour): Promise<void> {
  progress.step(`8/${STEPS} the agents: wec1 pulls its works, one push agent beside its1 serves wec2; RBAC renatured in wec1 only`);
  const availableIn = async (wec: string) => waitFor(async () => {
    const r = kubectl(kc, ['--context', wec, '-n', 'demo', 'get', 'deployment', 'demo-nginx', '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']);
    return { ok: r.stdout.trim() === 'True', detail: r.stdout.trim() || r.stderr.trim().split('\n').pop() || 'absent' };
  }, 120_000, 500);
  for (const wec of wecs) {
    const r = await availableIn(wec);
    if (!r.ok) throw new UserError(`the demo Deployment is not Available in ${wec} after 120 s (${r.detail}); see 'ksview spaces status' and the agents' logs in ${layout.dir}/logs`);
  }
  for (const wec of wecs) show(['--context', wec, '-n', 'demo', 'get', 'deployment,configmap', '-l', 'app=nginx']);
  show(['--context', 'its1', '-n', 'wec1', 'get', 'manifestworks', '-l', 'bindingpolicy.view.kubestellar.io/demo-nginx',
    '-o', 'custom-columns=WORK:.metadata.name,APPLIED:.status.conditions[?(@.type=="Applied")].status,AVAILABLE:.status.conditions[?(@.type=="Available")].status']);
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_RBAC);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_RBAC_POLICY);
  const canI = (ctx: string) => kubectl(kc, ['--context', ctx, 'auth', 'can-i', '--as', 'bob', 'list', 'pods', '-n', 'demo']).stdout.trim();
  const granted = await waitFor(async () => ({ ok: canI('wec1') === 'yes', detail: canI('wec1') }), 60_000, 500);
  if (!granted.ok) throw new UserError('the ClusterRoleBinding demo-bob-view did not grant in wec1 within 60 s (see the agents\' logs)');
  show(['--context', 'wec1', 'auth', 'can-i', '--as', 'bob', 'list', 'pods', '-n', 'demo'], undefined, true);
  show(['--context', 'wds1', 'auth', 'can-i', '--as', 'bob', 'list', 'pods', '-n', 'demo'], undefined, true);
  show(['--context', 'wec2', 'get', 'clusterrolebinding', 'demo-bob-view', '--ignore-not-found', '-o', 'name'], undefined, true);
  process.stdout.write('\nbob may list pods in wec1, where the binding is live; in wds1 it is data; wec2 was not selected\n');
}

/** Step 8, continued: the pull agent's endpoints, answering only whom wec1 authorizes. */
async function agentEndpointsStep({ layout }: Tour): Promise<void> {
  // The agent's endpoints answer only whom wec1 authenticates and authorizes (as kubelet's do):
  // here wec1's admin client certificate; without one, 401.
  const pullAgent = agentCommands(layout)[0]!;
  const pki = spacePkiFiles(pullAgent.delegate.dir);
  const anonymous = await fetch(agentUrl(pullAgent, '/federatedresources'), { dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) })
    .then((r) => r.status).catch((err: Error) => err.message);
  process.stdout.write(`\n$ curl -sk ${agentUrl(pullAgent, '/federatedresources')}   # no credential\n${anonymous === 401 ? '401 Unauthorized' : anonymous}\n`);
  for (const p of ['/federatedresources', '/federatedresources/notready']) {
    process.stdout.write(`\n$ curl -s --cacert ${pki.caCert} --cert ${pki.adminCert} --key ${pki.adminKey} ${agentUrl(pullAgent, p)}\n`);
    const res = await readAgentEndpoint(pullAgent, p).catch((err: Error) => { throw new UserError(`${agentUrl(pullAgent, p)}: ${err.message}`); });
    if (res.status !== 200) throw new UserError(`${agentUrl(pullAgent, p)} answered ${res.status} to wec1's admin: ${res.body.slice(0, 300)}`);
    process.stdout.write(`${res.contentType.includes('json') ? JSON.stringify(JSON.parse(res.body), null, 2) : res.body}\n`);
  }
}

/** Steps 9 and 10: status returned into wds1, and a CombinedStatus over both WECs. */
async function statusStep({ progress, kc, show }: Tour): Promise<void> {
  progress.step(`9/${STEPS} status comes home: wec1's status of the Deployment returned into wds1 (wantSingletonReportedState)`);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_STATUS_POLICY);
  const ready = () => kubectl(kc, ['--context', 'wds1', '-n', 'demo', 'get', 'deployment', 'demo-nginx', '-o', 'jsonpath={.status.readyReplicas}']).stdout.trim();
  const returned = await waitFor(async () => ({ ok: ready() === '2', detail: ready() || 'no status yet' }), 60_000, 250);
  if (!returned.ok) throw new UserError(`wec1's status of demo-nginx did not come back to wds1 within 60 s (readyReplicas: ${returned.detail}; see the ksview serve log)`);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'deployment', 'demo-nginx', '-L', 'kubestellar.io/executing-count']);
  process.stdout.write('\nwds1 runs no Deployment controller: READY 2/2 is wec1\'s status, returned by ksview serve\n');

  progress.step(`10/${STEPS} a CombinedStatus: availableReplicas summed over wec1 and wec2 (a StatusCollector in CEL)`);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_COMBINED);
  const sum = () => {
    const r = kubectl(kc, ['--context', 'wds1', '-n', 'demo', 'get', 'combinedstatuses.view.kubestellar.io', '-l', 'status.kubestellar.io/binding-policy=demo-combined',
      '-o', 'jsonpath={.items[0].results[0].rows[0].columns[0].float}']);
    return r.stdout.trim();
  };
  const summed = await waitFor(async () => ({ ok: sum() === '4', detail: sum() || 'no CombinedStatus yet' }), 60_000, 250);
  if (!summed.ok) throw new UserError(`the CombinedStatus of demo-nginx did not sum 4 available replicas within 60 s (it shows: ${summed.detail}; see the ksview serve log)`);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'combinedstatuses.view.kubestellar.io', '-l', 'status.kubestellar.io/binding-policy=demo-combined']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'combinedstatuses.view.kubestellar.io', '-l', 'status.kubestellar.io/binding-policy=demo-combined', '-o', 'jsonpath={.items[0].results}']);
  process.stdout.write('\n\n2 available in wec1 + 2 in wec2, combined by ksview serve from the agents\' WorkStatuses; never stored\n');
}

/** Step 11: upsync, objects born in the WECs read from wds1. */
async function upsyncStep({ progress, kc, show, wecs }: Tour): Promise<void> {
  progress.step(`11/${STEPS} upsync: a StatefulSet's Pods and PVCs, born in wec1 and wec2, read from wds1 (wds1-view-wec1, upsyncedobjects, a CombinedStatus)`);
  for (const wec of wecs) show(['--context', wec, 'apply', '-f', '-'], demoPersistentVolumes(2));
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_UPSYNC);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_UPSYNC_POLICY);
  const runningIn = (ctx: string) => kubectl(kc, ['--context', ctx, '-n', 'demo', 'get', 'pods', '-l', 'app=demo-db', '-o', 'jsonpath={.items[*].status.phase}']).stdout.trim();
  const upsynced = await waitFor(async () => ({ ok: runningIn('wds1-view-wec1') === 'Running Running', detail: runningIn('wds1-view-wec1') || 'no Pods upsynced yet' }), 120_000, 500);
  if (!upsynced.ok) throw new UserError(`wec1's demo-db Pods were not seen Running through wds1-view-wec1 within 120 s (${upsynced.detail}; see the agents' and ksview serve's logs)`);
  show(['--context', 'wds1-view-wec1', '-n', 'demo', 'get', 'pods,pvc', '-l', 'app=demo-db']);
  show(['--context', 'wds1-view-wec1', 'api-resources']);
  const readOnly = show(['--context', 'wds1-view-wec1', '-n', 'demo', 'delete', 'pod', 'demo-db-0'], undefined, true);
  process.stdout.write(readOnly.stderr);
  if (readOnly.status === 0) throw new UserError('deleting an upsynced Pod through wds1-view-wec1 was not refused');
  const phases = () => kubectl(kc, ['--context', 'wds1', '-n', 'demo', 'get', 'combinedstatuses.view.kubestellar.io',
    '-l', 'status.kubestellar.io/binding-policy=demo-upsync,status.kubestellar.io/resource=pods', '-o', 'jsonpath={.items[0].results[0].rows[*].columns[2].float}']).stdout.trim();
  const counted = await waitFor(async () => ({ ok: phases() === '2 2', detail: phases() || 'no CombinedStatus yet' }), 60_000, 250);
  if (!counted.ok) throw new UserError(`the CombinedStatus of the upsynced Pods did not count 2 Running in each WEC within 60 s (it shows: ${counted.detail})`);
  show(['--context', 'wds1-view', 'get', 'upsyncedobjects', '-n', 'demo']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'combinedstatuses.view.kubestellar.io', '-l', 'status.kubestellar.io/binding-policy=demo-upsync']);
  process.stdout.write('\nthe Pods and PVCs exist only in wec1 and wec2; their agents copied them home, and wds1 reads them (read-only) without logging into a WEC\n');
}

export async function runDemo(opts: { dir: string; cacheDir: string }): Promise<void> {
  const tour = await upSpaces(opts, stderrProgress());
  spacesStep(tour);
  await viewStep(tour);
  await denaturedStep(tour);
  await placementStep(tour);
  await agentsStep(tour);
  await agentEndpointsStep(tour);
  await statusStep(tour);
  await upsyncStep(tour);
  tour.progress.step(`demo done; try: KUBECONFIG=${tour.kc} kubectl --context wds1-view get all -n demo; or --context wds1-view-wec2 get pods -n demo -w`);
}
