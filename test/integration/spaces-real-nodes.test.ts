// `ksview spaces up --real-nodes` on this machine, as a user checks it: host1's and wec1's nodes
// Ready (wec1 has no kwok node) and shown by `spaces status`; a pod of the ksview-httpd image with
// a readiness probe becomes Ready in wec1 and answers HTTP from the host at its pod IP; a pod in
// host1 reaches wds1's kube-apiserver with an in-pod kubeconfig of the spaces' PKI and its own
// kube-apiserver through the `kubernetes` Service with in-cluster config; then `spaces down`
// leaves no network namespace, link, NAT rule, mount or cgroup of the nodes and the sysctls as
// they were; and a user who is not root gets one line. Runs only where real nodes can (root, cgroups, network namespaces); skips with the
// reason otherwise. Spaces of its own (folder and ports: test/fixtures/real-node-spaces.ts, with
// KSVIEW_TEST_REAL_NODES_LIFECYCLE_PORT_BASE, default 19700), since it tears them down.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { defaultCacheDir } from '../../src/spaces/binaries.js';
import { buildImage, HTTPD_IMAGE, HTTPD_PORT, importImage } from '../../src/spaces/node-images.js';
import { otherNodesRun } from '../../src/spaces/node-host.js';
import { nodeLayouts, podApiserverAddress } from '../../src/spaces/node-layout.js';
import { netnsPath } from '../../src/spaces/node-network.js';
import { spacePkiFiles } from '../../src/spaces/space-pki.js';
import { renderPodKubeconfig } from '../../src/spaces/pod-access.js';
import { stderrProgress } from '../../src/util/progress.js';
import { buildClientGo } from '../fixtures/clientgo.js';
import { ksview, ksviewBin } from '../fixtures/ksview.js';
import {
  kubectlIn, machineTraces, realNodeSpacesDown, realNodeSpacesUp, realNodesUnavailable, type MachineTraces,
} from '../fixtures/real-node-spaces.js';
import { uniqueName, waitUntil } from '../fixtures/spaces.js';

const unavailable = realNodesUnavailable();
const opts = {
  dir: process.env.KSVIEW_TEST_REAL_NODES_LIFECYCLE_DIR ?? path.join(os.homedir(), '.local', 'state', 'kubestellar-view', 'test-real-nodes-lifecycle'),
  portBase: Number(process.env.KSVIEW_TEST_REAL_NODES_LIFECYCLE_PORT_BASE ?? 19700),
};

const restricted = {
  runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
};

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).on('timeout', function (this: http.ClientRequest) { this.destroy(new Error('timed out')); });
  });
}

