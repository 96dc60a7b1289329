// What charts/kubestellar-view grants and opens by default, rendered with the real helm: no
// non-expiring token Secret for the server's ITS identity unless asked; placement's ITS rights on
// CRDs and admission policies by name, exactly the objects serve writes there; NetworkPolicies
// only when asked, admitting to the server pods the WDS's kube-apiserver and the scrapers given,
// to the agents the scrapers only; the WEC's default executor writing no Endpoints or
// EndpointSlices, as kube's `edit` role since CVE-2021-25740. Rights are judged as RBAC judges a
// request (`kubectl auth can-i`), from the rules rendered.
import t, { type Test } from 'tap';
import { ITS_CRD_FILES, readCRD } from '../../src/controllers/install/controller-crds.js';
import { itsAdmissionObjects } from '../../src/controllers/install/its-admission.js';
import { one, refused, render, run, useHelm, type Obj } from '../fixtures/chart.js';

t.setTimeout(20 * 60_000);
await useHelm();

interface Rule { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[] }

/** Whether these rules allow the request, as RBAC decides it (a rule with no resourceNames matches every name). */
function allows(rules: Rule[], verb: string, group: string, resource: string, name = ''): boolean {
  const has = (list: string[] | undefined, x: string) => !!list && (list.includes(x) || list.includes('*'));
  return rules.some((r) => has(r.verbs, verb) && has(r.apiGroups, group) && has(r.resources, resource)
    && (!r.resourceNames?.length || (name !== '' && r.resourceNames.includes(name))));
}

const tokenSecrets = (objs: Obj[]) => objs.filter((o) => o.kind === 'Secret' && o.type === 'kubernetes.io/service-account-token');

t.test('the ITS part: no non-expiring token Secret for the server\'s ITS identity unless asked', async (t) => {
  const objs = render(['its-values.yaml']);
  t.same(tokenSecrets(objs), [], 'no kubernetes.io/service-account-token Secret by default');
  t.equal(one(objs, 'ServiceAccount', 'kubestellar-view-wds1').metadata.namespace, 'kubestellar-view', 'the ServiceAccount, for short-lived tokens (TokenRequest)');
  const legacy = tokenSecrets(render(['its-values.yaml'], ['its.serviceAccount.legacyTokenSecret=true']));
  t.same(legacy.map((s) => [s.metadata.name, s.metadata.annotations?.['kubernetes.io/service-account.name']]), [['kubestellar-view-wds1-token', 'kubestellar-view-wds1']],
    'asked for: one token Secret, of that ServiceAccount');
  t.same(tokenSecrets(render(['its-values.yaml'], ['its.serviceAccount.legacyTokenSecret=true', 'its.subjects[0].kind=User',
    'its.subjects[0].apiGroup=rbac.authorization.k8s.io', 'its.subjects[0].name=ksview-its'])), [], 'none for an identity of the user\'s own');
  t.match(refused(['its.serviceAccount.legacyTokenSecret=yes'], ['its-values.yaml']), /at '\/its\/serviceAccount\/legacyTokenSecret'/);
});

t.test('placement-its: CRDs and admission policies read and updated by name, only those serve installs in the ITS', async (t) => {
  const rules = one(render(['its-values.yaml']), 'ClusterRole', 'kubestellar-view:placement-its').rules as Rule[];
  const crds = ITS_CRD_FILES.map((f) => readCRD(f).metadata.name);
  const admission = [...new Set(itsAdmissionObjects().map((o) => o.metadata.name))];
  t.ok(crds.length >= 2 && admission.length >= 1);
  const ext = 'apiextensions.k8s.io';
  const adm = 'admissionregistration.k8s.io';
  for (const name of crds) {
    for (const verb of ['get', 'update']) t.ok(allows(rules, verb, ext, 'customresourcedefinitions', name), `${verb} CRD ${name}`);
  }
  for (const name of ['widgets.example.com', 'bindingpolicies.control.kubestellar.io', 'clusterroles.rbac.authorization.k8s.io']) {
    for (const verb of ['get', 'update', 'patch', 'delete']) t.notOk(allows(rules, verb, ext, 'customresourcedefinitions', name), `no ${verb} of CRD ${name}`);
  }
  for (const resource of ['validatingadmissionpolicies', 'validatingadmissionpolicybindings']) {
    for (const name of admission) t.ok(allows(rules, 'update', adm, resource, name), `update ${resource} ${name}`);
    for (const verb of ['get', 'update', 'patch', 'delete']) t.notOk(allows(rules, verb, adm, resource, 'someone-elses'), `no ${verb} of another ${resource}`);
  }
  t.notOk(rules.some((r) => r.verbs.includes('list') && (r.resources ?? []).some((x) => ['customresourcedefinitions', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings'].includes(x))),
    'no list or watch of CRDs or admission policies');
  // Serve creates them with a POST to the collection, which names no object: the only unnamed right.
  const unnamed = rules.filter((r) => !r.resourceNames?.length && (r.apiGroups ?? []).some((g) => g === ext || g === adm));
  t.same(unnamed.map((r) => r.verbs), unnamed.map(() => ['create']), 'create only, on CRDs and admission policies, without a name');
  t.notOk(rules.some((r) => r.verbs.includes('*') || (r.resources ?? []).includes('*') || (r.apiGroups ?? []).includes('*')), 'no wildcard');
});

const SCRAPERS = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }];
const API_SERVERS = [{ ipBlock: { cidr: '192.0.2.10/32' } }, { ipBlock: { cidr: '2001:db8::/64', except: ['2001:db8::1/128'] } }];
const HTTPS = [{ port: 'https', protocol: 'TCP' }];
const netpol = (extra: Record<string, unknown> = {}) => ['--set-json', `networkPolicy=${JSON.stringify({ enabled: true, ...extra })}`];
const policies = (objs: Obj[]) => objs.filter((o) => o.kind === 'NetworkPolicy');

/** The Deployment's pods selected by the policy, and the port its rules name served by them. */
function selects(t: Test, policy: Obj, d: Obj): void {
  const labels = d.spec.template.metadata.labels as Record<string, string>;
  for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels as Record<string, string>)) t.equal(labels[k], v, `${policy.metadata.name} selects ${d.metadata.name}: ${k}`);
  t.same(Object.keys(policy.spec.podSelector), ['matchLabels']);
  t.ok(d.spec.template.spec.containers[0].ports.some((p: any) => p.name === 'https'), 'the port named https is the pods\'');
  t.same(policy.spec.policyTypes, ['Ingress'], 'ingress only: the pods dial their clusters wherever they are');
  for (const rule of policy.spec.ingress) t.ok(rule.from?.length, 'no rule admits every source');
}

