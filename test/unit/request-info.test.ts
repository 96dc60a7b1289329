import t, { type Test } from 'tap';
import { assertSafePath, groupVersionPath, parseRequestInfo } from '../../src/kube/request-info.js';
import { StatusError } from '../../src/kube/status.js';

const pick = (path: string) => {
  const i = parseRequestInfo(path);
  return { isResourceRequest: i.isResourceRequest, group: i.group, version: i.version, namespace: i.namespace,
    resource: i.resource, name: i.name, subresource: i.subresource, legacyWatch: i.legacyWatch };
};
const info = (o: Partial<ReturnType<typeof pick>>) => ({
  isResourceRequest: true, group: '', version: '', namespace: '', resource: '', name: '', subresource: '', legacyWatch: false, ...o,
});

t.test('core and group resources, namespaced and cluster-scoped', async (t) => {
  t.strictSame(pick('/api/v1/pods'), info({ version: 'v1', resource: 'pods' }));
  t.strictSame(pick('/api/v1/namespaces/default/pods/p1/log'),
    info({ version: 'v1', namespace: 'default', resource: 'pods', name: 'p1', subresource: 'log' }));
  t.strictSame(pick('/apis/apps/v1/namespaces/ns1/deployments/web/scale'),
    info({ group: 'apps', version: 'v1', namespace: 'ns1', resource: 'deployments', name: 'web', subresource: 'scale' }));
  t.strictSame(pick('/apis/rbac.authorization.k8s.io/v1/clusterroles/admin'),
    info({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', name: 'admin' }));
  t.strictSame(pick('/apis/apps/v1/namespaces/ns1/deployments'),
    info({ group: 'apps', version: 'v1', namespace: 'ns1', resource: 'deployments' }));
  t.equal(parseRequestInfo('/api/v1/pods').path, '/api/v1/pods');
});

t.test('namespaces themselves, with their status and finalize subresources', async (t) => {
  t.strictSame(pick('/api/v1/namespaces'), info({ version: 'v1', resource: 'namespaces' }));
  t.strictSame(pick('/api/v1/namespaces/ns1'), info({ version: 'v1', namespace: 'ns1', resource: 'namespaces', name: 'ns1' }));
  t.strictSame(pick('/api/v1/namespaces/ns1/status'),
    info({ version: 'v1', namespace: 'ns1', resource: 'namespaces', name: 'ns1', subresource: 'status' }));
  t.strictSame(pick('/api/v1/namespaces/ns1/finalize'),
    info({ version: 'v1', namespace: 'ns1', resource: 'namespaces', name: 'ns1', subresource: 'finalize' }));
  // A resource that merely starts like a namespace subresource is still a namespaced resource.
  t.strictSame(pick('/api/v1/namespaces/ns1/secrets/status'),
    info({ version: 'v1', namespace: 'ns1', resource: 'secrets', name: 'status' }));
});

t.test('the legacy /watch/ prefix', async (t) => {
  t.strictSame(pick('/api/v1/watch/namespaces/ns1/pods/p1'),
    info({ version: 'v1', namespace: 'ns1', resource: 'pods', name: 'p1', legacyWatch: true }));
  t.strictSame(pick('/apis/apps/v1/watch/deployments'),
    info({ group: 'apps', version: 'v1', resource: 'deployments', legacyWatch: true }));
});

t.test('discovery and non-API paths are not resource requests', async (t) => {
  t.strictSame(pick('/api'), info({ isResourceRequest: false }));
  t.strictSame(pick('/api/v1'), info({ isResourceRequest: false, version: 'v1' }));
  t.strictSame(pick('/apis'), info({ isResourceRequest: false }));
  t.strictSame(pick('/apis/apps'), info({ isResourceRequest: false, group: 'apps' }));
  t.strictSame(pick('/apis/apps/v1'), info({ isResourceRequest: false, group: 'apps', version: 'v1' }));
  t.strictSame(pick('/apis/apps/v1/'), info({ isResourceRequest: false, group: 'apps', version: 'v1' }));
  for (const p of ['/version', '/openapi/v3', '/healthz', '/']) t.equal(parseRequestInfo(p).isResourceRequest, false, p);
});

function rejected(t: Test, path: string) {
  try {
    assertSafePath(path);
    t.fail(`${path} accepted`);
  } catch (e) {
    t.ok(e instanceof StatusError, `${path}: a StatusError`);
    t.equal((e as StatusError).code, 400, `${path}: code 400`);
    t.equal((e as StatusError).status.reason, 'BadRequest', `${path}: reason BadRequest`);
  }
}

t.test('assertSafePath refuses paths that could address something else upstream', async (t) => {
  for (const p of [
    '/api/v1/namespaces/../secrets',
    '/api/v1/namespaces/ns1/pods/..',
    '/api/v1/./pods',
    '/api/v1/namespaces/%2e%2e/secrets',
    '/api/v1/namespaces/ns1%2fsecrets',
    '/api/v1/namespaces/ns1%2Fsecrets',
    '/api/v1/namespaces/ns1%5csecrets',
    '/api/v1/namespaces/ns1%5Csecrets',
    '/api/v1/namespaces/ns1\\secrets',
    '/api/v1/namespaces/ns1%00/pods',
    '/api/v1/namespaces/%zz/pods',
    '/api/v1/namespaces/%E0%A4%A/pods',
    '/api/v1/namespaces/ns1%',
  ]) rejected(t, p);
});

t.test('assertSafePath accepts ordinary paths, including names with dots', async (t) => {
  for (const p of ['/api/v1/namespaces/default/pods', '/apis/apps/v1/deployments', '/api/v1/configmaps/a..b',
    '/api/v1/namespaces/ns1/configmaps/.hidden', '/api/v1/namespaces/ns1/configmaps/my%20cm', '/']) {
    t.doesNotThrow(() => assertSafePath(p), p);
  }
});

t.test('groupVersionPath is the way back', async (t) => {
  t.equal(groupVersionPath('', 'v1'), '/api/v1');
  t.equal(groupVersionPath('apps', 'v1'), '/apis/apps/v1');
  for (const [g, v] of [['', 'v1'], ['rbac.authorization.k8s.io', 'v1']] as const) {
    const info = parseRequestInfo(`${groupVersionPath(g, v)}/things`);
    t.strictSame([info.group, info.version, info.resource], [g, v, 'things']);
  }
});

t.test('segments are decoded as kube-apiserver routes them, so percent-encoding cannot change what a path addresses', async (t) => {
  const roles = parseRequestInfo('/apis/rbac.authorization.k8s.io/v1/clusterrole%73/a%3Ab');
  t.strictSame([roles.group, roles.resource, roles.name], ['rbac.authorization.k8s.io', 'clusterroles', 'a:b']);
  const group = parseRequestInfo('/apis/control%2Ekubestellar.io/v1alpha1/bindingpolicies');
  t.equal(group.group, 'control.kubestellar.io');
  const ns = parseRequestInfo('/api/v1/namespaces/n%73/configmaps/my%20cm');
  t.strictSame([ns.namespace, ns.resource, ns.name], ['ns', 'configmaps', 'my cm']);
  t.equal(parseRequestInfo('/api/v1/configmaps/100%').name, '100%', 'a malformed escape stays as sent');
});
