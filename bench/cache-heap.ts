// Benchmark (not a test): the heap that `ksview serve`'s two big fleet-scale caches take, as they
// keep their objects now against keeping them whole (target: `ksview serve` RSS ≤ 1 GB with
// 100,000 ManifestWorks and 100,000 WorkStatuses).
//
//   npx tsc -p . && node dist/bench/cache-heap.js [--count 100000] [--objects 100]
//
// No spaces: it makes --count ManifestWorks and WorkStatuses as its1 returns them in the fleet
// bench (./fleet-scale.ts: --objects Deployments, each sent to count/objects clusters by the
// placement controller's own wrapping, with the annotations and the two managers' managedFields
// its1 records, and the status the simulated agent writes, ./fleet-shapes.ts), parses each from
// its JSON text as the informer does, passes it through one cache transform and keeps it. The
// heap used after a full GC, less the heap before, is what the kept objects cost:
//  - works: whole; without managedFields (the transform before 20720ed); `slimWork` (now);
//  - WorkStatuses: whole; managedFields reduced to the status time (before 20720ed);
//    `WorkStatusIntake.take` (now: `slimWorkStatus`'s copy of 20720ed, each report's status
//    bounded and counted against its mailbox, docs/security.md D15).
// It needs V8's `gc()`, so it runs itself again under `--expose-gc` when started without it.
// Exit: 0 measured, 2 could not run.
import { spawnSync } from 'node:child_process';
import { manifestWork, manifestWorkName } from '../src/controllers/model/wrapping.js';
import { slimWork } from '../src/controllers/placement/works.js';
import { encodeKey, objectKey, SOURCE_ANNOTATION } from '../src/controllers/model/keys.js';
import { WorkStatusIntake } from '../src/controllers/status/workstatus-cache.js';
import { lastStatusUpdate } from '../src/kube/objects.js';
import { withoutManagedFields } from '../src/kube/informer.js';
import { SOURCE_GENERATION_ANNOTATION, type ManifestWork, type WorkStatus } from '../src/kube/ocm-api.js';
import type { Obj } from './agent-common.js';
import { deploymentStatusOf, fleetDeployment, workStatusObjectOf, workStatusOf } from './fleet-shapes.js';
import { progress } from './view-bench.js';

function flag(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`);
  return v;
}

const NOW = '2026-11-24T09:00:00Z';
const NS = 'fleet-x';
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };

/** managedFields as kube-apiserver records them: a field set mirroring `fields`. */
function fieldSet(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [`f:${k}`, v && typeof v === 'object' && !Array.isArray(v) ? fieldSet(v) : {}]));
}

const deployment = (i: number, objects: number): Obj => fleetDeployment(NS, i % objects, 'x');

/** The i-th ManifestWork as its1 returns it once the simulated agent acknowledged it. */
function workText(i: number, objects: number): string {
  const d = deployment(i, objects);
  const id = { ...DEPLOYMENTS, namespace: NS, name: d.metadata.name as string };
  const w = manifestWork(d, { wds: 'wds1', cluster: `${NS}-${Math.floor(i / objects)}`, id, policies: [`${NS}-1000`], createOnly: false }) as Obj;
  const annotations = { [SOURCE_ANNOTATION]: encodeKey(objectKey(DEPLOYMENTS, NS, id.name)), [SOURCE_GENERATION_ANNOTATION]: '1' };
  w.metadata = { ...w.metadata, annotations, uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`, resourceVersion: String(100_000 + i), generation: 1, creationTimestamp: NOW };
  w.status = workStatusOf([d], 1, NOW);
  w.metadata.managedFields = [
    { manager: 'kubestellar-view-wds1', operation: 'Apply', apiVersion: 'work.open-cluster-management.io/v1', time: NOW, fieldsType: 'FieldsV1',
      fieldsV1: fieldSet({ metadata: { labels: w.metadata.labels, annotations }, spec: w.spec }) },
    { manager: 'fleet-agent', operation: 'Update', apiVersion: 'work.open-cluster-management.io/v1', time: NOW, fieldsType: 'FieldsV1', subresource: 'status',
      fieldsV1: fieldSet({ status: w.status }) },
  ];
  return JSON.stringify(w);
}

