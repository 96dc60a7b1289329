// A kubeconfig that a user named (a file, or a Secret's text), loaded for one context with its TLS
// material and credentials. A kubeconfig is the user's input: every way it can be unusable
// (unreadable, not YAML, not a kubeconfig, no or unknown context, a context naming no cluster or
// user, a server that is no URL, credential files that cannot be read) is a one-line UserError
// naming the file.
//
// Read here with `yaml` rather than with @kubernetes/client-node's KubeConfig for the common,
// static case (certificates, CA, token, token file, basic auth): importing client-node costs a
// process about 75 MB of memory (it loads its whole generated API), which the agent cannot afford
// (docs/agent.md, "Memory": RSS ≤ 150 MB). A user with an `exec` or `auth-provider` credential plugin still gets
// client-node, which runs those plugins, loaded only then.
//
// A kubeconfig the fleet supplies (the push agent's `<cluster>-kubeconfig` Secrets) is not the
// operator's own: whoever wrote it must not run code in, or read files of, the process that loads
// it (Flux's CVE-2022-24817). Loaded with a FleetKubeconfigPolicy it is refused (KubeconfigRefused)
// when any user has an `exec` or `auth-provider` plugin, unless the operator allowed plugins, and
// always when it names a local file instead of embedding the data (a `tokenFile` would send the
// agent's own token wherever the kubeconfig points) — as Flux's kubeconfig sanitising does.
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import YAML, { YAMLError } from 'yaml';
import { fsProblem } from '../util/fs-error.js';
import { UserError } from '../util/user-error.js';

export interface KubeconfigCluster {
  name: string;
  server: string;
  skipTLSVerify: boolean;
  /** `tls-server-name`: the name to verify the server's certificate against, if not the URL's host. */
  tlsServerName?: string;
}

/** What a kubeconfig supplied by the fleet (not the operator) may hold. */
export interface FleetKubeconfigPolicy {
  /** `user.exec` and `user.auth-provider` are run (the operator's --insecure-kubeconfig-exec). */
  allowCredentialPlugins: boolean;
}

/** A fleet-supplied kubeconfig that asks for what the policy refuses (nothing of it was used). */
export class KubeconfigRefused extends UserError {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigRefused';
  }
}

export interface LoadedKubeconfig {
  cluster: KubeconfigCluster;
  server: URL;
  /** TLS material and headers (e.g. a bearer token) of the context's user. */
  https: https.RequestOptions;
}

type Fields = Record<string, unknown>;
interface Named { name: string; fields: Fields }

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`kubeconfig ${file}: ${fsProblem(err)}`);
  }
}

function parse(label: string, text: string): Fields {
  if (!text.trim()) throw new UserError(`kubeconfig ${label} is empty`);
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    if (err instanceof YAMLError) {
      const reason = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      throw new UserError(`kubeconfig ${label} is not YAML: ${reason} (line ${err.linePos?.[0]?.line ?? 1})`);
    }
    throw new UserError(`kubeconfig ${label}: ${firstLine(err)}`);
  }
  if (!isObject(doc)) throw new UserError(`kubeconfig ${label} is not a kubeconfig`);
  return doc;
}

/** `clusters`, `contexts` or `users`: entries `{name, <key>: {...}}`, each with a name. */
function entries(label: string, doc: Fields, list: 'clusters' | 'contexts' | 'users'): Named[] {
  const key = list.slice(0, -1);
  const items = Array.isArray(doc[list]) ? (doc[list] as unknown[]) : [];
  return items.map((item, i) => {
    const e = isObject(item) ? item : {};
    const name = str(e.name);
    if (!name) throw new UserError(`kubeconfig ${label}: ${list}[${i}].name is missing`);
    if (list !== 'users' && !isObject(e[key])) throw new UserError(`kubeconfig ${label}: ${list}[${i}].${key} is missing`);
    return { name, fields: isObject(e[key]) ? e[key] : {} };
  });
}

interface Selected { context: string; cluster: Named; user?: Named }

