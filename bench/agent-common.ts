// Shared parts of the agent benches (bench/agent-*.ts): command-line options, an undici client per
// space, a watch that records when each ManifestWork is first reported Applied / Available, the
// agent under test (ours: the one `ksview spaces up` runs for a WEC; ocm: OCM's own work agent,
// built from build/ocm and started here for a bench cluster), its RSS, percentiles.
import { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { jsonLines } from '../src/kube/json-lines.js';
import { manifestWork, manifestWorkName, type ObjectIdentity } from '../src/controllers/model/wrapping.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { writeSpaceKubeconfig } from '../src/spaces/kubeconfig.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout, type SpacesLayout } from '../src/spaces/layout.js';
import { ensureOcmWorkAgent, installAppliedManifestWorkCrd, ocmVersion, startOcmWorkAgent, type OcmWorkAgent } from '../src/spaces/ocm-work-agent.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { readState } from '../src/spaces/state.js';
import { stderrProgress } from '../src/util/progress.js';

export const progress = stderrProgress();
export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
/** The WDS name the bench's works carry (field manager work-agent-kubestellar-<wds>). */
export const BENCH_WDS = 'wds1';

export interface CommonArgs {
  agent: 'ours' | 'ocm';
  json?: string;
  dir: string;
  portBase: number;
  wecs: number;
  /** Skip `spaces up` (the spaces must be running). */
  noUp: boolean;
  /** The WEC the agent applies to (ours: also its cluster name). */
  wec: string;
  numbers: Record<string, number>;
}

/** --agent ours|ocm, --json FILE, --dir DIR, --port-base N, --wecs N, --wec NAME, --no-up, and --<name> N for `numbers`. */
export function parseArgs(usage: string, numbers: Record<string, number>, argv = process.argv.slice(2)): CommonArgs {
  const out: CommonArgs = { agent: 'ours', dir: defaultSpacesDir(), portBase: DEFAULT_PORT_BASE, wecs: 2, noUp: false, wec: 'wec1', numbers: { ...numbers } };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => { const v = argv[++i]; if (v === undefined) throw new Error(`${a} needs a value (${usage})`); return v; };
    const whole = (): number => { const n = Number(value()); if (!Number.isInteger(n) || n < 0) throw new Error(`${a} needs a whole number`); return n; };
    if (a === '--agent') { const v = value(); if (v !== 'ours' && v !== 'ocm') throw new Error(`--agent is ours or ocm (${usage})`); out.agent = v; }
    else if (a === '--json') out.json = value();
    else if (a === '--dir') out.dir = value();
    else if (a === '--port-base') out.portBase = whole();
    else if (a === '--wecs') out.wecs = whole();
    else if (a === '--wec') out.wec = value();
    else if (a === '--no-up') out.noUp = true;
    else if (a.startsWith('--') && a.slice(2) in numbers) out.numbers[a.slice(2)] = whole();
    else if (a === '-h' || a === '--help') { process.stdout.write(`${usage}\n`); process.exit(0); }
    else throw new Error(`unknown argument ${a} (${usage})`);
  }
  return out;
}

export interface Client {
  pool: Pool;
  server: string;
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<Obj>;
}

export async function client(kubeconfig: string, context: string, connections = 32): Promise<Client> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  kc.setCurrentContext(context);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const server = kc.getCurrentCluster()!.server;
  const pool = new Pool(new URL(server).origin, { connections, pipelining: 1, bodyTimeout: 0, headersTimeout: 60_000,
    connect: { ca: opts.ca as string, cert: opts.cert as string, key: opts.key as string } });
  const call = async (method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<Obj> => {
    const res = await pool.request({ method: method as 'GET', path: p, headers: { accept: 'application/json', 'content-type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300 && res.statusCode !== 404) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) as Obj : {};
  };
  return { pool, server, call };
}

export async function bounded(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, n) }, async () => { while (next < n) await fn(next++); }));
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
export const median = (xs: number[]): number => percentile(xs, 50);
export const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : 'n/a');

export const rssMb = (pid: number | undefined): number => {
  if (!pid) return NaN;
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
};

const cond = (o: Obj, type: string): Obj | undefined => (o.status?.conditions ?? []).find((c: Obj) => c.type === type);

/**
 * A watch on the ManifestWorks of one mailbox namespace: for each work name, when (performance.now())
 * it was first seen with Applied=True, with Available=True, and the latest status feedback values.
 */
