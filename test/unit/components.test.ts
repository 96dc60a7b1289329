import t from 'tap';
import { apiserverArgs, controllerManagerArgs, etcdArgs } from '../../src/spaces/components.js';
import { spacesLayout } from '../../src/spaces/layout.js';
import { admissionPlugins } from '../../src/spaces/admission-config.js';
import { webhookKubeconfig } from '../../src/spaces/webhook-client.js';

const layout = spacesLayout({ dir: '/state', portBase: 30000, wecs: 1 });
const space = (name: string) => layout.spaces.find((s) => s.name === name)!;
const flag = (args: string[], name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=').slice(1).join('=');

t.test('each kube-apiserver has its own etcd prefix and port, on loopback', async (t) => {
  const wds = apiserverArgs(layout, space('wds1'));
  const wec = apiserverArgs(layout, space('wec1'));
  t.equal(flag(wds, 'etcd-prefix'), '/ksview/wds1');
  t.equal(flag(wec, 'etcd-prefix'), '/ksview/wec1');
  t.equal(flag(wds, 'etcd-servers'), 'https://127.0.0.1:30000');
  t.equal(flag(wds, 'bind-address'), '127.0.0.1');
  t.equal(flag(wds, 'advertise-address'), '127.0.0.1');
  t.equal(flag(wds, 'endpoint-reconciler-type'), 'none');
  t.equal(flag(wds, 'authorization-mode'), 'RBAC');
  t.not(flag(wds, 'secure-port'), flag(wec, 'secure-port'));
});

t.test('the aggregation layer is configured: front-proxy CA, allowed name, client cert', async (t) => {
  const args = apiserverArgs(layout, space('wds1'));
  t.equal(flag(args, 'requestheader-client-ca-file'), '/state/wds1/pki/front-proxy-ca.crt');
  t.equal(flag(args, 'requestheader-allowed-names'), 'front-proxy-client');
  t.equal(flag(args, 'requestheader-username-headers'), 'X-Remote-User');
  t.equal(flag(args, 'proxy-client-cert-file'), '/state/wds1/pki/front-proxy-client.crt');
  t.notOk(flag(args, 'enable-aggregator-routing'), 'aggregator routing stays off (ExternalName services work)');
});

t.test('WDS and ITS run only the namespace and garbage-collector controllers (a WDS also ClusterRole aggregation, as in a WEC; an ITS ResourceQuotas, for its mailboxes); WECs run all', async (t) => {
  t.equal(flag(controllerManagerArgs(space('wds1'), 'k'), 'controllers'), 'namespace-controller,garbage-collector-controller,clusterrole-aggregation-controller',
    'admin, edit and view hold in the WDS the rules they hold in a WEC');
  t.equal(flag(controllerManagerArgs(space('its1'), 'k'), 'controllers'), 'namespace-controller,garbage-collector-controller,resourcequota-controller');
  const wec = controllerManagerArgs(space('wec1'), 'k');
  t.equal(flag(wec, 'controllers'), '*');
  t.equal(flag(wec, 'service-account-private-key-file'), '/state/wec1/pki/sa.key');
});

t.test('etcd listens on loopback only, TLS on both URLs, and asks every client for a certificate of its CA', async (t) => {
  const args = etcdArgs(layout);
  t.equal(flag(args, 'listen-client-urls'), 'https://127.0.0.1:30000');
  t.equal(flag(args, 'advertise-client-urls'), 'https://127.0.0.1:30000');
  t.equal(flag(args, 'listen-peer-urls'), 'https://127.0.0.1:30001');
  t.equal(flag(args, 'data-dir'), '/state/etcd');
  t.equal(flag(args, 'client-cert-auth'), 'true');
  t.equal(flag(args, 'trusted-ca-file'), '/state/etcd-pki/ca.crt');
  t.equal(flag(args, 'cert-file'), '/state/etcd-pki/server.crt');
  t.equal(flag(args, 'peer-client-cert-auth'), 'true');
  t.equal(flag(args, 'peer-trusted-ca-file'), '/state/etcd-pki/ca.crt');
  t.notOk(args.some((a) => a.includes('http://')), 'no plain-HTTP URL');
});

t.test('every kube-apiserver reaches etcd over TLS with its client certificate', async (t) => {
  for (const s of layout.spaces) {
    const args = apiserverArgs(layout, s);
    t.equal(flag(args, 'etcd-cafile'), '/state/etcd-pki/ca.crt', s.name);
    t.equal(flag(args, 'etcd-certfile'), '/state/etcd-pki/apiserver-etcd-client.crt', s.name);
    t.equal(flag(args, 'etcd-keyfile'), '/state/etcd-pki/apiserver-etcd-client.key', s.name);
  }
});

t.test('a WDS presents its front-proxy client certificate to the view\'s admission webhooks', async (t) => {
  const wdsFile = flag(apiserverArgs(layout, space('wds1')), 'admission-control-config-file');
  t.equal(wdsFile, '/state/wds1/admission/admission-config.yaml');
  t.notOk(flag(apiserverArgs(layout, space('its1')), 'admission-control-config-file'), 'only WDSs call the view\'s webhooks');
  const plugins = admissionPlugins(layout, space('wds1')) as Array<{ name: string; configuration: { kind: string; kubeConfigFile: string } }>;
  t.strictSame(plugins.map((p) => [p.name, p.configuration.kind, p.configuration.kubeConfigFile]), [
    ['ValidatingAdmissionWebhook', 'WebhookAdmissionConfiguration', '/state/wds1/admission/webhook-kubeconfig.yaml'],
    ['MutatingAdmissionWebhook', 'WebhookAdmissionConfiguration', '/state/wds1/admission/webhook-kubeconfig.yaml'],
  ]);
  // kube-apiserver looks the user up by <service>.<namespace>.svc:<port> (and without :443).
  const users = (port: number) => (webhookKubeconfig(port, 'fp.crt', 'fp.key') as { users: Array<{ name: string; user: object }> }).users;
  t.strictSame(users(30005), [{ name: 'ksview.kubestellar-view.svc:30005', user: { 'client-certificate': 'fp.crt', 'client-key': 'fp.key' } }]);
  t.strictSame(users(443).map((u) => u.name), ['ksview.kubestellar-view.svc:443', 'ksview.kubestellar-view.svc']);
});
