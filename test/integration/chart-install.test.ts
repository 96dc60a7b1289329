// charts/kubestellar-view installed with the real helm into a real kube-apiserver, as an operator
// would (wec1 of the test spaces stands in for each cluster: kube-controller-manager with every
// controller, and kwok nodes that report the pods Running, so no image is needed here; the real
// containers are the end-to-end test's): the server part in a namespace enforcing Pod Security
// `restricted` (its pods admitted, a tampered pod refused), the helm-made certificate kept by
// `helm upgrade` (lookup) without rolling the pods, a wrong value refused by `helm upgrade` naming
// it; the WDS part's RBAC granting the server's ServiceAccount exactly the registration rights (a
// short-lived token of it: no non-expiring token Secret by default); the pull agent part admitted under `restricted`, the
// executors' policy it renders keeping the default executor out of its namespace.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { ensureHelm } from '../../src/spaces/helm.js';
import { stderrProgress } from '../../src/util/progress.js';
import { repoRoot } from '../../src/util/repo-root.js';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil, type TapLike } from '../fixtures/spaces.js';

const CHART = path.join(repoRoot(), 'charts', 'kubestellar-view');
const SPACE = 'wec1';
const helmBin = await ensureHelm(undefined, stderrProgress());

function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(helmBin, ['--kubeconfig', kubeconfig, '--kube-context', SPACE, ...args], { encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}
function helmOk(args: string[]): string {
  const r = helm(args);
  if (r.status !== 0) throw new Error(`helm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const json = (space: string, args: string[]) => JSON.parse(kcOk(space, [...args, '-o', 'json'])) as any;

/** A namespace of the test's own that enforces Pod Security `restricted`, as the README asks. */
function restrictedNamespace(t: TapLike): string {
  const ns = testNamespace(t, [SPACE], 'chart');
  kcOk(SPACE, ['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/enforce-version=latest']);
  return ns;
}

t.test('server part: pods admitted under restricted, the certificate kept by helm upgrade, a wrong value refused', async (t) => {
  const ns = restrictedNamespace(t);
  const release = uniqueName('ksview');
  kcOk(SPACE, ['-n', ns, 'create', 'secret', 'generic', 'wds-kubeconfig', '--from-literal=kubeconfig=unused: the pods run on kwok']);
  helmOk(['install', release, CHART, '-n', ns, '--set', 'wds.kubeconfigSecret=wds-kubeconfig']);
  t.teardown(() => { helm(['uninstall', release, '-n', ns, '--wait=false']); });
  const deploy = `${release}-kubestellar-view`;
  await waitUntil('2 server pods ready (kwok)', () => json(SPACE, ['-n', ns, 'get', 'deployment', deploy]).status?.readyReplicas === 2, 90_000);
  const events = kc(SPACE, ['-n', ns, 'get', 'events', '--field-selector', 'reason=FailedCreate', '-o', 'name']).stdout.trim();
  t.equal(events, '', 'no pod refused by Pod Security');

  // The namespace really enforces: the chart's pod spec is admitted, the same with privilege escalation is not.
  const d = json(SPACE, ['-n', ns, 'get', 'deployment', deploy]);
  const pod = (spec: object) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'psa-check' }, spec });
  t.equal(kc(SPACE, ['-n', ns, 'create', '--dry-run=server', '-f', '-'], pod(d.spec.template.spec)).status, 0, 'the chart\'s pod: admitted');
  const tampered = structuredClone(d.spec.template.spec);
  tampered.containers[0].securityContext.allowPrivilegeEscalation = true;
  const refused = kc(SPACE, ['-n', ns, 'create', '--dry-run=server', '-f', '-'], pod(tampered));
  t.not(refused.status, 0);
  t.match(refused.stderr, /violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);

  // helm upgrade finds the Secret it made (lookup) and keeps it: same CA in the WDS, pods not rolled by it.
  const secret = `${deploy}-serving-cert`;
  const ca = json(SPACE, ['-n', ns, 'get', 'secret', secret]).data['ca.crt'];
  const checksum = d.spec.template.metadata.annotations['checksum/serving-cert'];
  helmOk(['upgrade', release, CHART, '-n', ns, '--reuse-values', '--set', 'server.podAnnotations.upgraded=yes']);
  t.equal(json(SPACE, ['-n', ns, 'get', 'secret', secret]).data['ca.crt'], ca, 'the CA is kept');
  const after = json(SPACE, ['-n', ns, 'get', 'deployment', deploy]).spec.template.metadata.annotations;
  t.equal(after['checksum/serving-cert'], checksum, 'the certificate\'s checksum is unchanged');
  t.equal(after.upgraded, 'yes', 'the upgrade itself was applied');

  const bad = helm(['upgrade', release, CHART, '-n', ns, '--reuse-values', '--set', 'replicas=two']);
  t.not(bad.status, 0);
  t.match(bad.stderr, /at '\/replicas': got string, want integer/);
  t.equal(json(SPACE, ['-n', ns, 'get', 'deployment', deploy]).spec.replicas, 2, 'nothing changed');
});

t.test('wds part: the server\'s ServiceAccount may register the view and nothing it should not; placement adds its reads', async (t) => {
  // wec1 plays the WDS here (wds1 already holds the objects the spaces' own server registered).
  const created = kc(SPACE, ['create', 'namespace', 'kubestellar-view']).status === 0;
  const release = uniqueName('ksview-wds');
  // First without placement's rights (wds.placement=false): the view and its registration alone.
  helmOk(['install', release, CHART, '-n', 'kubestellar-view', '--set', 'server.enabled=false', '--set', 'wds.enabled=true', '--set', 'wds.placement=false']);
  t.teardown(() => {
    helm(['uninstall', release, '-n', 'kubestellar-view']);
    if (created) kc(SPACE, ['delete', 'namespace', 'kubestellar-view', '--wait=false']);
  });
  await waitUntil('the ServiceAccount ksview', () => kc(SPACE, ['-n', 'kubestellar-view', 'get', 'serviceaccount', 'ksview']).status === 0);
  t.equal(kc(SPACE, ['-n', 'kubestellar-view', 'get', 'secret', 'ksview-token']).status, 1, 'no non-expiring token Secret by default');
  // A short-lived token (TokenRequest), as the README says: renewed before it expires.
  const token = kcOk(SPACE, ['-n', 'kubestellar-view', 'create', 'token', 'ksview', '--duration', '1h']).trim();
  // The kubeconfig an operator builds from that token (README), used as the server would.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-chart-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const admin = YAML.parse(kcOk(SPACE, ['config', 'view', '--minify', '--raw'])) as any;
  const file = path.join(dir, 'wds.kubeconfig');
  writeFileSync(file, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'wds',
    clusters: [{ name: 'wds', cluster: admin.clusters[0].cluster }],
    users: [{ name: 'ksview', user: { token } }],
    contexts: [{ name: 'wds', context: { cluster: 'wds', user: 'ksview' } }],
  } as Record<string, unknown>), { mode: 0o600 });
  const can = (...args: string[]) => spawnSync('kubectl', ['--kubeconfig', file, 'auth', 'can-i', ...args], { encoding: 'utf8' }).stdout.trim();
  t.match(spawnSync('kubectl', ['--kubeconfig', file, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { encoding: 'utf8' }).stdout,
    'system:serviceaccount:kubestellar-view:ksview');
  const allowed: string[][] = [
    ['create', 'apiservices.apiregistration.k8s.io/v1alpha1.view.kubestellar.io'],
    ['patch', 'apiservices.apiregistration.k8s.io/v1alpha1.view.kubestellar.io'],
    ['patch', 'validatingwebhookconfigurations/kubestellar-view-denatured'],
    ['patch', 'services/ksview', '-n', 'kubestellar-view'],
    ['patch', 'endpointslices.discovery.k8s.io/ksview-ipv4', '-n', 'kubestellar-view'],
    ['update', 'leases/kubestellar-view-placement-wds1', '-n', 'kubestellar-view'],
    ['create', 'leases', '-n', 'kubestellar-view'],
    ['impersonate', 'users'],
    ['create', 'tokenreviews.authentication.k8s.io'],
    ['list', 'clusterrolebindings'],
  ];
  const denied: string[][] = [
    ['patch', 'apiservices.apiregistration.k8s.io/v1.apps'],
    ['create', 'apiservices.apiregistration.k8s.io/v1.apps'],
    ['update', 'leases/someone-elses', '-n', 'kubestellar-view'],
    ['patch', 'validatingwebhookconfigurations/someone-elses'],
    ['create', 'services', '-n', 'default'],
    ['create', 'services/other', '-n', 'kubestellar-view'],
    ['create', 'endpointslices.discovery.k8s.io', '-n', 'default'],
    ['get', 'secrets', '-n', 'kubestellar-view'],
    ['create', 'clusterrolebindings'],
    ['bind', 'clusterroles'],
    ['list', 'pods', '-A'],
  ];
  for (const a of allowed) t.equal(can(...a), 'yes', a.join(' '));
  for (const a of denied) t.equal(can(...a), 'no', a.join(' '));

  // Placement reads every resource and patches any (returned status; files/wds/placement-rbac.yaml),
  // and still writes no RBAC.
  helmOk(['upgrade', release, CHART, '-n', 'kubestellar-view', '--reuse-values', '--set', 'wds.placement=true']);
  await waitUntil('placement\'s rights bound', () => can('list', 'pods', '-A') === 'yes');
  for (const a of [['patch', 'bindingpolicies.control.kubestellar.io/status'], ['create', 'events', '-n', 'default']]) t.equal(can(...a), 'yes', a.join(' '));
  for (const a of [['create', 'clusterrolebindings'], ['bind', 'clusterroles'], ['escalate', 'clusterroles'], ['delete', 'pods', '-A'], ['create', 'secrets', '-A']]) {
    t.equal(can(...a), 'no', `with placement, still not: ${a.join(' ')}`);
  }
});

t.test('agent.pull part: the agent\'s pod admitted under restricted, with its shipped RBAC', async (t) => {
  const ns = restrictedNamespace(t);
  const release = uniqueName('ksview-agent');
  kcOk(SPACE, ['-n', ns, 'create', 'secret', 'generic', 'ksview-agent-its-kubeconfig', '--from-literal=kubeconfig=unused: the pod runs on kwok']);
  // The spaces applied the WEC executors to wec1 already: not this release's to own.
  helmOk(['install', release, CHART, '-n', ns, '--set', 'server.enabled=false', '--set', 'agent.pull.enabled=true',
    '--set', 'agent.pull.cluster=wec1', '--set', 'agent.pull.executors.create=false']);
  t.teardown(() => { helm(['uninstall', release, '-n', ns, '--wait=false']); });
  await waitUntil('the agent pod ready (kwok)', () => json(SPACE, ['-n', ns, 'get', 'deployment', 'ksview-agent']).status?.readyReplicas === 1, 90_000);
  const sa = `system:serviceaccount:${ns}:ksview-agent`;
  t.equal(kc(SPACE, ['auth', 'can-i', 'impersonate', 'serviceaccounts', '--as', sa]).stdout.trim(), 'yes', 'executors');
  t.equal(kc(SPACE, ['auth', 'can-i', 'impersonate', 'users', '--as', sa]).stdout.trim(), 'no', 'no other impersonation');

  // The executors' policy as this release renders it (renamed: wec1 holds the spaces' own) keeps the
  // default executor (bound cluster-wide in the spaces) out of this namespace, where the agent's
  // ServiceAccount (cluster-admin of the WEC) and its ITS kubeconfig Secret live.
  const rendered = YAML.parseAllDocuments(helmOk(['template', release, CHART, '-n', ns, '--set', 'server.enabled=false', '--set', 'agent.pull.enabled=true',
    '--set', 'agent.pull.cluster=wec1'])).map((d) => d.toJSON() as any).filter((o) => o?.kind?.startsWith('ValidatingAdmissionPolicy'));
  t.equal(rendered.length, 2, 'the policy and its binding');
  const policyName = `${release}-executors`;
  for (const o of rendered) {
    o.metadata.name = policyName;
    if (o.spec.policyName) o.spec.policyName = policyName;
  }
  kcOk(SPACE, ['apply', '-f', '-'], rendered.map((o) => YAML.stringify(o)).join('---\n'));
  t.teardown(() => { kc(SPACE, ['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', policyName, '--ignore-not-found']); });
  const pod = YAML.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'steal', namespace: ns },
    spec: { serviceAccountName: 'ksview-agent', containers: [{ name: 'c', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } }] } });
  const steal = await waitUntil('the rendered policy in force', () => {
    const r = kc(SPACE, ['--as', 'system:serviceaccount:kubestellar-view-executors:default-executor', 'create', '--dry-run=server', '-f', '-'], pod);
    return r.status !== 0 ? r : undefined;
  }, 30_000, 500);
  t.match(steal.stderr, new RegExp(`the default executor may not write in namespace ${ns}`), 'a Pod as the agent\'s ServiceAccount is refused, in the policy\'s words');
});
