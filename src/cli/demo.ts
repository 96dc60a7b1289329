// `ksview demo` (behind `make demo`): the guided tour. Local spaces up, kubectl against every
// space, a Deployment in wec1 becoming Available thanks to kwok's fake nodes; then `ksview serve`
// registered in wds1 and kubectl working through the workload-as-data view.
import { spacesUp } from '../spaces/spaces.js';
import { DEFAULT_PORT_BASE, DEFAULT_WECS } from '../spaces/layout.js';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { viewRoot } from '../apiserver/view-group.js';
import { renderKubeconfig, spaceKubeconfigEntries, viewKubeconfigEntry } from '../spaces/kubeconfig.js';
import { ensureViewServer } from '../spaces/view-server.js';
import YAML from 'yaml';
import { kubectl } from './kubectl.js';
import { stderrProgress } from '../util/progress.js';
import { UserError } from '../util/user-error.js';
import { waitFor } from '../kube/wait.js';

const DEMO_DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-nginx
  namespace: default
  labels: {app: nginx}
spec:
  replicas: 2
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`;

const DEMO_VIEW_WORKLOAD = `apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-config
  namespace: demo
  labels: {app: nginx}
data:
  greeting: hello from the view
---
${DEMO_DEPLOYMENT.replace('namespace: default', 'namespace: demo')}`;

// RBAC, a webhook and a quota that would change wds1 if they were real: through the view they are
// stored denatured and do nothing there.
const DEMO_DENATURED_BUNDLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: demo-alice-admin
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: demo-deny-configmaps
webhooks:
- name: deny.demo.example.com
  clientConfig: {url: "https://127.0.0.1:1/does-not-exist"}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: no-configmaps
  namespace: demo
spec:
  hard: {configmaps: "0"}
`;

const DEMO_BINDING_POLICY = `apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-nginx
spec:
  clusterSelectors:
  - matchLabels: {location-group: edge}
  downsync:
  - objectSelectors:
    - matchLabels: {app: nginx}
    namespaces: [demo]
`;

