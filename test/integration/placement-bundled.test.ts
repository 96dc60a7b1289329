// Bundled works on spaces of their own (`ksview spaces up --max-objects-per-work 8`, wec1 pulled,
// wec2 pushed): 20 objects sent to wec1 and wec2 travel in 3 works per cluster; an object's change
// rewrites only its work; an object added or removed touches nothing else; createOnly and a
// conflict are said of the right manifest; status comes back (singleton, CombinedStatus, the
// policy's Ready); a grant moved to a work whose executor may not apply it stays owned by the work
// that applied it, said in the policy's status, and goes when the WDS deletes it (a revoked grant
// never outlives its revocation); N changed (serve restarted with 5, then 1) repacks the works and
// every object in the WECs keeps its uid — nothing still selected is deleted. Checked with kubectl,
// as a user would.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { ksview } from '../fixtures/ksview.js';
import { ownSpaces } from '../fixtures/own-spaces.js';
import { waitUntil } from '../fixtures/spaces.js';
import { ADMIN_EXECUTOR, DEFAULT_EXECUTOR } from '../../src/spaces/wec-executors.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;
const WAIT = 90_000;
const NS = 'bundled';
const NAMES = Array.from({ length: 20 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);

t.test('bundled works: packing, one work per change, createOnly and conflicts per manifest, status, repacking without re-creating', async (t) => {
  const { dir, flags } = ownSpaces(t, 'bundled', process.env.KSVIEW_BUNDLED_PORT_BASE ?? '18800', 2);
  const kc = (context: string, args: string[], input?: string) =>
    spawnSync('kubectl', ['--kubeconfig', path.join(dir, 'kubeconfig'), '--context', context, ...args], { encoding: 'utf8', input });
  const kcOk = (context: string, args: string[], input?: string) => {
    const r = kc(context, args, input);
    if (r.status !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const json = (context: string, args: string[]): Obj | undefined => {
    const r = kc(context, [...args, '-o', 'json']);
    return r.status === 0 ? JSON.parse(r.stdout) as Obj : undefined;
  };
  const apply = (context: string, objects: Obj[]) => kcOk(context, ['apply', '-f', '-'], objects.map((o) => YAML.stringify(o)).join('---\n'));
  const configMap = (name: string, data: Obj, labels: Obj = { app: 'bundled' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data });
  const policy = (name: string, clusters: string[], app: string, clause: Obj = {}) => ({
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name },
    spec: { clusterSelectors: [{ matchExpressions: [{ key: 'name', operator: 'In', values: clusters }] }], downsync: [{ namespaces: [NS], objectSelectors: [{ matchLabels: { app } }], ...clause }] },
  });
  /** The works of wds1 in a cluster: name → generation and the names of its manifests. */
  const works = (cluster: string) => new Map(((json('its1', ['-n', cluster, 'get', 'manifestworks', '-l', 'view.kubestellar.io/wds=wds1'])?.items ?? []) as Obj[])
    .map((w) => [w.metadata.name as string, { generation: w.metadata.generation as number, manifests: (w.spec.workload.manifests as Obj[]).map((m) => m.metadata.name as string) }]));
  const bundledWorks = (cluster: string, app: string) => [...works(cluster)].filter(([, w]) => w.manifests.some((m) => m.startsWith(app)));
  const uids = (cluster: string) => new Map(((json(cluster, ['-n', NS, 'get', 'configmaps'])?.items ?? []) as Obj[])
    .filter((c) => c.metadata.name !== 'kube-root-ca.crt').map((c) => [c.metadata.name as string, c.metadata.uid as string]));
  const ready = (name: string) => (json('wds1', ['get', 'bindingpolicy', name])?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Ready');

  const up = ksview(['spaces', 'up', ...flags, '--max-objects-per-work', '8']);
  t.equal(up.status, 0, `spaces up --max-objects-per-work 8: ${up.stderr.trim().split('\n').pop()}`);

  // 20 ConfigMaps (and, for what is in it, their Namespace) to wec1 and wec2.
  kcOk('wds1', ['create', 'namespace', NS]);
  apply('wds1', NAMES.map((n) => configMap(n, { value: n })));
  apply('wds1', [policy('bundled', ['wec1', 'wec2'], 'bundled')]);
  for (const c of ['wec1', 'wec2']) {
    const packed = await waitUntil(`${c}: 3 works holding the 20 ConfigMaps and the Namespace`, () => {
      const ws = [...works(c).values()];
      const all = ws.flatMap((w) => w.manifests).sort();
      return ws.length === 3 && all.length === 21 ? ws : undefined;
    }, WAIT, 300);
    t.same(packed.map((w) => w.manifests.length).sort(), [5, 8, 8], `${c}: 8 + 8 + 5 manifests`);
    await waitUntil(`${c}: the 20 ConfigMaps applied`, () => uids(c).size === 20, WAIT, 300);
  }
  await waitUntil('the policy Ready: every placement available', () => ready('bundled')?.status === 'True', WAIT, 300);
  t.match(ready('bundled')?.message, /all 40 placements are available/, 'Ready as in per-object mode');
  const before = { wec1: uids('wec1'), wec2: uids('wec2') };

  // One object changed: only the work carrying it gets a new generation.
  const gens = works('wec1');
  apply('wds1', [configMap('cm-13', { value: 'thirteen' })]);
  await waitUntil('cm-13 changed in wec1', () => json('wec1', ['-n', NS, 'get', 'configmap', 'cm-13'])?.data?.value === 'thirteen', WAIT, 200);
  await waitUntil('cm-13 changed in wec2', () => json('wec2', ['-n', NS, 'get', 'configmap', 'cm-13'])?.data?.value === 'thirteen', WAIT, 200);
  const changed = [...works('wec1')].filter(([name, w]) => gens.get(name)?.generation !== w.generation).map(([name]) => name);
  t.same(changed, [[...gens].find(([, w]) => w.manifests.includes('cm-13'))![0]], 'only cm-13\'s work was rewritten');
  t.same(uids('wec1'), before.wec1, 'wec1: every uid unchanged');

  // An object added, one removed: the others stay as they are.
  apply('wds1', [configMap('cm-20', { value: '20' })]);
  kcOk('wds1', ['-n', NS, 'delete', 'configmap', 'cm-00']);
  for (const c of ['wec1', 'wec2'] as const) {
    await waitUntil(`${c}: cm-20 there, cm-00 gone`, () => { const u = uids(c); return u.has('cm-20') && !u.has('cm-00'); }, WAIT, 300);
    const now = uids(c);
    t.same([...before[c]].filter(([n]) => n !== 'cm-00' && now.get(n) !== undefined && now.get(n) !== before[c].get(n)), [], `${c}: the others kept their uids`);
    t.equal([...before[c].keys()].filter((n) => n !== 'cm-00' && !now.has(n)).length, 0, `${c}: and are all there`);
  }

  // A conflict said of the one manifest of the bundle that has it: wec1 holds taken's data under another manager.
  kcOk('wec1', ['apply', '--server-side', '--field-manager', 'someone-else', '-f', '-'], YAML.stringify(configMap('taken', { owner: 'someone-else' }, {})));
  apply('wds1', [configMap('taken', { owner: 'wds1' })]);
  const errors = () => ((json('wds1', ['get', 'bindingpolicy', 'bundled'])?.status?.errors ?? []) as string[]);
  const conflict = await waitUntil('the conflict over taken in the policy\'s status.errors', () => errors().find((e) => e.includes('bundled/taken')), WAIT, 300);
  t.match(conflict, /^cluster wec1 did not apply configmaps bundled\/taken: .*conflict/i, 'the conflict names taken, in wec1');
  t.same(errors().filter((e) => !e.includes('bundled/taken')), [], 'and nothing of its neighbours in the bundle');
  t.equal(json('wec1', ['-n', NS, 'get', 'configmap', 'taken'])?.data?.owner, 'someone-else', 'the other manager\'s content stays');
  t.equal(json('wec2', ['-n', NS, 'get', 'configmap', 'taken'])?.data?.owner, 'wds1', 'wec2 had no conflict: applied');
  kcOk('wds1', ['-n', NS, 'delete', 'configmap', 'taken']);
  await waitUntil('the conflict gone with taken', () => errors().length === 0, WAIT, 300);
  t.equal(json('wec1', ['-n', NS, 'get', 'configmap', 'taken'])?.data?.owner, 'someone-else', 'wec1\'s own taken, never ours, is left alone');

  // createOnly (its policy's) on the manifests of its bundle.
  apply('wds1', [configMap('once', { v: 'first' }, { app: 'once' }), policy('once', ['wec1'], 'once', { createOnly: true })]);
  await waitUntil('once created in wec1', () => json('wec1', ['-n', NS, 'get', 'configmap', 'once'])?.data?.v === 'first', WAIT, 300);
  const onceWork = () => bundledWorks('wec1', 'once').map(([, w]) => w.generation).join();
  const onceBefore = onceWork();
  apply('wds1', [configMap('once', { v: 'second' }, { app: 'once' })]);
  await waitUntil('once\'s work rewritten', () => onceWork() !== onceBefore, WAIT, 300);
  const onceApplied = await waitUntil('the agent reports that generation applied', () => {
    const w = ((json('its1', ['-n', 'wec1', 'get', 'manifestworks'])?.items ?? []) as Obj[]).find((x) => (x.spec.workload.manifests as Obj[]).some((m) => m.metadata.name === 'once'));
    const applied = (w?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Applied');
    return applied?.status === 'True' && applied.observedGeneration === w?.metadata.generation ? w : undefined;
  }, WAIT, 300);
  t.ok(onceApplied, 'applied');
  t.equal(json('wec1', ['-n', NS, 'get', 'configmap', 'once'])?.data?.v, 'first', 'createOnly: wec1 keeps what was created');

  // Status: a singleton Deployment from wec1; a SUM over wec1 and wec2.
  const deployment = (name: string, app: string, replicas: number) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: NS, labels: { app } },
    spec: { replicas, selector: { matchLabels: { run: name } }, template: { metadata: { labels: { run: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });
  apply('wds1', [
    deployment('single', 'single', 2), deployment('summed', 'summed', 1), deployment('multi', 'multi', 1),
    policy('multi', ['wec1', 'wec2'], 'multi', { wantMultiWECReportedState: true }),
    { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'sum-available' }, spec: { combinedFields: [{ name: 'available', type: 'SUM', subject: 'returned.status.availableReplicas' }] } },
    policy('single', ['wec1'], 'single', { wantSingletonReportedState: true }),
    policy('summed', ['wec1', 'wec2'], 'summed', { statusCollectors: ['sum-available'] }),
  ]);
  const single = await waitUntil('the singleton Deployment\'s status from wec1', () => {
    const d = json('wds1', ['-n', NS, 'get', 'deployment', 'single']);
    return d?.status?.readyReplicas === 2 ? d : undefined;
  }, WAIT, 300);
  t.equal(single.metadata.labels?.['kubestellar.io/executing-count'], '1', 'executing-count 1');
  const sum = await waitUntil('the CombinedStatus SUM of available replicas: 2', () => {
    const items = (json('wds1', ['-n', NS, 'get', 'combinedstatuses.view.kubestellar.io', '-l', `status.kubestellar.io/name=summed,status.kubestellar.io/binding-policy=summed`])?.items ?? []) as Obj[];
    const cell = (items[0]?.results as Obj[] | undefined)?.find((r) => r.name === 'sum-available')?.rows?.[0]?.columns?.[0];
    return cell && (cell.float ?? cell.string) === '2' ? cell : undefined;
  }, WAIT, 300);
  t.ok(sum, 'SUM 2 (1 in wec1 + 1 in wec2)');
  const multi = await waitUntil('the multi-WEC Deployment\'s status combined over wec1 and wec2', () => {
    const d = json('wds1', ['-n', NS, 'get', 'deployment', 'multi']);
    return d?.status?.readyReplicas === 2 ? d : undefined;
  }, WAIT, 300);
  t.equal(multi.metadata.annotations?.['view.kubestellar.io/status-returned-from'], 'wec1,wec2', 'combined from both');
  // In bundled mode the status comes back in the works themselves: no WorkStatus for these objects.
  const workStatusesOf = (cluster: string, name: string) => ((json('its1', ['-n', cluster, 'get', 'workstatuses'])?.items ?? []) as Obj[]).filter((w) => w.spec.sourceRef.name === name);
  t.same(workStatusesOf('wec1', 'single'), [], 'no WorkStatus of single: its work carries its status');
  const carrier = ((json('its1', ['-n', 'wec1', 'get', 'manifestworks'])?.items ?? []) as Obj[]).find((w) => (w.spec.workload.manifests as Obj[]).some((m) => m.metadata.name === 'single'));
  const feedback = ((carrier?.status?.resourceStatus?.manifests ?? []) as Obj[]).find((m) => m.resourceMeta.name === 'single')?.statusFeedback?.values as Obj[] | undefined;
  t.equal(feedback?.find((v) => v.name === 'view.kubestellar.io/status.readyReplicas')?.fieldValue?.jsonRaw, '2', 'the work\'s feedback says readyReplicas 2');
  // A status change in wec1 comes back through the work.
  kcOk('wds1', ['-n', NS, 'scale', 'deployment', 'single', '--replicas', '3']);
  await waitUntil('single scaled: readyReplicas 3 returned', () => json('wds1', ['-n', NS, 'get', 'deployment', 'single'])?.status?.readyReplicas === 3, WAIT, 300);
  for (const p of ['single', 'summed', 'multi']) await waitUntil(`${p} Ready`, () => ready(p)?.status === 'True', WAIT, 300);

  // A revoked grant in bundled mode: a ClusterRoleBinding and a PriorityClass placed in wec1 by the
  // admin executor; the policy switched to the default executor, which may write neither, moves them
  // to a work of another executor group whose apply is refused. The work that applied them keeps
  // them (owned, said in the policy's status) until the WDS deletes them; then they go from wec1.
  const viewKubeconfig = path.join(dir, 'kubeconfig-view');
  t.equal(ksview(['kubeconfig', '--dir', dir, '--view', '-o', viewKubeconfig]).status, 0, 'ksview kubeconfig --view');
  const view = (args: string[], input?: string) => {
    const r = spawnSync('kubectl', ['--kubeconfig', viewKubeconfig, '--context', 'wds1-view', ...args], { encoding: 'utf8', input });
    if (r.status !== 0) throw new Error(`kubectl --context wds1-view ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const contractorIsAdmin = () => kc('wec1', ['auth', 'can-i', '*', '*', '--as', 'contractor']).stdout.trim() === 'yes';
  const grantOwners = () => (json('wec1', ['get', 'clusterrolebinding', 'contractor-admin'])?.metadata?.ownerReferences ?? []) as Obj[];
  view(['apply', '-f', '-'], [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'contractor-admin', labels: { grant: 'temp' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'contractor' }] },
    { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'contractor-priority', labels: { grant: 'temp' } }, value: 1000 },
  ].map((o) => YAML.stringify(o)).join('---\n'));
  apply('wds1', [{ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: 'grants' }, spec: {
    clusterSelectors: [{ matchLabels: { name: 'wec1' } }],
    downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterrolebindings'], objectSelectors: [{ matchLabels: { grant: 'temp' } }] },
      { apiGroup: 'scheduling.k8s.io', resources: ['priorityclasses'], objectSelectors: [{ matchLabels: { grant: 'temp' } }] }],
    executor: { serviceAccount: ADMIN_EXECUTOR } } }]);
  await waitUntil('wec1: contractor is cluster-admin (the grant applied by the admin executor)', contractorIsAdmin, WAIT, 300);
  await waitUntil('wec1: the PriorityClass applied', () => json('wec1', ['get', 'priorityclass', 'contractor-priority']) !== undefined, WAIT, 300);
  kcOk('wds1', ['patch', 'bindingpolicy', 'grants', '--type=merge', '-p', JSON.stringify({ spec: { executor: { serviceAccount: DEFAULT_EXECUTOR } } })]);
  const policyErrors = () => ((json('wds1', ['get', 'bindingpolicy', 'grants'])?.status?.errors ?? []) as string[]);
  const stays = (what: RegExp) => policyErrors().find((e) => what.test(e) && /stays in the cluster as ManifestWork \S+ applied it/.test(e));
  const heldErrors = await waitUntil('the policy says both refused objects stay as the work that applied them left them', () => {
    const both = [stays(/^cluster wec1 did not apply clusterrolebindings\S* \S*contractor-admin:/), stays(/^cluster wec1 did not apply priorityclasses\S* \S*contractor-priority:/)];
    return both.every(Boolean) ? both : undefined;
  }, WAIT, 300);
  t.match(heldErrors[0], /forbidden/i, 'in the WEC\'s words: the default executor may not write it');
  t.equal(ready('grants')?.status, 'False', 'the policy is not Ready');
  t.ok(contractorIsAdmin(), 'the grant is still in force in wec1 while the WDS still selects it');
  t.ok(grantOwners().some((o) => o.kind === 'AppliedManifestWork'), 'and it is owned by an AppliedManifestWork (the work that applied it)');
  t.ok(json('wec1', ['get', 'priorityclass', 'contractor-priority'])?.metadata?.ownerReferences?.some((o: Obj) => o.kind === 'AppliedManifestWork'), 'the PriorityClass too');
  // Revoked in the WDS: the grant goes from wec1, then the policy.
  view(['delete', 'clusterrolebinding', 'contractor-admin']);
  view(['delete', 'priorityclass', 'contractor-priority']);
  await waitUntil('wec1: contractor is no longer cluster-admin', () => !contractorIsAdmin(), WAIT, 300);
  await waitUntil('wec1: the PriorityClass gone', () => json('wec1', ['get', 'priorityclass', 'contractor-priority']) === undefined, WAIT, 300);
  kcOk('wds1', ['delete', 'bindingpolicy', 'grants', '--timeout=90s']);
  await waitUntil('no work of the grants policy left in wec1\'s mailbox', () =>
    ((json('its1', ['-n', 'wec1', 'get', 'manifestworks', '-l', 'bindingpolicy.view.kubestellar.io/grants'])?.items ?? []) as Obj[]).length === 0, WAIT, 300);
  t.notOk(contractorIsAdmin(), 'the grant did not outlive its revocation');

  // N changed: serve restarted with 5, then with 1 (a work per object again); nothing re-created.
  const kept = { wec1: uids('wec1'), wec2: uids('wec2') };
  const deployUid = json('wec1', ['-n', NS, 'get', 'deployment', 'single'])?.metadata.uid as string;
  for (const n of [5, 1]) {
    const again = ksview(['spaces', 'up', ...flags, '--max-objects-per-work', String(n)]);
    t.equal(again.status, 0, `spaces up --max-objects-per-work ${n}: ${again.stderr.trim().split('\n').pop()}`);
    t.match(again.stderr, /started ksview serve for wds1/, 'serve restarted with it');
    for (const c of ['wec1', 'wec2'] as const) {
      await waitUntil(`${c}: works of at most ${n} manifests`, () => {
        const ws = bundledWorks(c, 'cm-');
        return ws.length > 0 && ws.every(([, w]) => w.manifests.length <= n) && ws.flatMap(([, w]) => w.manifests).filter((m) => m.startsWith('cm-')).length === 20 ? ws : undefined;
      }, WAIT, 300);
      // The agent has acted on the repacked works once each AppliedManifestWork records exactly the
      // ConfigMaps its work now carries (and none is left recording one for a work that went).
      await waitUntil(`${c}: the agent applied the repacked works`, () => {
        const carried = new Map([...works(c)].map(([name, w]) => [name, w.manifests.filter((m) => m.startsWith('cm-')).sort().join()]));
        const amws = ((json(c, ['get', 'appliedmanifestworks'])?.items ?? []) as Obj[]);
        return amws.every((a) => {
          const recorded = ((a.status?.appliedResources ?? []) as Obj[]).map((r) => r.name as string).filter((m) => m.startsWith('cm-')).sort().join();
          return recorded === (carried.get(a.spec.manifestWorkName as string) ?? '');
        }) && [...carried].every(([name, cms]) => cms === '' || amws.some((a) => a.spec.manifestWorkName === name));
      }, WAIT, 300);
      t.same(uids(c), kept[c], `${c}: N = ${n}, every ConfigMap kept its uid`);
    }
    t.equal(json('wec1', ['-n', NS, 'get', 'deployment', 'single'])?.metadata.uid, deployUid, `N = ${n}: the Deployment kept its uid (its pods were not restarted)`);
  }
  t.ok([...works('wec1').keys()].some((w) => !w.includes('-b')), 'N = 1: works of one object again');
  // A work per object again: the status comes back in WorkStatuses, as it does without bundles.
  await waitUntil('single\'s WorkStatus in wec1 again', () => workStatusesOf('wec1', 'single')[0]?.status?.readyReplicas === 3, WAIT, 300);
  t.equal(json('wds1', ['-n', NS, 'get', 'deployment', 'single'])?.status?.readyReplicas, 3, 'the singleton status is still returned');
  await waitUntil('the policy Ready after the moves', () => ready('bundled')?.status === 'True', WAIT, 300);
});
