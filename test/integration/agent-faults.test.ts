// Faults, on spaces of their own (so the suite's shared spaces never lose a component under
// another test): the pull agent stopped while works change, then started again by `ksview spaces
// up`, converges with nothing lost and nothing orphaned; its1's kube-apiserver stopped and healed
// the same way, the agent catches up. Upsync the same way: ConfigMaps born in wec1 that a
// BindingPolicy of wds1 upsyncs are copied into its1 and seen in wds1's view; changed, deleted and
// created while the agent is down, the copies converge when it is back (nothing lost, nothing left
// behind), and again after its1 itself was down. While the agent is down its lease goes stale (the
// hub admin shortened it to 1 s): the copies stay in the view, marked stale, and are fresh again
// when it is back.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ksview } from '../fixtures/ksview.js';
import { ownSpaces } from '../fixtures/own-spaces.js';
import { waitUntil } from '../fixtures/spaces.js';
import { configMap, namespaceObj, type Obj } from '../fixtures/agent.js';

t.test('agent down, works changed, agent back: converges; its1 down and back: converges', async (t) => {
  const { dir, flags } = ownSpaces(t, 'faults', process.env.KSVIEW_FAULTS_PORT_BASE ?? '18600', 1);
  const up = () => {
    const r = ksview(['spaces', 'up', ...flags]);
    t.equal(r.status, 0, `spaces up: ${r.stderr.trim().split('\n').pop()}`);
  };
  const kubectl = (space: string, args: string[], input?: string) =>
    spawnSync('kubectl', ['--kubeconfig', path.join(dir, space, 'kubeconfig'), ...args], { encoding: 'utf8', input });
  const get = (space: string, args: string[]): Obj | undefined => {
    const r = kubectl(space, ['get', ...args, '-o', 'json']);
    return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined;
  };
  const putWork = (name: string, manifests: Obj[]) => {
    const r = kubectl('its1', ['apply', '--server-side', '--field-manager=faults', '-f', '-'], JSON.stringify({
      apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name, namespace: 'wec1' }, spec: { workload: { manifests } } }));
    t.equal(r.status, 0, `work ${name} written: ${r.stderr.trim()}`);
  };
  const ns = 'faults';

  up();
  // Upsync: a policy of wds1 for ConfigMaps named up-* in the namespace.
  const upsyncNs = 'faults-up';
  kubectl('wec1', ['create', 'namespace', upsyncNs]);
  for (const n of ['up-keep', 'up-change', 'up-doomed']) kubectl('wec1', ['-n', upsyncNs, 'create', 'configmap', n, '--from-literal=v=1']);
  const policy = kubectl('wds1', ['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: 'faults-up' },
    spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], upsync: [{ resources: ['configmaps'], namespaces: [upsyncNs], objectNames: ['up-keep', 'up-change', 'up-doomed', 'up-fresh'] }] },
  }));
  t.equal(policy.status, 0, `BindingPolicy written: ${policy.stderr.trim()}`);
  /** The copies in its1: source name → the copied object's data.v. */
  const copies = (): Record<string, string> => Object.fromEntries(((get('its1', ['-n', 'wec1', 'upsyncedobjects'])?.items ?? []) as Obj[])
    .filter((c) => c.source.namespace === upsyncNs).map((c) => [c.source.name as string, c.object?.data?.v as string]));
  /** The rows of wds1's view (through its kube-apiserver and the aggregator): source name → [data.v, stale]. */
  const rows = (): Record<string, [string, boolean]> => {
    const r = kubectl('wds1', ['get', '--raw', `/apis/view.kubestellar.io/v1alpha1/namespaces/${upsyncNs}/upsyncedobjects`]);
    return r.status === 0 ? Object.fromEntries((JSON.parse(r.stdout).items as Obj[]).map((o) => [o.spec.source.name as string, [o.spec.object?.data?.v as string, o.status.stale as boolean]])) : {};
  };
  await waitUntil('the three ConfigMaps copied', () => JSON.stringify(copies()) === JSON.stringify({ 'up-change': '1', 'up-doomed': '1', 'up-keep': '1' }) || undefined, 60_000)
    .catch(() => t.fail(`copies: ${JSON.stringify(copies())}`));
  putWork('keep', [namespaceObj(ns), configMap(ns, 'a', { v: '1' })]);
  putWork('doomed', [namespaceObj(ns), configMap(ns, 'doomed', { v: '1' })]);
  await waitUntil('both works applied', () => get('wec1', ['-n', ns, 'configmap', 'a']) && get('wec1', ['-n', ns, 'configmap', 'doomed']), 120_000);

  t.equal(ksview(['spaces', 'stop', 'wec1/ksview-agent', '--dir', dir]).status, 0, 'the agent is stopped');
  putWork('keep', [namespaceObj(ns), configMap(ns, 'a', { v: '2' }), configMap(ns, 'b', { v: '1' })]);
  putWork('fresh', [namespaceObj(ns), configMap(ns, 'fresh', { v: '1' })]);
  // Deleting a work whose agent is away leaves it waiting on the finalizer; remove the finalizer as
  // an impatient admin would, so the work is gone while the AppliedManifestWork remains in wec1.
  kubectl('its1', ['-n', 'wec1', 'delete', 'manifestwork', 'doomed', '--wait=false']);
  kubectl('its1', ['-n', 'wec1', 'patch', 'manifestwork', 'doomed', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  await waitUntil('the doomed work gone from its1', () => !get('its1', ['-n', 'wec1', 'manifestwork', 'doomed']), 30_000);
  t.equal(get('wec1', ['-n', ns, 'configmap', 'a'])?.data?.v, '1', 'nothing changed in wec1 while the agent was away');
  kubectl('wec1', ['-n', upsyncNs, 'patch', 'configmap', 'up-change', '--type=merge', '-p', '{"data":{"v":"2"}}']);
  kubectl('wec1', ['-n', upsyncNs, 'delete', 'configmap', 'up-doomed']);
  kubectl('wec1', ['-n', upsyncNs, 'create', 'configmap', 'up-fresh', '--from-literal=v=1']);
  // The hub admin shortens wec1's lease: with the agent away, the hub marks the cluster stale in 5 s.
  kubectl('its1', ['patch', 'managedcluster', 'wec1', '--type=merge', '-p', '{"spec":{"leaseDurationSeconds":1}}']);
  const stale = await waitUntil('the view marks wec1\'s copies stale', () => {
    const r = rows();
    return Object.keys(r).length === 3 && Object.values(r).every(([, isStale]) => isStale) ? r : undefined;
  }, 60_000).catch(() => rows());
  t.same(stale, { 'up-change': ['1', true], 'up-doomed': ['1', true], 'up-keep': ['1', true] }, 'stale, never dropped: the last copies stay in the view');

  up();
  await waitUntil('the changed work applied', () => get('wec1', ['-n', ns, 'configmap', 'a'])?.data?.v === '2' && get('wec1', ['-n', ns, 'configmap', 'b']), 60_000);
  await waitUntil('the new work applied', () => get('wec1', ['-n', ns, 'configmap', 'fresh']), 60_000);
  await waitUntil('the deleted work\'s object cleaned', () => !get('wec1', ['-n', ns, 'configmap', 'doomed']), 60_000);
  // The AppliedManifestWork goes once its objects are seen gone (the agent looks again within 1 s).
  const appliedWorks = () => ((get('wec1', ['appliedmanifestworks'])?.items ?? []) as Obj[]).map((a) => a.spec.manifestWorkName as string).sort();
  await waitUntil('the deleted work\'s AppliedManifestWork gone', () => !appliedWorks().includes('doomed'), 30_000).catch(() => undefined);
  t.same(appliedWorks(), ['fresh', 'keep'], 'no AppliedManifestWork orphaned');
  const converged = { 'up-change': '2', 'up-fresh': '1', 'up-keep': '1' };
  await waitUntil('the upsynced copies converged: changed, deleted, created while away', () => JSON.stringify(copies()) === JSON.stringify(converged) || undefined, 60_000)
    .catch(() => undefined);
  t.same(copies(), converged, 'nothing lost, nothing left behind in its1');
  await waitUntil('the view fresh again', () => Object.values(rows()).every(([, isStale]) => !isStale) && Object.keys(rows()).length === 3, 60_000).catch(() => undefined);
  t.same(rows(), { 'up-change': ['2', false], 'up-fresh': ['1', false], 'up-keep': ['1', false] }, 'the view: converged and no longer stale');
  kubectl('its1', ['patch', 'managedcluster', 'wec1', '--type=merge', '-p', '{"spec":{"leaseDurationSeconds":60}}']);

  t.equal(ksview(['spaces', 'stop', 'its1/kube-apiserver', '--dir', dir]).status, 0, 'its1 kube-apiserver stopped');
  t.equal(get('wec1', ['-n', ns, 'configmap', 'b'])?.data?.v, '1', 'wec1 keeps what was applied while the ITS is away');
  kubectl('wec1', ['-n', upsyncNs, 'patch', 'configmap', 'up-keep', '--type=merge', '-p', '{"data":{"v":"3"}}']);
  up();
  putWork('keep', [namespaceObj(ns), configMap(ns, 'a', { v: '3' }), configMap(ns, 'b', { v: '1' })]);
  await waitUntil('a change after its1 came back applied', () => get('wec1', ['-n', ns, 'configmap', 'a'])?.data?.v === '3', 60_000);
  const work = await waitUntil('its status reported again', () => {
    const w = get('its1', ['-n', 'wec1', 'manifestwork', 'keep']);
    const c = (w?.status?.conditions as Obj[] | undefined)?.find((x) => x.type === 'Applied');
    return c?.status === 'True' && c.observedGeneration === w!.metadata.generation ? w : undefined;
  }, 60_000);
  t.ok(work, 'the work is Applied at its new generation');
  await waitUntil('an object changed while its1 was down is copied', () => copies()['up-keep'] === '3', 60_000).catch(() => undefined);
  t.same(copies(), { ...converged, 'up-keep': '3' }, 'the copies converge after its1 was down');
  await waitUntil('and the view shows it', () => rows()['up-keep']?.[0] === '3', 60_000).catch(() => undefined);
  t.same(rows()['up-keep'], ['3', false], 'the view too (serve\'s informers relisted)');
});
