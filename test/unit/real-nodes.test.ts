// The pure parts of `spaces up --real-nodes`: the layout (host1's block, which spaces run a node),
// the nodes' names and addresses (distinct per node and per port base, within Linux's limits), the
// rendered configurations (containerd, CNI, kubelet, kube-proxy), the kube-apiservers' flags, the
// packages a machine lacks, and the cleanup `down` plans from what the machine holds.
import t from 'tap';
import YAML from 'yaml';
import { apiserverArgs, controllerManagerArgs } from '../../src/spaces/components.js';
import { layoutPorts, MAX_WDSS, spacesLayout } from '../../src/spaces/layout.js';
import { inCidr, parseMountinfo, planNodeCleanup, type MachineFacts } from '../../src/spaces/node-cleanup.js';
import { cniConfList, containerdConfig, kubeletArgs, kubeletConfig, kubeProxyConfig } from '../../src/spaces/node-config.js';
import { knownSysctls, missingPackages } from '../../src/spaces/node-host.js';
import { admissionPlugins } from '../../src/spaces/admission-config.js';
import { imageDigestKey } from '../../src/spaces/node-images.js';
import { nodeLayouts, podApiserverAddress } from '../../src/spaces/node-layout.js';
import { dnatJumps, dnatRestoreInput, foreignRoute } from '../../src/spaces/node-network.js';
import { podServerUrl } from '../../src/spaces/pod-access.js';

const real = (portBase = 16400, wecs = 2) => spacesLayout({ dir: '/s', portBase, wecs, realNodes: true });

t.test('--real-nodes adds host1 in a block of its own: no other space\'s port moves', async (t) => {
  const kwok = spacesLayout({ dir: '/s', portBase: 16400, wecs: 20, wdss: MAX_WDSS });
  const withNodes = spacesLayout({ dir: '/s', portBase: 16400, wecs: 20, wdss: MAX_WDSS, realNodes: true });
  const host1 = withNodes.spaces.find((s) => s.name === 'host1')!;
  t.equal(host1.role, 'host');
  t.same(withNodes.spaces.filter((s) => s.name !== 'host1'), kwok.spaces.map((s) => (s.name === 'wec1' ? { ...s, realNode: true } : s)), 'every other space as without the flag');
  const ports = layoutPorts(withNodes).map((p) => p.port);
  t.equal(new Set(ports).size, ports.length, 'no port shared, with the most WECs and WDSs');
  t.ok(layoutPorts(withNodes).some((p) => p.what === 'host1 kube-scheduler'), 'host1 runs a scheduler');
  t.same(withNodes.spaces.filter((s) => s.realNode).map((s) => s.name), ['wec1', 'host1'], 'only wec1 and host1 run real nodes');
  t.notOk(spacesLayout({ dir: '/s', portBase: 16400, wecs: 2 }).spaces.some((s) => s.realNode || s.role === 'host'), 'without the flag: no host1, no real node');
});

t.test('node names and addresses: distinct per node and per port base, within Linux\'s limits', async (t) => {
  const [host1, wec1] = nodeLayouts(real());
  t.equal(host1!.space, 'host1');
  t.equal(wec1!.space, 'wec1');
  t.not(host1!.podSubnet, wec1!.podSubnet);
  t.not(host1!.nodeIp, wec1!.nodeIp);
  t.not(host1!.netns, wec1!.netns);
  for (const n of [host1!, wec1!]) {
    t.ok(n.hostVeth.length <= 15, `${n.hostVeth}: an interface name of at most 15 characters`);
    t.ok(`${n.containerdSocket}.ttrpc`.length <= 104, `${n.containerdSocket}: a unix socket path containerd can listen on`);
    t.ok(inCidr(n.bridgeGateway, n.podSubnet), 'the bridge is in its pod subnet');
    t.notOk(inCidr(n.nodeIp, '10.96.0.0/16') || inCidr(n.podSubnet.replace('/24', ''), '10.244.0.0/16'), 'clear of the services\' and kwok\'s ranges');
  }
  const other = nodeLayouts(real(17400));
  t.not(other[0]!.podSubnet, host1!.podSubnet, 'another port base: other subnets');
  t.not(podApiserverAddress(17400), podApiserverAddress(16400));
  t.not(other[0]!.netns, host1!.netns);
  t.same(nodeLayouts(spacesLayout({ dir: '/s', portBase: 16400, wecs: 2 })), [], 'no nodes without --real-nodes');
});

