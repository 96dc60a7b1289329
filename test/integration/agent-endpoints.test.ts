// The running agents' endpoints guard what they list, as kubelet guards its own: over HTTPS, a
// request without a credential gets 401 (only /healthz, /livez and /readyz are open); a user the
// agent's cluster authenticates (a ServiceAccount token made with kubectl, a client certificate of
// that cluster's CA) gets 403 until bound to the shipped ClusterRoles of charts/kubestellar-view/files/agent/readers-rbac.yaml,
// then 200. The pull agent of wec1 asks wec1, the push agent asks its1; an identity of the other
// cluster is nobody. The shipped RBAC gives the agents' own identities what delegation needs.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import t from 'tap';
import YAML from 'yaml';
import { issueCert, type KeyPair } from '../../src/kube/pki.js';
import { readAgentEndpoint } from '../../src/spaces/agent-endpoints.js';
import { agentCommands } from '../../src/spaces/agents.js';
import { spacePkiFiles } from '../../src/spaces/space-pki.js';
import { chartFile } from '../../src/util/chart-files.js';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const [pullAgent, pushAgent] = agentCommands(layout);
const dirOf = (space: string) => layout.spaces.find((s) => s.name === space)!.dir;
const caOf = (space: string) => readFileSync(spacePkiFiles(dirOf(space)).caCert, 'utf8');
const caPairOf = (space: string): KeyPair => {
  const f = spacePkiFiles(dirOf(space));
  return { certPem: readFileSync(f.caCert, 'utf8'), keyPem: readFileSync(f.caKey, 'utf8') };
};

interface Answer { status: number; body: string }

