// Status comes home (docs/status.md), on the test spaces: wec1 and wec2 run the Deployments for
// real (kwok makes their pods Running), the agents write WorkStatuses into its1, and the status
// controller of wds1's `ksview serve` returns them into the WDS objects. Checked as a user would,
// with kubectl on wds1 and through the view: the label kubestellar.io/executing-count, the
// Deployment's status, the policy's status.errors.
import t from 'tap';
import YAML from 'yaml';
import { ADMIN_EXECUTOR, bindingPolicy, deployment, get, policy, VIEW, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const EXECUTING_COUNT = 'kubestellar.io/executing-count';

const clauses = (app: string, extra: Obj) => [{ objectSelectors: [{ matchLabels: { app } }], ...extra }];

t.test('singleton: wec1\'s status in the WDS Deployment, the executing count, then two clusters and no return', async (t) => {
  const app = uniqueName('st');
  const ns = testNamespace(t, ['wds1'], 'st');
  kcOk('wds1', ['label', 'namespace', ns, `app=${app}`]);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify(deployment(ns, app, 2)));
  const name = `${app}-p`;
  bindingPolicy(t, name, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: clauses(app, { wantSingletonReportedState: true }) });

  const t0 = Date.now();
  const back = await waitUntil('readyReplicas 2 from wec1', () => {
    const d = get('wds1', ns, ['deployment', 'nginx']);
    return d?.status?.readyReplicas === 2 ? d : undefined;
  }, 120_000, 200);
  t.pass(`returned ${Date.now() - t0} ms after the policy was applied (kwok starting the pods included)`);
  t.equal(back.metadata.labels?.[EXECUTING_COUNT], '1', 'kubestellar.io/executing-count: "1"');
  t.equal(back.metadata.annotations?.['view.kubestellar.io/status-returned-from'], 'wec1', 'the annotation says where the status came from');
  t.equal(back.status.availableReplicas, 2, 'availableReplicas 2');
  t.ok((back.status.conditions as Obj[]).some((c) => c.type === 'Available' && c.status === 'True'), 'Available=True, as wec1 says');
  const viaView = get(VIEW, ns, ['deployment', 'nginx']);
  t.equal(viaView?.status?.readyReplicas, 2, 'through the view too');
  t.equal(viaView?.metadata?.labels?.[EXECUTING_COUNT], '1', 'label through the view too');
  t.notOk(kc('wec2', ['-n', ns, 'get', 'deployment', 'nginx']).status === 0, 'nothing in wec2');

  // The user scales the WDS object: the new status comes back.
  kcOk('wds1', ['-n', ns, 'scale', 'deployment', 'nginx', '--replicas=3']);
  const scaled = await waitUntil('readyReplicas 3 from wec1', () => {
    const d = get('wds1', ns, ['deployment', 'nginx']);
    return d?.status?.readyReplicas === 3 ? d : undefined;
  }, 120_000, 200);
  t.same([scaled.status.replicas, scaled.status.updatedReplicas, scaled.status.availableReplicas], [3, 3, 3], 'replicas, updated and available: 3');

  // A second cluster qualifies: the count says 2, nothing returned stays, the policy says why.
  bindingPolicy(t, name, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }, { matchLabels: { name: 'wec2' } }], downsync: clauses(app, { wantSingletonReportedState: true }) });
  const cleared = await waitUntil('label 2 and status cleared', () => {
    const d = get('wds1', ns, ['deployment', 'nginx']);
    return d?.metadata?.labels?.[EXECUTING_COUNT] === '2' && Object.keys(d.status ?? {}).length === 0 ? d : undefined;
  }, 60_000, 200);
  t.notOk(cleared.metadata.annotations?.['view.kubestellar.io/status-returned-from'], 'no returned-from annotation');
  const errors = await waitUntil('the policy says two clusters qualify', () => {
    const e = (policy(name)?.status?.errors ?? []) as string[];
    return e.some((m) => /wantSingletonReportedState, but 2 clusters qualify/.test(m)) ? e : undefined;
  }, 60_000, 200);
  t.pass(`policy status.errors: ${errors.join(' | ')}`);
  await waitUntil('the Deployment in wec2 too', () => kc('wec2', ['-n', ns, 'get', 'deployment', 'nginx']).status === 0, 60_000, 200);

  // Return no longer asked: the label goes.
  bindingPolicy(t, name, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }, { matchLabels: { name: 'wec2' } }], downsync: clauses(app, {}) });
  const plain = await waitUntil('label gone', () => {
    const d = get('wds1', ns, ['deployment', 'nginx']);
    return d && d.metadata?.labels?.[EXECUTING_COUNT] === undefined ? d : undefined;
  }, 60_000, 200);
  t.same(plain.status ?? {}, {}, 'and no status');
});

