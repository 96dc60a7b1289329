// A virtual resource's resourceVersion rules, pure: per-change resourceVersions, watches from a
// resourceVersion (no replay of older changes, 410 past what is kept), DELETED with the last state,
// exact lists of past states, and the ListOptions validation kube-apiserver does.
import t from 'tap';
import type { KubeObject } from '../../src/kube/objects.js';
import { StatusError } from '../../src/kube/status.js';
import { parseListOptions, tooOldEvent, VirtualCollection, type Change } from '../../src/apiserver/virtual/collection.js';

const obj = (name: string, v: string): KubeObject => ({ apiVersion: 'x/v1', kind: 'X', metadata: { name, uid: `uid-${name}` }, spec: { v } } as KubeObject);
const newCollection = () => new VirtualCollection<KubeObject>((o) => JSON.stringify(o.spec), 1000);
/** The Status a promise is rejected with (undefined when it resolves). */
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => (e as StatusError).status);
const brief = (cs: Change<KubeObject>[]) => cs.map((c) => `${c.type} ${c.object.metadata?.name} ${c.object.metadata?.resourceVersion} ${(c.object as { spec: { v: string } }).spec.v}`);

t.test('each change takes the next resourceVersion; the same content is no change', async (t) => {
  const c = newCollection();
  c.set('a', obj('a', '1'));
  c.set('b', obj('b', '1'));
  c.set('a', obj('a', '1'));
  c.set('a', obj('a', '2'));
  t.equal(c.resourceVersion(), 1003);
  t.same(c.current().items.map((o) => [o.metadata?.name, o.metadata?.resourceVersion]), [['a', '1003'], ['b', '1002']], 'each object carries its last change\'s');
});

t.test('a watch from a resourceVersion gets only what changed after it; DELETED carries the last state', async (t) => {
  const c = newCollection();
  c.set('a', obj('a', '1'));
  const listRv = c.resourceVersion();
  const seen: Change<KubeObject>[] = [];
  const w = c.watch(listRv, (ch) => seen.push(ch));
  t.equal(w.expired, false);
  c.set('a', obj('a', '2'));
  c.set('a', undefined);
  t.same(brief(seen), ['MODIFIED a 1002 2', 'DELETED a 1003 2'], 'no ADDED replay of a; the DELETED object is the last state at the deletion\'s resourceVersion');
  t.equal(seen[1]!.object.metadata?.uid, 'uid-a', 'uid included');
  w.stop();
  c.set('b', obj('b', '1'));
  t.equal(seen.length, 2, 'nothing after stop');

  const late: Change<KubeObject>[] = [];
  c.watch(listRv, (ch) => late.push(ch)).stop();
  t.same(brief(late), ['MODIFIED a 1002 2', 'DELETED a 1003 2', 'ADDED b 1004 1'], 'a watch from an older kept resourceVersion replays the changes since');
  const all: Change<KubeObject>[] = [];
  c.watch(undefined, (ch) => all.push(ch)).stop();
  t.same(brief(all), ['ADDED b 1004 1'], 'resourceVersion unset or 0: an ADDED per current object');
});

t.test('an object replaced by one of another uid (deleted and made again) is a DELETED and an ADDED', async (t) => {
  const c = newCollection();
  c.set('a', obj('a', '1'));
  const seen: Change<KubeObject>[] = [];
  c.watch(c.resourceVersion(), (ch) => seen.push(ch));
  c.set('a', { ...obj('a', '2'), metadata: { name: 'a', uid: 'uid-other' } } as KubeObject);
  t.same(seen.map((e) => [e.type, e.object.metadata?.uid, e.object.metadata?.resourceVersion]), [['DELETED', 'uid-a', '1002'], ['ADDED', 'uid-other', '1003']]);
});

t.test('a resourceVersion from before this collection (a restart) or past the kept history is 410', async (t) => {
  const c = newCollection();
  t.same(c.watch(999, () => {}).expired, 1000, 'from before the start');
  for (let i = 0; i < 105; i++) c.set('a', obj('a', String(i)));
  t.same(c.watch(1002, () => {}).expired, 1005, 'older than the 100 changes kept');
  t.equal(c.watch(1005, () => {}).expired, false, 'the oldest kept');
  t.same(tooOldEvent(1002, 1005), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1002 (1005)', reason: 'Expired', code: 410 });
  t.match(await failure(c.list({ rv: 1002, exact: true })), { code: 410, reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' });
});

t.test('lists: the current state, or exactly a past one; a resourceVersion not reached yet is 504 after a wait', async (t) => {
  const c = newCollection();
  c.set('a', obj('a', '1'));
  c.set('b', obj('b', '1'));
  const at = c.resourceVersion();
  c.set('a', obj('a', '2'));
  c.set('b', undefined);
  c.set('c', obj('c', '1'));
  t.same((await c.list({ rv: undefined, exact: false })).items.map((o) => `${o.metadata?.name}=${(o as { spec: { v: string } }).spec.v}`).sort(), ['a=2', 'c=1']);
  const past = await c.list({ rv: at, exact: true });
  t.equal(past.rv, at);
  t.same(past.items.map((o) => `${o.metadata?.name}=${(o as { spec: { v: string } }).spec.v}@${o.metadata?.resourceVersion}`).sort(), ['a=1@1001', 'b=1@1002'], 'resourceVersionMatch=Exact: the state then');
  t.equal((await c.list({ rv: at, exact: false })).rv, c.resourceVersion(), 'NotOlderThan: the current state');
  const t0 = Date.now();
  t.match(await failure(c.list({ rv: c.resourceVersion() + 10, exact: false })), { code: 504, reason: 'Timeout', message: `Timeout: Too large resource version: ${c.resourceVersion() + 10}, current: ${c.resourceVersion()}`,
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 } });
  t.ok(Date.now() - t0 >= 2900, 'after waiting 3 s for it');
});

t.test('ListOptions validation, in kube-apiserver\'s words', async (t) => {
  const fails = (q: Parameters<typeof parseListOptions>[0]) => { try { parseListOptions(q); return undefined; } catch (e) { return (e as StatusError).status; } };
  t.same(parseListOptions({ watch: false }), { rv: undefined, exact: false });
  t.same(parseListOptions({ watch: false, resourceVersion: '0' }), { rv: undefined, exact: false });
  t.same(parseListOptions({ watch: false, resourceVersion: '12', resourceVersionMatch: 'Exact' }), { rv: 12, exact: true });
  t.match(fails({ watch: false, resourceVersionMatch: 'Exact' }), { code: 422, reason: 'Invalid',
    message: 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    details: { group: 'meta.k8s.io', kind: 'ListOptions', causes: [{ reason: 'FieldValueForbidden', field: 'resourceVersionMatch' }] } });
  t.match(fails({ watch: false, resourceVersion: '5', resourceVersionMatch: 'Bogus' }), { code: 422,
    message: 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""' });
  t.match(fails({ watch: false, resourceVersion: '0', resourceVersionMatch: 'Exact' }), { code: 422,
    message: 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
  t.match(fails({ watch: false, resourceVersion: 'abc' }), { code: 400, reason: 'BadRequest',
    message: 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax' });
  const watchBad = fails({ watch: true, resourceVersion: 'abc' });
  t.same(watchBad, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax', code: 500 }, 'a watch says 500 with no reason');
  t.match(fails({ watch: true, sendInitialEvents: 'true' }), { code: 422,
    message: 'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled]' });
});
