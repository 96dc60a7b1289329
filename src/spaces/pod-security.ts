// Pod Security in the spaces whose node is real (host1, wec1): kubelet there runs as root in the
// machine's mount namespace, so a pod with hostPID, privileged or a hostPath of / would be root on
// the machine. Their kube-apiservers get, in their AdmissionConfiguration, the PodSecurity
// plugin's cluster-wide defaults as Kubernetes documents them ("Apply Pod Security Standards at
// the Cluster Level"): enforce baseline, audit and warn restricted, at the latest version. No
// exemption: nothing runs in kube-system (kube-proxy is a process of the node) and none of our
// pods needs more than restricted. A namespace label may still choose another level, as
// Kubernetes allows whoever may update that Namespace.
export const POD_SECURITY_DEFAULTS = {
  enforce: 'baseline', 'enforce-version': 'latest',
  audit: 'restricted', 'audit-version': 'latest',
  warn: 'restricted', 'warn-version': 'latest',
} as const;

/** The PodSecurity plugin's entry of an AdmissionConfiguration. */
export function podSecurityPlugin(): object {
  return {
    name: 'PodSecurity',
    configuration: {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { ...POD_SECURITY_DEFAULTS },
      exemptions: { usernames: [], runtimeClasses: [], namespaces: [] },
    },
  };
}