t.test('containerd, CNI, kubelet and kube-proxy configurations', async (t) => {
  const [n] = nodeLayouts(real());
  const toml = containerdConfig(n!, 'docker.io/library/ksview-pause:1.0');
  t.match(toml, /restrict_oom_score_adj = true/, 'CRI lowers no oom_score_adj (no CAP_SYS_RESOURCE here)');
  t.match(toml, /sandbox_image = "docker\.io\/library\/ksview-pause:1\.0"/);
  t.match(toml, new RegExp(`address = "${n!.containerdSocket}"`), 'its own socket');
  t.match(toml, /SystemdCgroup = false/);
  const cni = JSON.parse(cniConfList(n!)) as { plugins: Array<{ type: string; ipam?: { ranges: Array<Array<{ subnet: string }>>; dataDir: string } }> };
  t.equal(cni.plugins[0]!.type, 'bridge');
  t.equal(cni.plugins[0]!.ipam!.ranges[0]![0]!.subnet, n!.podSubnet);
  t.equal(cni.plugins[0]!.ipam!.dataDir, n!.ipamDir, 'reservations in the node\'s folder');
  const kubelet = YAML.parse(kubeletConfig(n!, { clientCaFile: '/s/host1/pki/ca.crt' })) as Record<string, unknown>;
  t.equal(kubelet.cgroupDriver, 'cgroupfs');
  t.equal(kubelet.cgroupRoot, n!.cgroupRoot);
  t.equal(kubelet.podLogsDir, n!.podLogsDir);
  t.same(kubelet.authentication, { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: '/s/host1/pki/ca.crt' } }, 'no anonymous access to its API');
  t.equal(kubelet.readOnlyPort, 0);
  t.ok(kubeletArgs(n!).includes(`--cert-dir=${n!.kubeletCertDir}`) && kubeletArgs(n!).includes(`--root-dir=${n!.kubeletRoot}`), 'its own folders');
  const proxy = YAML.parse(kubeProxyConfig(n!, 'iptables')) as { mode: string; hostnameOverride: string; conntrack: { maxPerCore: number } };
  t.equal(proxy.mode, 'iptables');
  t.equal(proxy.hostnameOverride, n!.name);
  t.equal(proxy.conntrack.maxPerCore, 0, 'leaves the host\'s conntrack table alone');
});

t.test('kube-apiserver flags with real nodes', async (t) => {
  const layout = real();
  const args = (name: string) => apiserverArgs(layout, layout.spaces.find((s) => s.name === name)!);
  t.ok(args('host1').includes('--authorization-mode=Node,RBAC') && args('host1').includes('--enable-admission-plugins=NodeRestriction'), 'node spaces: Node authorizer and NodeRestriction');
  t.ok(args('host1').includes(`--advertise-address=${podApiserverAddress(16400)}`), 'node spaces advertise the address pods dial');
  t.ok(args('host1').includes('--endpoint-reconciler-type=lease'), 'so the kubernetes Service has an endpoint');
  t.ok(args('wds1').includes('--enable-aggregator-routing=true'), 'wds1 routes to endpoints (pod IPs)');
  const twoWdss = spacesLayout({ dir: '/s', portBase: 16400, wecs: 2, wdss: 2, realNodes: true });
  const wds2 = apiserverArgs(twoWdss, twoWdss.spaces.find((s) => s.name === 'wds2')!);
  t.notOk(wds2.some((a) => a.startsWith('--enable-aggregator-routing')), 'wds2, served by a process through an ExternalName Service: no aggregator routing');
  t.ok(args('wds1').includes('--bind-address=127.0.0.1') && args('host1').includes('--bind-address=127.0.0.1'), 'every kube-apiserver still listens on loopback only');
  const kwok = spacesLayout({ dir: '/s', portBase: 16400, wecs: 2 });
  const kwokWds1 = apiserverArgs(kwok, kwok.spaces[0]!);
  t.notOk(kwokWds1.some((a) => a.startsWith('--enable-aggregator-routing') || a.includes('Node,RBAC')), 'without the flag: unchanged');
  t.ok(controllerManagerArgs(layout.spaces.find((s) => s.name === 'host1')!, '/k').includes('--controllers=*'), 'host1 runs every controller');
});

t.test('pods dial the spaces at the nodes\' address; no such URL without real nodes', async (t) => {
  const layout = real();
  t.equal(podServerUrl(layout, 'wds1'), `https://${podApiserverAddress(16400)}:16410`);
  t.throws(() => podServerUrl(layout, 'nope'), /no space 'nope'/);
  t.throws(() => podServerUrl(spacesLayout({ dir: '/s', portBase: 16400, wecs: 2 }), 'wds1'), /no real nodes/);
});

