// Benchmark (not a test): 1,000 ManifestWorks through an agent against the same 1,000
// server-side applies issued directly to the WEC by a parallel client.
//
//   npx tsc -p . && node dist/bench/agent-throughput.js --agent ours|ocm [--objects N] [--inflight N]
//        [--wec NAME] [--dir DIR --port-base N --wecs N] [--no-up] [--json FILE]
//
// The agent under test as in agent-latency.ts (ours: `<wec>/ksview-agent` of the spaces; ocm: OCM's
// work agent started here for a bench cluster). Side by side in one run:
//  1. DIRECT (the baseline): a client with --inflight (default 32) requests in flight server-side
//     applies N (default 1,000) ConfigMaps into a namespace bench-<r>-direct of the WEC, under the
//     field manager the works name; timed until the last answer.
//  2. AGENT: the same client writes N ManifestWorks (one ConfigMap each, as placement writes them)
//     into the mailbox, same concurrency, into a namespace bench-<r> of the WEC; timed from the
//     first write until a watch on the mailbox has seen every work Applied=True.
//  3. ITS ALONE (the floor of step 2): the same client writes the same N works into a namespace of the
//     ITS that no agent serves (`bench-<r>-floor`, not a mailbox), timed until the last answer: what
//     the works cost the ITS before any agent does anything.
//  4. RSS of the agent with the N objects applied.
//  5. With --executor-rounds R (docs/placement.md, "Executor"): R rounds each of AGENT and AGENT+EXECUTOR, alternating, each
//     into a fresh WEC namespace and cleaned (works deleted, released by the agent) before the next:
//     the same N works, the second kind naming as executor (spec.executor.subject) a ServiceAccount
//     of the WEC bound to `edit` in that namespace (it may write everything they carry). Medians.
// Targets (the issue): AGENT ≤ 1.5 × DIRECT; RSS ≤ 150 MB; AGENT+EXECUTOR ≤ 1.1 × AGENT (medians). Everything it makes is deleted at the
// end (also on error). Exit status: 0 met, 1 missed, 2 could not run.
import { performance } from 'node:perf_hooks';
import { waitFor } from '../src/kube/wait.js';
import { applyWork, benchWork, BENCH_WDS, bounded, configMapId, deleteWorks, median, parseArgs, progress, rssMb, setUp, WorkWatch, writeJson, type Bench, type Obj } from './agent-common.js';

const USAGE = 'usage: node dist/bench/agent-throughput.js --agent ours|ocm [--objects N] [--inflight N] [--executor-rounds R] [--wec NAME] [--dir DIR --port-base N --wecs N] [--no-up] [--json FILE]';

/**
 * One round of N ConfigMap works into a fresh WEC namespace `ns`, with `executor` (a ServiceAccount
 * bound to `edit` there) or none: ms from the first write until every work is Applied. Cleaned
 * before it returns: the works deleted and released by the agent, the namespace gone.
 */
async function agentRound(b: Bench, ns: string, n: number, inflight: number, executor: boolean): Promise<number> {
  const label = ns;
  const data = { greeting: 'hello', payload: 'x'.repeat(200) };
  await b.wec.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const subject = { type: 'ServiceAccount', serviceAccount: { namespace: ns, name: 'bench-executor' } };
  if (executor) {
    await b.wec.call('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bench-executor', namespace: ns } });
    await b.wec.call('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'bench-executor-edit', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'ServiceAccount', name: 'bench-executor', namespace: ns }],
    });
  }
  const works = await WorkWatch.open(b.its, b.agent.cluster, `bindingpolicy.view.kubestellar.io/${label}`);
  try {
    const ws = Array.from({ length: n }, (_, i) => {
      const w = benchWork(b.agent.cluster, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns }, data }, configMapId(ns, `cm-${i}`), label);
      if (executor) w.spec.executor = { subject };
      return w;
    });
    const t0 = performance.now();
    await bounded(n, inflight, async (i) => { await applyWork(b.its, ws[i]!); });
    await works.until(`${n} works Applied`, () => ws.every((w) => works.applied.has(w.metadata.name)), 900_000);
    return Math.max(...ws.map((w) => works.applied.get(w.metadata.name)!)) - t0;
  } finally {
    works.close();
    if (!await deleteWorks(b, label, 300_000)) progress.step(`  some works of ${label} were not released within 300 s`);
    await b.wec.call('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
    await waitFor(async () => ({ ok: (await b.wec.call('GET', `/api/v1/namespaces/${ns}`).catch(() => ({}) as Obj)).kind !== 'Namespace', detail: ns }), 300_000, 1000);
  }
}

