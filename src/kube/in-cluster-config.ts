// The connection to the cluster a pod runs in (client-go's rest.InClusterConfig): the
// kube-apiserver at KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, verified against the
// ServiceAccount's ca.crt, with the ServiceAccount's token. As client-go does, the token file is
// read again every minute (the kubelet rotates projected tokens), so a long-running server keeps a
// valid token without relying on --service-account-extend-token-expiration. Not in a pod (no
// variables, no token): a UserError saying so.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import YAML from 'yaml';
import { UserError } from '../util/user-error.js';
import { fsProblem } from '../util/fs-error.js';
import { upstreamFromKubeconfigText, type Upstream } from './upstream.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_REFRESH_MS = 60_000;

export interface InClusterUpstream {
  up: Upstream;
  /** Stops re-reading the token. */
  stop(): void;
}

/** `flag`: the option that gives a kubeconfig instead, named by the error outside a pod. */
export async function inClusterUpstream(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR, flag = '--hosting-kubeconfig'): Promise<InClusterUpstream> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new UserError(`not running in a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset): give ${flag}`);
  const read = (name: string) => {
    try {
      return readFileSync(`${dir}/${name}`, 'utf8');
    } catch (err) {
      throw new UserError(`in-cluster configuration: ${dir}/${name}: ${fsProblem(err)}`);
    }
  };
  const server = `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  const kubeconfig = YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'in-cluster',
    clusters: [{ name: 'in-cluster', cluster: { server, 'certificate-authority-data': Buffer.from(read('ca.crt')).toString('base64') } }],
    users: [{ name: 'in-cluster', user: { token: read('token').trim() } }],
    contexts: [{ name: 'in-cluster', context: { cluster: 'in-cluster', user: 'in-cluster' } }],
  });
  const up = await upstreamFromKubeconfigText(kubeconfig, 'in-cluster', { allowCredentialPlugins: false });
  const timer = setInterval(() => {
    try {
      const token = readFileSync(`${dir}/token`, 'utf8').trim();
      if (token) up.authorization = `Bearer ${token}`;
    } catch { /* keep the last token: the kubelet replaces the file atomically */ }
  }, TOKEN_REFRESH_MS);
  timer.unref();
  return { up, stop: () => clearInterval(timer) };
}