t.test('the packages a machine lacks, each named once', async (t) => {
  t.same(missingPackages(() => true), []);
  t.same(missingPackages((f) => !f.includes('containerd') && !f.endsWith('/ctr')), ['containerd']);
  t.ok(missingPackages(() => false).includes('containernetworking-plugins'));
});

t.test('an image is rebuilt only when what makes it changes', async (t) => {
  const spec = { name: 'docker.io/library/x:1', files: { '/bin/x': '/x' }, entrypoint: ['/bin/x'], user: '65532:65532' };
  const a = imageDigestKey(spec, () => Buffer.from('one'));
  t.equal(imageDigestKey(spec, () => Buffer.from('one')), a);
  t.not(imageDigestKey(spec, () => Buffer.from('two')), a, 'another binary');
  t.not(imageDigestKey({ ...spec, user: '0' }, () => Buffer.from('one')), a, 'another user');
});

t.test('a subnet already routed elsewhere is refused', async (t) => {
  const routes = 'default via 192.0.2.1 dev eth0\n10.164.1.0/24 via 10.164.101.2 dev ksv16400h1\n10.50.0.0/24 dev docker0\n';
  t.equal(foreignRoute(routes, '10.164.1.0/24', 'ksv16400h1'), undefined, 'our own route');
  t.equal(foreignRoute(routes, '10.50.0.0/24', 'ksv16400h1'), '10.50.0.0/24 dev docker0');
});

t.test('down plans the removal of what the nodes made, and only that', async (t) => {
  const layout = real();
  const nodes = nodeLayouts(layout);
  const [host1] = nodes;
  const facts: MachineFacts = {
    mounts: ['/', `${host1!.dir}/kubelet/pods/u/volumes/kubernetes.io~projected/token`, `${host1!.dir}/containerd/state/x/rootfs`, '/run/netns/cni-ours', '/run/netns/cni-other', '/s-other/node/x'],
    netns: [{ name: host1!.netns, addrs: [] }, { name: 'cni-ours', addrs: ['10.164.1.5'] }, { name: 'cni-other', addrs: ['10.88.0.4'] }, { name: 'someone-else', addrs: [] }],
    links: ['lo', 'eth0', host1!.hostVeth],
    chainExists: { nat: true, raw: true },
    cgroupDirs: [`/sys/fs/cgroup/memory${host1!.cgroupRoot}`, `/sys/fs/cgroup/memory${host1!.cgroupRoot}/kubepods`],
    cniResults: [`${host1!.cniNetwork}-abc-eth0`, 'other-net-def-eth0'],
    processes: [
      { pid: 10, argv: ['/usr/bin/containerd-shim-runc-v2', '-namespace', 'k8s.io', '-id', 'x', '-address', host1!.containerdSocket] },
      { pid: 11, argv: ['/usr/bin/containerd-shim-runc-v2', '-namespace', 'k8s.io', '-id', 'y', '-address', '/run/containerd/containerd.sock'] },
    ],
    cgroupPids: [42, 42, 43],
  };
  const steps = planNodeCleanup(nodes, 16400, facts);
  t.same(steps.filter((s) => s.kind === 'kill').map((s) => (s as { pid: number }).pid), [42, 43, 10], 'pod processes and our shim; not another containerd\'s');
  const umounts = steps.filter((s) => s.kind === 'umount').map((s) => (s as { path: string }).path);
  t.same([...umounts].sort(), [`${host1!.dir}/containerd/state/x/rootfs`, `${host1!.dir}/kubelet/pods/u/volumes/kubernetes.io~projected/token`, '/run/netns/cni-ours'].sort(), 'mounts under the node and its pods\' netns only');
  t.ok(umounts.indexOf(`${host1!.dir}/kubelet/pods/u/volumes/kubernetes.io~projected/token`) < umounts.indexOf('/run/netns/cni-ours'), 'deepest first');
  const runs = steps.filter((s) => s.kind === 'run').map((s) => (s as { args: string[] }).args.join(' '));
  t.ok(runs.includes(`link delete ${host1!.hostVeth}`) && runs.includes(`netns delete ${host1!.netns}`), 'the link and the node\'s namespace');
  t.notOk(runs.some((r) => r.includes('someone-else')), 'not another namespace');
  const jumps = dnatJumps(16400);
  t.same(runs.filter((r) => r.startsWith('-t ')), [
    `-t nat -D ${jumps.nat.join(' ')}`, '-t nat -F KSVIEW-16400', '-t nat -X KSVIEW-16400',
    `-t raw -D ${jumps.raw.join(' ')}`, '-t raw -F KSVIEW-16400', '-t raw -X KSVIEW-16400',
  ], 'exactly what up added: both jumps, both chains');
  const rmdirs = steps.filter((s) => s.kind === 'rmdir').map((s) => (s as { path: string }).path);
  t.same(rmdirs, [`/sys/fs/cgroup/memory${host1!.cgroupRoot}/kubepods`, `/sys/fs/cgroup/memory${host1!.cgroupRoot}`], 'cgroups, children first');
  const rms = steps.filter((s) => s.kind === 'rm').map((s) => (s as { path: string }).path);
  t.ok(rms.includes('/run/netns/cni-ours') && !rms.includes('/run/netns/cni-other'), 'our pods\' namespaces only');
  t.ok(rms.includes(`/var/lib/cni/results/${host1!.cniNetwork}-abc-eth0`) && !rms.some((r) => r.includes('other-net')), 'our CNI results only');
  t.same(planNodeCleanup(nodes, 16400, { mounts: [], netns: [], links: [], chainExists: { nat: false, raw: false }, cgroupDirs: [], cniResults: [], processes: [], cgroupPids: [] })
    .filter((s) => s.kind !== 'rm'), [], 'nothing left: nothing to do but the (absent) socket folders');
});