t.test('networkPolicy: none by default; asked for, the server admits the WDS\'s kube-apiserver and the scrapers, the agents only the scrapers', async (t) => {
  for (const f of ['server-values.yaml', 'server-placement-values.yaml', 'agent-pull-values.yaml', 'agent-push-values.yaml', 'its-values.yaml', 'wds-values.yaml']) {
    t.same(policies(render([f])), [], `${f}: no NetworkPolicy by default`);
  }
  const server = render(['server-values.yaml'], [], 'kubestellar-view', netpol({ apiServers: API_SERVERS, scrapers: SCRAPERS }));
  const sp = one(server, 'NetworkPolicy');
  selects(t, sp, one(server, 'Deployment'));
  t.same(sp.spec.ingress, [{ from: API_SERVERS, ports: HTTPS }, { from: SCRAPERS, ports: HTTPS }], 'the WDS\'s kube-apiserver, then the scrapers; nobody else');
  t.same(one(render(['server-values.yaml'], [], 'kubestellar-view', netpol({ apiServers: API_SERVERS })), 'NetworkPolicy').spec.ingress,
    [{ from: API_SERVERS, ports: HTTPS }], 'no scrapers: the WDS\'s kube-apiserver only');
  const closed = run(['template', 'x', '.', '-f', 'ci/server-values.yaml', ...netpol()]);
  t.not(closed.status, 0, 'the server part refuses a policy that would leave the WDS no way in');
  t.match(closed.stderr, /at '\/networkPolicy(\/apiServers)?'/, 'naming the value');

  for (const [file, name] of [['agent-pull-values.yaml', 'ksview-agent'], ['agent-push-values.yaml', 'ksview-agent-push']] as const) {
    const objs = render([file], [], 'ksview-agent', netpol({ scrapers: SCRAPERS }));
    const ap = one(objs, 'NetworkPolicy', name);
    t.equal(policies(objs).length, 1, `${file}: one policy, the agent's`);
    selects(t, ap, one(objs, 'Deployment', name));
    t.same(ap.spec.ingress, [{ from: SCRAPERS, ports: HTTPS }], `${name}: the scrapers only`);
    t.same(one(render([file], [], 'ksview-agent', netpol()), 'NetworkPolicy', name).spec.ingress, [], `${name}, no scrapers: no connection admitted`);
    const lint = run(['lint', '--strict', '.', '-f', `ci/${file}`, ...netpol({ scrapers: SCRAPERS })]);
    t.equal(lint.status, 0, lint.stdout + lint.stderr);
    t.notMatch(lint.stdout, /\[(WARNING|ERROR)\]/);
  }
  const lint = run(['lint', '--strict', '.', '-f', 'ci/server-values.yaml', ...netpol({ apiServers: API_SERVERS, scrapers: SCRAPERS })]);
  t.equal(lint.status, 0, lint.stdout + lint.stderr);
  t.notMatch(lint.stdout, /\[(WARNING|ERROR)\]/);

  // Peers are NetworkPolicyPeers and nothing else: kube's own shape, no field a value could add.
  const bad: [string, unknown][] = [
    ['an empty peer (kube refuses it)', [{}]],
    ['an ipBlock with a selector (kube refuses it)', [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }]],
    ['a CIDR that is not one', [{ ipBlock: { cidr: '10.0.0.0/8\nhostNetwork: true' } }]],
    ['an unknown field', [{ ports: [{ port: 22 }] }]],
  ];
  for (const [what, peers] of bad) {
    const r = run(['template', 'x', '.', '-f', 'ci/agent-pull-values.yaml', ...netpol({ scrapers: peers })]);
    t.match(r.stderr, /at '\/networkPolicy\/scrapers\/0/, `${what}: refused, naming the value`);
  }
});

t.test('the WEC\'s default executor writes no Endpoints or EndpointSlices, as kube\'s edit role (CVE-2021-25740)', async (t) => {
  const rules = one(render(['agent-pull-values.yaml'], [], 'ksview-agent'), 'ClusterRole', 'kubestellar-view:default-executor').rules as Rule[];
  for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection']) {
    t.notOk(allows(rules, verb, '', 'endpoints', 'web'), `no ${verb} of endpoints`);
    t.notOk(allows(rules, verb, 'discovery.k8s.io', 'endpointslices', 'web-abc'), `no ${verb} of endpointslices`);
  }
  // Still the workload it delivers: a Service, and what its controllers turn into endpoints.
  for (const [group, resource] of [['', 'services'], ['', 'pods'], ['apps', 'deployments']] as const) t.ok(allows(rules, 'patch', group, resource, 'web'), `patch ${resource}`);
});