function select(label: string, doc: Fields, context: string | undefined): Selected {
  const contexts = entries(label, doc, 'contexts');
  const clusters = entries(label, doc, 'clusters');
  const users = entries(label, doc, 'users');
  clusters.forEach((c, i) => { if (!str(c.fields.server)) throw new UserError(`kubeconfig ${label}: clusters[${i}].cluster.server is missing`); });
  const names = contexts.map((c) => c.name);
  if (names.length === 0) throw new UserError(`kubeconfig ${label} is not a kubeconfig: it defines no contexts`);
  const known = `(its contexts: ${names.join(', ')})`;
  const current = str(doc['current-context']);
  let name: string;
  if (context !== undefined) {
    if (!names.includes(context)) throw new UserError(`kubeconfig ${label} has no context ${JSON.stringify(context)} ${known}`);
    name = context;
  } else if (!current) {
    throw new UserError(`kubeconfig ${label} has no current-context: set one or name a context ${known}`);
  } else if (!names.includes(current)) {
    throw new UserError(`kubeconfig ${label}: its current-context ${JSON.stringify(current)} is not defined ${known}`);
  } else {
    name = current;
  }
  const ctx = contexts.find((c) => c.name === name)!.fields;
  const cluster = clusters.find((c) => c.name === ctx.cluster);
  if (!cluster) throw new UserError(`kubeconfig ${label}: context ${JSON.stringify(name)} names cluster ${JSON.stringify(ctx.cluster)}, which it does not define`);
  const userName = str(ctx.user);
  const user = userName === undefined ? undefined : users.find((u) => u.name === userName);
  if (userName !== undefined && !user) throw new UserError(`kubeconfig ${label}: context ${JSON.stringify(name)} names user ${JSON.stringify(userName)}, which it does not define`);
  return { context: name, cluster, user };
}

/** A file a kubeconfig field names (relative to the kubeconfig's folder, if a file); `what` is the field. */
function credentialFile(label: string, what: string, file: string, baseDir: string | undefined): Buffer {
  const full = baseDir === undefined ? file : path.resolve(baseDir, file);
  try {
    return readFileSync(full);
  } catch (err) {
    throw new UserError(`kubeconfig ${label}: ${what} ${full}: ${fsProblem(err)}`);
  }
}

/** `<what>-data` (base64) or the file `<what>`. */
function material(label: string, fields: Fields, what: string, baseDir: string | undefined): Buffer | undefined {
  const data = str(fields[`${what}-data`]);
  if (data) return Buffer.from(data, 'base64');
  const file = str(fields[what]);
  return file ? credentialFile(label, what, file, baseDir) : undefined;
}

function staticCredentials(label: string, sel: Selected, baseDir: string | undefined, skipTLSVerify: boolean): https.RequestOptions {
  const opts: https.RequestOptions = { rejectUnauthorized: !skipTLSVerify };
  const ca = material(label, sel.cluster.fields, 'certificate-authority', baseDir);
  if (ca) opts.ca = ca;
  const u = sel.user?.fields ?? {};
  const cert = material(label, u, 'client-certificate', baseDir);
  const key = material(label, u, 'client-key', baseDir);
  if (cert) opts.cert = cert;
  if (key) opts.key = key;
  const tokenFile = str(u.tokenFile);
  const token = str(u.token) ?? (tokenFile ? credentialFile(label, 'tokenFile', tokenFile, baseDir).toString('utf8').trim() : undefined);
  if (token) opts.headers = { Authorization: `Bearer ${token}` };
  else if (str(u.username) && typeof u.password === 'string') {
    opts.headers = { Authorization: `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}` };
  }
  return opts;
}

/** A user with a credential plugin: client-node's KubeConfig runs it (exec) or refreshes it (auth-provider). */
async function pluginCredentials(label: string, text: string, baseDir: string | undefined, context: string): Promise<https.RequestOptions> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  const opts: https.RequestOptions = {};
  try {
    kc.loadFromString(text);
    if (baseDir !== undefined) kc.makePathsAbsolute(baseDir);
    kc.setCurrentContext(context);
    await kc.applyToHTTPSOptions(opts);
  } catch (err) {
    throw new UserError(`kubeconfig ${label}: ${firstLine(err)}`);
  }
  return opts;
}

