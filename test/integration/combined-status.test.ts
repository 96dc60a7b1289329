// CombinedStatus on the test spaces (docs/status.md, "CombinedStatus"): KubeStellar's documented
// StatusCollectors (test/fixtures/kubestellar/combined-status-1.yaml, specs as written, names
// made unique to the run) plus a SUM, on a Deployment and a Pod that go to wec1 and wec2, where
// kwok runs them. wec2's namespace holds a quota of one pod, so the two clusters differ for real:
// wec1 runs 2 replicas, wec2 one. Read as KubeStellar's users read them: kubectl in the WDS,
// found by the five labels, in view.kubestellar.io and (inside the view) control.kubestellar.io;
// `kubectl get combinedstatuses -w` prints the new row when wec2's quota goes. An invalid
// collector is refused by ksview serve's admission webhook (422, create and update); written while
// the webhook does not answer, its status.errors say why.
import { spawn } from 'node:child_process';
import t from 'tap';
import YAML from 'yaml';
import { bindingPolicy, kubestellarText, VIEW, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, kubeconfig, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const CS = 'combinedstatuses.view.kubestellar.io';
const WAIT = 120_000;

/** The documented collectors with names of this run, plus ours: a SUM and an invalid one. */
function collectors(run: string): Obj[] {
  const docs = kubestellarText('combined-status-1.yaml', { edge: 'unused', cluster1: 'unused', cluster2: 'unused' }).map((d) => YAML.parse(d) as Obj);
  return [
    ...docs.map((d) => ({ ...d, metadata: { name: `${run}-${d.metadata.name as string}` } })),
    { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: `${run}-sum` },
      spec: { combinedFields: [{ name: 'available', type: 'SUM', subject: 'returned.status.availableReplicas' }] } },
    { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: `${run}-broken` },
      spec: { filter: 'returned.status.(', select: [{ name: 'x', def: 'nope.x' }] } },
  ];
}

/** The CombinedStatuses of an object in a namespace, found by KubeStellar's labels. */
function combined(context: string, resource: string, ns: string, name: string, policy?: string, kind = CS): Obj[] {
  const labels = [`status.kubestellar.io/resource=${resource}`, `status.kubestellar.io/namespace=${ns}`, `status.kubestellar.io/name=${name}`,
    ...(policy ? [`status.kubestellar.io/binding-policy=${policy}`] : [])].join(',');
  const r = kc(context, ['-n', ns, 'get', kind, '-l', labels, '-o', 'json']);
  return r.status === 0 ? (JSON.parse(r.stdout) as Obj).items as Obj[] : [];
}

const result = (cs: Obj | undefined, name: string) => (cs?.results as Obj[] | undefined)?.find((r) => r.name === name);
const cells = (r: Obj | undefined) => ((r?.rows ?? []) as Obj[]).map((row) => (row.columns as Obj[]).map((c) => c.float ?? c.string ?? c.bool ?? c.object ?? c.array ?? null));

