// The simulated agent of the fleet-scale bench (./fleet-scale.ts): one process standing in for the
// agents of many simulated clusters, with no WEC behind them. It watches the ITS's ManifestWorks
// of a WDS in the mailbox namespaces whose names start with a prefix and, for each new work (or
// new generation), does what a real agent reports once the object is running:
//  - the ManifestWork's status: Applied and Available True for its generation, each manifest's
//    conditions and WellKnownStatus feedback of a Deployment with all replicas available;
//  - the WorkStatus of each object (KubeStellar's status add-on's object, create then /status)
//    with a Deployment status: replicas, ready, available and updated replicas, observedGeneration 1;
//    or, for a bundled work, each object's status in its manifest's feedback (as our agent does:
//    src/kube/status-in-work.ts), no WorkStatus.
// When a work is deleted it deletes its objects' WorkStatuses, as an agent does when it removes them.
// Stdin: one JSON line per status change to simulate in a bundled work, {cluster, name,
// observedGeneration}: the object's status in its work changes, written as an agent writes it —
// coalesced, one status write per work per 100 ms window (a WorkStatus's change the bench writes itself).
// Writes go through one queue with a bounded number in flight (--in-flight, default 32).
//
//   node dist/bench/fleet-agent.js --kubeconfig F --context its1 --prefix fleet-abc- [--wds wds1] [--in-flight 32]
//
// Stdout: one JSON line every 500 ms: {acked, statuses, removed, queued, errors, lastError}, the
// totals since start (acked: work acknowledgements; statuses: the Deployments' statuses written,
// in WorkStatuses or in bundles — the implied Namespaces' works are acknowledged and reported too,
// but not counted there, so that the bench's "all acknowledged" means every Deployment's; removed:
// WorkStatuses deleted). It runs until killed.
import { performance } from 'node:perf_hooks';
import { jsonLines } from '../src/kube/json-lines.js';
import { client, type Obj } from './agent-common.js';
import { deploymentStatusOf, workStatusNameOf, workStatusObjectOf, workStatusOf } from './fleet-shapes.js';
import { statusValues } from '../src/kube/status-in-work.js';
import { BUNDLE_ANNOTATION } from '../src/kube/ocm-api.js';

/** Our agent's window: a work's status changes within it are one write. */
const COALESCE_MS = 100;

