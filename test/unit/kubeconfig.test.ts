import t from 'tap';
import YAML from 'yaml';
import { renderKubeconfig } from '../../src/spaces/kubeconfig.js';

t.test('one context per space, credentials embedded', async (t) => {
  const text = renderKubeconfig([
    { name: 'wds1', server: 'https://127.0.0.1:1', caPem: 'CA1', certPem: 'C1', keyPem: 'K1' },
    { name: 'wec1', server: 'https://127.0.0.1:2', caPem: 'CA2', certPem: 'C2', keyPem: 'K2' },
  ]);
  const kc = YAML.parse(text);
  t.equal(kc['current-context'], 'wds1');
  t.same(kc.contexts.map((c: { name: string }) => c.name), ['wds1', 'wec1']);
  t.same(kc.contexts[1].context, { cluster: 'wec1', user: 'wec1-admin' });
  t.equal(kc.clusters[1].cluster.server, 'https://127.0.0.1:2');
  t.equal(Buffer.from(kc.clusters[1].cluster['certificate-authority-data'], 'base64').toString(), 'CA2');
  t.equal(Buffer.from(kc.users[0].user['client-key-data'], 'base64').toString(), 'K1');
});
