// How the server decides what a reader may see of the objects the virtual resources speak of
// (src/apiserver/auth/subject-access.ts, docs/security.md D3): SubjectAccessReviews of the reader from
// coarse to fine (cluster, namespace, then by name: RBAC's resourceNames), a denatured kind asked
// in denatured.kubestellar.io, an admin decided per kind without a look at each object, and no
// answer making more than MAX_REVIEWS_PER_ANSWER new reviews (what is left undecided is hidden,
// with a Warning).
import t from 'tap';
import type { Attributes } from '../../src/apiserver/auth/authz.js';
import type { CombinedStatusSource } from '../../src/apiserver/groups/combinedstatuses-resource.js';
import { MAX_REVIEWS_PER_ANSWER, SubjectAccess } from '../../src/apiserver/auth/subject-access.js';
import type { KubeObject } from '../../src/kube/objects.js';
import type { UserInfo } from '../../src/kube/user.js';
import { KindCategories } from '../../src/storage/kind-categories.js';
import { testApp } from '../fixtures/view-app.js';

const VIEW = '/apis/view.kubestellar.io/v1alpha1';
const ALICE = { 'x-test-user': 'alice' };
const resourceOf = (a: Attributes) => ('resource' in a ? a.resource : undefined);

function combinedStatus(subject: [string, string, string, string], name: string): KubeObject {
  const [group, resource, namespace, objectName] = subject;
  return {
    apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'CombinedStatus',
    metadata: {
      name, namespace, uid: `uid-${name}`,
      labels: {
        'status.kubestellar.io/api-group': group, 'status.kubestellar.io/resource': resource, 'status.kubestellar.io/namespace': namespace,
        'status.kubestellar.io/name': objectName, 'status.kubestellar.io/binding-policy': 'team',
      },
    },
  } as KubeObject;
}

const source = (objs: KubeObject[]): CombinedStatusSource => ({
  combinedStatuses: () => objs,
  combinedStatus: (ns, name) => objs.find((o) => o.metadata!.namespace === ns && o.metadata!.name === name),
  onCombinedStatusChange: () => () => {},
});

t.test('reviews go from coarse to fine, and a denatured kind is asked where the view stores it', async (t) => {
  const asked: string[] = [];
  const decider = {
    async decide(_u: UserInfo, a: Attributes) {
      const r = resourceOf(a)!;
      asked.push(`${r.group}/${r.resource} ${r.namespace ?? '*'} ${r.name ?? '*'}`);
      return { allowed: (r.namespace === 'a' && r.name === undefined) || r.name === 'granted', reason: '' };
    },
  };
  const access = new SubjectAccess(decider, new KindCategories());
  const user = { username: 'bob', groups: [], extra: {} };
  const subjects = [
    { group: '', resource: 'configmaps', namespace: 'a', name: 'x' },
    { group: '', resource: 'configmaps', namespace: 'a', name: 'y' },
    { group: '', resource: 'configmaps', namespace: 'b', name: 'granted' },
    { group: '', resource: 'configmaps', namespace: 'b', name: 'no' },
    { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'granted' },
  ];
  const vis = await access.resolve(user, subjects);
  t.same(subjects.map((s) => vis.may(s)), [true, true, true, false, true]);
  t.equal(vis.all, false);
  t.equal(vis.leftOut, 0);
  t.same(asked, [
    '/configmaps * *', 'denatured.kubestellar.io/clusterroles * *',
    '/configmaps a *', '/configmaps b *',
    '/configmaps b granted', '/configmaps b no', 'denatured.kubestellar.io/clusterroles * granted',
  ], 'across the cluster, then per namespace, then per name; ClusterRoles as the view stores them');
  t.notOk(vis.may({ group: '', resource: 'configmaps', namespace: 'c', name: 'never-asked' }), 'a subject not asked about is hidden');
});

t.test('one answer makes at most MAX_REVIEWS_PER_ANSWER new reviews; what is left undecided is hidden, with a Warning', async (t) => {
  let reviews = 0;
  const many = [...Array(MAX_REVIEWS_PER_ANSWER * 2).keys()].map((i) => combinedStatus(['', 'secrets', 'team-b', `s${String(i).padStart(4, '0')}`], `s${i}.p`));
  const { app, close } = await testApp({
    combinedStatuses: source(many),
    allow: (_u, a) => {
      const r = resourceOf(a);
      if (r?.resource === 'combinedstatuses') return true;
      return r?.resource === 'secrets' && r.name !== undefined; // granted by name only: every Secret is a review of its own
    },
    onDecide: () => { reviews++; },
  });
  t.teardown(close);
  const res = await app.inject({ url: `${VIEW}/combinedstatuses`, headers: ALICE });
  t.equal(res.statusCode, 200);
  t.ok(reviews <= MAX_REVIEWS_PER_ANSWER, `${reviews} reviews for ${many.length} objects`);
  const shown = res.json().items.length;
  t.ok(shown > 0 && shown < many.length, `${shown} shown, the rest undecided`);
  t.match(res.headers.warning, new RegExp(`^299 - ".*${many.length - shown} objects were left out of this answer`));
});

t.test('a reader who may get a kind across the cluster is decided with one review for it', async (t) => {
  const asked: string[] = [];
  const access = new SubjectAccess({
    async decide(_u: UserInfo, a: Attributes) {
      const r = resourceOf(a)!;
      asked.push(`${r.group}/${r.resource} ${r.namespace ?? '*'} ${r.name ?? '*'}`);
      return { allowed: r.resource === 'configmaps', reason: '' };
    },
  });
  const user = { username: 'carol', groups: [], extra: {} };
  t.equal(await access.everywhere(user, [{ group: '', resource: 'configmaps' }]), true);
  t.equal(await access.everywhere(user, [{ group: '', resource: 'configmaps' }, { group: '', resource: 'secrets' }]), false);
  const vis = await access.resolve(user, [...Array(1000).keys()].map((i) => ({ group: '', resource: 'configmaps', namespace: `n${i % 50}`, name: `c${i}` })));
  t.equal(vis.all, true);
  t.same(asked.filter((a) => a.startsWith('/configmaps')), ['/configmaps * *', '/configmaps * *', '/configmaps * *'], 'one review per question, never per object');
});
