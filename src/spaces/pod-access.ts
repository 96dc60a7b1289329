// How pods on the real nodes reach the spaces' kube-apiservers: the server URL a pod dials (the
// nodes' DNATed apiserver address and the space's port, ./node-layout.ts; the serving certificates
// carry that IP), and kubeconfigs for pods, made of an identity of the spaces' PKI, to put in
// Secrets (serve's WDS identity, placement's ITS identity, the pull agent's ITS identity).
// Certificates are always verified: the space's CA is in every kubeconfig.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { UserError } from '../util/user-error.js';
import { renderKubeconfig } from './kubeconfig.js';
import type { SpacesLayout } from './layout.js';
import { podApiserverAddress, portBaseOf } from './node-layout.js';
import { ensureClientCert, spacePkiFiles } from './space-pki.js';

function spaceOf(layout: SpacesLayout, spaceName: string) {
  const space = layout.spaces.find((s) => s.name === spaceName);
  if (!space) throw new UserError(`no space '${spaceName}' in ${layout.dir}; one of: ${layout.spaces.map((s) => s.name).join(', ')}`);
  return space;
}

/** The URL of `spaceName`'s kube-apiserver as a pod on a real node dials it. */
export function podServerUrl(layout: SpacesLayout, spaceName: string): string {
  if (!layout.realNodes) throw new UserError(`the spaces in ${layout.dir} run no real nodes: start them with 'ksview spaces up --real-nodes'`);
  return `https://${podApiserverAddress(portBaseOf(layout))}:${spaceOf(layout, spaceName).apiserverPort}`;
}

export interface PodIdentity {
  /** The user name (certificate CN). */
  user: string;
  /** Its groups (certificate O). */
  groups: string[];
  /** The file name of its certificate in `<space>/pki/clients/` (made once, reused after). */
  file: string;
}

/** A kubeconfig for a pod: `identity`'s client certificate of the space's CA, the pod URL. */
export async function renderPodKubeconfig(layout: SpacesLayout, spaceName: string, identity: PodIdentity): Promise<string> {
  const space = spaceOf(layout, spaceName);
  const pair = await ensureClientCert(space.dir, identity.file, identity.user, identity.groups);
  return renderKubeconfig([{
    name: spaceName, user: identity.user, server: podServerUrl(layout, spaceName),
    caPem: readFileSync(spacePkiFiles(space.dir).caCert, 'utf8'), certPem: pair.certPem, keyPem: pair.keyPem,
  }]);
}

/**
 * The same for an identity that already has a host kubeconfig (e.g. an agent's in its1/agents/):
 * its first context, with the server URL a pod dials.
 */
export function podKubeconfigOf(layout: SpacesLayout, spaceName: string, hostKubeconfig: string): string {
  const server = podServerUrl(layout, spaceName);
  const doc = YAML.parse(readFileSync(hostKubeconfig, 'utf8')) as { clusters?: Array<{ cluster: { server: string } }> };
  if (!doc.clusters?.length) throw new UserError(`${hostKubeconfig} holds no cluster`);
  for (const c of doc.clusters) c.cluster.server = server;
  return YAML.stringify(doc);
}