export class WorkWatch {
  readonly applied = new Map<string, number>();
  readonly available = new Map<string, number>();
  readonly feedback = new Map<string, Obj[]>();
  readonly feedbackAt = new Map<string, number>();
  private waiters: (() => void)[] = [];
  private ac = new AbortController();

  /**
   * Lists, then watches from the list's resourceVersion; when the watch ends or says ERROR (the
   * server drops a watch that falls behind a burst), lists and watches again, so no work is missed.
   */
  static async open(c: Client, namespace: string, labelSelector: string): Promise<WorkWatch> {
    const w = new WorkWatch();
    const base = `/apis/work.open-cluster-management.io/v1/namespaces/${namespace}/manifestworks?labelSelector=${encodeURIComponent(labelSelector)}`;
    const connect = async () => {
      const list = await c.call('GET', base);
      for (const o of (list.items ?? []) as Obj[]) w.see(o);
      return c.pool.request({ method: 'GET', signal: w.ac.signal, headers: { accept: 'application/json' },
        path: `${base}&watch=1&allowWatchBookmarks=false&resourceVersion=${list.metadata.resourceVersion}` });
    };
    const consume = async (res: Awaited<ReturnType<typeof connect>>): Promise<void> => {
      for await (const doc of jsonLines(res.body)) {
        const e = doc as Obj;
        if (e.type === 'ADDED' || e.type === 'MODIFIED') w.see(e.object as Obj);
        if (e.type === 'ERROR') return;
      }
    };
    let res = await connect();
    void (async () => {
      for (;;) {
        await consume(res).catch(() => undefined);
        for (;;) {
          if (w.ac.signal.aborted) return;
          try {
            res = await connect();
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      }
    })();
    return w;
  }

  private see(o: Obj): void {
    const now = performance.now();
    const name = o.metadata.name as string;
    if (!this.applied.has(name) && cond(o, 'Applied')?.status === 'True') this.applied.set(name, now);
    if (!this.available.has(name) && cond(o, 'Available')?.status === 'True') this.available.set(name, now);
    const values = o.status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values as Obj[] | undefined;
    if (values) {
      this.feedback.set(name, values);
      if (!this.feedbackAt.has(name) && values.find((v) => v.name === 'AvailableReplicas')?.fieldValue?.integer >= 1) this.feedbackAt.set(name, now);
    }
    for (const r of this.waiters.splice(0)) r();
  }

  async until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((res) => { this.waiters.push(res); setTimeout(res, 200); });
    }
  }

  close(): void { this.ac.abort(); }
}

/** The ManifestWork placement would write for one object to `cluster` (see src/controllers/model/wrapping.ts). */
export function benchWork(cluster: string, manifest: Obj, id: ObjectIdentity, label: string, feedback = false): Obj {
  const w = manifestWork(manifest, { wds: BENCH_WDS, cluster, id, policies: [label], createOnly: false }) as Obj;
  // wrapping.ts sets WellKnownStatus feedback for the kinds that have it (a Deployment does); the
  // flag adds it for any other kind whose availability a bench would time.
  if (feedback) for (const c of w.spec.manifestConfigs) c.feedbackRules ??= [{ type: 'WellKnownStatus' }];
  return w;
}

export const workPath = (cluster: string, name: string): string => `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks/${name}`;
export const applyWork = (its: Client, w: Obj): Promise<Obj> =>
  its.call('PATCH', `${workPath(w.metadata.namespace, w.metadata.name)}?fieldManager=ksview-bench&force=true`, w, 'application/apply-patch+yaml');

export const configMapId = (namespace: string, name: string): ObjectIdentity => ({ group: '', version: 'v1', resource: 'configmaps', namespace, name });
export { manifestWorkName };

