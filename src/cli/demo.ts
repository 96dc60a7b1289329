// `ksview demo` (behind `make demo`): the guided tour. For now: local spaces up, kubectl against
// every space, and a Deployment in wec1 becoming Available thanks to kwok's fake nodes.
import { spacesUp } from '../spaces/spaces.js';
import { DEFAULT_PORT_BASE, DEFAULT_WECS } from '../spaces/layout.js';
import { kubectl } from './kubectl.js';
import { stderrProgress } from './progress.js';
import { UserError } from './user-error.js';

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

export async function runDemo(opts: { dir: string; cacheDir: string }): Promise<void> {
  const progress = stderrProgress();
  progress.step('1/3 local spaces: etcd, and a kube-apiserver for wds1, its1, wec1, wec2');
  const layout = await spacesUp({ dir: opts.dir, portBase: DEFAULT_PORT_BASE, wecs: DEFAULT_WECS, cacheDir: opts.cacheDir, progress });
  const kc = layout.kubeconfigPath;
  const show = (args: string[], input?: string) => {
    process.stdout.write(`\n$ KUBECONFIG=${kc} kubectl ${args.join(' ')}\n`);
    const r = kubectl(kc, args, input);
    process.stdout.write(r.stdout);
    if (r.status !== 0) throw new UserError(`kubectl ${args.join(' ')} failed: ${r.stderr.trim().split('\n').pop()}`);
    return r;
  };

  progress.step('2/3 kubectl against every space');
  for (const s of layout.spaces) {
    show(['--context', s.name, 'get', 'namespaces']);
  }
  show(['--context', 'wec1', 'get', 'nodes', '-o', 'wide']);

  progress.step('3/3 a Deployment in wec1, scheduled on kwok nodes, becoming Available');
  show(['--context', 'wec1', 'apply', '-f', '-'], DEMO_DEPLOYMENT);
  show(['--context', 'wec1', 'wait', '--for=condition=Available', 'deployment/demo-nginx', '--timeout=120s']);
  show(['--context', 'wec1', 'get', 'deployment,pods', '-l', 'app=nginx', '-o', 'wide']);
  const absent = kubectl(kc, ['--context', 'wec2', 'get', 'deployment', 'demo-nginx', '--ignore-not-found', '-o', 'name']);
  process.stdout.write(`\nwec2 has ${absent.stdout.trim() ? 'the deployment too (unexpected)' : 'no such deployment: the spaces are isolated'}\n`);
  progress.step(`demo done; try: KUBECONFIG=${kc} kubectl --context wds1 get ns`);
}
