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
// Targets (the issue): AGENT ≤ 1.5 × DIRECT; RSS ≤ 150 MB. Everything it makes is deleted at the
// end (also on error). Exit status: 0 met, 1 missed, 2 could not run.
import { performance } from 'node:perf_hooks';
import { waitFor } from '../src/kube/wait.js';
import { applyWork, benchWork, BENCH_WDS, bounded, configMapId, deleteWorks, parseArgs, progress, rssMb, setUp, WorkWatch, writeJson, type Obj } from './agent-common.js';

const USAGE = 'usage: node dist/bench/agent-throughput.js --agent ours|ocm [--objects N] [--inflight N] [--wec NAME] [--dir DIR --port-base N --wecs N] [--no-up] [--json FILE]';

async function main(): Promise<number> {
  const args = parseArgs(USAGE, { objects: 1000, inflight: 32 });
  const { objects: N, inflight: INFLIGHT } = args.numbers as { objects: number; inflight: number };
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
    const ok = ratio <= 1.5 && rss <= 150;
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
      '',
    ].join('\n'));
    writeJson(args.json, { agent: b.agent.name, cluster, wec: b.agent.wec, objects: N, inflight: INFLIGHT, directMs: direct, floorMs: floor, writtenMs: written, agentMs: agent, ratio, inWec, rssMb: rss });
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
