// Two WDSs (wds1 and wds2 of the test spaces, each with its own `ksview serve`, sharing its1) send
// the same ConfigMap with different data to wec1. The agent applies without force: the content of
// the WDS that came first stays; the second WDS's work reports the WEC's conflict on its manifest,
// and that WDS's BindingPolicy says so in status.errors. When the first WDS lets go, the second
// one's content lands at the agent's next try and its policy's error clears.
import t from 'tap';
import { manifestWorkName } from '../../src/controllers/model/wrapping.js';
import { configMap, getWork, live, manifestStatus, type Obj } from '../fixtures/agent.js';
import { bindingPolicy, cmId, policy } from '../fixtures/placement.js';
import { kc, kcOk, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const applied = (w: Obj | undefined): Obj | undefined =>
  (manifestStatus(w, 'ConfigMap', 'same')?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Applied');
const errorsOf = (name: string, wds: string): string[] => (policy(name, wds)?.status?.errors as string[] | undefined) ?? [];
const notApplied = (errors: string[]) => errors.filter((e) => e.includes(' did not apply '));

t.test('the same ConfigMap from two WDSs: the first stays, the second is told why, until the first lets go', async (t) => {
  const ns = testNamespace(t, ['wds1', 'wds2'], 'twowds');
  t.teardown(() => { kc('wec1', ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']); });
  // Through each WDS's own view: both serves run.
  kcOk('wds1-view', ['apply', '-f', '-'], JSON.stringify(configMap(ns, 'same', { a: '1' })));
  kcOk('wds2-view', ['apply', '-f', '-'], JSON.stringify(configMap(ns, 'same', { a: '2' })));
  const spec = { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [{ resources: ['configmaps'], namespaces: [ns], objectNames: ['same'] }] };
  const first = uniqueName('first');
  const second = uniqueName('second');
  const id = cmId(ns, 'same');
  const work1 = manifestWorkName('wds1', id);
  const work2 = manifestWorkName('wds2', id);

  bindingPolicy(t, first, spec, 'wds1');
  await waitUntil('wds1\'s ConfigMap in wec1', () => live('wec1', ['-n', ns, 'configmap', 'same'])?.data?.a === '1', 60_000);
  t.pass('wds1 came first: wec1 has a=1');

  bindingPolicy(t, second, spec, 'wds2');
  const refused = await waitUntil('wds2\'s work to report the conflict on its manifest', () => {
    const c = applied(getWork('wec1', work2));
    return c?.status === 'False' ? c : undefined;
  }, 60_000);
  t.equal(refused.reason, 'AppliedManifestFailed');
  t.match(refused.message, /conflict/, 'the WEC\'s words: a conflict');
  t.match(refused.message, /"work-agent-kubestellar-wds1"/, 'naming the first WDS\'s field manager');
  t.match(refused.message, /\.data\.a/, 'and the field');

  const reported = await waitUntil('wds2\'s policy to carry the conflict', () => notApplied(errorsOf(second, 'wds2'))[0], 60_000);
  t.match(reported, new RegExp(`^cluster wec1 did not apply configmaps ${ns}/same: .*conflict with "work-agent-kubestellar-wds1": \\.data\\.a`),
    'status.errors of wds2\'s policy names the cluster, the object and what the WEC said');
  t.equal(live('wec1', ['-n', ns, 'configmap', 'same'])?.data?.a, '1', 'the first WDS\'s content stays');

  // wds1's policy sees wds2's work too (its conflict line), yet nothing of wec1's refusal is its.
  await waitUntil('wds1\'s policy to see the other WDS', () => errorsOf(first, 'wds1').some((e) => e.includes('from WDS wds2')), 60_000);
  t.same(notApplied(errorsOf(first, 'wds1')), [], 'wds1\'s policy has no apply failure');
  t.equal(applied(getWork('wec1', work1))?.status, 'True', 'wds1\'s work is applied');

  // wds1 lets go: its work goes, the agent deletes its ConfigMap, wds2's work applies a=2.
  kcOk('wds1', ['delete', 'bindingpolicy', first, '--timeout=60s']);
  t.notOk(getWork('wec1', work1), 'wds1\'s work is gone once its policy is');
  await waitUntil('wds2\'s ConfigMap in wec1', () => live('wec1', ['-n', ns, 'configmap', 'same'])?.data?.a === '2', 60_000);
  t.pass('wec1 has a=2 now');
  await waitUntil('wds2\'s work applied', () => applied(getWork('wec1', work2))?.status === 'True', 30_000);
  t.pass('wds2\'s manifest is Applied');
  await waitUntil('wds2\'s policy error to clear', () => notApplied(errorsOf(second, 'wds2')).length === 0, 30_000);
  t.pass('wds2\'s policy error is gone');
});