t.test('mountinfo paths are unescaped', async (t) => {
  t.same(parseMountinfo('36 35 98:0 / /mnt/a\\040b rw - ext3 /dev/root rw\n'), ['/mnt/a b']);
});

t.test('the DNAT reaches the kube-apiservers\' ports only; the rest of 10.X.0.1 and all loopback are dropped before NAT', async (t) => {
  const layout = real();
  const ports = layout.spaces.map((s) => s.apiserverPort);
  const input = dnatRestoreInput(16400, ports);
  const lines = input.split('\n');
  const table = (name: string) => lines.slice(lines.indexOf(`*${name}`) + 1, lines.indexOf('COMMIT', lines.indexOf(`*${name}`)));
  const nat = table('nat');
  const raw = table('raw');
  t.equal(nat[0], ':KSVIEW-16400 - [0:0]', 'nat: the chain declared (so restored whole)');
  const dnat = nat.filter((l) => l.startsWith('-A '));
  t.equal(dnat.length, new Set(ports).size, 'one DNAT per kube-apiserver port');
  t.ok(dnat.every((l) => /^-A KSVIEW-16400 -d 10\.164\.0\.1\/32 -p tcp -m tcp --dport \d+ -j DNAT --to-destination 127\.0\.0\.1$/.test(l)), 'each with its --dport');
  t.same(dnat.map((l) => Number(/--dport (\d+)/.exec(l)![1])).sort(), [...new Set(ports)].sort(), 'the kube-apiservers\' ports, no other');
  t.notOk(dnat.some((l) => !l.includes('--dport')), 'no DNAT without a port (the old rule opened all of loopback)');
  const rawRules = raw.filter((l) => l.startsWith('-A '));
  t.same(rawRules.slice(-2), ['-A KSVIEW-16400 -d 10.164.0.1/32 -j DROP', '-A KSVIEW-16400 -d 127.0.0.0/8 -j DROP'], 'raw: the rest of 10.X.0.1 and 127.0.0.0/8 dropped');
  t.same(rawRules.slice(0, -2).map((l) => Number(/--dport (\d+)/.exec(l)![1])).sort(), [...new Set(ports)].sort(), 'after letting the kube-apiservers\' ports through');
  const jumps = dnatJumps(16400);
  t.same([jumps.nat.slice(0, 3), jumps.raw.slice(0, 3)], [['PREROUTING', '-i', 'ksv16400h+'], ['PREROUTING', '-i', 'ksv16400h+']], 'both only for packets from the nodes\' links');
  t.throws(() => dnatRestoreInput(16400, []), /no kube-apiserver port/);
});