/** GET over HTTPS, the agent's certificate verified with the CA of the space it delegates to. */
function get(agent: { port: number; delegate: { name: string } }, pathname: string, cred: { token?: string; cert?: KeyPair } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.get({
      host: '127.0.0.1', port: agent.port, path: pathname, ca: caOf(agent.delegate.name), timeout: 15_000,
      ...(cred.token ? { headers: { authorization: `Bearer ${cred.token}` } } : {}),
      ...(cred.cert ? { cert: cred.cert.certPem, key: cred.cert.keyPem } : {}),
    }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString('utf8'); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

type Manifest = { kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };
const manifests = (file: string): Manifest[] => YAML.parseAllDocuments(readFileSync(chartFile(file), 'utf8'))
  .map((d) => d.toJSON() as Manifest).filter((o) => o);

/** The shipped reader ClusterRoles, applied in `space` for this test. */
function readerRoles(t: Tap, space: string): void {
  kcOk(space, ['apply', '-f', '-'], manifests('agent/readers-rbac.yaml').map((o) => YAML.stringify(o)).join('---\n'));
  t.teardown(() => { kc(space, ['delete', 'clusterrole', 'ksview-agent:metrics-reader', 'ksview-agent:endpoints-reader', '--ignore-not-found']); });
}

function bind(t: Tap, space: string, role: string, subject: string[]): void {
  const name = uniqueName('endpoints-reader');
  kcOk(space, ['create', 'clusterrolebinding', name, `--clusterrole=${role}`, ...subject]);
  t.teardown(() => { kc(space, ['delete', 'clusterrolebinding', name, '--ignore-not-found']); });
}

type Tap = { teardown(fn: () => unknown): void };

const statusOf = (a: Answer) => JSON.parse(a.body) as { kind: string; reason: string; code: number; message: string };

t.test('without a credential: 401 on /metrics, /federatedresources and /clusters; /healthz and /readyz open', async (t) => {
  for (const [agent, paths] of [
    [pullAgent!, ['/metrics', '/federatedresources', '/federatedresources/notready', '/no-such-path']],
    [pushAgent!, ['/metrics', '/federatedresources', '/clusters']],
  ] as const) {
    for (const p of paths) {
      const a = await get(agent, p);
      t.equal(a.status, 401, `${agent.name} ${p}: 401`);
      t.match(statusOf(a), { kind: 'Status', reason: 'Unauthorized', code: 401 });
      t.notMatch(a.body, /wec\d|ksview_agent/, 'nothing of what it serves');
    }
    for (const p of ['/healthz', '/readyz']) t.equal((await get(agent, p)).status, 200, `${agent.name} ${p}: open`);
  }
});

t.test('pull agent: a wec1 ServiceAccount is 403 until bound to a reader ClusterRole, then 200 for what that role names', async (t) => {
  const ns = testNamespace(t, ['wec1'], 'ep');
  kcOk('wec1', ['-n', ns, 'create', 'serviceaccount', 'prom']);
  const token = kcOk('wec1', ['-n', ns, 'create', 'token', 'prom']).trim();
  const denied = await get(pullAgent!, '/metrics', { token });
  t.equal(denied.status, 403, 'authenticated, no right: 403');
  t.equal(statusOf(denied).message, `forbidden: User "system:serviceaccount:${ns}:prom" cannot get path "/metrics"`);
  t.notMatch(denied.body, /ksview_agent/);

  readerRoles(t, 'wec1');
  bind(t, 'wec1', 'ksview-agent:metrics-reader', [`--serviceaccount=${ns}:prom`]);
  // A denial is cached for 10 s, as Kubernetes' delegated authorizer does.
  const metrics = await waitUntil('the bound ServiceAccount reads /metrics', async () => {
    const a = await get(pullAgent!, '/metrics', { token });
    return a.status === 200 && a;
  }, 45_000, 1000);
  t.match(metrics.body, /ksview_agent_manifestworks/);
  const placed = await get(pullAgent!, '/federatedresources', { token });
  t.equal(placed.status, 403, 'the metrics reader does not see what was placed');

  bind(t, 'wec1', 'ksview-agent:endpoints-reader', [`--serviceaccount=${ns}:prom`]);
  const listed = await waitUntil('the endpoints reader reads /federatedresources', async () => {
    const a = await get(pullAgent!, '/federatedresources/notready', { token });
    return a.status === 200 && a;
  }, 45_000, 1000);
  t.ok(Array.isArray(JSON.parse(listed.body).items), 'a list of placed objects');
});

t.test('pull agent: a client certificate of wec1\'s CA is its CN and Os; one of its1\'s CA is nobody', async (t) => {
  const user = uniqueName('ep-user');
  const group = uniqueName('ep-group');
  const cert = await issueCert(caPairOf('wec1'), { commonName: user, organizations: [group], usages: ['client'] });
  const denied = await get(pullAgent!, '/federatedresources', { cert });
  t.equal(denied.status, 403);
  t.equal(statusOf(denied).message, `forbidden: User "${user}" cannot get path "/federatedresources"`);
  readerRoles(t, 'wec1');
  bind(t, 'wec1', 'ksview-agent:endpoints-reader', [`--group=${group}`]);
  const ok = await waitUntil('the group of the certificate reads /federatedresources', async () => {
    const a = await get(pullAgent!, '/federatedresources', { cert });
    return a.status === 200 && a;
  }, 45_000, 1000);
  t.ok(Array.isArray(JSON.parse(ok.body).items));

  const stranger = await issueCert(caPairOf('its1'), { commonName: user, organizations: [group, 'system:masters'], usages: ['client'] });
  t.equal((await get(pullAgent!, '/federatedresources', { cert: stranger })).status, 401, 'its1\'s CA is not wec1\'s: 401');
  const appended = { certPem: stranger.certPem + caOf('wec1'), keyPem: stranger.keyPem };
  t.equal((await get(pullAgent!, '/federatedresources', { cert: appended })).status, 401, 'wec1\'s CA appended to the chain changes nothing');

  const admin = await readAgentEndpoint(pullAgent!, '/federatedresources');
  t.equal(admin.status, 200, 'the spaces\' own reader (the demo): wec1\'s admin certificate');
});

t.test('push agent: an its1 ServiceAccount is 403 on /clusters until bound, then sees the clusters it serves; a wec1 token is nobody', async (t) => {
  const ns = testNamespace(t, ['its1', 'wec1'], 'ep');
  kcOk('its1', ['-n', ns, 'create', 'serviceaccount', 'viewer']);
  const token = kcOk('its1', ['-n', ns, 'create', 'token', 'viewer']).trim();
  t.equal((await get(pushAgent!, '/clusters', { token })).status, 403, 'its1 user without the right: 403');
  readerRoles(t, 'its1');
  bind(t, 'its1', 'ksview-agent:endpoints-reader', [`--serviceaccount=${ns}:viewer`]);
  const clusters = await waitUntil('the bound ServiceAccount reads /clusters', async () => {
    const a = await get(pushAgent!, '/clusters', { token });
    return a.status === 200 && a;
  }, 45_000, 1000);
  t.match(JSON.parse(clusters.body).items, [{ cluster: 'wec2' }], 'the clusters it serves');

  kcOk('wec1', ['-n', ns, 'create', 'serviceaccount', 'viewer']);
  const wecToken = kcOk('wec1', ['-n', ns, 'create', 'token', 'viewer']).trim();
  t.equal((await get(pushAgent!, '/clusters', { token: wecToken })).status, 401, 'a token of another cluster: 401');
});

t.test('the shipped RBAC gives each agent identity what delegation needs, and no other ConfigMap', async (t) => {
  for (const [space, file, sa] of [
    ['wec1', 'agent/pull-rbac.yaml', 'system:serviceaccount:ksview-agent:ksview-agent'],
    ['its1', 'agent/push-rbac.yaml', 'system:serviceaccount:ksview-agent:ksview-agent-push'],
  ] as const) {
    const delegation = manifests(file).filter((o) => /:auth-(delegator|reader)$/.test(o.metadata.name));
    t.equal(delegation.length, 2, `${file}: a ClusterRoleBinding and a RoleBinding`);
    kcOk(space, ['apply', '-f', '-'], delegation.map((o) => YAML.stringify(o)).join('---\n'));
    t.teardown(() => {
      for (const o of delegation) kc(space, ['delete', o.kind.toLowerCase(), o.metadata.name, ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []), '--ignore-not-found']);
    });
    const can = (args: string[]) => kc(space, ['auth', 'can-i', ...args, '--as', sa]).stdout.trim();
    t.equal(can(['create', 'tokenreviews.authentication.k8s.io']), 'yes', `${space}: TokenReview`);
    t.equal(can(['create', 'subjectaccessreviews.authorization.k8s.io']), 'yes', `${space}: SubjectAccessReview`);
    t.equal(can(['get', 'configmap/extension-apiserver-authentication', '-n', 'kube-system']), 'yes', `${space}: the published client CA`);
    t.equal(can(['get', 'configmap/kube-root-ca.crt', '-n', 'kube-system']), 'no', `${space}: no other ConfigMap`);
    t.equal(can(['create', 'selfsubjectreviews.authentication.k8s.io']), 'yes', 'sanity: can-i answers for this user');
  }
});