t.test('spaces up --real-nodes as a user who is not root: one line, exit 1, nothing started', { skip: unavailable ?? false }, async (t) => {
  const dir = path.join(os.tmpdir(), uniqueName('ksview-nonroot'));
  // setpriv (util-linux) drops to nobody: what a user without root sees. `env -i`: a user's plain
  // environment (tap's process-info hook, which tap adds to every child's, would write into root's .tap).
  const r = spawnSync('env', ['-i', `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`, 'setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups',
    process.execPath, ksviewBin, 'spaces', 'up', '--real-nodes', '--dir', dir, '--port-base', String(opts.portBase)], { encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 1, 'exit 1');
  t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr.trim()}`);
  t.match(r.stderr, /--real-nodes needs root/);
  t.notOk(existsSync(dir), 'no state written');
});

t.test('spaces up --real-nodes: real containers in host1 and wec1, and down leaves nothing behind', { skip: unavailable ?? false, timeout: 1_800_000 }, async (t) => {
  // Whatever an earlier, interrupted run left is removed first: the "before" is the machine's own.
  realNodeSpacesDown(opts);
  const before: MachineTraces = machineTraces(opts);
  t.same({ ...before, sysctls: {} }, { netns: [], links: [], natRules: [], mounts: [], cgroups: [], sysctls: {} }, 'no traces of these spaces before up');

  let downDone = false;
  t.teardown(() => { if (!downDone) realNodeSpacesDown(opts); });
  const spaces = realNodeSpacesUp(opts);
  t.comment(`spaces up --real-nodes took ${(spaces.upMs / 1000).toFixed(1)}s`);
  const kc = (space: string, args: string[], input?: string) => kubectlIn(spaces.kubeconfig, space, args, input);
  const kcOk = (space: string, args: string[], input?: string) => {
    const r = kc(space, args, input);
    if (r.status !== 0) throw new Error(`kubectl --context ${space} ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  };

  await t.test('host1 and wec1 each have one real node, Ready; wec1 has no kwok node', async (t) => {
    for (const [space, node] of [['host1', 'host1-node'], ['wec1', 'wec1-node']] as const) {
      const nodes = JSON.parse(kcOk(space, ['get', 'nodes', '-o', 'json'])) as { items: Array<{ metadata: { name: string }; status: { conditions: Array<{ type: string; status: string }>; nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string } } }> };
      t.same(nodes.items.map((n) => n.metadata.name), [node], `${space}: only ${node}`);
      const n = nodes.items[0]!;
      t.equal(n.status.conditions.find((c) => c.type === 'Ready')?.status, 'True', `${node} Ready`);
      t.match(n.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\//, `${node} runs containerd`);
      t.equal(n.status.nodeInfo.kubeletVersion, kcOk(space, ['version', '-o', 'json']).match(/"gitVersion": "(v[^"]+)"/g)?.[1]?.split('"')[3], `${node}'s kubelet is the kube-apiserver's version`);
    }
    const status = ksview(['spaces', 'status', '--dir', opts.dir]);
    t.equal(status.status, 0, `spaces status is healthy: ${status.stdout}`);
    t.match(status.stdout, /node host1-node Ready in host1: containerd running \(pid \d+\), kubelet running \(pid \d+\), kube-proxy running \(pid \d+\)/, 'status shows host1-node Ready with its pids');
    t.match(status.stdout, /node wec1-node Ready in wec1: containerd running \(pid \d+\)/, 'status shows wec1-node Ready');
  });

  await t.test('a ksview-httpd pod with a readiness probe becomes Ready in wec1 and answers the host at its pod IP', async (t) => {
    const name = uniqueName('httpd');
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: {
        containers: [{
          name: 'httpd', image: HTTPD_IMAGE, imagePullPolicy: 'Never', ports: [{ containerPort: HTTPD_PORT }],
          readinessProbe: { httpGet: { path: '/', port: HTTPD_PORT }, periodSeconds: 1 },
          securityContext: restricted,
        }],
      },
    };
    const started = Date.now();
    kcOk('wec1', ['apply', '-f', '-'], JSON.stringify(pod));
    t.teardown(() => { kc('wec1', ['delete', 'pod', name, '--wait=false']); });
    const ip = await waitUntil(`pod ${name} Ready`, () => {
      const p = JSON.parse(kcOk('wec1', ['get', 'pod', name, '-o', 'json'])) as { status: { podIP?: string; conditions?: Array<{ type: string; status: string }> } };
      return p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p.status.podIP : undefined;
    }, 120_000);
    t.comment(`pod apply → Ready: ${((Date.now() - started) / 1000).toFixed(1)}s`);
    const wec1Node = nodeLayouts(spaces.layout).find((n) => n.space === 'wec1')!;
    t.match(ip, new RegExp(`^${wec1Node.podSubnet.replace(/0\/24$/, '').replace(/\./g, '\\.')}`), 'its IP is in wec1-node\'s pod subnet');
    const res = await httpGet(`http://${ip}:${HTTPD_PORT}/`);
    t.equal(res.status, 200, 'GET / from the host answers 200');
    t.match(res.body, /ksview-httpd/, 'with the page of the image');
  });

  await t.test('from wec1\'s node, 10.X.0.1 answers on a kube-apiserver\'s port and on no other port of the host\'s loopback', async (t) => {
    // What a pod's packets do: leave the node's namespace through its link to the host, to 10.X.0.1.
    const wec1Node = nodeLayouts(spaces.layout).find((n) => n.space === 'wec1')!;
    const wec1 = spaces.layout.spaces.find((s) => s.name === 'wec1')!;
    const addr = podApiserverAddress(opts.portBase);
    // A service bound to the host's loopback only (as the push agent's, a kube-controller-manager's).
    let accepted = 0;
    const server = net.createServer((s) => { accepted++; s.end('private\n'); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => { server.close(); });
    const port = (server.address() as net.AddressInfo).port;
    const probe = `const [host, port, ca] = process.argv.slice(1);
      const done = (s) => { console.log(s); process.exit(0); };
      if (ca) {
        require('node:https').get({ host, port: Number(port), path: '/readyz', ca: require('node:fs').readFileSync(ca), timeout: 5000 },
          (r) => done('https ' + r.statusCode)).on('error', (e) => done('error ' + e.code)).on('timeout', () => done('timeout'));
      } else {
        const s = require('node:net').connect({ host, port: Number(port) }, () => { s.once('data', (d) => done('connected, read ' + d.toString().trim())); });
        s.setTimeout(4000, () => done('timeout'));
        s.on('error', (e) => done('error ' + e.code));
      }`;
    // Asynchronous: this process must keep accepting while the probe runs (spawnSync would block the listener).
    const fromNode = (p: number, ca?: string) => new Promise<string>((resolve) => {
      execFile('nsenter', [`--net=${netnsPath(wec1Node.netns)}`, '--', process.execPath, '-e', probe, addr, String(p), ...(ca ? [ca] : [])],
        { encoding: 'utf8', timeout: 30_000 }, (err, stdout) => resolve(stdout.trim() || `no answer (${err?.message ?? ''})`));
    });
    const api = await fromNode(wec1.apiserverPort, spacePkiFiles(wec1.dir).caCert);
    t.match(api, /^https \d{3}$/, `wec1's kube-apiserver answers at https://${addr}:${wec1.apiserverPort}, its certificate verified (${api})`);
    const other = await fromNode(port);
    t.notMatch(other, /^connected/, `127.0.0.1:${port} is not reachable as ${addr}:${port} (${other})`);
    t.equal(accepted, 0, 'the loopback-only listener got no connection from the node');
  });

  await t.test('Pod Security: baseline enforced in wec1 and host1 (a privileged hostPath pod is refused); restricted warned', async (t) => {
    for (const space of ['wec1', 'host1']) {
      const ns = uniqueName('psa');
      kcOk(space, ['create', 'namespace', ns]);
      t.teardown(() => { kc(space, ['delete', 'namespace', ns, '--wait=false']); });
      const root = {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root', namespace: ns },
        spec: {
          hostPID: true,
          containers: [{ name: 'c', image: HTTPD_IMAGE, imagePullPolicy: 'Never', securityContext: { privileged: true }, volumeMounts: [{ name: 'host', mountPath: '/host' }] }],
          volumes: [{ name: 'host', hostPath: { path: '/' } }],
        },
      };
      const r = kc(space, ['apply', '-f', '-'], JSON.stringify(root));
      t.not(r.status, 0, `${space}: a privileged hostPID hostPath pod is refused`);
      t.match(r.stderr, /violates PodSecurity "baseline:latest"/, `${space}: in Pod Security's words (${r.stderr.trim().slice(0, 300)})`);
      t.match(r.stderr, /hostPath volumes/, 'naming the hostPath volume');
      const plain = { ...root, metadata: { name: 'plain', namespace: ns }, spec: { containers: [{ name: 'c', image: HTTPD_IMAGE, imagePullPolicy: 'Never' }] } };
      const w = kc(space, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(plain));
      t.equal(w.status, 0, `${space}: a baseline pod is admitted`);
      t.match(w.stderr, /would violate PodSecurity "restricted:latest"/, `${space}: with restricted's warning`);
    }
  });

  await t.test('a pod in host1 reaches wds1 with an in-pod kubeconfig, and host1 through the kubernetes Service', async (t) => {
    // A static client-go program in an image of its own, imported into host1's node as users' images are.
    const image = 'docker.io/library/ksview-test-clientgo:1';
    const archive = buildImage({ name: image, files: { '/clientgo': await buildClientGo() }, entrypoint: ['/clientgo'], user: '65532:65532' }, defaultCacheDir(), stderrProgress());
    importImage(nodeLayouts(spaces.layout).find((n) => n.space === 'host1')!.containerdSocket, archive);

    const ns = uniqueName('pods');
    const marker = uniqueName('cm');
    const reader = uniqueName('reader');
    // In wds1: a ConfigMap, readable by `reader` (a client certificate of wds1's CA) and nothing more.
    kcOk('wds1', ['create', 'namespace', ns]);
    t.teardown(() => { kc('wds1', ['delete', 'namespace', ns, '--wait=false']); });
    kcOk('wds1', ['-n', ns, 'create', 'configmap', `${marker}-wds1`]);
    kcOk('wds1', ['-n', ns, 'create', 'role', 'read-cm', '--verb=list', '--resource=configmaps']);
    kcOk('wds1', ['-n', ns, 'create', 'rolebinding', 'read-cm', '--role=read-cm', `--user=${reader}`]);
    // In host1: a restricted namespace, the kubeconfig Secret, a ConfigMap the pod's ServiceAccount may list.
    kcOk('host1', ['create', 'namespace', ns]);
    t.teardown(() => { kc('host1', ['delete', 'namespace', ns, '--wait=false']); });
    kcOk('host1', ['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted']);
    kcOk('host1', ['-n', ns, 'create', 'configmap', `${marker}-host1`]);
    kcOk('host1', ['-n', ns, 'create', 'role', 'read-cm', '--verb=list', '--resource=configmaps']);
    kcOk('host1', ['-n', ns, 'create', 'rolebinding', 'read-cm', '--role=read-cm', `--serviceaccount=${ns}:default`]);
    const podKubeconfig = await renderPodKubeconfig(spaces.layout, 'wds1', { user: reader, groups: [], file: reader });
    t.match(podKubeconfig, /server: https:\/\/10\.\d+\.0\.1:\d+/, 'the in-pod kubeconfig names the address pods dial');
    t.notMatch(podKubeconfig, /insecure-skip-tls-verify/, 'and verifies the server');
    kcOk('host1', ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wds1-kubeconfig', namespace: ns }, stringData: { kubeconfig: podKubeconfig } }));

    const clientPod = (name: string, args: string[], withSecret: boolean) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
      spec: {
        restartPolicy: 'Never',
        containers: [{
          name: 'clientgo', image, imagePullPolicy: 'Never', args, securityContext: restricted,
          ...(withSecret ? { volumeMounts: [{ name: 'kc', mountPath: '/kc', readOnly: true }] } : {}),
        }],
        ...(withSecret ? { volumes: [{ name: 'kc', secret: { secretName: 'wds1-kubeconfig' } }] } : {}),
      },
    });
    kcOk('host1', ['apply', '-f', '-'], JSON.stringify(clientPod('to-wds1', ['--kubeconfig', '/kc/kubeconfig', '--namespace', ns, 'list'], true)));
    // No kubeconfig: client-go's in-cluster config, KUBERNETES_SERVICE_HOST = the `kubernetes` Service's ClusterIP.
    kcOk('host1', ['apply', '-f', '-'], JSON.stringify(clientPod('in-cluster', ['--namespace', ns, 'list'], false)));
    for (const [pod, want] of [['to-wds1', `${marker}-wds1`], ['in-cluster', `${marker}-host1`]] as const) {
      const phase = await waitUntil(`pod ${pod} done`, () => {
        const p = kcOk('host1', ['-n', ns, 'get', 'pod', pod, '-o', 'jsonpath={.status.phase}']);
        return p === 'Succeeded' || p === 'Failed' ? p : undefined;
      }, 120_000);
      const logs = kc('host1', ['-n', ns, 'logs', pod]);
      t.equal(phase, 'Succeeded', `${pod} succeeded (${logs.stdout.trim()} ${logs.stderr.trim()})`);
      t.match(logs.stdout, want, `${pod} listed ${want}`);
    }
  });

  const down = realNodeSpacesDown(opts);
  downDone = true;
  t.equal(down.status, 0, `spaces down succeeds: ${down.stderr.trim()}`);
  const after = machineTraces(opts);
  t.same({ ...after, sysctls: {} }, { ...before, sysctls: {} }, 'after down: no netns, link, NAT rule, mount or cgroup of the nodes');
  // The sysctls are the machine's: the last real-node spaces to stop restores them (others may run, e.g. in CI).
  if (otherNodesRun([])) t.comment('other real-node spaces run on this machine: they restore the sysctls when they stop');
  else t.same(after.sysctls, before.sysctls, 'the sysctls as before');
});