t.test('Pod Security baseline is enforced where a node is real, and the WDS keeps its webhook configuration', async (t) => {
  const layout = real();
  const space = (name: string) => layout.spaces.find((s) => s.name === name)!;
  for (const name of ['host1', 'wec1']) {
    const plugins = admissionPlugins(layout, space(name)) as Array<{ name: string; configuration: { defaults: Record<string, string>; exemptions: Record<string, string[]> } }>;
    t.same(plugins.map((p) => p.name), ['PodSecurity'], `${name}: PodSecurity configured`);
    t.same(plugins[0]!.configuration.defaults, { enforce: 'baseline', 'enforce-version': 'latest', audit: 'restricted', 'audit-version': 'latest', warn: 'restricted', 'warn-version': 'latest' }, `${name}: enforce baseline, audit and warn restricted`);
    t.same(plugins[0]!.configuration.exemptions, { usernames: [], runtimeClasses: [], namespaces: [] }, `${name}: no exemption`);
    t.ok(apiserverArgs(layout, space(name)).includes(`--admission-control-config-file=${space(name).dir}/admission/admission-config.yaml`), `${name}: kube-apiserver reads it`);
  }
  t.same(admissionPlugins(layout, space('wds1')).map((p) => (p as { name: string }).name), ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'], 'wds1: its webhook client configuration, unchanged');
  t.same(admissionPlugins(layout, space('wec2')), [], 'wec2 (kwok): nothing, no flag');
  t.notOk(apiserverArgs(layout, space('wec2')).some((a) => a.startsWith('--admission-control-config-file')));
  const kwok = spacesLayout({ dir: '/s', portBase: 16400, wecs: 2 });
  t.same(admissionPlugins(kwok, kwok.spaces.find((s) => s.name === 'wec1')!), [], 'without --real-nodes: wec1 unchanged');
});

t.test('down removes the pods\' namespaces of these nodes\' /24s only: another port base with the same 10.X/16 keeps its', async (t) => {
  // 16400 and 24400 share 10.164.0.0/16 (X = 160 + ⌊port base / 100⌋ mod 80).
  const nodes = nodeLayouts(real(16400));
  const [host1, wec1] = nodes;
  t.equal(podApiserverAddress(24400), podApiserverAddress(16400), 'the collision this guards against');
  const facts: MachineFacts = {
    mounts: ['/run/netns/cni-host1', '/run/netns/cni-wec1', '/run/netns/cni-elsewhere'],
    netns: [
      { name: 'cni-host1', addrs: [host1!.podSubnet.replace('0/24', '7')] },
      { name: 'cni-wec1', addrs: [wec1!.podSubnet.replace('0/24', '9')] },
      // In 10.164.0.0/16, but not in a pod subnet of these nodes (another runtime, another port base's link).
      { name: 'cni-elsewhere', addrs: ['10.164.50.4'] },
    ],
    links: [], chainExists: { nat: false, raw: false }, cgroupDirs: [], cniResults: [], processes: [], cgroupPids: [],
  };
  const steps = planNodeCleanup(nodes, 16400, facts);
  const paths = steps.filter((s) => s.kind === 'umount' || s.kind === 'rm').map((s) => (s as { path: string }).path);
  t.ok(paths.includes('/run/netns/cni-host1') && paths.includes('/run/netns/cni-wec1'), 'our pods\' namespaces');
  t.notOk(paths.includes('/run/netns/cni-elsewhere'), 'not a namespace that only shares the /16');
});

t.test('down restores only the known sysctls, with integer values; says what it ignored', async (t) => {
  const recorded = { 'vm.overcommit_memory': '0', 'kernel.panic': 0, 'kernel.panic_on_oops': '1', 'fs.inotify.max_user_instances': '128',
    'kernel.core_pattern': '|/tmp/x', 'kernel.modprobe': '/tmp/x', 'vm.overcommit_ratio': '50', 'kernel.panic_on_warn': '1' };
  const { values, ignored } = knownSysctls({ ...recorded, 'kernel.panic': '1; rm -rf /' });
  t.same(values, { 'vm.overcommit_memory': '0', 'kernel.panic_on_oops': '1', 'fs.inotify.max_user_instances': '128' }, 'known keys with integer values');
  t.same(ignored.sort(), ['kernel.core_pattern', 'kernel.modprobe', 'kernel.panic', 'kernel.panic_on_warn', 'vm.overcommit_ratio'], 'the rest ignored, each named');
  t.same(knownSysctls(recorded).values['kernel.panic'], '0', 'a number is an integer value too');
  t.same(knownSysctls(undefined), { values: {}, ignored: [] }, 'nothing recorded: nothing');
  t.same(knownSysctls('kernel.core_pattern=|x'), { values: {}, ignored: ['(not an object)'] });
});
