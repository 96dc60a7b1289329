// Command lines of the processes behind local spaces. WDS and ITS are spaces, not clusters: their
// kube-controller-manager runs only the namespace and garbage-collector controllers, and a WDS's
// also the clusterrole-aggregation controller, so that its built-in admin, edit and view hold the
// rules they hold in every WEC (Kubernetes' RBAC escalation checks of the view and of the WDS
// weigh a binding to them by those rules). WECs run the full controller set, a scheduler and
// kwok, so Deployments really become Available there.
// etcd serves TLS only and asks every client for a certificate of its own CA, on both its URLs
// (component-certs.ts): the kube-apiservers present theirs; a local user without it gets nothing.
import path from 'node:path';
import { admissionConfigFile, admissionPlugins } from './admission-config.js';
import { etcdPkiFiles } from './component-certs.js';
import { runsScheduler, wdsSpaces, type SpaceLayout, type SpacesLayout } from './layout.js';
import { podApiserverAddress, portBaseOf } from './node-layout.js';
import { FRONT_PROXY_CLIENT_CN, spacePkiFiles } from './space-pki.js';

export const SERVICE_CIDR = '10.96.0.0/16';

export const etcdClientUrl = (layout: SpacesLayout): string => `https://127.0.0.1:${layout.etcdClientPort}`;

export function etcdArgs(layout: SpacesLayout): string[] {
  const peer = `https://127.0.0.1:${layout.etcdPeerPort}`;
  const client = etcdClientUrl(layout);
  const pki = etcdPkiFiles(layout.dir);
  return [
    '--name=ksview',
    `--data-dir=${path.join(layout.dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--cert-file=${pki.serverCert}`,
    `--key-file=${pki.serverKey}`,
    '--client-cert-auth=true',
    `--trusted-ca-file=${pki.caCert}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=ksview=${peer}`,
    `--peer-cert-file=${pki.peerCert}`,
    `--peer-key-file=${pki.peerKey}`,
    '--peer-client-cert-auth=true',
    `--peer-trusted-ca-file=${pki.caCert}`,
    '--initial-cluster-state=new',
    '--quota-backend-bytes=8589934592',
    '--auto-compaction-retention=5m',
    '--auto-compaction-mode=periodic',
    '--logger=zap',
    '--log-outputs=stderr',
  ];
}

/**
 * With real nodes (`--real-nodes`), what changes for the kube-apiservers: every one stays on
 * 127.0.0.1 (pods reach it at the DNATed address of ./node-layout.ts, which its serving
 * certificate carries); a space with a node advertises that address, so its `kubernetes` Service
 * has an endpoint pods' in-cluster config reaches, authorizes with Node,RBAC and admits with
 * NodeRestriction (a kubelet reaches only its own node and pods' objects, as in kubeadm's
 * clusters), and calls kubelets' API (logs, exec) with its admin certificate; wds1 routes
 * aggregated requests (and, in 1.33, admission webhook calls: the same resolver,
 * cmd/kube-apiserver/app/server.go buildServiceResolver) to the Service's endpoints, which are the
 * server pods' IPs, routable from the host.
 */
function realNodeApiserverArgs(layout: SpacesLayout, space: SpaceLayout): { advertise: string; authorization: string; reconciler: string; extra: string[] } {
  if (layout.realNodes && space.realNode) {
    const pki = spacePkiFiles(space.dir);
    return {
      advertise: podApiserverAddress(portBaseOf(layout)),
      authorization: 'Node,RBAC',
      reconciler: 'lease',
      extra: [
        '--enable-admission-plugins=NodeRestriction',
        `--kubelet-client-certificate=${pki.adminCert}`,
        `--kubelet-client-key=${pki.adminKey}`,
        '--kubelet-preferred-address-types=InternalIP',
      ],
    };
  }
  // Only the WDS the chart's pods serve (wds1) dials endpoints; the others' serve is a process,
  // registered with an ExternalName Service, which aggregator routing refuses.
  const podServed = layout.realNodes && space.role === 'wds' && wdsSpaces(layout)[0]?.name === space.name;
  const routing = podServed ? ['--enable-aggregator-routing=true'] : [];
  return { advertise: '127.0.0.1', authorization: 'RBAC', reconciler: 'none', extra: routing };
}

