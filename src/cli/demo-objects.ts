// The objects the guided tours write (`ksview demo`, ./demo.ts; `--in-cluster`, ./demo-cluster.ts),
// as a user would write them: a workload, the kinds the view keeps denatured, the BindingPolicies
// and StatusCollectors of each step, and what mallory tries. Text only: nothing here runs.
import YAML from 'yaml';
import { ADMIN_EXECUTOR } from '../spaces/wec-executors.js';

export const DEMO_DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-nginx
  namespace: default
  labels: {app: nginx}
spec:
  replicas: 2
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`;

export const DEMO_VIEW_WORKLOAD = `apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-config
  namespace: demo
  labels: {app: nginx}
data:
  greeting: hello from the view
---
${DEMO_DEPLOYMENT.replace('namespace: default', 'namespace: demo')}`;

// RBAC, a webhook and a quota that would change wds1 if they were real: through the view they are
// stored denatured and do nothing there.
export const DEMO_DENATURED_BUNDLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: demo-alice-admin
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: demo-deny-configmaps
webhooks:
- name: deny.demo.example.com
  clientConfig: {url: "https://127.0.0.1:1/does-not-exist"}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: no-configmaps
  namespace: demo
spec:
  hard: {configmaps: "0"}
`;

export const DEMO_BINDING_POLICY = `apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-nginx
spec:
  clusterSelectors:
  - matchLabels: {location-group: edge}
  downsync:
  - objectSelectors:
    - matchLabels: {app: nginx}
    namespaces: [demo]
`;

// A binding that is data in wds1 and grants in wec1 only: its own policy selects it for wec1.
export const DEMO_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: demo-bob-view
  labels: {app: demo-rbac}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
`;

// The default executor may not write cluster RBAC in the WECs: this policy names the admin
// executor (an admin's choice; its author must be allowed to impersonate it in wds1).
export const DEMO_RBAC_POLICY = `apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-rbac
spec:
  clusterSelectors:
  - matchLabels: {name: wec1}
  downsync:
  # RBAC only: the admin executor would apply whatever else carries the label (a webhook, a Pod),
  # unchecked; RBAC has passed Kubernetes' escalation check in the view.
  - apiGroup: rbac.authorization.k8s.io
    resources: [clusterrolebindings, clusterroles, rolebindings, roles]
    objectSelectors:
    - matchLabels: {app: demo-rbac}
  executor:
    serviceAccount: {namespace: ${ADMIN_EXECUTOR.namespace}, name: ${ADMIN_EXECUTOR.name}}
`;

// Singleton status: the demo Deployment's status in wec1 comes back into wds1.
export const DEMO_STATUS_POLICY = `apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-status
spec:
  clusterSelectors:
  - matchLabels: {name: wec1}
  downsync:
  - objectSelectors:
    - matchLabels: {app: nginx}
    namespaces: [demo]
    resources: [deployments]
    wantSingletonReportedState: true
`;

// CombinedStatus: a StatusCollector summing availableReplicas over every WEC the Deployment goes to.
export const DEMO_COMBINED = `apiVersion: control.kubestellar.io/v1alpha1
kind: StatusCollector
metadata:
  name: demo-available
spec:
  combinedFields:
  - name: sum
    type: SUM
    subject: returned.status.availableReplicas
---
apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-combined
spec:
  clusterSelectors:
  - matchLabels: {location-group: edge}
  downsync:
  - objectSelectors:
    - matchLabels: {app: nginx}
    namespaces: [demo]
    resources: [deployments]
    statusCollectors: [demo-available]
`;

/** mallory: a WDS user with only the two roles docs/view.md tells an admin to grant (natively in wds1). */
export const DEMO_MALLORY_RIGHTS = ['kubestellar-view:user', 'kubestellar-view:denatured-editor'].map((role) => YAML.stringify({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `demo-mallory-${role.split(':')[1]}` },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
})).join('---\n');

/** What mallory tries: cluster-admin for herself, labelled for the demo-rbac policy (docs/security.md, the fleet's first example). */
export const DEMO_MALLORY_BINDING = YAML.stringify({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'demo-mallory-admin', labels: { app: 'demo-rbac' } },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
});

// Upsync (docs/upsync.md): the WECs' storage, as their own admins provide it (a hostPath PV per
// replica, bound by the WEC's own PV controller), then a StatefulSet downsynced to both WECs whose
// Pods and PVCs, born there, come home; a StatusCollector counts them by cluster and phase.
export const demoPersistentVolumes = (n: number) => Array.from({ length: n }, (_, i) => YAML.stringify({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `demo-db-pv-${i}`, labels: { app: 'demo-db' } },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/tmp/kubestellar-view-demo-db-${i}` } },
})).join('---\n');

export const DEMO_UPSYNC = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: demo-db
  namespace: demo
  labels: {app: demo-db}
spec:
  serviceName: demo-db
  replicas: 2
  selector:
    matchLabels: {app: demo-db}
  template:
    metadata:
      labels: {app: demo-db}
    spec:
      containers:
      - name: db
        image: postgres:17
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`;

/** The policy and collector of the upsync step: control objects, written in wds1 itself. */
export const DEMO_UPSYNC_POLICY = `apiVersion: control.kubestellar.io/v1alpha1
kind: StatusCollector
metadata:
  name: demo-phases
spec:
  groupBy:
  - {name: cluster, def: inventory.name}
  - {name: phase, def: returned.status.phase}
  combinedFields:
  - {name: count, type: COUNT}
---
apiVersion: control.kubestellar.io/v1alpha1
kind: BindingPolicy
metadata:
  name: demo-upsync
spec:
  clusterSelectors:
  - matchLabels: {location-group: edge}
  downsync:
  - namespaces: [demo]
    objectSelectors:
    - matchLabels: {app: demo-db}
  upsync:
  - associatedWith: downsync
    statusCollectors: [demo-phases]
`;