t.test('observedGeneration in the WDS object\'s generations: kubectl rollout status on the WDS ends', async (t) => {
  const app = uniqueName('og');
  const ns = testNamespace(t, ['wds1'], 'og');
  kcOk('wds1', ['label', 'namespace', ns, `app=${app}`]);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify(deployment(ns, app, 1)));
  // Three spec changes before it goes anywhere: the WDS object is at generation 4, its copy in wec1 will be at 1.
  for (const v of ['a', 'b', 'c']) kcOk('wds1', ['-n', ns, 'patch', 'deployment', 'nginx', '--type=merge', '-p', JSON.stringify({ spec: { template: { metadata: { annotations: { step: v } } } } })]);
  t.equal(get('wds1', ns, ['deployment', 'nginx'])?.metadata.generation, 4);
  bindingPolicy(t, `${app}-p`, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: clauses(app, { wantSingletonReportedState: true }) });
  // The status controller's annotation (status-returned-from) moves a Deployment's generation too
  // (kube-apiserver bumps it on any annotation change of a Deployment): observed must follow.
  const back = await waitUntil('the WDS Deployment observed at its generation', () => {
    const d = get('wds1', ns, ['deployment', 'nginx']);
    return d?.status?.readyReplicas === 1 && d.status.observedGeneration === d.metadata.generation ? d : undefined;
  }, 120_000, 200);
  t.ok(back.metadata.generation >= 4, `the WDS object at generation ${back.metadata.generation as number}`);
  const wec = get('wec1', ns, ['deployment', 'nginx'])!;
  t.equal(wec.metadata.generation, 1, 'wec1\'s copy is at its own generation 1');
  t.equal(wec.status?.observedGeneration, 1, 'and wec1 reports observedGeneration 1');
  t.equal(kc('wds1', ['-n', ns, 'rollout', 'status', 'deployment/nginx', '--timeout=60s']).status, 0, 'kubectl rollout status on the WDS ends');

  // A new spec: until wec1 has it, the WDS does not claim it is observed; then it does.
  kcOk('wds1', ['-n', ns, 'set', 'image', 'deployment/nginx', 'nginx=nginx:1.28']);
  const rollout = kc('wds1', ['-n', ns, 'rollout', 'status', 'deployment/nginx', '--timeout=90s']);
  t.equal(rollout.status, 0, `kubectl rollout status ends after the change: ${rollout.stdout.trim().split('\n').at(-1)}`);
  const after = get('wds1', ns, ['deployment', 'nginx'])!;
  t.equal(after.status.observedGeneration, after.metadata.generation, `observed at generation ${after.metadata.generation as number}`);
  t.ok(after.metadata.generation > back.metadata.generation, 'a later generation');
  t.equal(get('wec1', ns, ['deployment', 'nginx'])?.spec.template.spec.containers[0].image, 'nginx:1.28', 'and wec1 runs the new image');
});

t.test('multi-WEC: the Deployment in wec1 and wec2 shows 4 available replicas in the WDS', async (t) => {
  const app = uniqueName('mw');
  const ns = testNamespace(t, ['wds1'], 'mw');
  kcOk('wds1', ['label', 'namespace', ns, `app=${app}`]);
  kcOk('wds1', ['apply', '-f', '-'], YAML.stringify(deployment(ns, app, 2)));
  bindingPolicy(t, `${app}-p`, { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }], downsync: clauses(app, { wantMultiWECReportedState: true }) });
  const d = await waitUntil('4 available replicas', () => {
    const o = get('wds1', ns, ['deployment', 'nginx']);
    return o?.status?.availableReplicas === 4 ? o : undefined;
  }, 120_000, 200);
  t.equal(d.status.readyReplicas, 4, 'readyReplicas 4');
  t.equal(d.status.replicas, 4, 'replicas 4');
  t.equal(d.metadata.annotations?.['view.kubestellar.io/status-returned-from'], 'wec1,wec2', 'combined from wec1 and wec2');
  t.ok((d.status.conditions as Obj[]).some((c) => c.type === 'Available' && c.status === 'True'), 'Available, being available in both');
  t.notOk(d.metadata.labels?.[EXECUTING_COUNT], 'no executing count: singleton return is not asked');
  t.equal(get(VIEW, ns, ['deployment', 'nginx'])?.status?.availableReplicas, 4, 'through the view too');
});

t.test('a denatured object: a ResourceQuota written through the view shows wec1\'s status through the view', async (t) => {
  const app = uniqueName('dq');
  const ns = testNamespace(t, ['wds1'], 'dq');
  kcOk('wds1', ['label', 'namespace', ns, `app=${app}`]);
  kcOk(VIEW, ['apply', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: ns, labels: { app } }, spec: { hard: { configmaps: '7' } } }));
  // A ResourceQuota is beyond the spaces' restricted default executor: the admin one, named.
  bindingPolicy(t, `${app}-p`, { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: clauses(app, { wantSingletonReportedState: true }), executor: ADMIN_EXECUTOR });
  const q = await waitUntil('the quota\'s status from wec1', () => {
    const o = get(VIEW, ns, ['resourcequota', 'q']);
    return o?.status?.hard?.configmaps === '7' && o.status.used?.configmaps !== undefined ? o : undefined;
  }, 60_000, 200);
  t.equal(q.metadata.labels?.[EXECUTING_COUNT], '1', 'the executing count');
  t.match(q.status.used.configmaps, /^\d+$/, `used counted by wec1's quota controller: ${q.status.used.configmaps}`);
  t.equal(JSON.parse(kcOk('wds1', ['-n', ns, 'get', 'resourcequotas', '-o', 'json'])).items.length, 0, 'still no native ResourceQuota in the WDS');
});
