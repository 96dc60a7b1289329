// Template expansion is bounded (docs/security.md D5): the review's template bomb — a 10 KB
// ConfigMap whose ten values are {{range 8000}} over a 1,000-byte body, written through the view
// by a user who may only edit ConfigMaps in one namespace, and sent by a policy to two clusters —
// is refused with a status error on the policy naming the object's limit, nothing is sent, and
// `ksview serve`'s resident memory (its peak, VmHWM from /proc, reset before) grows by less than
// 50 MB; before the bound it grew from 145 to 426 MB.
import { readFileSync, writeFileSync } from 'node:fs';
import t from 'tap';
import YAML from 'yaml';
import { readState } from '../../src/spaces/state.js';
import { managedCluster } from '../fixtures/inventory.js';
import { bindingPolicy, cmId, policy, VIEW, work, type Obj } from '../fixtures/placement.js';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

/** ksview serve of wds1, as the spaces' state records it. */
function servePid(): number {
  const rec = readState(layout.statePath)?.processes.find((p) => p.name === 'wds1/ksview-serve');
  if (!rec) throw new Error('no wds1/ksview-serve in the spaces\' state');
  return rec.pid;
}

const kib = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

t.test("the issue's template bomb is refused on the policy's status; serve's memory grows < 50 MB", async (t) => {
  const run = uniqueName('bomb');
  const ns = testNamespace(t, ['wds1'], 'bomb');
  const user = `${run}-editor`;
  // The author may edit ConfigMaps in this namespace and nothing else.
  kcOk('wds1', ['-n', ns, 'create', 'role', 'cm-editor', '--verb=get,list,create,update,patch', '--resource=configmaps']);
  kcOk('wds1', ['-n', ns, 'create', 'rolebinding', 'cm-editor', '--role=cm-editor', `--user=${user}`]);
  kcOk('wds1', ['create', 'clusterrolebinding', `${user}-view`, '--clusterrole=kubestellar-view:user', `--user=${user}`]);
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebinding', `${user}-view`, '--ignore-not-found']); });
  for (const c of ['a', 'b']) managedCluster(t, `${run}-${c}`, { group: run });
  bindingPolicy(t, run, { clusterSelectors: [{ matchLabels: { group: run } }], downsync: [{ namespaces: [ns], resources: ['configmaps'], objectNames: ['bomb'] }] });

  const pid = servePid();
  const before = kib(pid, 'VmRSS');
  writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM, the peak, to the current RSS
  const data: Record<string, string> = {};
  for (let i = 0; i < 10; i++) data[`k${i}`] = `{{range 8000}}${'x'.repeat(1000)}{{end}}`;
  kcOk(VIEW, ['--as', user, 'create', '-f', '-'], YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'bomb', namespace: ns, annotations: { 'control.kubestellar.io/expand-templates': 'true' } }, data }));
  t.teardown(() => { kc('wds1', ['-n', ns, 'delete', 'configmap', 'bomb', '--ignore-not-found']); });

  // Whatever the policy says of the object first (an expansion error, or before the bound the
  // work's size), it has looked at it; serve's memory is measured either way.
  const errors = await waitUntil('the policy to report the ConfigMap', () => {
    const list = (policy(run)?.status as Obj | undefined)?.errors as string[] | undefined;
    return list?.some((e) => e.includes(`${ns}/bomb`)) ? list : undefined;
  }, 90_000).catch((err: Error) => [err.message]);
  const grown = kib(pid, 'VmHWM') - before;
  t.ok(grown < 50 * 2 ** 20, `serve's peak RSS grew ${Math.round(grown / 2 ** 20)} MB (< 50 MB)`);
  t.same(errors.filter((e) => e.includes(`${ns}/bomb`)), [
    `template: ${run}-a/ConfigMap(${ns}/bomb).data.k0: the object's expansion is over the limit of 512000 bytes`,
  ], "the first failing destination's error, in Go's words with the limit");
  for (const c of ['a', 'b']) t.equal(work(`${run}-${c}`, cmId(ns, 'bomb')), undefined, `nothing sent to ${run}-${c}`);
  const synced = (policy(run)?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Synced');
  t.match(synced, { status: 'False', reason: 'ReconcileError' }, 'the policy is not Synced');
});