export async function runDemo(opts: { dir: string; cacheDir: string }): Promise<void> {
  const progress = stderrProgress();
  progress.step('1/7 local spaces: etcd, and a kube-apiserver for wds1, its1, wec1, wec2');
  const layout = await spacesUp({ dir: opts.dir, portBase: DEFAULT_PORT_BASE, wecs: DEFAULT_WECS, cacheDir: opts.cacheDir, progress });
  // One kubeconfig for the whole tour: a context per space, and wds1-view (current) for the view.
  const kc = path.join(layout.dir, 'kubeconfig-view');
  writeFileSync(kc, renderKubeconfig([...spaceKubeconfigEntries(layout), viewKubeconfigEntry(layout, viewRoot)], 'wds1-view'), { mode: 0o600 });
  /** Runs and prints a kubectl command; `mayFail` for answers given by the exit code (auth can-i). */
  const show = (args: string[], input?: string, mayFail = false) => {
    process.stdout.write(`\n$ KUBECONFIG=${kc} kubectl ${args.join(' ')}\n`);
    const r = kubectl(kc, args, input);
    process.stdout.write(r.stdout);
    if (r.status !== 0 && !mayFail) throw new UserError(`kubectl ${args.join(' ')} failed: ${r.stderr.trim().split('\n').pop()}`);
    return r;
  };

  progress.step('2/7 kubectl against every space');
  for (const s of layout.spaces) {
    show(['--context', s.name, 'get', 'namespaces']);
  }
  show(['--context', 'wec1', 'get', 'nodes', '-o', 'wide']);

  progress.step('3/7 a Deployment in wec1, scheduled on kwok nodes, becoming Available');
  show(['--context', 'wec1', 'apply', '-f', '-'], DEMO_DEPLOYMENT);
  show(['--context', 'wec1', 'wait', '--for=condition=Available', 'deployment/demo-nginx', '--timeout=120s']);
  show(['--context', 'wec1', 'get', 'deployment,pods', '-l', 'app=nginx', '-o', 'wide']);
  const absent = kubectl(kc, ['--context', 'wec2', 'get', 'deployment', 'demo-nginx', '--ignore-not-found', '-o', 'name']);
  process.stdout.write(`\nwec2 has ${absent.stdout.trim() ? 'the deployment too (unexpected)' : 'no such deployment: the spaces are isolated'}\n`);

  progress.step('4/7 ksview serve: the view of wds1, registered as APIService v1alpha1.view.kubestellar.io');
  // Restarted, so the server runs this build (with its placement controllers) whatever ran before.
  await ensureViewServer(layout, progress, { restart: true });
  show(['--context', 'wds1', 'get', 'apiservice', 'v1alpha1.view.kubestellar.io']);
  show(['--context', 'wds1', 'get', 'spaces.view.kubestellar.io']);

  progress.step('5/7 kubectl through the view (context wds1-view): the workload lands natively in wds1');
  show(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
  process.stdout.write('\n');
  const kinds = kubectl(kc, ['--context', 'wds1-view', 'api-resources', '-o', 'name']).stdout.split('\n').filter(Boolean);
  process.stdout.write(`\nthe view serves ${kinds.length} resource types; hidden: ${['events', 'nodes', 'leases.coordination.k8s.io'].filter((k) => !kinds.includes(k)).join(', ')}\n`);
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_VIEW_WORKLOAD);
  show(['--context', 'wds1-view', '-n', 'demo', 'get', 'deployment,configmap', '-l', 'app=nginx']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'deployment', 'demo-nginx', '-o', 'jsonpath={.metadata.name} is in wds1 natively, {.spec.replicas} replicas wanted and none made: a WDS runs no workload controllers']);
  process.stdout.write('\n');

  progress.step('6/7 denatured kinds: RBAC, a webhook and a quota through the view are data, not policy, in wds1');
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_DENATURED_BUNDLE);
  show(['--context', 'wds1-view', 'get', 'clusterrolebinding,validatingwebhookconfiguration']);
  show(['--context', 'wds1', 'auth', 'can-i', '--as', 'alice', '*', '*'], undefined, true);
  show(['--context', 'wds1', '-n', 'demo', 'create', 'configmap', `demo-still-allowed-${Date.now()}`, '--from-literal=x=1']);
  show(['--context', 'wds1', 'get', 'clusterrolebindings.denatured.kubestellar.io,validatingwebhookconfigurations.denatured.kubestellar.io', '-o', 'name']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'resourcequotas.denatured.kubestellar.io', '-o', 'name']);
  process.stdout.write('\nalice is no admin in wds1, the webhook rejects nothing, the quota limits nothing: they exist there only as denatured.kubestellar.io objects\n');

  progress.step('7/7 placement: a BindingPolicy sends the demo workload to wec1 and wec2 as ManifestWorks in its1');
  // Inventory is data until the WEC agent registers clusters: the demo writes it.
  for (const wec of layout.spaces.filter((s) => s.role === 'wec')) {
    show(['--context', 'its1', 'apply', '-f', '-'], `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${wec.name}\n---\n` +
      `apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: ${wec.name}\n  labels: {location-group: edge, name: ${wec.name}}\nspec:\n  hubAcceptsClient: true\n`);
  }
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_BINDING_POLICY);
  const wecs = layout.spaces.filter((s) => s.role === 'wec').map((s) => s.name);
  const worksOf = (ns: string) => kubectl(kc, ['--context', 'its1', '-n', ns, 'get', 'manifestworks', '-l', 'bindingpolicy.view.kubestellar.io/demo-nginx', '-o', 'name']).stdout.split('\n').filter(Boolean);
  const placed = await waitFor(async () => ({ ok: wecs.every((w) => worksOf(w).length >= 3), detail: 'works missing' }), 60_000, 500);
  if (!placed.ok) throw new UserError('the BindingPolicy demo-nginx did not produce its ManifestWorks within 60 s (see the ksview serve log)');
  show(['--context', 'its1', 'get', 'manifestworks', '-A', '-l', 'bindingpolicy.view.kubestellar.io/demo-nginx',
    '-o', 'custom-columns=CLUSTER:.metadata.namespace,WORK:.metadata.name,KIND:.spec.workload.manifests[0].kind,OBJECT:.spec.workload.manifests[0].metadata.name']);
  // --raw: right after ksview serve (re)starts, kube-apiserver's discovery of the group may lag a minute.
  const binding = kubectl(kc, ['--context', 'wds1', 'get', '--raw', '/apis/view.kubestellar.io/v1alpha1/bindings/demo-nginx']);
  process.stdout.write(`\n$ KUBECONFIG=${kc} kubectl --context wds1 get bindings.view.kubestellar.io demo-nginx -o yaml\n`);
  process.stdout.write(binding.status === 0 ? YAML.stringify(JSON.parse(binding.stdout)) : binding.stderr);
  process.stdout.write('\nthe Deployment, the ConfigMap and their Namespace wait in the mailboxes of wec1 and wec2 for the WEC agent (next issue)\n');
  progress.step(`demo done; try: KUBECONFIG=${kc} kubectl --context wds1-view get all -n demo`);
}
