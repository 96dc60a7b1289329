// What a restricted user reads of the virtual Bindings and CombinedStatuses (docs/security.md D3),
// on the test spaces with real RBAC, kubectl and the aggregator: alice, with kubestellar-view:user
// and the right to read one namespace, sees in a Binding only that namespace's objects (in its
// workload and its destinations' counts) and only that namespace's CombinedStatuses — through the
// view (control.kubestellar.io) and directly (view.kubestellar.io), listed, got and watched — and
// no Secret data from a collector that selects `obj.data`; an admin still sees everything.
import t from 'tap';
import YAML from 'yaml';
import { kubectl } from '../../src/cli/kubectl.js';
import { bindingPolicy, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { userKubeconfig } from '../fixtures/wds1-clients.js';

const WAIT = 180_000;

const json = (out: string) => JSON.parse(out) as Obj;
const nameOf = (cs: Obj) => `${cs.metadata.labels['status.kubestellar.io/namespace'] || '-'}/${cs.metadata.labels['status.kubestellar.io/name']}`;

t.test('a restricted user sees only their namespace\'s Binding entries and CombinedStatuses, and no Secret data; an admin sees all', async (t) => {
  const run = uniqueName('rr');
  const mine = testNamespace(t, ['wds1'], 'rr-mine');
  const theirs = testNamespace(t, ['wds1'], 'rr-theirs');
  const password = `hunter2-${run}`;
  const encoded = Buffer.from(password).toString('base64');
  for (const ns of [mine, theirs]) kcOk('wds1', ['label', 'namespace', ns, `app=${run}`]);
  kcOk('wds1', ['apply', '-f', '-'], [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: mine, labels: { app: run } }, data: { color: 'blue' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: theirs, labels: { app: run } }, data: { password: encoded } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: theirs, labels: { app: run } }, data: { color: 'red' } },
  ].map((o) => YAML.stringify(o)).join('---\n'));
  const collector = `${run}-data`;
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: collector }, spec: { select: [{ name: 'data', def: 'obj.data' }], limit: 20 } }));
  t.teardown(() => { kc('wds1', ['delete', 'statuscollector', collector, '--ignore-not-found', '--wait=false']); });
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: run } }], statusCollectors: [collector] }] });

  const alice = uniqueName('alice');
  kcOk('wds1', ['create', 'clusterrolebinding', `${alice}-view`, '--clusterrole=kubestellar-view:user', `--user=${alice}`]);
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebinding', `${alice}-view`, '--ignore-not-found']); });
  kcOk('wds1', ['-n', mine, 'create', 'role', 'reader', '--verb=get,list,watch', '--resource=configmaps,secrets']);
  kcOk('wds1', ['-n', mine, 'create', 'rolebinding', 'alice-reads', '--role=reader', `--user=${alice}`]);
  const { file } = await userKubeconfig(t, alice);
  const asAlice = (args: string[]) => kubectl(file, args);

  // The admin sees all three objects' CombinedStatuses, the Secret's data among them, once both WECs reported.
  const selector = `status.kubestellar.io/binding-policy=${run}`;
  const adminAll = await waitUntil('every CombinedStatus with both WECs\' rows', () => {
    const items = json(kcOk('wds1', ['get', 'combinedstatuses.view.kubestellar.io', '-A', '-l', selector, '-o', 'json'])).items as Obj[];
    const byName = new Map(items.map((cs) => [nameOf(cs), cs]));
    const rows = (n: string) => byName.get(n)?.results?.[0]?.rows?.length ?? 0;
    return rows(`${mine}/settings`) === 2 && rows(`${theirs}/token`) === 2 && rows(`${theirs}/other`) === 2 ? items : undefined;
  }, WAIT, 500);
  t.ok(JSON.stringify(adminAll).includes(encoded), 'the admin: the Secret\'s data, as a collector selecting obj.data returns it');
  t.same(adminAll.map(nameOf).filter((n) => !n.startsWith('-/')).sort(), [`${mine}/settings`, `${theirs}/other`, `${theirs}/token`].sort());

  // alice, through the view and directly, listed: her namespace's only.
  for (const [context, resource] of [['view', 'combinedstatuses.control.kubestellar.io'], ['direct', 'combinedstatuses.view.kubestellar.io']] as const) {
    const r = asAlice(['--context', context, 'get', resource, '-A', '-l', selector, '-o', 'json']);
    t.equal(r.status, 0, r.stderr);
    t.same((json(r.stdout).items as Obj[]).map(nameOf), [`${mine}/settings`], `alice (${context}): her namespace's only`);
    t.notOk(r.stdout.includes(encoded) || r.stdout.includes(theirs), 'nothing of the other namespace, its Secret\'s data least of all');
  }
  const token = adminAll.find((cs) => nameOf(cs) === `${theirs}/token`)!;
  const get = asAlice(['--context', 'view', '-n', theirs, 'get', 'combinedstatuses.control.kubestellar.io', token.metadata.name, '-o', 'json']);
  t.not(get.status, 0);
  t.match(get.stderr, /NotFound|not found/, 'a get of the Secret\'s CombinedStatus: as if it did not exist');
  t.notOk(get.stdout.includes(encoded) || get.stderr.includes(encoded));
  const watched = asAlice(['--context', 'direct', 'get', '--raw', `/apis/view.kubestellar.io/v1alpha1/combinedstatuses?watch=true&timeoutSeconds=3&labelSelector=${encodeURIComponent(selector)}`]);
  const events = watched.stdout.split('\n').filter(Boolean).map((l) => json(l));
  t.same(events.map((e) => `${e.type} ${nameOf(e.object)}`), [`ADDED ${mine}/settings`], 'a watch: her namespace\'s only');
  t.notOk(watched.stdout.includes(encoded));

  // The Binding: the admin's lists all of them; alice's only her namespace's, in the workload and the counts.
  const adminBinding = json(kcOk('wds1', ['get', 'bindings.view.kubestellar.io', run, '-o', 'json']));
  const entries = (b: Obj) => ((b.spec.workload.namespaceScope ?? []) as Obj[]).map((c) => `${c.namespace}/${c.name}`).sort();
  t.same(entries(adminBinding), [`${mine}/settings`, `${theirs}/other`, `${theirs}/token`].sort());
  t.equal(adminBinding.spec.workload.clusterScope?.length, 2, 'the admin: both namespaces too');
  for (const [context, resource] of [['view', 'bindings.control.kubestellar.io'], ['direct', 'bindings.view.kubestellar.io']] as const) {
    const r = asAlice(['--context', context, 'get', resource, run, '-o', 'json']);
    t.equal(r.status, 0, r.stderr);
    const b = json(r.stdout);
    t.same(entries(b), [`${mine}/settings`], `alice (${context}): her object only`);
    t.equal(b.spec.workload.clusterScope, undefined, 'not the namespaces (she may not get them)');
    t.same((b.status.destinations as Obj[]).map((d) => d.objects), [1, 1], 'each destination counts her object only');
    t.equal(b.status.conditions, undefined, 'not the policy\'s conditions: she may not get the BindingPolicy');
    t.notOk(r.stdout.includes(theirs), 'nothing of the other namespace');
  }
  const table = asAlice(['--context', 'view', 'get', 'bindings.control.kubestellar.io', run]);
  t.match(table.stdout, new RegExp(`^NAME\\s+OBJECTS\\s+CLUSTERS.*\\n${run}\\s+1\\s+wec1,wec2\\s`), 'kubectl get bindings: 1 object');
});
