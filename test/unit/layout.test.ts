import t from 'tap';
import { layoutPorts, nodePorts, spaceNames, spacesLayout } from '../../src/spaces/layout.js';

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
