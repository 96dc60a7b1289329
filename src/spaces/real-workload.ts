// The workload the real-node tour and tests deliver to wec1: a Deployment of the ksview-httpd
// image (./node-images.ts, imported into every node: no registry, so imagePullPolicy Never), with a
// real readiness probe, as Pod Security `restricted` wants it (the WECs' default executor may
// create it in any namespace of a user). The demo's nginx needs a registry; this does not.
import YAML from 'yaml';
import { HTTPD_IMAGE, HTTPD_PORT } from './node-images.js';

export function httpdDeployment(o: { namespace: string; name: string; labels: Record<string, string>; replicas?: number }): string {
  return YAML.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: o.name, namespace: o.namespace, labels: o.labels },
    spec: {
      replicas: o.replicas ?? 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': o.name } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': o.name } },
        spec: {
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{
            name: 'httpd',
            image: HTTPD_IMAGE,
            imagePullPolicy: 'Never',
            ports: [{ name: 'http', containerPort: HTTPD_PORT }],
            readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 2 },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
          }],
        },
      },
    },
  });
}
