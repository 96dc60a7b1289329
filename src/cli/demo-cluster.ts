// `ksview demo --in-cluster` (behind `make demo-cluster`): the tour of kubestellar-view installed
// as a platform team installs it. Real-node spaces (host1 and wec1 run kubelet, containerd, runc
// and kube-proxy), the image built without Docker and imported into the nodes, the chart installed
// part by part (server → host1, wds → wds1, its → its1, agent.pull → wec1); then kubectl through
// the view served by the pods, a denatured ClusterRoleBinding granting in wec1 only, a workload
// running as a real container in wec1 with its readiness returned into wds1, and one server pod
// killed while the view keeps answering. Its spaces have their own folder and ports, apart from
// `make demo`'s.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { viewRoot } from '../apiserver/groups/view-group.js';
import { waitFor } from '../kube/wait.js';
import { buildImage } from '../spaces/image.js';
import { installInCluster, SERVER_NAMESPACE } from '../spaces/in-cluster-install.js';
import { renderKubeconfig, spaceKubeconfigEntries, viewKubeconfigEntry } from '../spaces/kubeconfig.js';
import { httpdDeployment } from '../spaces/real-workload.js';
import { spacesUp } from '../spaces/spaces.js';
import { stderrProgress } from '../util/progress.js';
import { UserError } from '../util/user-error.js';
import { DEMO_RBAC, DEMO_RBAC_POLICY } from './demo-objects.js';
import { kubectlShow } from './demo-show.js';
import { kubectl } from './kubectl.js';

/** Ports of the real-node demo: apart from `make demo`'s (16400) and the tests' (17400, 19400). */
export const DEMO_CLUSTER_PORT_BASE = 22400;
const STEPS = 7;

const DEMO_WORKLOAD_POLICY = `apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-web
spec:
  clusterSelectors:
  - matchLabels: {name: wec1}
  downsync:
  - namespaces: [demo]
    objectSelectors:
    - matchLabels: {app: web}
    wantSingletonReportedState: true
`;

export async function runDemoCluster(opts: { dir: string; cacheDir: string }): Promise<void> {
  const progress = stderrProgress();
  progress.step(`1/${STEPS} real-node spaces: wds1, its1, wec1, wec2 and a hosting space host1; host1 and wec1 run real nodes`);
  const layout = await spacesUp({ dir: opts.dir, portBase: DEMO_CLUSTER_PORT_BASE, wecs: 2, realNodes: true, cacheDir: opts.cacheDir, progress });
  const kc = path.join(layout.dir, 'kubeconfig-view');
  writeFileSync(kc, renderKubeconfig([...spaceKubeconfigEntries(layout), viewKubeconfigEntry(layout, viewRoot)], 'wds1-view'), { mode: 0o600 });
  const show = kubectlShow(kc);
  for (const s of ['host1', 'wec1']) show(['--context', s, 'get', 'nodes', '-o', 'wide']);

  progress.step(`2/${STEPS} the image, built with buildah FROM scratch (no Docker, no registry)`);
  const image = await buildImage({ cacheDir: opts.cacheDir, progress });
  process.stdout.write(`\n${image.name}  ${image.digest}\n${image.archive}\n`);

  progress.step(`3/${STEPS} the chart, part by part: server → host1, wds → wds1, its → its1, agent.pull → wec1`);
  await installInCluster({ layout, cacheDir: opts.cacheDir, progress, image });
  show(['--context', 'host1', '-n', SERVER_NAMESPACE, 'get', 'deployment,pods', '-o', 'wide']);
  show(['--context', 'wds1', 'get', 'apiservice', 'v1alpha1.view.kubestellar.io']);
  show(['--context', 'wds1', '-n', SERVER_NAMESPACE, 'get', 'service,endpoints', 'ksview']);
  process.stdout.write('\nwds1\'s aggregator dials the pod IPs the server\'s leader mirrors into the selectorless Service, and verifies the certificate against the caBundle\n');
  show(['--context', 'wec1', '-n', 'ksview-agent', 'get', 'pods', '-o', 'wide']);

  progress.step(`4/${STEPS} kubectl through the view served by the pods; a denatured ClusterRoleBinding grants in wec1 only`);
  show(['--context', 'wds1-view', 'create', 'namespace', 'demo'], undefined, true);
  show(['--context', 'wds1-view', 'apply', '-f', '-'], httpdDeployment({ namespace: 'demo', name: 'web', labels: { app: 'web' } }));
  show(['--context', 'wds1-view', 'apply', '-f', '-'], DEMO_RBAC);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_RBAC_POLICY);
  const canI = (ctx: string) => kubectl(kc, ['--context', ctx, 'auth', 'can-i', '--as', 'bob', 'list', 'pods', '-n', 'demo']).stdout.trim();
  const granted = await waitFor(async () => ({ ok: canI('wec1') === 'yes', detail: canI('wec1') }), 120_000, 500);
  if (!granted.ok) throw new UserError('the ClusterRoleBinding demo-bob-view did not grant in wec1 within 120 s (see: kubectl --context wec1 -n ksview-agent logs deploy/ksview-agent)');
  show(['--context', 'wec1', 'auth', 'can-i', '--as', 'bob', 'list', 'pods', '-n', 'demo'], undefined, true);
  show(['--context', 'wds1', 'auth', 'can-i', '--as', 'bob', 'list', 'pods', '-n', 'demo'], undefined, true);

  progress.step(`5/${STEPS} placement: the workload runs as a real container in wec1, its readiness comes back into wds1`);
  show(['--context', 'wds1', 'apply', '-f', '-'], DEMO_WORKLOAD_POLICY);
  const ready = () => kubectl(kc, ['--context', 'wds1', '-n', 'demo', 'get', 'deployment', 'web', '-o', 'jsonpath={.status.readyReplicas}']).stdout.trim();
  const returned = await waitFor(async () => ({ ok: ready() === '1', detail: ready() || 'no status yet' }), 180_000, 500);
  if (!returned.ok) throw new UserError(`wec1's readiness of demo/web did not come back to wds1 within 180 s (readyReplicas: ${returned.detail})`);
  show(['--context', 'wec1', '-n', 'demo', 'get', 'pods', '-o', 'wide']);
  show(['--context', 'wec1', '-n', 'demo', 'get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name}: {.status.containerStatuses[0].containerID}{"\\n"}{end}']);
  show(['--context', 'wds1', '-n', 'demo', 'get', 'deployment', 'web']);
  process.stdout.write('\nREADY 1/1 in wds1 is wec1\'s kubelet\'s readiness probe of a real container, returned by the server pods\n');

  progress.step(`6/${STEPS} one server pod killed: the view keeps answering`);
  const pods = kubectl(kc, ['--context', 'host1', '-n', SERVER_NAMESPACE, 'get', 'pods', '-l', 'app.kubernetes.io/component=apiserver', '-o', 'name']).stdout.split('\n').filter(Boolean);
  show(['--context', 'host1', '-n', SERVER_NAMESPACE, 'delete', pods[0]!, '--grace-period=0', '--force'], undefined, true);
  for (let i = 0; i < 3; i++) show(['--context', 'wds1-view', '-n', 'demo', 'get', 'deployment', 'web']);
  show(['--context', 'host1', '-n', SERVER_NAMESPACE, 'get', 'pods', '-o', 'wide']);

  progress.step(`7/${STEPS} demo done; try: KUBECONFIG=${kc} kubectl --context wds1-view get all -n demo ('ksview spaces down --dir ${layout.dir}' removes it all)`);
}
