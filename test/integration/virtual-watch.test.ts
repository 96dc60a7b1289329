// The virtual `bindings` list and watch as a client-go user meets them, side by side with a CRD's
// (bindingpolicies.control.kubestellar.io in wds1, whose watch is kube-apiserver's own) doing the
// same sequence: a watch from a list's resourceVersion replays nothing, DELETED carries the last
// state, bookmarks when asked, 410 for a resourceVersion too old, and the same answers to bad
// ListOptions. Raw HTTPS as wds1's admin (kubectl hides codes and events).
import t from 'tap';
import YAML from 'yaml';
import { rawClient, type Obj, type RawClient } from '../fixtures/raw-client.js';
import { kc, kcOk, uniqueName } from '../fixtures/spaces.js';

const POLICIES = '/apis/control.kubestellar.io/v1alpha1/bindingpolicies';
const BINDINGS = '/apis/view.kubestellar.io/v1alpha1/bindings';

let client: RawClient;
t.before(async () => { client = await rawClient('wds1'); });
t.teardown(() => client.close());

const policy = (name: string, clusters: string[]) => YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name },
  spec: { clusterSelectors: clusters.map((c) => ({ matchLabels: { name: c } })), downsync: [{ namespaces: [name], resources: ['configmaps'] }] } });

const WATCH_SECONDS = 30;

t.test('a watch from the list\'s resourceVersion: only later changes, DELETED with the last state, bookmarks — as a CRD\'s', async (t) => {
  const before = uniqueName('vw-before');
  kcOk('wds1', ['apply', '-f', '-'], policy(before, ['wec1']));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', before, '--ignore-not-found']); });
  const p = uniqueName('vw');
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', p, '--ignore-not-found']); });
  // Both lists show the earlier policy, so a replay would show it again.
  const lists: Record<string, Obj> = {};
  for (const [k, path] of [['crd', POLICIES], ['virtual', BINDINGS]] as const) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await client.get(path);
      t.equal(r.status, 200, `${k}: list`);
      if ((r.body.items as Obj[]).some((i) => i.metadata.name === before) || Date.now() > deadline) { lists[k] = r.body; break; }
      await new Promise((res) => setTimeout(res, 200));
    }
  }
  t.ok((lists.virtual!.items as Obj[]).every((i) => /^\d+$/.test(i.metadata.resourceVersion)), 'each Binding carries a resourceVersion');
  // The watches end at their timeout (their bookmark comes before it): long enough for the three
  // kubectl writes below, each of which takes seconds on a loaded machine.
  const watches = {
    crd: client.watch(`${POLICIES}?watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_SECONDS}&resourceVersion=${lists.crd!.metadata.resourceVersion}`, (WATCH_SECONDS + 10) * 1000),
    virtual: client.watch(`${BINDINGS}?watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_SECONDS}&resourceVersion=${lists.virtual!.metadata.resourceVersion}`, (WATCH_SECONDS + 10) * 1000),
  };
  await new Promise((res) => setTimeout(res, 500));
  kcOk('wds1', ['apply', '-f', '-'], policy(p, ['wec1']));
  await new Promise((res) => setTimeout(res, 1500));
  kcOk('wds1', ['apply', '-f', '-'], policy(p, ['wec1', 'wec2']));
  await new Promise((res) => setTimeout(res, 1500));
  kcOk('wds1', ['delete', 'bindingpolicy', p]);
  for (const [k, w] of Object.entries(watches)) {
    const { status, events } = await w;
    t.equal(status, 200, `${k}: the watch opens`);
    const mine = events.filter((e) => e.type !== 'BOOKMARK' && e.object?.metadata?.name === p);
    const types = mine.map((e) => e.type);
    // The earlier policy may still change after the list (its finalizer and status are written
    // by the controller): those later changes are due; a replay is an event at or before the list.
    const listed = Number(lists[k]!.metadata.resourceVersion);
    const earlier = events.filter((e) => e.type !== 'BOOKMARK' && e.object?.metadata?.name === before);
    t.ok(earlier.every((e) => e.type === 'MODIFIED' && Number(e.object.metadata.resourceVersion) > listed),
      `${k}: nothing replayed of what the list had (${earlier.map((e) => `${e.type}@${e.object.metadata.resourceVersion}`).join(', ') || 'no event'}, list at ${listed})`);
    t.equal(types[0], 'ADDED', `${k}: the new one ADDED first (${types.join(', ')})`);
    t.equal(types.at(-1), 'DELETED', `${k}: then DELETED last`);
    t.ok(types.slice(1, -1).length >= 1 && types.slice(1, -1).every((x) => x === 'MODIFIED'), `${k}: MODIFIED between`);
    const deleted = mine.at(-1)!.object;
    t.ok(deleted.metadata.uid, `${k}: the DELETED object has its uid`);
    t.ok(deleted.spec, `${k}: and its last spec`);
    const rvs = mine.map((e) => Number(e.object.metadata.resourceVersion));
    t.ok(rvs.every((rv, i) => i === 0 || rv > rvs[i - 1]!), `${k}: resourceVersions grow`);
    t.ok(rvs[0]! > Number(lists[k]!.metadata.resourceVersion), `${k}: all after the list's`);
    const bookmarks = events.filter((e) => e.type === 'BOOKMARK');
    t.ok(bookmarks.length >= 1, `${k}: a bookmark before the timeout (${bookmarks.length})`);
    t.ok(bookmarks.every((b) => /^\d+$/.test(b.object.metadata.resourceVersion)), `${k}: bookmarks carry a resourceVersion`);
    if (k === 'virtual') t.same(Object.keys(bookmarks[0]!.object).sort(), ['apiVersion', 'kind', 'metadata'], 'a bookmark is only apiVersion, kind and resourceVersion');
  }
});

