import t from 'tap';
import { layoutPorts, spaceNames, spacesLayout } from '../../src/spaces/layout.js';

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
