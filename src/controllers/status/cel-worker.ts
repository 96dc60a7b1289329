// The entry of a CEL worker thread (./cel-pool.ts starts it): the only place the CEL engine is
// loaded and run, so that no compile or evaluation ever holds the server's own thread. It answers
// two requests, one at a time, in the order they come:
// - compile {name, spec}: the collector's errors (KubeStellar's words, ./collectors.ts) or its
//   shape (what the server's thread needs to combine its rows, ./collector-rows.ts);
// - evaluate {collector: {key, name, spec}, obj?, reports}: one RowEval per report, in order. The
//   compiled collector is kept by `key` (name, generation and spec), a few hundred at most.
// Every answer is plain data (structured clone). A request that throws is answered with its error.
import { parentPort } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { JsonObject } from '../../kube/objects.js';
import { failedRow, type RowEval } from './collector-rows.js';
import { compileCollector, evaluateRow, objForCel, type CompileResult, type StatusCollector, type WecReport } from './collectors.js';
import type { WorkerAnswer, WorkerRequest } from './cel-pool.js';

const compiled = new LRUCache<string, CompileResult>({ max: 256 });

function compileOf(name: string, spec: unknown): CompileResult {
  try {
    return compileCollector({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name }, spec } as StatusCollector);
  } catch (err) { // a spec of unexpected shape: said, never thrown
    return { errors: [`invalid spec: ${(err as Error).message}`] };
  }
}

function answer(req: WorkerRequest): WorkerAnswer {
  if (req.op === 'compile') {
    const r = compileOf(req.name, req.spec);
    return { id: req.id, ok: true, errors: r.errors, ...(r.collector ? { shape: r.collector.shape } : {}) };
  }
  let r = compiled.get(req.collector.key);
  if (!r) compiled.set(req.collector.key, (r = compileOf(req.collector.name, req.collector.spec)));
  const c = r.collector;
  const obj = req.obj === undefined ? undefined : objForCel(req.obj as JsonObject);
  const rows: RowEval[] = req.reports.map((report: WecReport) => (c
    ? evaluateRow(c, report.obj !== undefined ? objForCel(report.obj as JsonObject) : obj, report)
    : failedRow(report.cluster, `the collector is invalid: ${r.errors[0]}`)));
  return { id: req.id, ok: true, rows };
}

parentPort!.on('message', (req: WorkerRequest) => {
  let out: WorkerAnswer;
  try {
    out = answer(req);
  } catch (err) {
    out = { id: req.id, ok: false, message: (err as Error).message };
  }
  parentPort!.postMessage(out);
});
parentPort!.postMessage({ ready: true });