t.test('a watch from a resourceVersion too old: an ERROR event, 410 Expired, as a CRD\'s', async (t) => {
  for (const [k, path] of [['crd', POLICIES], ['virtual', BINDINGS]] as const) {
    const { status, events } = await client.watch(`${path}?watch=1&resourceVersion=1`, 5000);
    t.equal(status, 200, `${k}: 200`);
    t.equal(events.length, 1, `${k}: one event, then the end`);
    t.match(events[0], { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: /^too old resource version: 1 \(\d+\)$/ } }, `${k}: ${events[0]?.object?.message}`);
  }
});

t.test('a watch without a resourceVersion starts with the current objects', async (t) => {
  const p = uniqueName('vw-now');
  kcOk('wds1', ['apply', '-f', '-'], policy(p, ['wec1']));
  t.teardown(() => { kc('wds1', ['delete', 'bindingpolicy', p, '--ignore-not-found']); });
  for (const [k, path] of [['crd', POLICIES], ['virtual', BINDINGS]] as const) {
    const deadline = Date.now() + 30_000;
    let events: Obj[] = [];
    while (Date.now() < deadline) {
      events = (await client.watch(`${path}?watch=1&timeoutSeconds=1`, 4000)).events;
      if (events.some((e) => e.object?.metadata?.name === p)) break;
    }
    t.equal(events[0]?.type, 'ADDED', `${k}: it starts with ADDED events`);
    t.equal(events.find((e) => e.object?.metadata?.name === p)?.type, 'ADDED', `${k}: the policy's among them`);
  }
});

t.test('bad ListOptions get the answers a CRD gets', async (t) => {
  const current = Number((await client.get(BINDINGS)).body.metadata.resourceVersion);
  const crdCurrent = Number((await client.get(POLICIES)).body.metadata.resourceVersion);
  const same = ['resourceVersionMatch=Exact', 'resourceVersion=5&resourceVersionMatch=Bogus', 'resourceVersion=0&resourceVersionMatch=Exact',
    'resourceVersion=abc', 'watch=1&resourceVersion=abc', 'watch=1&sendInitialEvents=true', 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=',
    'watch=1&resourceVersionMatch=Exact&resourceVersion=5', 'sendInitialEvents=true', 'resourceVersionMatch=Bogus&resourceVersion=abc'];
  for (const q of same) {
    const [crd, virtual] = await Promise.all([client.get(`${POLICIES}?${q}`), client.get(`${BINDINGS}?${q}`)]);
    t.equal(virtual.status, crd.status, `${q}: HTTP ${crd.status}`);
    t.same(virtual.body, crd.body, `${q}: ${crd.body.message}`);
  }
  const [crd, virtual] = await Promise.all([client.get(`${POLICIES}?resourceVersion=${crdCurrent + 1_000_000}`), client.get(`${BINDINGS}?resourceVersion=${current + 1_000_000}`)]);
  t.equal(virtual.status, 504, 'a resourceVersion not reached yet: 504');
  t.same({ ...virtual.body, message: undefined }, { ...crd.body, message: undefined }, 'the same Status (reason Timeout, ResourceVersionTooLarge, retry after 1 s)');
  t.match(virtual.body.message, new RegExp(`^Timeout: Too large resource version: ${current + 1_000_000}, current: \\d+$`));
  const exact = await client.get(`${BINDINGS}?resourceVersion=${current}&resourceVersionMatch=Exact`);
  t.equal(exact.status, 200, 'Exact at the current resourceVersion');
  t.equal(exact.body.metadata.resourceVersion, String(current));
});
