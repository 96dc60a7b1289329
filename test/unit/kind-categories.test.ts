import t from 'tap';
import { KindCategories } from '../../src/storage/kind-categories.js';

const cats = new KindCategories();
const cat = (group: string, resource: string) => cats.categorize({ group, resource });

t.test('hidden kinds by default', async (t) => {
  for (const [g, r] of [
    ['', 'events'], ['events.k8s.io', 'events'], ['coordination.k8s.io', 'leases'], ['', 'nodes'], ['', 'nodes/status'],
    ['', 'nodes/proxy'], ['', 'bindings'], ['apps', 'controllerrevisions'],
    ['', 'componentstatuses'], ['certificates.k8s.io', 'certificatesigningrequests'],
    ['authentication.k8s.io', 'tokenreviews'], ['authorization.k8s.io', 'subjectaccessreviews'],
  ] as const) t.equal(cat(g, r), 'hidden', `${r}.${g}`);
});

t.test('every resource of the kubestellar groups is hidden', async (t) => {
  for (const g of ['control.kubestellar.io', 'denatured.kubestellar.io', 'view.kubestellar.io']) {
    t.equal(cat(g, 'anything'), 'hidden', g);
    t.equal(cat(g, 'spaces/proxy'), 'hidden', `${g} subresource`);
    t.ok(cats.isHiddenGroup(g), `${g} is a hidden group`);
  }
  t.notOk(cats.isHiddenGroup('kubestellar.io'));
  t.notOk(cats.isHiddenGroup('apps'));
  t.notOk(cats.isHiddenGroup(''));
});

t.test('a hidden resource name in another group is not hidden', async (t) => {
  t.equal(cat('example.com', 'bindings'), 'natured');
  t.equal(cat('example.com', 'events'), 'natured');
  t.equal(cat('', 'leases'), 'natured');
  t.equal(cat('apps.example.com', 'controllerrevisions'), 'natured');
  t.equal(cat('', 'nodesx'), 'natured');
});

t.test('denatured kinds by default, subresources included', async (t) => {
  // The denatured kinds of the design (docs/view.md, "Denatured kinds").
  for (const [group, resource] of [
    ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations'], ['admissionregistration.k8s.io', 'validatingwebhookconfigurations'],
    ['admissionregistration.k8s.io', 'validatingadmissionpolicies'], ['admissionregistration.k8s.io', 'validatingadmissionpolicybindings'],
    ['apiregistration.k8s.io', 'apiservices'], ['flowcontrol.apiserver.k8s.io', 'flowschemas'], ['flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations'],
    ['rbac.authorization.k8s.io', 'clusterroles'], ['rbac.authorization.k8s.io', 'clusterrolebindings'], ['rbac.authorization.k8s.io', 'roles'],
    ['rbac.authorization.k8s.io', 'rolebindings'], ['', 'limitranges'], ['', 'resourcequotas'], ['', 'serviceaccounts'],
  ] as const) t.equal(cat(group, resource), 'denatured', `${resource}.${group}`);
  t.equal(cat('rbac.authorization.k8s.io', 'clusterroles'), 'denatured');
  t.equal(cat('', 'serviceaccounts/token'), 'denatured');
  t.equal(cat('apiregistration.k8s.io', 'apiservices/status'), 'denatured');
  t.equal(cat('example.com', 'roles'), 'natured', 'roles of another group');
});

t.test('everything else is natured', async (t) => {
  t.equal(cat('apps', 'deployments'), 'natured');
  t.equal(cat('apps', 'deployments/scale'), 'natured');
  t.equal(cat('', 'configmaps'), 'natured');
  t.equal(cat('', 'namespaces'), 'natured');
  t.equal(cat('', 'pods/status'), 'natured');
  t.equal(cat('widgets.example.com', 'widgets'), 'natured');
});

t.test('custom lists replace the defaults; kubestellar groups stay hidden', async (t) => {
  const c = new KindCategories([{ group: 'example.com', resource: 'widgets' }], [{ group: '', resource: 'configmaps' }]);
  t.equal(c.categorize({ group: 'example.com', resource: 'widgets' }), 'hidden');
  t.equal(c.categorize({ group: 'example.com', resource: 'widgets/status' }), 'hidden');
  t.equal(c.categorize({ group: '', resource: 'configmaps' }), 'denatured');
  t.equal(c.categorize({ group: '', resource: 'events' }), 'natured', 'default hidden list replaced');
  t.equal(c.categorize({ group: '', resource: 'serviceaccounts' }), 'natured', 'default denatured list replaced');
  t.equal(c.categorize({ group: 'view.kubestellar.io', resource: 'spaces' }), 'hidden');
  const both = new KindCategories([{ group: '', resource: 'secrets' }], [{ group: '', resource: 'secrets' }]);
  t.equal(both.categorize({ group: '', resource: 'secrets' }), 'hidden', 'hidden wins over denatured');
  const none = new KindCategories([], []);
  t.equal(none.categorize({ group: '', resource: 'events' }), 'natured');
  t.equal(none.categorize({ group: 'denatured.kubestellar.io', resource: 'x' }), 'hidden');
});
