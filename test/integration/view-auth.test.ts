// Who may do what through the view. kube-apiserver authorizes spaces/proxy on the outer path;
// ksview serve trusts X-Remote-* only behind kube-apiserver's front-proxy certificate, and acts
// on the WDS as the end user (impersonation), so the WDS's own RBAC decides — never more.
import t from 'tap';
import { issueCert } from '../../src/kube/pki.js';
import { kubectl } from '../../src/cli/kubectl.js';
import { kc, kcOk, layout, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { httpsJson, userKubeconfig, WDS1_VIEW_PATH as viewPath, wds1Pki as pki } from '../fixtures/wds1-clients.js';

const serveUrl = `https://127.0.0.1:${layout.viewServerPort}`;

t.test('the APIService is Available and kubectl lists the space', async (t) => {
  t.equal(kcOk('wds1', ['get', 'apiservice', 'v1alpha1.view.kubestellar.io', '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']), 'True');
  const table = kcOk('wds1', ['get', 'spaces.view.kubestellar.io']);
  t.match(table, /^NAME\s+TYPE\s+VIEW URL\s+AGE\nwds1\s+WDS\s+https:\/\/127\.0\.0\.1:\d+\/apis\/view\.kubestellar\.io\/v1alpha1\/spaces\/wds1\/proxy\s+\d+[smhd](\d+[smh])?\n$/);
  const space = JSON.parse(kcOk('wds1', ['get', 'spaces.view.kubestellar.io', 'wds1', '-o', 'json']));
  t.equal(space.kind, 'Space');
  t.equal(space.status.viewPath, viewPath);
  t.equal(kc('wds1', ['get', 'spaces.view.kubestellar.io', 'nope']).status, 1, 'an unknown space is NotFound');
});

t.test('alice, with RBAC only on namespace a, reads a and is forbidden b through the view', async (t) => {
  const a = uniqueName('a');
  const b = uniqueName('b');
  const alice = uniqueName('alice');
  for (const ns of [a, b]) {
    kcOk('wds1', ['create', 'namespace', ns]);
    kcOk('wds1', ['-n', ns, 'create', 'configmap', 'data', `--from-literal=ns=${ns}`]);
  }
  kcOk('wds1', ['-n', a, 'create', 'role', 'cm-reader', '--verb=get,list,watch', '--resource=configmaps']);
  kcOk('wds1', ['-n', a, 'create', 'rolebinding', 'alice-reads', '--role=cm-reader', `--user=${alice}`]);
  t.teardown(() => {
    kc('wds1', ['delete', 'namespace', a, b, '--wait=false']);
    kc('wds1', ['delete', 'clusterrolebinding', `${alice}-view`, '--ignore-not-found']);
  });
  const { file } = await userKubeconfig(t, alice);
  const asAlice = (args: string[]) => kubectl(file, ['--context', 'view', ...args]);

  const noProxy = asAlice(['-n', a, 'get', 'configmap', 'data']);
  t.not(noProxy.status, 0, 'without kubestellar-view:user, kube-apiserver refuses spaces/proxy');
  t.match(noProxy.stderr, /forbidden.*spaces\/proxy|cannot get resource "spaces\/proxy"/i);

  kcOk('wds1', ['create', 'clusterrolebinding', `${alice}-view`, '--clusterrole=kubestellar-view:user', `--user=${alice}`]);
  const ok = await waitUntil('alice reads a', () => {
    const r = asAlice(['-n', a, 'get', 'configmap', 'data', '-o', 'jsonpath={.data.ns}']);
    return r.status === 0 ? r.stdout : undefined;
  }, 30_000);
  t.equal(ok, a, 'alice reads a ConfigMap in a through the view');
  const denied = asAlice(['-n', b, 'get', 'configmap', 'data']);
  t.not(denied.status, 0);
  t.match(denied.stderr, new RegExp(`Forbidden.*User "${alice}" cannot get resource "configmaps".*namespace "${b}"`), 'the WDS refuses alice in b');
  const write = asAlice(['-n', a, 'create', 'configmap', 'more']);
  t.match(write.stderr, /forbidden: User "alice-[0-9a-f]+" cannot create resource "configmaps"/, 'and she cannot write where she may only read');
  const escalate = kubectl(file, ['--context', 'view', '--as', 'kubernetes-admin', '-n', b, 'get', 'configmap', 'data']);
  t.match(escalate.stderr, /Forbidden|cannot impersonate/, 'alice cannot borrow the admin through --as');
  const admin = kc('wds1-view', ['--as', alice, '-n', b, 'get', 'configmap', 'data']);
  t.match(admin.stderr, new RegExp(`User "${alice}" cannot get`), 'an admin acting --as alice through the view gets only alice\'s rights');
});

t.test('forged X-Remote-* headers without the front-proxy certificate get 401', async (t) => {
  const forged = { 'X-Remote-User': 'kubernetes-admin', 'X-Remote-Group': 'system:masters' };
  const noCert = await httpsJson(`${serveUrl}${viewPath}/api/v1/namespaces/default/configmaps`, { headers: forged });
  t.equal(noCert.status, 401);
  t.same(noCert.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  const spaces = await httpsJson(`${serveUrl}/apis/view.kubestellar.io/v1alpha1/spaces`, { headers: forged });
  t.equal(spaces.status, 401, 'also on the server\'s own resources');

  // A valid client certificate of the client CA is a user, not a front proxy: headers are ignored.
  const { cert, key } = await userKubeconfig(t, uniqueName('mallory'));
  const asMallory = await httpsJson(`${serveUrl}${viewPath}/api/v1/namespaces/default/configmaps`, { headers: forged, cert, key });
  t.equal(asMallory.status, 403, 'mallory with a client cert and forged headers is still mallory');
  t.match(asMallory.body.message, /User "mallory-[0-9a-f]+" cannot list/);
  // A certificate from another CA proves nothing.
  const stranger = await issueCert({ certPem: pki('front-proxy-ca.crt'), keyPem: pki('front-proxy-ca.key') }, { commonName: 'not-the-proxy', usages: ['client'] });
  const wrongCN = await httpsJson(`${serveUrl}${viewPath}/api/v1/namespaces/default/configmaps`, { headers: forged, cert: stranger.certPem, key: stranger.keyPem });
  t.equal(wrongCN.status, 401, 'a front-proxy-CA cert with a CN that is not allowed asserts nothing');
});

t.test('bearer tokens are checked with TokenReview', async (t) => {
  const sa = uniqueName('robot');
  kcOk('wds1', ['-n', 'default', 'create', 'serviceaccount', sa]);
  kcOk('wds1', ['create', 'clusterrolebinding', `${sa}-view`, '--clusterrole=kubestellar-view:user', `--serviceaccount=default:${sa}`]);
  t.teardown(() => {
    kc('wds1', ['-n', 'default', 'delete', 'serviceaccount', sa]);
    kc('wds1', ['delete', 'clusterrolebinding', `${sa}-view`]);
  });
  const token = kcOk('wds1', ['-n', 'default', 'create', 'token', sa]).trim();
  const listed = await waitUntil('the token lists spaces', async () => {
    const r = await httpsJson(`${serveUrl}/apis/view.kubestellar.io/v1alpha1/spaces`, { headers: { authorization: `Bearer ${token}` } });
    return r.status === 200 ? r.body : undefined;
  }, 30_000);
  t.same(listed.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['wds1']);
  const cms = await httpsJson(`${serveUrl}${viewPath}/api/v1/namespaces/default/configmaps`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(cms.status, 403, 'the service account reaches the WDS as itself (extras impersonated too) and has no configmap rights');
  t.match(cms.body.message, new RegExp(`system:serviceaccount:default:${sa}`));
  const bad = await httpsJson(`${serveUrl}/apis/view.kubestellar.io/v1alpha1/spaces`, { headers: { authorization: 'Bearer not-a-token' } });
  t.equal(bad.status, 401);
});
