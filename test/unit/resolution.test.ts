import t from 'tap';
import { isEmptySelector, LabelSelectorError, matchesLabelSelector, validateLabelSelector } from '../../src/kube/label-selector.js';
import { clauseMatches, policyClusters, resolve, type Cluster, type Policy, type WorkloadRef } from '../../src/controllers/model/resolution.js';

t.test('label selectors as Kubernetes evaluates them', async (t) => {
  const labels = { app: 'nginx', tier: 'web' };
  t.ok(matchesLabelSelector({}, labels), '{} matches everything');
  t.ok(matchesLabelSelector({ matchLabels: { app: 'nginx' } }, labels));
  t.notOk(matchesLabelSelector({ matchLabels: { app: 'nginx', tier: 'db' } }, labels));
  t.ok(matchesLabelSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] }, labels));
  t.notOk(matchesLabelSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }, labels));
  t.ok(matchesLabelSelector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels), 'NotIn holds for a missing key');
  t.ok(matchesLabelSelector({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, labels));
  t.notOk(matchesLabelSelector({ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, labels));
  t.notOk(matchesLabelSelector({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, labels), 'In fails for a missing key');
  t.throws(() => validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Equals', values: ['x'] }] }, 'spec.clusterSelectors[0]'),
    new LabelSelectorError('spec.clusterSelectors[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'));
  t.throws(() => matchesLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In' }] }, labels), LabelSelectorError);
  t.throws(() => matchesLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, labels), LabelSelectorError);
  t.ok(isEmptySelector({}));
  t.ok(isEmptySelector({ matchLabels: {}, matchExpressions: [] }));
  t.notOk(isEmptySelector({ matchLabels: { a: 'b' } }));
});

const deploy: WorkloadRef = { group: 'apps', resource: 'deployments', namespace: 'demo', name: 'web', labels: { app: 'nginx' } };
const role: WorkloadRef = { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: '', name: 'reader', labels: { app: 'nginx' } };
const cm: WorkloadRef = { group: '', resource: 'configmaps', namespace: 'demo', name: 'settings', labels: {} };

t.test('downsync clauses: KubeStellar DownsyncObjectTest semantics', async (t) => {
  t.ok(clauseMatches({}, deploy, {}), 'an empty clause matches everything');
  t.ok(clauseMatches({ apiGroup: 'apps' }, deploy, {}));
  t.notOk(clauseMatches({ apiGroup: '' }, deploy, {}), '"" is the core group');
  t.ok(clauseMatches({ apiGroup: '' }, cm, {}));
  t.ok(clauseMatches({ apiGroup: null }, cm, {}), 'null matches every group');
  t.ok(clauseMatches({ resources: ['deployments', 'services'] }, deploy, {}));
  t.ok(clauseMatches({ resources: ['*'] }, deploy, {}));
  t.notOk(clauseMatches({ resources: ['services'] }, deploy, {}));
  t.ok(clauseMatches({ objectNames: ['web'] }, deploy, {}));
  t.notOk(clauseMatches({ objectNames: ['api'] }, deploy, {}));
  t.ok(clauseMatches({ namespaces: ['demo'] }, deploy, {}));
  t.notOk(clauseMatches({ namespaces: ['other'] }, deploy, {}));
  t.notOk(clauseMatches({ namespaces: ['demo'] }, role, {}), 'a namespace list other than "*" never matches a cluster-scoped object');
  t.ok(clauseMatches({ namespaces: ['*'] }, role, {}), '"*" does');
  t.ok(clauseMatches({ namespaceSelectors: [{ matchLabels: { env: 'prod' } }] }, deploy, { env: 'prod' }));
  t.notOk(clauseMatches({ namespaceSelectors: [{ matchLabels: { env: 'prod' } }] }, deploy, { env: 'dev' }));
  t.notOk(clauseMatches({ namespaceSelectors: [{ matchLabels: { env: 'prod' } }] }, role, {}), 'a cluster-scoped object needs a {} namespace selector');
  t.ok(clauseMatches({ namespaceSelectors: [{ matchLabels: { env: 'prod' } }, {}] }, role, {}));
  t.ok(clauseMatches({ objectSelectors: [{ matchLabels: { app: 'nginx' } }] }, deploy, {}));
  t.notOk(clauseMatches({ objectSelectors: [{ matchLabels: { app: 'nginx' } }] }, cm, {}));
});

const clusters: Cluster[] = [
  { name: 'wec2', labels: { 'location-group': 'edge', zone: 'b' } },
  { name: 'wec1', labels: { 'location-group': 'edge', zone: 'a' } },
  { name: 'core', labels: { 'location-group': 'core' } },
];

t.test('clusters: any clusterSelector; none selects nothing', async (t) => {
  t.same(policyClusters({ clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }] }, clusters), ['wec1', 'wec2']);
  t.same(policyClusters({ clusterSelectors: [{ matchLabels: { zone: 'a' } }, { matchLabels: { 'location-group': 'core' } }] }, clusters), ['core', 'wec1']);
  t.same(policyClusters({ clusterSelectors: [{}] }, clusters), ['core', 'wec1', 'wec2'], '{} picks every cluster');
  t.same(policyClusters({}, clusters), [], 'no selector picks none');
});

