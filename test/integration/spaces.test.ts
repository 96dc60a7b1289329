// The local spaces are real, separate Kubernetes API servers: objects round-trip through kubectl
// in every space, spaces do not see each other's objects, WECs run workloads on kwok nodes, and
// the WDS's namespace controller finishes namespace deletion.
import t from 'tap';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const spaces = layout.spaces.map((s) => s.name);

t.test('every space reports the Kubernetes version we built', async (t) => {
  for (const s of spaces) {
    const version = JSON.parse(kcOk(s, ['get', '--raw', '/version'])) as { gitVersion: string; major: string; minor: string };
    t.match(version.gitVersion, /^v1\.33\.\d+$/, `${s} gitVersion`);
    t.equal(version.minor, '33', `${s} minor`);
  }
});

t.test('a Namespace and a ConfigMap round-trip in every space', async (t) => {
  const ns = testNamespace(t, spaces, 'rt');
  for (const s of spaces) {
    kcOk(s, ['-n', ns, 'create', 'configmap', 'greeting', `--from-literal=space=${s}`]);
  }
  for (const s of spaces) {
    t.equal(kcOk(s, ['get', 'namespace', ns, '-o', 'jsonpath={.status.phase}']), 'Active', `${s} namespace`);
    t.equal(kcOk(s, ['-n', ns, 'get', 'configmap', 'greeting', '-o', 'jsonpath={.data.space}']), s, `${s} configmap data`);
  }
});

t.test('spaces are isolated: an object in wec1 is absent from wec2', async (t) => {
  const ns = testNamespace(t, ['wec1', 'wec2'], 'iso');
  const name = uniqueName('only-in-wec1');
  kcOk('wec1', ['-n', ns, 'create', 'configmap', name]);
  t.equal(kcOk('wec1', ['-n', ns, 'get', 'configmap', name, '-o', 'name']).trim(), `configmap/${name}`);
  const inWec2 = kc('wec2', ['-n', ns, 'get', 'configmap', name, '-o', 'name']);
  t.not(inWec2.status, 0, 'kubectl get fails in wec2');
  t.match(inWec2.stderr, /NotFound|not found/);
  // Cluster-scoped too: a namespace made only in wec1 is unknown to wds1.
  const onlyNs = testNamespace(t, ['wec1'], 'iso-ns');
  t.equal(kc('wds1', ['get', 'namespace', onlyNs]).status, 1);
});

t.test('a 2-replica Deployment in wec1 reaches 2 available replicas on kwok nodes', async (t) => {
  const ns = testNamespace(t, ['wec1'], 'deploy');
  kcOk('wec1', ['-n', ns, 'create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2']);
  const available = await waitUntil('2 available replicas', () => {
    const n = Number(kcOk('wec1', ['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.status.availableReplicas}']) || 0);
    return n === 2 ? n : undefined;
  }, 120_000);
  t.equal(available, 2);
  const pods = JSON.parse(kcOk('wec1', ['-n', ns, 'get', 'pods', '-l', 'app=web', '-o', 'json'])) as {
    items: Array<{ status: { phase: string; podIP?: string }; spec: { nodeName?: string } }>;
  };
  t.equal(pods.items.length, 2);
  for (const p of pods.items) {
    t.equal(p.status.phase, 'Running');
    t.match(p.spec.nodeName ?? '', /^wec1-node-\d$/, 'scheduled on a kwok node');
    t.ok(p.status.podIP, 'has a pod IP');
  }
});

t.test('deleting a namespace in wds1 completes (namespace controller runs there)', async (t) => {
  const ns = uniqueName('gone');
  kcOk('wds1', ['create', 'namespace', ns]);
  kcOk('wds1', ['-n', ns, 'create', 'configmap', 'content']);
  kcOk('wds1', ['delete', 'namespace', ns, '--wait=false']);
  await waitUntil(`namespace ${ns} to disappear`, () => kc('wds1', ['get', 'namespace', ns]).status !== 0 || undefined, 90_000);
  t.match(kc('wds1', ['get', 'namespace', ns]).stderr, /not found/);
});

t.test('WDS and ITS run no workload controllers', async (t) => {
  const ns = testNamespace(t, ['wds1'], 'inert');
  kcOk('wds1', ['-n', ns, 'create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2']);
  // Give a deployment controller, if one ran, ample time to create a ReplicaSet.
  const wec = testNamespace(t, ['wec1'], 'ctl');
  kcOk('wec1', ['-n', wec, 'create', 'deployment', 'probe', '--image=nginx:1.27']);
  await waitUntil('a ReplicaSet in wec1 (controllers there work)', () =>
    kcOk('wec1', ['-n', wec, 'get', 'replicasets', '-o', 'name']).trim() || undefined, 60_000);
  t.equal(kcOk('wds1', ['-n', ns, 'get', 'replicasets', '-o', 'name']).trim(), '', 'no ReplicaSet in wds1');
});
