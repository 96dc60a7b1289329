import t from 'tap';
import { layoutPorts, MAX_WDSS, MAX_WECS, nodePorts, spaceNames, spacesLayout } from '../../src/spaces/layout.js';

t.test('default spaces are wds1, its1 and N WECs', async (t) => {
  t.same(spaceNames(2).map((s) => s.name), ['wds1', 'its1', 'wec1', 'wec2']);
  t.same(spaceNames(0).map((s) => s.role), ['wds', 'its']);
});

t.test('every component gets its own port', async (t) => {
  const layout = spacesLayout({ dir: '/tmp/x', portBase: 20000, wecs: 5 });
  const ports = layoutPorts(layout).map((p) => p.port);
  t.equal(new Set(ports).size, ports.length, 'ports are unique');
  t.ok(ports.every((p) => p >= 20000 && p < 20000 + 10 * 8), 'ports stay in the block');
  t.equal(layout.spaces.find((s) => s.name === 'wds1')?.apiserverPort, 20010);
});

t.test('serve and the agents have ports of their own, and the spaces\' ports do not move', async (t) => {
  const layout = spacesLayout({ dir: '/tmp/x', portBase: 20000, wecs: 2 });
  const all = [...layoutPorts(layout), ...nodePorts(layout)].map((p) => p.port);
  t.equal(new Set(all).size, all.length, 'no port shared with a component');
  t.equal(layout.etcdClientPort, 20000);
  t.equal(layout.viewServerPort, 20005);
  t.equal(layout.pullAgentPort, 20006);
  t.equal(layout.pushAgentPort, 20007);
  t.same(nodePorts(layout).map((p) => p.what), ['wds1/ksview-serve', 'wec1/ksview-agent', 'its1/ksview-agent-push']);
});

t.test('--wdss 2: wds2 comes after the WECs, in a block of its own; no port of wds1, its1 or a WEC moves', async (t) => {
  t.same(spaceNames(2, 2).map((s) => s.name), ['wds1', 'its1', 'wec1', 'wec2', 'wds2']);
  const one = spacesLayout({ dir: '/tmp/x', portBase: 20000, wecs: 2 });
  const two = spacesLayout({ dir: '/tmp/x', portBase: 20000, wecs: 2, wdss: 2 });
  const portsOf = (l: typeof one) => l.spaces.map((s) => [s.name, s.apiserverPort, s.controllerManagerPort, s.schedulerPort, s.viewServerPort]);
  t.same(portsOf(two).slice(0, 4), portsOf(one), 'the first four spaces keep every port');
  t.same([two.etcdClientPort, two.viewServerPort, two.pullAgentPort, two.pushAgentPort], [20000, 20005, 20006, 20007]);
  const wds2 = two.spaces.find((s) => s.name === 'wds2')!;
  t.same({ role: wds2.role, apiserver: wds2.apiserverPort, serve: wds2.viewServerPort, dir: wds2.dir },
    { role: 'wds', apiserver: 20230, serve: 20235, dir: '/tmp/x/wds2' });
  t.equal(two.spaces.find((s) => s.name === 'wds1')!.viewServerPort, 20005, 'wds1\'s serve stays on port base + 5');
  t.same(nodePorts(two).map((p) => p.what), ['wds1/ksview-serve', 'wec1/ksview-agent', 'its1/ksview-agent-push', 'wds2/ksview-serve']);
  t.equal(nodePorts(two).at(-1)!.port, 20235);

  const most = spacesLayout({ dir: '/tmp/x', portBase: 20000, wecs: MAX_WECS, wdss: MAX_WDSS });
  const all = [...layoutPorts(most), ...nodePorts(most)].map((p) => p.port);
  t.equal(new Set(all).size, all.length, 'with the most WECs and WDSs, still no port shared');
  t.equal(spacesLayout({ dir: '/tmp/x', portBase: 20000, wecs: 7, wdss: 2 }).spaces.find((s) => s.name === 'wds2')!.apiserverPort, 20230,
    'more WECs do not move wds2');
  t.ok(Math.max(...all) <= 65535 - 65000 + 20000, 'the highest port base (65000) keeps every port under 65536');
});
