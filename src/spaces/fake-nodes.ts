// The fake nodes of a WEC: Node objects that kwok manages (it selects them by annotation), with
// room for many pods, so the scheduler places pods and kwok reports them Running.
import * as k8s from '@kubernetes/client-node';

export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const FAKE_NODES_PER_WEC = 2;

export function fakeNode(name: string, index: number): k8s.V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/role': 'agent',
        'node-role.kubernetes.io/agent': '',
        type: 'kwok',
      },
    },
    spec: { podCIDR: `10.244.${index}.0/24`, podCIDRs: [`10.244.${index}.0/24`] },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      nodeInfo: {
        architecture: 'amd64', bootID: '', containerRuntimeVersion: 'kwok', kernelVersion: '',
        kubeProxyVersion: '', kubeletVersion: 'kwok', machineID: '', operatingSystem: 'linux',
        osImage: 'kwok', systemUUID: '',
      },
    },
  };
}

export async function ensureFakeNodes(kc: k8s.KubeConfig, spaceName: string): Promise<string[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const names: string[] = [];
  for (let i = 0; i < FAKE_NODES_PER_WEC; i++) {
    const name = `${spaceName}-node-${i}`;
    names.push(name);
    try {
      await core.createNode({ body: fakeNode(name, i) });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
  return names;
}

/** True when every named node reports Ready=True (kwok is heart-beating them). */
export async function nodesReady(kc: k8s.KubeConfig, names: string[]): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const list = await core.listNode();
  return names.every((n) => list.items.find((node) => node.metadata?.name === n)?.status?.conditions
    ?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

/** Pods cannot be created until the service-account controller made `default` in `default`. */
export async function defaultServiceAccountExists(kc: k8s.KubeConfig): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  try {
    await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
    return true;
  } catch {
    return false;
  }
}
