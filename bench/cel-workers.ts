// Benchmark (not a test): what moving StatusCollector evaluation off the server's thread costs
// (docs/security.md D4). The fleet bench's shapes (./fleet-shapes.ts): one Deployment reported by
// --clusters WECs (its WorkStatus status as the simulated agent writes it), and KubeStellar's
// documented collectors (a SUM of availableReplicas, and a select of the whole returned status,
// the largest thing a typical collector moves). Each collector's rows over all WECs are computed
//  - IN-THREAD: evaluateRow on this thread (as before), and
//  - POOL: through CelPool (src/controllers/status/cel-pool.ts) as the CombinedStatuses do it, in
//    tasks of ROWS_PER_TASK rows, each a structured clone of its reports there and of its rows back;
// best of --rounds, after a warm-up. Also: the time this thread is busy sending and receiving (the
// part the pool cannot take away), and the bytes that cross.
//
//   npx tsc -p . && node dist/bench/cel-workers.js [--clusters 1000] [--rounds 5]
//
// No spaces. Exit: 0 measured, 2 could not run.
import { serialize } from 'node:v8';
import { CelPool } from '../src/controllers/status/cel-pool.js';
import { compileCollector, evaluateRow, objForCel, type WecReport } from '../src/controllers/status/collectors.js';
import { ROWS_PER_TASK } from '../src/controllers/status/combined-statuses.js';
import type { JsonObject } from '../src/kube/objects.js';
import { deploymentStatusOf, fleetDeployment } from './fleet-shapes.js';

function flag(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`);
  return v;
}

const SPECS: Record<string, unknown> = {
  sum: { combinedFields: [{ name: 'available', type: 'SUM', subject: 'returned.status.availableReplicas' }], limit: 20 },
  'full-status': { select: [{ name: 'wec', def: 'inventory.name' }, { name: 'status', def: 'returned.status' }], limit: 20 },
};

async function main(): Promise<void> {
  const clusters = flag('clusters', 1000);
  const rounds = flag('rounds', 5);
  const deployment = fleetDeployment('fleet-x', 0, 'fleet-x');
  // The simulated agent's status, with a Deployment's two usual conditions (a real one carries them).
  const condition = (type: string, reason: string) => ({ type, status: 'True', lastUpdateTime: '2026-11-24T09:00:00Z', lastTransitionTime: '2026-11-24T09:00:00Z', reason, message: `Deployment "d-0" ${reason}.` });
  const status = { ...deploymentStatusOf(deployment), conditions: [condition('Available', 'MinimumReplicasAvailable'), condition('Progressing', 'NewReplicaSetAvailable')] } as JsonObject;
  const reports: WecReport[] = Array.from({ length: clusters }, (_, i) => ({ cluster: `wec${i}`, status, lastReturnedUpdateTimestamp: '2026-11-24T09:00:00Z' }));
  const pool = new CelPool();
  pool.warm();
  console.log(`${clusters} WECs, one Deployment; best of ${rounds} rounds`);
  console.log('collector        IN-THREAD ms   POOL ms   this thread ms (POOL)   bytes sent   bytes back');
  for (const [name, spec] of Object.entries(SPECS)) {
    const c = compileCollector({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name }, spec } as never).collector!;
    const obj = objForCel(deployment as JsonObject);
    let inThread = Infinity;
    let inPool = Infinity;
    let busy = Infinity;
    let sent = 0;
    let back = 0;
    for (let r = 0; r <= rounds; r++) {
      let t = performance.now();
      for (const rep of reports) evaluateRow(c, obj, rep);
      if (r > 0) inThread = Math.min(inThread, performance.now() - t);

      t = performance.now();
      let thread = 0;
      sent = 0;
      back = 0;
      const tasks: Promise<unknown>[] = [];
      for (let i = 0; i < reports.length; i += ROWS_PER_TASK) {
        const s = performance.now();
        const req = { collector: { key: `${name}/1`, name, spec }, reports: reports.slice(i, i + ROWS_PER_TASK) };
        sent += serialize(req).length;
        tasks.push(pool.evaluate(name, req, 10_000).then((rows) => { const b = performance.now(); back += serialize(rows).length; thread += performance.now() - b; }));
        thread += performance.now() - s;
      }
      await Promise.all(tasks);
      if (r > 0) {
        inPool = Math.min(inPool, performance.now() - t);
        busy = Math.min(busy, thread);
      }
    }
    console.log(`${name.padEnd(16)} ${inThread.toFixed(1).padStart(12)}   ${inPool.toFixed(1).padStart(7)}   ${busy.toFixed(1).padStart(21)}   ${String(sent).padStart(10)}   ${String(back).padStart(10)}`);
  }
  await pool.close();
}

main().then(() => process.exit(0), (err: Error) => {
  process.stderr.write(`cel-workers: ${err.message}\n`);
  process.exit(2);
});
