// What belongs to the WDS itself and is never sent, even by a "*" policy; and what a user wrote,
// which is sent whatever its name.
import t from 'tap';
import { isSystemObject } from '../../src/controllers/placement/system-objects.js';
import type { KubeObject } from '../../src/kube/objects.js';

const core = (resource: string) => ({ group: '', resource });
const obj = (metadata: KubeObject['metadata'], extra: Record<string, unknown> = {}): KubeObject => ({ metadata, ...extra });

t.test('never sent: the WDS\'s own infrastructure', async (t) => {
  const system: [string, { group: string; resource: string }, KubeObject, boolean][] = [
    ['anything in kube-system', core('configmaps'), obj({ name: 'extension-apiserver-authentication', namespace: 'kube-system' }), false],
    ['anything in kube-node-lease', { group: 'coordination.k8s.io', resource: 'leases' }, obj({ name: 'n1', namespace: 'kube-node-lease' }), false],
    ['anything in the project\'s namespace', core('services'), obj({ name: 'ksview', namespace: 'kubestellar-view' }), false],
    ['Namespace default', core('namespaces'), obj({ name: 'default' }), false],
    ['Namespace kube-public', core('namespaces'), obj({ name: 'kube-public' }), false],
    ['kube-root-ca.crt', core('configmaps'), obj({ name: 'kube-root-ca.crt', namespace: 'app' }), false],
    ['default ServiceAccount', core('serviceaccounts'), obj({ name: 'default', namespace: 'app' }), true],
    ['token Secret', core('secrets'), obj({ name: 't', namespace: 'app' }, { type: 'kubernetes.io/service-account-token' }), false],
    ['bootstrap-token Secret', core('secrets'), obj({ name: 'bootstrap-token-abcdef', namespace: 'app' }, { type: 'bootstrap.kubernetes.io/token' }), false],
    ['Service default/kubernetes', core('services'), obj({ name: 'kubernetes', namespace: 'default' }), false],
    ['its Endpoints', core('endpoints'), obj({ name: 'kubernetes', namespace: 'default' }), false],
    ['its EndpointSlice', { group: 'discovery.k8s.io', resource: 'endpointslices' }, obj({ name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } }), false],
    ['a ServiceCIDR', { group: 'networking.k8s.io', resource: 'servicecidrs' }, obj({ name: 'kubernetes' }), false],
    ['an IPAddress', { group: 'networking.k8s.io', resource: 'ipaddresses' }, obj({ name: '10.96.0.1' }), false],
    ['a system PriorityClass', { group: 'scheduling.k8s.io', resource: 'priorityclasses' }, obj({ name: 'system-node-critical' }), false],
    ['a CRD of the project', { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' }, obj({ name: 'bindingpolicies.control.kubestellar.io' }, { spec: { group: 'control.kubestellar.io' } }), false],
    ['a local APIService', { group: 'apiregistration.k8s.io', resource: 'apiservices' }, obj({ name: 'v1.apps' }, { spec: { group: 'apps', version: 'v1' } }), true],
    ['the view\'s APIService', { group: 'apiregistration.k8s.io', resource: 'apiservices' }, obj({ name: 'v1alpha1.view.kubestellar.io' }, { spec: { group: 'view.kubestellar.io', service: { name: 'ksview' } } }), true],
    ['bootstrap RBAC', { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, obj({ name: 'system:discovery' }), true],
    ['bootstrap RBAC by label', { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, obj({ name: 'view', labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } }), true],
    ['the project\'s own RBAC', { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' }, obj({ name: 'kubestellar-view:placement' }), true],
    ['APF bootstrap', { group: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas' }, obj({ name: 'exempt', annotations: { 'apf.kubernetes.io/autoupdate-spec': 'true' } }), true],
  ];
  for (const [what, kind, o, direct] of system) t.ok(isSystemObject(kind, o, direct), what);
});

t.test('sent: what users wrote', async (t) => {
  const user: [string, { group: string; resource: string }, KubeObject, boolean][] = [
    ['a ConfigMap in default', core('configmaps'), obj({ name: 'settings', namespace: 'default' }), false],
    ['a Service in default', core('services'), obj({ name: 'web', namespace: 'default' }), false],
    ['a user Namespace', core('namespaces'), obj({ name: 'app' }), false],
    ['a user PriorityClass', { group: 'scheduling.k8s.io', resource: 'priorityclasses' }, obj({ name: 'high' }), false],
    ['a user CRD', { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' }, obj({ name: 'appwrappers.workload.codeflare.dev' }, { spec: { group: 'workload.codeflare.dev' } }), false],
    ['a `system:` ClusterRole written through the view', { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, obj({ name: 'system:mine' }), false],
    ['a ClusterRole written to the WDS directly', { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, obj({ name: 'reader' }), true],
    ['an aggregated APIService of a user', { group: 'apiregistration.k8s.io', resource: 'apiservices' }, obj({ name: 'v1beta1.metrics.k8s.io' }, { spec: { group: 'metrics.k8s.io', service: { name: 'm' } } }), true],
    ['a user FlowSchema', { group: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas' }, obj({ name: 'mine' }), true],
  ];
  for (const [what, kind, o, direct] of user) t.notOk(isSystemObject(kind, o, direct), what);
});