async function main(): Promise<number> {
  const args = parseArgs(USAGE, { objects: 1000, inflight: 32, 'executor-rounds': 0 });
  const { objects: N, inflight: INFLIGHT, 'executor-rounds': ROUNDS } = args.numbers as { objects: number; inflight: number; 'executor-rounds': number };
  const b = await setUp(args);
  const label = `bench-${b.run}`;
  const ns = `bench-${b.run}`;
  const nsDirect = `${ns}-direct`;
  const floorNs = `${ns}-floor`;
  const cluster = b.agent.cluster;
  const data = { greeting: 'hello', payload: 'x'.repeat(200) };
  let works: WorkWatch | undefined;
  try {
    progress.step(`agent under test: ${b.agent.name}, mailbox its1/${cluster}, WEC ${b.agent.wec}`);
    for (const n of [ns, nsDirect]) await b.wec.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } });

    progress.step(`DIRECT: ${N} ConfigMap server-side applies to ${b.agent.wec}, ${INFLIGHT} in flight`);
    const t0 = performance.now();
    await bounded(N, INFLIGHT, async (i) => {
      await b.wec.call('PATCH', `/api/v1/namespaces/${nsDirect}/configmaps/cm-${i}?fieldManager=work-agent-kubestellar-${BENCH_WDS}`,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: nsDirect }, data }, 'application/apply-patch+yaml');
    });
    const direct = performance.now() - t0;
    progress.step(`DIRECT took ${(direct / 1000).toFixed(2)} s; deleting its namespace`);
    await b.wec.call('DELETE', `/api/v1/namespaces/${nsDirect}`);

    progress.step(`ITS ALONE: the same ${N} ManifestWorks written to its1/${floorNs}, which no agent serves`);
    await b.its.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: floorNs } });
    const floorWorks = Array.from({ length: N }, (_, i) => benchWork(floorNs, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns }, data }, configMapId(ns, `cm-${i}`), label));
    const tf = performance.now();
    await bounded(N, INFLIGHT, async (i) => { await applyWork(b.its, floorWorks[i]!); });
    const floor = performance.now() - tf;
    progress.step(`ITS ALONE took ${(floor / 1000).toFixed(2)} s; deleting its namespace`);
    await b.its.call('DELETE', `/api/v1/namespaces/${floorNs}`);

    works = await WorkWatch.open(b.its, cluster, `bindingpolicy.view.kubestellar.io/${label}`);
    const names = Array.from({ length: N }, (_, i) => `cm-${i}`);
    const ws = names.map((name) => benchWork(cluster, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data }, configMapId(ns, name), label));
    progress.step(`AGENT: ${N} ManifestWorks written to its1/${cluster}, ${INFLIGHT} in flight → all Applied`);
    const t1 = performance.now();
    await bounded(N, INFLIGHT, async (i) => { await applyWork(b.its, ws[i]!); });
    const written = performance.now() - t1;
    progress.step(`  written in ${(written / 1000).toFixed(2)} s`);
    const timer = setInterval(() => progress.step(`  ${works!.applied.size}/${N} Applied`), 10_000);
    try {
      await works.until(`${N} works Applied`, () => ws.every((w) => works!.applied.has(w.metadata.name)), 900_000);
    } finally {
      clearInterval(timer);
    }
    const agent = Math.max(...ws.map((w) => works!.applied.get(w.metadata.name)!)) - t1;
    const inWec = (await b.wec.call('GET', `/api/v1/namespaces/${ns}/configmaps?limit=${N + 10}`)).items.filter((c: { metadata: { name: string } }) => c.metadata.name.startsWith('cm-')).length;
    const rss = rssMb(b.agent.pid);
    const ratio = agent / direct;
    const plain: number[] = [];
    const withExecutor: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const ex of [false, true]) {
        progress.step(`round ${r + 1}/${ROUNDS}: AGENT${ex ? '+EXECUTOR' : ''}, ${N} works → all Applied`);
        const took = await agentRound(b, `${ns}-r${r}${ex ? 'x' : 'p'}`, N, INFLIGHT, ex);
        progress.step(`  ${(took / 1000).toFixed(2)} s`);
        (ex ? withExecutor : plain).push(took);
      }
    }
    const exRatio = ROUNDS > 0 ? median(withExecutor) / median(plain) : NaN;
    const ok = ratio <= 1.5 && rss <= 150 && (ROUNDS === 0 || exRatio <= 1.1);
    process.stdout.write([
      `agent: ${b.agent.name}; mailbox its1/${cluster}; WEC ${b.agent.wec}`,
      '',
      '| measurement | value | target |',
      '|---|---:|---|',
      `| DIRECT: ${N} ConfigMap server-side applies to the WEC, ${INFLIGHT} in flight | ${(direct / 1000).toFixed(2)} s | |`,
      `| AGENT: ${N} ManifestWorks written (${(written / 1000).toFixed(2)} s) → all Applied on the works | ${(agent / 1000).toFixed(2)} s | |`,
      `| ITS ALONE: the same ${N} ManifestWorks written where no agent serves | ${(floor / 1000).toFixed(2)} s | |`,
      `| ITS ALONE / DIRECT (no agent could do better) | ${(floor / direct).toFixed(2)} | |`,
      `| AGENT / DIRECT | **${ratio.toFixed(2)}** | ≤ 1.5 ${ratio <= 1.5 ? 'met' : 'NOT met'} |`,
      `| ConfigMaps found in the WEC afterwards | ${inWec} / ${N} | |`,
      `| agent RSS with ${N} objects applied | **${rss.toFixed(0)} MB** | ≤ 150 MB ${rss <= 150 ? 'met' : 'NOT met'} |`,
      ...(ROUNDS > 0 ? [
        `| AGENT, ${ROUNDS} rounds alternating with the next row: median (each) | ${(median(plain) / 1000).toFixed(2)} s (${plain.map((x) => (x / 1000).toFixed(2)).join(', ')}) | |`,
        `| AGENT+EXECUTOR (works applied as a ServiceAccount with \`edit\` in their namespace): median (each) | ${(median(withExecutor) / 1000).toFixed(2)} s (${withExecutor.map((x) => (x / 1000).toFixed(2)).join(', ')}) | |`,
        `| AGENT+EXECUTOR / AGENT (medians) | **${exRatio.toFixed(2)}** | ≤ 1.1 ${exRatio <= 1.1 ? 'met' : 'NOT met'} |`,
      ] : []),
      '',
    ].join('\n'));
    writeJson(args.json, { agent: b.agent.name, cluster, wec: b.agent.wec, objects: N, inflight: INFLIGHT, directMs: direct, floorMs: floor, writtenMs: written, agentMs: agent, ratio, inWec, rssMb: rss,
      ...(ROUNDS > 0 ? { executorRounds: ROUNDS, agentRoundsMs: plain, executorRoundsMs: withExecutor, executorRatio: exRatio } : {}) });
    return ok ? 0 : 1;
  } finally {
    progress.step('cleaning up (the agent deletes what it applied)');
    works?.close();
    if (!await deleteWorks(b, label, 300_000)) progress.step('  some works were not released by the agent within 300 s');
    for (const n of [ns, nsDirect]) await b.wec.call('DELETE', `/api/v1/namespaces/${n}`).catch(() => undefined);
    await b.its.call('DELETE', `/api/v1/namespaces/${floorNs}`).catch(() => undefined);
    // The namespace controllers delete the 1,000s of objects after we return: wait, so the next run's
    // DIRECT is not timed against that.
    progress.step('waiting for the bench namespaces to be gone');
    const gone = await waitFor(async () => {
      const left = [];
      for (const [c, n] of [[b.wec, ns], [b.wec, nsDirect], [b.its, floorNs]] as const) {
        if ((await c.call('GET', `/api/v1/namespaces/${n}`).catch(() => ({}) as Obj)).kind === 'Namespace') left.push(n); // a 404 is a Status
      }
      return { ok: left.length === 0, detail: left.join(', ') };
    }, 300_000, 1000);
    if (!gone.ok) progress.step(`  still there after 300 s: ${gone.detail}`);
    await b.tearDown();
  }
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`agent-throughput: ${err.message}\n`);
  process.exit(2);
});