/** The i-th WorkStatus as its1 returns it once the simulated agent wrote its status. */
function workStatusText(i: number, objects: number): string {
  const d = deployment(i, objects);
  const ws = workStatusObjectOf(d, manifestWorkName('wds1', { ...DEPLOYMENTS, namespace: NS, name: d.metadata.name as string }));
  ws.status = deploymentStatusOf(d);
  ws.metadata = { ...ws.metadata, namespace: `${NS}-${Math.floor(i / objects)}`, uid: `00000000-0000-0000-0001-${String(i).padStart(12, '0')}`,
    resourceVersion: String(200_000 + i), generation: 1, creationTimestamp: NOW,
    managedFields: [
      { manager: 'fleet-agent', operation: 'Update', apiVersion: 'control.kubestellar.io/v1alpha1', time: NOW, fieldsType: 'FieldsV1',
        fieldsV1: fieldSet({ metadata: { labels: ws.metadata.labels }, spec: ws.spec }) },
      { manager: 'fleet-agent', operation: 'Update', apiVersion: 'control.kubestellar.io/v1alpha1', time: NOW, fieldsType: 'FieldsV1', subresource: 'status',
        fieldsV1: fieldSet({ status: ws.status }) },
    ] };
  return JSON.stringify(ws);
}

/** The WorkStatus cache's transform before 20720ed: managedFields reduced to the last status change. */
function statusTimeOnly(ws: WorkStatus): WorkStatus {
  const t = lastStatusUpdate(ws);
  ws.metadata.managedFields = t ? [{ operation: 'Update', subresource: 'status', time: t }] : [];
  return ws;
}

interface Measured { cache: string; kept: string; mb: number; bytesEach: number }

function measure<T>(cache: string, kept: string, count: number, text: (i: number) => string, transform: (o: T) => T): Measured {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  const before = process.memoryUsage().heapUsed;
  const keep: T[] = [];
  for (let i = 0; i < count; i++) keep.push(transform(JSON.parse(text(i)) as T));
  gc();
  const used = process.memoryUsage().heapUsed - before;
  const m = { cache, kept, mb: used / 1_048_576, bytesEach: used / keep.length };
  progress.step(`${cache}, ${kept}: ${m.mb.toFixed(0)} MB (${m.bytesEach.toFixed(0)} B each)`);
  return m;
}

function main(): void {
  const count = flag('count', 100_000);
  const objects = flag('objects', 100);
  progress.step(`${count} ManifestWorks (one's JSON: ${workText(0, objects).length} B) and ${count} WorkStatuses (${workStatusText(0, objects).length} B), ${objects} Deployments`);
  const works = [
    measure<ManifestWork>('ManifestWorks', 'whole', count, (i) => workText(i, objects), (w) => w),
    measure<ManifestWork>('ManifestWorks', 'without managedFields (before)', count, (i) => workText(i, objects), withoutManagedFields),
    measure<ManifestWork>('ManifestWorks', '`slimWork` (now)', count, (i) => workText(i, objects), slimWork),
  ];
  const intake = new WorkStatusIntake();
  const statuses = [
    measure<WorkStatus>('WorkStatuses', 'whole', count, (i) => workStatusText(i, objects), (ws) => ws),
    measure<WorkStatus>('WorkStatuses', 'status time only (before)', count, (i) => workStatusText(i, objects), statusTimeOnly),
    measure<WorkStatus>('WorkStatuses', '`WorkStatusIntake.take` (now)', count, (i) => workStatusText(i, objects), (ws) => intake.take(ws)),
  ];
  const lines = ['| cache | kept | heap | per object | of whole |', '|---|---|---:|---:|---:|'];
  for (const group of [works, statuses]) {
    for (const m of group) lines.push(`| ${m.cache} | ${m.kept} | ${m.mb.toFixed(0)} MB | ${m.bytesEach.toFixed(0)} B | ${(m.mb / group[0]!.mb).toFixed(2)} |`);
  }
  process.stdout.write(`${count} objects of each, Node ${process.version}\n\n${lines.join('\n')}\n`);
}

if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  const again = spawnSync(process.execPath, ['--expose-gc', ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(again.status ?? 2);
}
try {
  main();
} catch (err) {
  process.stderr.write(`cache-heap: ${(err as Error).message}\n`);
  process.exit(2);
}