function flag(name: string, dflt?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : dflt;
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

const WORKS = '/apis/work.open-cluster-management.io/v1/manifestworks';
const isDeployment = (m: Obj) => m.kind === 'Deployment';
const WORKSTATUSES = (ns: string) => `/apis/control.kubestellar.io/v1alpha1/namespaces/${ns}/workstatuses`;

async function main(): Promise<void> {
  const its = await client(flag('kubeconfig'), flag('context', 'its1'), Number(flag('in-flight', '32')));
  const prefix = flag('prefix');
  const wds = flag('wds', 'wds1');
  const inFlight = Number(flag('in-flight', '32'));
  const totals = { acked: 0, statuses: 0, removed: 0, queued: 0, errors: 0, lastError: '' };
  /** Works known to exist: namespace/name → the generation acknowledged (0: not yet). */
  const known = new Map<string, { generation: number; acked: number; manifests: Obj[]; reported: Set<string>; bundled: boolean; observed: Map<string, number> }>();
  /** cluster/object name → the key of the bundled work carrying it. */
  const carrier = new Map<string, string>();
  /** Bundled works whose status changed, to write when the window closes. */
  const changed = new Set<string>();
  const queue: (() => Promise<void>)[] = [];
  const queuedKeys = new Set<string>();
  let running = 0;
  const pump = () => {
    while (running < inFlight && queue.length > 0) {
      const job = queue.shift()!;
      running++;
      job().catch((err: Error) => { totals.errors++; totals.lastError = err.message.slice(0, 300); })
        .finally(() => { running--; pump(); });
    }
  };
  const enqueue = (job: () => Promise<void>) => { queue.push(job); pump(); };

  const ack = (ns: string, name: string) => async () => {
    const k = known.get(`${ns}/${name}`);
    if (!k || k.acked >= k.generation) return;
    const generation = k.generation;
    const manifests = k.manifests;
    await writeStatus(ns, name, k);
    k.acked = generation;
    totals.acked++;
    if (k.bundled) {
      totals.statuses += manifests.filter(isDeployment).length;
      return;
    }
    for (const m of manifests) {
      const ws = workStatusNameOf(m);
      if (k.reported.has(ws)) continue;
      await its.call('POST', WORKSTATUSES(ns), workStatusObjectOf(m, name)).catch((err: Error) => {
        if (!/ 409 /.test(err.message)) throw err;
      });
      await its.call('PATCH', `${WORKSTATUSES(ns)}/${ws}/status`, { status: deploymentStatusOf(m) }, 'application/merge-patch+json');
      k.reported.add(ws);
      if (isDeployment(m)) totals.statuses++;
    }
  };
  /** The work's status; a bundle's with each object's status in its feedback. */
  const writeStatus = (ns: string, name: string, k: NonNullable<ReturnType<typeof known.get>>) => its.call('PATCH',
    `/apis/work.open-cluster-management.io/v1/namespaces/${ns}/manifestworks/${name}/status`,
    { status: workStatusOf(k.manifests, k.generation, new Date().toISOString(),
      k.bundled ? (m) => statusValues(deploymentStatusOf(m, k.observed.get(m.metadata?.name as string)), undefined)!.values : undefined) },
    'application/merge-patch+json');
  let window: NodeJS.Timeout | undefined;
  const flush = () => {
    window = undefined;
    for (const key of changed) {
      const [ns, name] = key.split('/') as [string, string];
      const k = known.get(key);
      if (k) enqueue(async () => { await writeStatus(ns, name, k); totals.statuses++; });
    }
    changed.clear();
  };
  void (async () => {
    for await (const line of jsonLines(process.stdin)) {
      const c = line as { cluster: string; name: string; observedGeneration: number };
      const key = carrier.get(`${c.cluster}/${c.name}`);
      const k = key ? known.get(key) : undefined;
      if (!k) { totals.errors++; totals.lastError = `no bundled work carries ${c.cluster}/${c.name}`; continue; }
      k.observed.set(c.name, c.observedGeneration);
      changed.add(key!);
      window ??= setTimeout(flush, COALESCE_MS);
    }
  })();

  const remove = (ns: string, manifests: readonly Obj[]) => async () => {
    for (const m of manifests) {
      await its.call('DELETE', `${WORKSTATUSES(ns)}/${workStatusNameOf(m)}`);
      totals.removed++;
    }
  };

  const see = (type: string, w: Obj) => {
    const ns = w.metadata?.namespace as string;
    if (!ns?.startsWith(prefix)) return;
    const key = `${ns}/${w.metadata.name}`;
    const manifests = (w.spec?.workload?.manifests ?? []) as Obj[];
    if (type === 'DELETED') {
      const k = known.get(key);
      if (known.delete(key) && !k!.bundled) enqueue(remove(ns, k!.manifests));
      return;
    }
    const generation = Number(w.metadata.generation ?? 1);
    const applied = (w.status?.conditions ?? []).find((c: Obj) => c.type === 'Applied');
    const prior = known.get(key);
    const acked = Math.max(applied?.status === 'True' ? Number(applied.observedGeneration ?? 0) : 0, prior?.acked ?? 0);
    const bundled = w.metadata.annotations?.[BUNDLE_ANNOTATION] !== undefined;
    known.set(key, { generation, acked, manifests, reported: prior?.reported ?? new Set(), bundled, observed: prior?.observed ?? new Map() });
    if (bundled) for (const m of manifests) carrier.set(`${ns}/${m.metadata?.name as string}`, key);
    // Not acknowledged yet and not already queued (a failed acknowledgement is queued again on the next event or list).
    if (acked < generation && !queuedKeys.has(key)) {
      queuedKeys.add(key);
      enqueue(async () => { try { await ack(ns, w.metadata.name as string)(); } finally { queuedKeys.delete(key); } });
    }
  };

  const base = `${WORKS}?labelSelector=${encodeURIComponent(`view.kubestellar.io/wds=${wds}`)}`;
  setInterval(() => { totals.queued = queue.length + running; process.stdout.write(`${JSON.stringify(totals)}\n`); }, 500);
  // List, then watch from the list; on a dropped watch (an ERROR such as 410, or the end), list again.
  for (;;) {
    try {
      const list = await its.call('GET', base);
      const listed = new Set<string>();
      for (const w of (list.items ?? []) as Obj[]) {
        listed.add(`${w.metadata.namespace}/${w.metadata.name}`);
        see('ADDED', w);
      }
      for (const key of [...known.keys()]) if (!listed.has(key)) see('DELETED', { metadata: { namespace: key.split('/')[0], name: key.split('/')[1] } });
      const res = await its.pool.request({ method: 'GET', headers: { accept: 'application/json' },
        path: `${base}&watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}` });
      if (res.statusCode !== 200) throw new Error(`watch: ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`);
      for await (const doc of jsonLines(res.body)) {
        const e = doc as Obj;
        if (e.type === 'ERROR') break;
        if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') see(e.type, e.object as Obj);
      }
    } catch (err) {
      totals.lastError = `watch: ${(err as Error).message.slice(0, 200)} at ${performance.now().toFixed(0)} ms`;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

main().catch((err: Error) => {
  process.stderr.write(`fleet-agent: ${err.message}\n`);
  process.exit(2);
});
