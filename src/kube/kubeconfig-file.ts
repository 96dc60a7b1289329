// A kubeconfig file that a user named, loaded for one context with its TLS material and
// credentials. A kubeconfig is the user's input: every way it can be unusable (unreadable, not
// YAML, not a kubeconfig, no or unknown context, a context naming no cluster or user, a server
// that is no URL, credential files that cannot be read) is a one-line UserError naming the file.
import { KubeConfig, type Cluster } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import { fsProblem } from '../util/fs-error.js';
import { UserError } from '../util/user-error.js';

export interface LoadedKubeconfig {
  cluster: Cluster;
  server: URL;
  /** TLS material and headers (e.g. a bearer token) of the context's user. */
  https: https.RequestOptions;
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`kubeconfig ${file}: ${fsProblem(err)}`);
  }
}

function parse(file: string, text: string, baseDir: string | undefined = path.dirname(file)): KubeConfig {
  if (!text.trim()) throw new UserError(`kubeconfig ${file} is empty`);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    // js-yaml's YAMLException: `reason` is the one-line cause, `mark.line` counts from 0.
    const y = err as { name?: string; reason?: string; mark?: { line: number } };
    if (y.name === 'YAMLException') throw new UserError(`kubeconfig ${file} is not YAML: ${y.reason} (line ${(y.mark?.line ?? 0) + 1})`);
    // A YAML scalar or null document has no fields to read.
    if (err instanceof TypeError) throw new UserError(`kubeconfig ${file} is not a kubeconfig`);
    throw new UserError(`kubeconfig ${file}: ${firstLine(err)}`);
  }
  if (baseDir !== undefined) kc.makePathsAbsolute(baseDir);
  return kc;
}

function selectContext(file: string, kc: KubeConfig, context: string | undefined): Cluster {
  const names = kc.getContexts().map((c) => c.name);
  if (names.length === 0) throw new UserError(`kubeconfig ${file} is not a kubeconfig: it defines no contexts`);
  const known = `(its contexts: ${names.join(', ')})`;
  if (context !== undefined) {
    if (!names.includes(context)) throw new UserError(`kubeconfig ${file} has no context ${JSON.stringify(context)} ${known}`);
    kc.setCurrentContext(context);
  } else if (!kc.getCurrentContext()) {
    throw new UserError(`kubeconfig ${file} has no current-context: set one or name a context ${known}`);
  } else if (!names.includes(kc.getCurrentContext())) {
    throw new UserError(`kubeconfig ${file}: its current-context ${JSON.stringify(kc.getCurrentContext())} is not defined ${known}`);
  }
  const ctx = kc.getContextObject(kc.getCurrentContext())!;
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new UserError(`kubeconfig ${file}: context ${JSON.stringify(ctx.name)} names cluster ${JSON.stringify(ctx.cluster)}, which it does not define`);
  if (ctx.user && !kc.getCurrentUser()) throw new UserError(`kubeconfig ${file}: context ${JSON.stringify(ctx.name)} names user ${JSON.stringify(ctx.user)}, which it does not define`);
  return cluster;
}

export async function loadKubeconfig(file: string, context?: string): Promise<LoadedKubeconfig> {
  return fromConfig(file, parse(file, readText(file)), context);
}

/**
 * A kubeconfig held as text (e.g. the `kubeconfig` key of a Secret), with the same checks and
 * one-line UserErrors as a file; `label` names it in messages (e.g. `secret wec2/wec2-kubeconfig`).
 * Relative credential paths are left as they are: a Secret's kubeconfig should embed its data.
 */
export async function loadKubeconfigText(text: string, label: string, context?: string): Promise<LoadedKubeconfig> {
  return fromConfig(label, parse(label, text, undefined), context);
}

async function fromConfig(file: string, kc: KubeConfig, context: string | undefined): Promise<LoadedKubeconfig> {
  const cluster = selectContext(file, kc, context);
  const server = URL.canParse(cluster.server) ? new URL(cluster.server) : undefined;
  if (!server || !['https:', 'http:'].includes(server.protocol) || !server.host) {
    throw new UserError(`kubeconfig ${file}: cluster ${JSON.stringify(cluster.name)} has server ${JSON.stringify(cluster.server)}, which is not an https:// URL`);
  }
  const opts: https.RequestOptions = {};
  try {
    // Reads certificate and key files, runs exec credential plugins, refuses plain http.
    await kc.applyToHTTPSOptions(opts);
  } catch (err) {
    throw new UserError(`kubeconfig ${file}: ${firstLine(err)}`);
  }
  return { cluster, server, https: opts };
}
