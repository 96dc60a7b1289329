// The one AdmissionConfiguration (--admission-control-config-file) of a space's kube-apiserver,
// holding every plugin configuration the space needs, so none replaces another: a WDS's webhook
// client identity (./webhook-client.ts), and Pod Security's defaults where the node is real
// (./pod-security.ts). Spaces needing neither get no flag.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { SpaceLayout, SpacesLayout } from './layout.js';
import { podSecurityPlugin } from './pod-security.js';
import { admissionConfiguration, webhookClientFiles, webhookPlugins } from './webhook-client.js';

/** The file kube-apiserver reads: `<space>/admission/admission-config.yaml`. */
export const admissionConfigFile = (space: SpaceLayout): string => webhookClientFiles(space.dir).admissionConfig;

/** The plugin configurations of a space, in order: webhooks (a WDS), PodSecurity (a real node's space). */
export function admissionPlugins(layout: SpacesLayout, space: SpaceLayout): object[] {
  return [
    ...(space.role === 'wds' ? webhookPlugins(webhookClientFiles(space.dir).kubeconfig) : []),
    ...(layout.realNodes && space.realNode ? [podSecurityPlugin()] : []),
  ];
}

/** Writes the space's AdmissionConfiguration when it has plugins to configure; its path, or undefined. */
export function writeAdmissionConfig(layout: SpacesLayout, space: SpaceLayout): string | undefined {
  const plugins = admissionPlugins(layout, space);
  if (plugins.length === 0) return undefined;
  const file = admissionConfigFile(space);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, YAML.stringify(admissionConfiguration(plugins), { aliasDuplicateObjects: false }), { mode: 0o600 });
  return file;
}
