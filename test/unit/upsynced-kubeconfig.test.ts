// `ksview kubeconfig --view`'s per-cluster contexts (src/spaces/kubeconfig.ts): `<wds>-view-<wec>`
// for every WDS and WEC of the spaces, server = the view root + /clusters/<wec>, the user of
// `<wds>-view`, listed once.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { viewRoot } from '../../src/apiserver/groups/view-group.js';
import { renderKubeconfig, spaceKubeconfigEntries, viewClusterKubeconfigEntries, viewKubeconfigEntries } from '../../src/spaces/kubeconfig.js';
import { spacesLayout } from '../../src/spaces/layout.js';

t.test('a context per WDS and WEC, sharing the view\'s user', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-kc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const layout = spacesLayout({ dir, portBase: 16400, wecs: 2, wdss: 2 });
  for (const s of layout.spaces) {
    mkdirSync(path.join(s.dir, 'pki'), { recursive: true });
    for (const f of ['ca.crt', 'admin.crt', 'admin.key']) writeFileSync(path.join(s.dir, 'pki', f), `${s.name}-${f}`);
  }
  const clusters = viewClusterKubeconfigEntries(layout, viewRoot);
  t.same(clusters.map((e) => e.name), ['wds1-view-wec1', 'wds1-view-wec2', 'wds2-view-wec1', 'wds2-view-wec2']);
  const wds1 = layout.spaces.find((s) => s.name === 'wds1')!;
  t.equal(clusters[1]!.server, `https://127.0.0.1:${wds1.apiserverPort}/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy/clusters/wec2`);
  const kc = YAML.parse(renderKubeconfig([...spaceKubeconfigEntries(layout), ...viewKubeconfigEntries(layout, viewRoot), ...clusters], 'wds1-view'));
  const ctx = (name: string) => kc.contexts.find((c: { name: string }) => c.name === name).context;
  t.same(ctx('wds1-view-wec2'), { cluster: 'wds1-view-wec2', user: 'wds1-view-admin' });
  t.equal(ctx('wds1-view').user, 'wds1-view-admin');
  const names = kc.users.map((u: { name: string }) => u.name);
  t.equal(new Set(names).size, names.length, 'each user listed once');
  t.ok(names.includes('wds2-view-admin'));
  t.equal(Buffer.from(kc.users.find((u: { name: string }) => u.name === 'wds1-view-admin').user['client-key-data'], 'base64').toString(), 'wds1-admin.key');
});
