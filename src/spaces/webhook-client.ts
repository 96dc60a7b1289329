// How a WDS's kube-apiserver proves itself to the admission webhooks of `ksview serve`: an
// AdmissionConfiguration (--admission-control-config-file) whose WebhookAdmissionConfiguration
// names a kubeconfig with one user per webhook host, as kube-apiserver looks them up
// (`<service>.<namespace>.svc:<port>`, and without the port for 443). That user is the
// front-proxy client certificate the kube-apiserver already holds for the aggregation layer, so
// the server accepts a review only from a certificate its request-header CA signed with an
// allowed name: the same identity that says "this is the kube-apiserver" on proxied requests.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { SpaceLayout } from './layout.js';
import { spacePkiFiles } from './space-pki.js';

/** Where the spaces' `ksview serve` registers its Service (serve's --namespace and --service). */
export const VIEW_NAMESPACE = 'kubestellar-view';
export const VIEW_SERVICE = 'ksview';
/** The port of the Service a hosted server registers in its WDS (`ksview serve --register-endpoints-from`). */
export const HOSTED_WEBHOOK_PORT = 443;

export interface WebhookClientFiles {
  admissionConfig: string;
  kubeconfig: string;
}

export function webhookClientFiles(spaceDir: string): WebhookClientFiles {
  return {
    admissionConfig: path.join(spaceDir, 'admission', 'admission-config.yaml'),
    kubeconfig: path.join(spaceDir, 'admission', 'webhook-kubeconfig.yaml'),
  };
}

/** The kubeconfig users kube-apiserver picks for calls to the view's webhooks on `port`. */
export function webhookKubeconfig(port: number, certFile: string, keyFile: string): object {
  const host = `${VIEW_SERVICE}.${VIEW_NAMESPACE}.svc`;
  const user = { 'client-certificate': certFile, 'client-key': keyFile };
  return {
    apiVersion: 'v1', kind: 'Config',
    users: [{ name: `${host}:${port}`, user }, ...(port === 443 ? [{ name: host, user }] : [])],
  };
}

/** The webhook plugins' entries of an AdmissionConfiguration, both pointing at that kubeconfig. */
export function webhookPlugins(kubeconfigFile: string): object[] {
  const configuration = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfigFile };
  return [
    { name: 'ValidatingAdmissionWebhook', configuration },
    { name: 'MutatingAdmissionWebhook', configuration },
  ];
}

/** One AdmissionConfiguration of the plugins a space configures (webhooks, Pod Security: ./admission-config.ts). */
export function admissionConfiguration(plugins: object[]): object {
  return { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins };
}

/** Writes the webhook kubeconfig of a WDS (its serve's port); written on every `up`, so a changed port follows. */
export function writeWebhookKubeconfig(space: SpaceLayout, servePort: number): WebhookClientFiles {
  const f = webhookClientFiles(space.dir);
  const pki = spacePkiFiles(space.dir);
  mkdirSync(path.dirname(f.kubeconfig), { recursive: true, mode: 0o700 });
  writeFileSync(f.kubeconfig, YAML.stringify(webhookKubeconfig(servePort, pki.frontProxyClientCert, pki.frontProxyClientKey)), { mode: 0o600 });
  return f;
}