export function apiserverArgs(layout: SpacesLayout, space: SpaceLayout): string[] {
  const pki = spacePkiFiles(space.dir);
  const etcd = etcdPkiFiles(layout.dir);
  const real = realNodeApiserverArgs(layout, space);
  return [
    `--etcd-servers=${etcdClientUrl(layout)}`,
    `--etcd-cafile=${etcd.caCert}`,
    `--etcd-certfile=${etcd.apiserverClientCert}`,
    `--etcd-keyfile=${etcd.apiserverClientKey}`,
    `--etcd-prefix=/ksview/${space.name}`,
    '--bind-address=127.0.0.1',
    `--advertise-address=${real.advertise}`,
    `--secure-port=${space.apiserverPort}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--authorization-mode=${real.authorization}`,
    `--endpoint-reconciler-type=${real.reconciler}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    `--service-account-issuer=https://${space.name}.ksview.local`,
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    `--api-audiences=https://${space.name}.ksview.local`,
    // The aggregation layer: kube-apiserver authenticates to aggregated servers with this client
    // cert and tells them the user in X-Remote-* headers.
    `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_CN}`,
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
    `--proxy-client-key-file=${pki.frontProxyClientKey}`,
    '--allow-privileged=true',
    '--profiling=false',
    `--cert-dir=${path.join(space.dir, 'apiserver-certs')}`,
    // MutatingAdmissionPolicy is alpha in 1.33 (off by default): served here so that the view's
    // denatured MutatingAdmissionPolicy(Binding) can be used and compared with the native kind.
    '--feature-gates=MutatingAdmissionPolicy=true',
    '--runtime-config=admissionregistration.k8s.io/v1alpha1=true',
    // A WDS calls the view's admission webhooks with its front-proxy client certificate
    // (./webhook-client.ts): the server answers reviews from nobody else. A space with a real node
    // enforces Pod Security baseline by default (./pod-security.ts). One file: ./admission-config.ts.
    ...(admissionPlugins(layout, space).length > 0 ? [`--admission-control-config-file=${admissionConfigFile(space)}`] : []),
    ...real.extra,
  ];
}

/** What kube-controller-manager and kube-scheduler share: one kubeconfig for all, loopback HTTPS on `port`, no leader election. */
function controlPlaneComponentArgs(kubeconfig: string, port: number, certDir: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--leader-elect=false',
    '--profiling=false',
  ];
}

export function controllerManagerArgs(space: SpaceLayout, kubeconfig: string): string[] {
  const pki = spacePkiFiles(space.dir);
  const common = controlPlaneComponentArgs(kubeconfig, space.controllerManagerPort, path.join(space.dir, 'kcm-certs'));
  if (space.role === 'wds') {
    return [...common, '--controllers=namespace-controller,garbage-collector-controller,clusterrole-aggregation-controller'];
  }
  if (space.role === 'its') {
    // ResourceQuotas work in the ITS as in any hub: a mailbox's bounds what its agent may write
    // there (docs/upsync.md, charts/kubestellar-view/files/its/mailbox-quota.yaml).
    return [...common, '--controllers=namespace-controller,garbage-collector-controller,resourcequota-controller'];
  }
  if (!runsScheduler(space)) {
    return [...common, '--controllers=namespace-controller,garbage-collector-controller'];
  }
  // WECs and the hosting space are clusters: every controller, the serviceaccount-token one and
  // the root CA publisher included, so pods get in-cluster config.
  return [
    ...common,
    '--controllers=*',
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--allocate-node-cidrs=false',
  ];
}

export function schedulerArgs(space: SpaceLayout, kubeconfig: string): string[] {
  return controlPlaneComponentArgs(kubeconfig, space.schedulerPort, path.join(space.dir, 'scheduler-certs'));
}
