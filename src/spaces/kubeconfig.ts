// Kubeconfig files for local spaces: one file, one context per space (cluster and user named
// after the space), credentials embedded so the file can be copied anywhere.
import { writeFileSync } from 'node:fs';
import YAML from 'yaml';
import { wdsSpaces, type SpacesLayout } from './layout.js';
import { readAdminCredentials } from './space-pki.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

export interface KubeconfigEntry {
  name: string;
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Name of the kubeconfig user (default `<name>-admin`: the space's admin certificate). */
  user?: string;
}

export function renderKubeconfig(entries: KubeconfigEntry[], currentContext?: string): string {
  // Entries may share a user (the per-cluster view contexts use their view's): listed once.
  const users = new Map<string, KubeconfigEntry>();
  for (const e of entries) if (!users.has(e.user ?? `${e.name}-admin`)) users.set(e.user ?? `${e.name}-admin`, e);
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: entries.map((e) => ({
      name: e.name,
      cluster: { server: e.server, 'certificate-authority-data': b64(e.caPem) },
    })),
    users: [...users].map(([name, e]) => ({
      name,
      user: { 'client-certificate-data': b64(e.certPem), 'client-key-data': b64(e.keyPem) },
    })),
    contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: e.user ?? `${e.name}-admin` } })),
    'current-context': currentContext ?? entries[0]?.name ?? '',
    preferences: {},
  });
}

export function spaceKubeconfigEntries(layout: SpacesLayout): KubeconfigEntry[] {
  return layout.spaces.map((s) => {
    const { ca, client } = readAdminCredentials(s.dir);
    return {
      name: s.name,
      server: `https://127.0.0.1:${s.apiserverPort}`,
      caPem: ca,
      certPem: client.certPem,
      keyPem: client.keyPem,
    };
  });
}

/** The context `wds1-view`: wds1's credentials, with the view root as server URL. */
export function viewKubeconfigEntry(layout: SpacesLayout, viewPath: (wds: string) => string): KubeconfigEntry {
  return viewKubeconfigEntries(layout, viewPath)[0]!;
}

/** The contexts `<wds>-view` of every WDS (wds1-view first). */
export function viewKubeconfigEntries(layout: SpacesLayout, viewPath: (wds: string) => string): KubeconfigEntry[] {
  const entries = spaceKubeconfigEntries(layout);
  return wdsSpaces(layout).map((wds) => {
    const entry = entries.find((e) => e.name === wds.name)!;
    return { ...entry, name: `${wds.name}-view`, server: entry.server + viewPath(wds.name) };
  });
}

/**
 * The contexts `<wds>-view-<wec>` of every WDS and WEC of the spaces: the WEC's upsynced objects
 * as their native kinds (the view root + `/clusters/<wec>`, src/apiserver/groups/upsynced-cluster-view.ts),
 * with the user of `<wds>-view`. One per WEC, whether it upsyncs anything or not: a cluster with
 * nothing upsynced answers 404, harmlessly.
 */
export function viewClusterKubeconfigEntries(layout: SpacesLayout, viewPath: (wds: string) => string): KubeconfigEntry[] {
  const wecs = layout.spaces.filter((s) => s.role === 'wec');
  return viewKubeconfigEntries(layout, viewPath).flatMap((view) => wecs.map((wec) => ({
    ...view, name: `${view.name}-${wec.name}`, server: `${view.server}/clusters/${wec.name}`, user: view.user ?? `${view.name}-admin`,
  })));
}

export function writeSpacesKubeconfig(layout: SpacesLayout): void {
  writeFileSync(layout.kubeconfigPath, renderKubeconfig(spaceKubeconfigEntries(layout)), { mode: 0o600 });
}

/** A kubeconfig for one space alone, for the components that run against it. */
export function writeSpaceKubeconfig(layout: SpacesLayout, spaceName: string, file: string): void {
  const entry = spaceKubeconfigEntries(layout).find((e) => e.name === spaceName);
  if (!entry) throw new Error(`no space ${spaceName}`);
  writeFileSync(file, renderKubeconfig([entry]), { mode: 0o600 });
}