t.test('resolve: policies merged, modulations combined and per policy, singleton without narrowing', async (t) => {
  const edge: Policy = { name: 'edge', spec: { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }],
    downsync: [{ objectSelectors: [{ matchLabels: { app: 'nginx' } }], namespaces: ['demo'], statusCollectors: ['replicas'] }] } };
  const core: Policy = { name: 'core', spec: { clusterSelectors: [{ matchLabels: { 'location-group': 'core' } }],
    downsync: [{ resources: ['deployments'], createOnly: true, statusCollectors: ['ready', 'replicas'] }] } };
  const none: Policy = { name: 'none', spec: { clusterSelectors: [{}], downsync: [{ resources: ['secrets'] }] } };
  const r = resolve(deploy, {}, [edge, core, none], clusters);
  t.same(r, {
    clusters: ['core', 'wec1', 'wec2'], policies: ['core', 'edge'], createOnly: true,
    wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors: ['ready', 'replicas'],
    byPolicy: {
      core: { createOnly: true, wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors: ['ready', 'replicas'], clusters: ['core'] },
      edge: { createOnly: false, wantSingletonReportedState: false, wantMultiWECReportedState: false, statusCollectors: ['replicas'], clusters: ['wec1', 'wec2'] },
    },
  });
  t.same(resolve(cm, {}, [edge, core, none], clusters).clusters, [], 'an object no clause selects goes nowhere');

  const single: Policy = { name: 'single', spec: { clusterSelectors: [{ matchLabels: { 'location-group': 'edge' } }],
    downsync: [{ objectNames: ['web'], wantSingletonReportedState: true }] } };
  t.same(resolve(deploy, {}, [single], clusters).clusters, ['wec1', 'wec2'], 'singleton narrows nothing: every selected cluster');
  const merged = resolve(deploy, {}, [single, core], clusters);
  t.same(merged.clusters, ['core', 'wec1', 'wec2'], 'a plain policy keeps its cluster');
  t.equal(merged.wantSingletonReportedState, true);
  t.equal(merged.byPolicy.single?.wantSingletonReportedState, true, 'per policy: the one that asks');
  t.equal(merged.byPolicy.core?.wantSingletonReportedState, false, 'and not the other');
  const specLevel: Policy = { name: 'spec', spec: { ...edge.spec, wantSingletonReportedState: true } };
  t.equal(resolve(deploy, {}, [specLevel], clusters).byPolicy.spec?.wantSingletonReportedState, true, 'the spec-level flag too');
  const multi: Policy = { name: 'multi', spec: { clusterSelectors: [{}], downsync: [{ objectNames: ['web'], wantMultiWECReportedState: true }] } };
  t.equal(resolve(deploy, {}, [multi], clusters).wantMultiWECReportedState, true);
});