t.test('KubeStellar\'s documented StatusCollectors, a SUM and an invalid one, over wec1 (2 available) and wec2 (1)', async (t) => {
  const run = uniqueName('cs');
  const scs = collectors(run);
  const [invalid] = scs.filter((s) => s.metadata.name === `${run}-broken`);
  t.teardown(() => { for (const s of scs) kc('wds1', ['delete', 'statuscollector', s.metadata.name, '--ignore-not-found', '--wait=false']); });
  // Applied together: the invalid one is refused at admission (ksview serve's webhook), the others are created.
  const applied = kc('wds1', ['apply', '-f', '-'], scs.map((s) => YAML.stringify(s)).join('---\n'));
  t.not(applied.status, 0, 'kubectl apply fails for the invalid collector');
  // kubectl prints a 422 with causes as it prints kube-apiserver's own validation errors.
  t.match(applied.stderr, `The StatusCollector "${run}-broken" is invalid: \n* spec.filter: filter expression invalid: <input>:1:16: found . but expecting end of input\n* spec.select: select expression (x) invalid: undeclared reference to 'nope'`,
    'a 422 saying each error and its field, in the words status.errors uses');
  t.equal(kc('wds1', ['get', 'statuscollector', `${run}-broken`]).status, 1, 'the invalid collector was not stored');
  for (const s of scs.filter((x) => x !== invalid)) kcOk('wds1', ['get', 'statuscollector', s.metadata.name]);
  const ns = testNamespace(t, ['wds1', 'wec2'], 'cs');
  kcOk('wec2', ['-n', ns, 'create', 'quota', 'one-pod', '--hard=pods=1']);
  kcOk('wds1', ['label', 'namespace', ns, `app=${run}`]);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx', namespace: ns, labels: { app: run } },
    spec: { replicas: 2, selector: { matchLabels: { app: run } }, template: { metadata: { labels: { app: run } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } } },
  }));
  const sc = (n: string) => `${run}-${n}`;
  const named = ['number-of-wecs', 'histogram-of-available-replicas', 'wecs-not-as-available-as-desired', 'full-status-with-retrieval-time', 'sum', 'broken'].map(sc);
  const policy = `${run}-edge`;
  bindingPolicy(t, policy, { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: run } }], statusCollectors: named }] });
  // A second policy, no cluster: its CombinedStatus counts zero WECs.
  const none = `${run}-none`;
  bindingPolicy(t, none, { clusterSelectors: [{ matchLabels: { name: `${run}-no-such-cluster` } }], downsync: [{ objectSelectors: [{ matchLabels: { app: run } }], statusCollectors: [sc('number-of-wecs')] }] });

  const cs = await waitUntil('the CombinedStatus summing 3 available replicas', () => {
    const found = combined('wds1', 'deployments', ns, 'nginx', policy)[0];
    return cells(result(found, sc('sum')))[0]?.[0] === '3' ? found : undefined;
  }, WAIT, 300);
  const uid = JSON.parse(kcOk('wds1', ['-n', ns, 'get', 'deployment', 'nginx', '-o', 'json'])).metadata.uid as string;
  const policyUid = JSON.parse(kcOk('wds1', ['get', 'bindingpolicy', policy, '-o', 'json'])).metadata.uid as string;
  t.equal(cs.metadata.name, `${uid}.${policyUid}`, 'named <object uid>.<policy uid>');
  t.equal(cs.metadata.namespace, ns, 'in the object\'s namespace');
  t.strictSame(cs.metadata.labels, { 'status.kubestellar.io/api-group': 'apps', 'status.kubestellar.io/resource': 'deployments', 'status.kubestellar.io/namespace': ns, 'status.kubestellar.io/name': 'nginx', 'status.kubestellar.io/binding-policy': policy });
  t.same((cs.results as Obj[]).map((r) => r.name), [...named.filter((n) => n !== sc('broken'))].sort(), 'a result per valid collector, by name; none for the invalid one');
  t.strictSame(result(cs, sc('number-of-wecs')), { name: sc('number-of-wecs'), columnNames: ['count'], rows: [{ columns: [{ type: 'Number', float: '2' }] }] }, 'number of WECs: 2');
  t.strictSame(cells(result(cs, sc('histogram-of-available-replicas'))), [['1', '1'], ['2', '1']], 'histogram of available replicas: one WEC with 1, one with 2');
  t.strictSame(cells(result(cs, sc('wecs-not-as-available-as-desired'))), [['wec2']], 'not as available as desired: wec2');
  const full = result(cs, sc('full-status-with-retrieval-time'))!;
  t.strictSame(full.columnNames, ['wec', 'status', 'retrievalTime']);
  t.strictSame(cells(full).map((r) => r[0]), ['wec1', 'wec2'], 'a row per WEC');
  t.match(cells(full).map((r) => (r[1] as Obj).availableReplicas), [2, 1], 'each WEC\'s full status');
  for (const r of cells(full)) t.ok(Date.parse(r[2] as string) > Date.parse('2026-01-01T00:00:00Z'), `${r[0] as string}: retrieval time ${r[2] as string}`);

  // An update that breaks a collector is refused too, and the collector stays as it was.
  const breakIt = kc('wds1', ['patch', 'statuscollector', sc('sum'), '--type=merge', '-p', JSON.stringify({ spec: { combinedFields: [{ name: 'available', type: 'SUM', subject: 'returned.status.availableReplicas +' }] } })]);
  t.not(breakIt.status, 0);
  t.match(breakIt.stderr, `The StatusCollector "${sc('sum')}" is invalid: spec.combinedFields: combinedField expression (available) subject invalid: <input>:1:35: found + but expecting end of input`);
  t.equal(JSON.parse(kcOk('wds1', ['get', 'statuscollector', sc('sum'), '-o', 'json'])).spec.combinedFields[0].subject, 'returned.status.availableReplicas');

  // Written where the webhook does not answer (failurePolicy Ignore: here its configuration is
  // taken away for a moment), an invalid collector is stored, and its status says why.
  const webhook = JSON.parse(kcOk('wds1', ['get', 'validatingwebhookconfiguration', 'kubestellar-view-statuscollectors', '-o', 'json'])) as Obj;
  const restore = () => {
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, managedFields: _mf, generation: _g, ...metadata } = webhook.metadata as Obj;
    if (kc('wds1', ['get', 'validatingwebhookconfiguration', metadata.name]).status !== 0) kcOk('wds1', ['create', '-f', '-'], JSON.stringify({ ...webhook, metadata }));
  };
  t.teardown(restore);
  kcOk('wds1', ['delete', 'validatingwebhookconfiguration', 'kubestellar-view-statuscollectors']);
  await waitUntil('the invalid collector stored without the webhook', () => kc('wds1', ['create', '-f', '-'], YAML.stringify(invalid)).status === 0 || undefined, 30_000, 300);
  restore();
  const broken = await waitUntil('the invalid collector\'s status.errors', () => {
    const s = JSON.parse(kcOk('wds1', ['get', 'statuscollector', sc('broken'), '-o', 'json'])) as Obj;
    return s.status?.errors?.length ? s : undefined;
  }, 30_000, 300);
  t.match(broken.status.errors, ['filter expression invalid: <input>:1:16: found . but expecting end of input', 'select expression (x) invalid: undeclared reference to \'nope\''], 'errors said, in KubeStellar\'s words');
  t.equal(broken.status.observedGeneration, broken.metadata.generation);
  const good = JSON.parse(kcOk('wds1', ['get', 'statuscollector', sc('sum'), '-o', 'json'])) as Obj;
  t.notOk(good.status?.errors, 'a valid collector has no errors');

  const zero = await waitUntil('the no-cluster policy\'s CombinedStatus', () => combined('wds1', 'deployments', ns, 'nginx', none)[0], 30_000, 300);
  t.strictSame(cells(result(zero, sc('number-of-wecs'))), [['0']], 'zero WECs: COUNT 0');
  t.equal(combined('wds1', 'deployments', ns, 'nginx').length, 2, 'the object\'s CombinedStatuses: one per policy naming collectors');

  const viaView = combined(VIEW, 'deployments', ns, 'nginx', policy, 'combinedstatuses.control.kubestellar.io')[0];
  t.equal(viaView?.apiVersion, 'control.kubestellar.io/v1alpha1', 'inside the view, KubeStellar\'s group');
  t.same({ ...viaView, apiVersion: undefined }, { ...combined('wds1', 'deployments', ns, 'nginx', policy)[0], apiVersion: undefined }, 'the same object');

  // kubectl get -w: wec2's quota goes, it runs 2 too, and the watch prints the new sum (a policy
  // of the SUM alone, so that its row's RESULTS column shows the sum untruncated).
  bindingPolicy(t, `${run}-sum`, { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: run } }], statusCollectors: [sc('sum')] }] });
  await waitUntil('the SUM policy\'s CombinedStatus', () => cells(result(combined('wds1', 'deployments', ns, 'nginx', `${run}-sum`)[0], sc('sum')))[0]?.[0] === '3', WAIT, 300);
  const w = spawn('kubectl', ['--kubeconfig', kubeconfig, '--context', 'wds1', '-n', ns, 'get', CS, '-w'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => { w.kill(); });
  let out = '';
  w.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  await waitUntil('kubectl to list', () => out.includes(uid), 30_000, 100);
  const listed = out;
  kcOk('wec2', ['-n', ns, 'delete', 'quota', 'one-pod']);
  await waitUntil('the watch to print the sum of 4', () => /available=4/.test(out.slice(listed.length)), WAIT, 200);
  t.pass(`kubectl get -w printed: ${out.slice(listed.length).trim().split('\n').at(-1)}`);
  const after = combined('wds1', 'deployments', ns, 'nginx', policy)[0];
  t.notOk(result(after, sc('wecs-not-as-available-as-desired'))?.rows, 'every WEC as available as desired: no rows');

  // The pod-phase histogram, on a Pod. wds1 runs no service-account controller: the namespace's
  // `default` ServiceAccount, which kube-apiserver's admission looks up, is made by hand (and, as
  // system infrastructure, never sent).
  kcOk('wds1', ['-n', ns, 'create', 'serviceaccount', 'default']);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'single', namespace: ns, labels: { app: run } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } }));
  bindingPolicy(t, `${run}-pods`, { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: [{ objectSelectors: [{ matchLabels: { app: run } }], resources: ['pods'], statusCollectors: [sc('histogram-of-pod-phase')] }] });
  const pods = await waitUntil('the pod-phase histogram: Running in both', () => {
    const found = combined('wds1', 'pods', ns, 'single', `${run}-pods`)[0];
    const rows = cells(result(found, sc('histogram-of-pod-phase')));
    return rows.length === 1 && rows[0]![0] === 'Running' && rows[0]![1] === '2' ? rows : undefined;
  }, WAIT, 300);
  t.strictSame(pods, [['Running', '2']], 'histogram of pod phase: Running in 2 WECs');
});