/** The local files a kubeconfig's clusters and users name instead of embedding the data (as client-go names the fields). */
const FILE_FIELDS = { clusters: ['certificate-authority'], users: ['client-certificate', 'client-key', 'tokenFile'] } as const;
const PLUGIN_FIELDS = ['exec', 'auth-provider'] as const;
const shown = (v: unknown): string => JSON.stringify(String(v).slice(0, 100));

/** Refuses, before anything of it is used, a fleet-supplied kubeconfig that would run code or read local files. */
function checkFleetPolicy(label: string, doc: Fields, policy: FleetKubeconfigPolicy): void {
  for (const list of ['clusters', 'users'] as const) {
    for (const e of entries(label, doc, list)) {
      for (const field of FILE_FIELDS[list]) {
        if (str(e.fields[field]) === undefined) continue;
        const data = field === 'tokenFile' ? 'token' : `${field}-data`;
        throw new KubeconfigRefused(`kubeconfig ${label}: ${list.slice(0, -1)} ${JSON.stringify(e.name)} names the local file ${field} ${shown(e.fields[field])}; a kubeconfig from the fleet must embed it (${data})`);
      }
    }
  }
  if (policy.allowCredentialPlugins) return;
  for (const u of entries(label, doc, 'users')) {
    for (const field of PLUGIN_FIELDS) {
      const plugin = u.fields[field];
      if (plugin === undefined || plugin === null) continue;
      const what = isObject(plugin) && field === 'exec' ? `an exec credential plugin (command ${shown(plugin.command)})`
        : isObject(plugin) ? `an auth-provider credential plugin (${shown(plugin.name)})` : `an ${field} field`;
      throw new KubeconfigRefused(`kubeconfig ${label}: user ${JSON.stringify(u.name)} has ${what}; a kubeconfig from the fleet runs no plugin (the operator's --insecure-kubeconfig-exec allows it)`);
    }
  }
}

async function load(label: string, text: string, baseDir: string | undefined, context: string | undefined, policy?: FleetKubeconfigPolicy): Promise<LoadedKubeconfig> {
  const doc = parse(label, text);
  if (policy) checkFleetPolicy(label, doc, policy);
  const sel = select(label, doc, context);
  const c = sel.cluster.fields;
  const serverText = str(c.server)!.replace(/\/$/, '');
  const cluster: KubeconfigCluster = {
    name: sel.cluster.name,
    server: serverText,
    skipTLSVerify: c['insecure-skip-tls-verify'] === true,
    ...(str(c['tls-server-name']) ? { tlsServerName: str(c['tls-server-name']) } : {}),
  };
  const server = URL.canParse(serverText) ? new URL(serverText) : undefined;
  if (!server || !['https:', 'http:'].includes(server.protocol) || !server.host) {
    throw new UserError(`kubeconfig ${label}: cluster ${JSON.stringify(cluster.name)} has server ${JSON.stringify(cluster.server)}, which is not an https:// URL`);
  }
  // As client-go: plain http only where the user said TLS need not be checked.
  if (server.protocol === 'http:' && !cluster.skipTLSVerify) {
    throw new UserError(`kubeconfig ${label}: cluster ${JSON.stringify(cluster.name)} has server ${JSON.stringify(cluster.server)}: HTTP protocol is not allowed unless insecure-skip-tls-verify is true`);
  }
  const u = sel.user?.fields ?? {};
  const plugin = isObject(u.exec) || isObject(u['auth-provider']);
  const opts = plugin ? await pluginCredentials(label, text, baseDir, sel.context) : staticCredentials(label, sel, baseDir, cluster.skipTLSVerify);
  return { cluster, server, https: opts };
}

export async function loadKubeconfig(file: string, context?: string): Promise<LoadedKubeconfig> {
  return load(file, readText(file), path.dirname(path.resolve(file)), context);
}

/**
 * A kubeconfig held as text: the fleet's (the `kubeconfig` key of a push agent's Secret), so loaded
 * under a FleetKubeconfigPolicy, with the same checks and one-line UserErrors as a file; `label`
 * names it in messages (e.g. `secret wec2/wec2-kubeconfig`).
 */
export async function loadKubeconfigText(text: string, label: string, policy: FleetKubeconfigPolicy, context?: string): Promise<LoadedKubeconfig> {
  return load(label, text, undefined, context, policy);
}