/** The agent under test: the cluster whose mailbox it reads, the WEC it applies to, its pid. */
export interface AgentUnderTest {
  name: string;
  cluster: string;
  wec: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

export interface Bench {
  layout: SpacesLayout;
  its: Client;
  wec: Client;
  run: string;
  agent: AgentUnderTest;
  /** Removes what `setUp` made (mailbox, OCM agent, its kubeconfigs). */
  tearDown(): Promise<void>;
}

/**
 * Spaces up (unless --no-up), clients for its1 and the WEC, and the agent under test: ours is the
 * process `<wec>/ksview-agent` that `ksview spaces up` runs (its mailbox is the WEC's own name);
 * ocm is OCM's work agent, built if needed and started here for a fresh cluster `bench-<r>` whose
 * WEC is `--wec`, registered in its1 and removed at the end.
 */
export async function setUp(args: CommonArgs): Promise<Bench> {
  const layout = spacesLayout({ dir: args.dir, portBase: args.portBase, wecs: args.wecs });
  if (!args.noUp) {
    progress.step(`ensuring the spaces in ${args.dir}`);
    await spacesUp({ dir: args.dir, portBase: args.portBase, wecs: args.wecs, cacheDir: defaultCacheDir(), progress });
  }
  const its = await client(layout.kubeconfigPath, 'its1');
  const wec = await client(layout.kubeconfigPath, args.wec);
  const run = randomBytes(3).toString('hex');
  if (args.agent === 'ours') {
    const name = `${args.wec}/ksview-agent`;
    const pid = readState(layout.statePath)?.processes.find((p) => p.name === name)?.pid;
    if (!pid) throw new Error(`no process ${name} in ${layout.statePath}: start the spaces with a build where \`ksview spaces up\` runs the agent`);
    return { layout, its, wec, run, agent: { name: `ksview agent (${name}, pid ${pid})`, cluster: args.wec, wec: args.wec, pid, stop: async () => undefined },
      tearDown: async () => { await its.pool.close(); await wec.pool.close(); } };
  }
  const cluster = `bench-${run}`;
  progress.step(`building OCM's work agent ${ocmVersion()} if needed`);
  const binary = await ensureOcmWorkAgent(defaultCacheDir(), progress);
  const hubKubeconfig = path.join(layout.dir, `ocm-peer-${cluster}-hub.kubeconfig`);
  const wecKubeconfig = path.join(layout.dir, `ocm-peer-${cluster}-${args.wec}.kubeconfig`);
  writeSpaceKubeconfig(layout, 'its1', hubKubeconfig);
  writeSpaceKubeconfig(layout, args.wec, wecKubeconfig);
  installAppliedManifestWorkCrd(wecKubeconfig);
  await its.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: cluster } });
  await its.call('POST', '/apis/cluster.open-cluster-management.io/v1/managedclusters', { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster',
    metadata: { name: cluster, labels: { 'ksview-bench': run } }, spec: { hubAcceptsClient: true } });
  const log = path.join(layout.dir, `ocm-peer-${cluster}.log`);
  writeFileSync(log, '');
  const ocm: OcmWorkAgent = await startOcmWorkAgent({ binary, cluster, hubKubeconfig, wecKubeconfig, log });
  progress.step(`OCM's work agent ${ocmVersion()} (pid ${ocm.pid}) for cluster ${cluster} → ${args.wec}; log ${log}`);
  return {
    layout, its, wec, run,
    agent: { name: `OCM work agent ${ocmVersion()} (pid ${ocm.pid})`, cluster, wec: args.wec, pid: ocm.pid, stop: () => ocm.stop() },
    tearDown: async () => {
      await ocm.stop();
      // Works the agent did not get to release before it stopped keep their finalizer: drop it.
      const left = await its.call('GET', `/apis/work.open-cluster-management.io/v1/namespaces/${cluster}/manifestworks`).catch(() => ({ items: [] }));
      for (const w of (left.items ?? []) as Obj[]) {
        await its.call('PATCH', workPath(cluster, w.metadata.name), { metadata: { finalizers: null } }, 'application/merge-patch+json').catch(() => undefined);
      }
      await its.call('DELETE', `/apis/cluster.open-cluster-management.io/v1/managedclusters/${cluster}`).catch(() => undefined);
      await its.call('DELETE', `/api/v1/namespaces/${cluster}`).catch(() => undefined);
      rmSync(hubKubeconfig, { force: true });
      rmSync(wecKubeconfig, { force: true });
      await its.pool.close();
      await wec.pool.close();
    },
  };
}

/** Deletes the works carrying `label` and waits (up to `timeoutMs`) until the agent has released them all. */
export async function deleteWorks(b: Bench, label: string, timeoutMs: number): Promise<boolean> {
  const sel = encodeURIComponent(`bindingpolicy.view.kubestellar.io/${label}`);
  const base = `/apis/work.open-cluster-management.io/v1/namespaces/${b.agent.cluster}/manifestworks`;
  await b.its.call('DELETE', `${base}?labelSelector=${sel}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await b.its.call('GET', `${base}?labelSelector=${sel}&limit=1`);
    if ((left.items ?? []).length === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 500));
  }
}

export function writeJson(file: string | undefined, data: unknown): void {
  if (file) writeFileSync(file, JSON.stringify(data, null, 2));
}
