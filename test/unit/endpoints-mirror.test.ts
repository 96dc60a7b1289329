// The endpoints mirror of hosted registration (src/controllers/hosting/endpoints-mirror.ts): the hosting
// cluster's EndpointSlices of the server's Service as the pods come and go, and the writes into the
// WDS that follow (recorded, as a sample-controller fixture records actions), under leadership.
import t from 'tap';
import { EndpointsMirror, MAX_ADDRESSES, MIRROR_MANAGER, mirroredObjects, type MirrorWrite, type SliceWatch, type SourceSlice } from '../../src/controllers/hosting/endpoints-mirror.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

const target = { namespace: 'kubestellar-view', service: 'ksview', portName: 'https' };
const ENDPOINTS = '/api/v1/namespaces/kubestellar-view/endpoints/ksview';
const SLICE4 = '/apis/discovery.k8s.io/v1/namespaces/kubestellar-view/endpointslices/ksview-ipv4';
const SLICE6 = '/apis/discovery.k8s.io/v1/namespaces/kubestellar-view/endpointslices/ksview-ipv6';

/** The hosting Service's uid, which the EndpointSlice controller's owner reference names. */
const SERVICE_UID = '6f1c2a4e-0d3b-4c55-9a1e-5e0b7f0c1d2a';
const controllerRef = { apiVersion: 'v1', kind: 'Service', name: 'ksview', uid: SERVICE_UID, controller: true, blockOwnerDeletion: true };

interface Pod { ip: string; ready?: boolean; serving?: boolean; terminating?: boolean }
const slice = (pods: Pod[], o: { name?: string; addressType?: string; port?: number } = {}): SourceSlice => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
  metadata: { name: o.name ?? 'ksview-abcde', namespace: 'ksview-system', labels: { 'kubernetes.io/service-name': 'ksview', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
    ownerReferences: [controllerRef] },
  addressType: o.addressType ?? 'IPv4',
  ports: [{ name: 'https', port: o.port ?? 8443, protocol: 'TCP' }],
  endpoints: pods.map((p) => ({
    addresses: [p.ip], nodeName: 'host1-node', targetRef: { kind: 'Pod', name: `ksview-${p.ip}`, namespace: 'ksview-system' },
    conditions: { ready: p.ready ?? true, serving: p.serving ?? p.ready ?? true, terminating: p.terminating ?? false },
  })),
});

/** A fake watch: the test sets the slices and fires a change, as the informer would. */
class FakeWatch implements SliceWatch {
  slices: SourceSlice[] = [];
  uid: string | undefined = SERVICE_UID;
  hasSynced = false;
  started = 0;
  stopped = 0;
  constructor(private readonly onChange: () => void) {}
  start() { this.started++; }
  stop() { this.stopped++; }
  list() { return this.slices; }
  serviceUid() { return this.uid; }
  /** The informer's list completed / an event arrived. */
  set(slices: SourceSlice[]) { this.slices = slices; this.hasSynced = true; this.onChange(); }
}

function harness() {
  const writes: MirrorWrite[] = [];
  const watches: FakeWatch[] = [];
  let fail = 0;
  const mirror = new EndpointsMirror({
    hosting: undefined as never, wds: undefined as never, source: { namespace: 'ksview-system', service: 'ksview' }, target, serverPort: 8443,
    log: () => undefined,
    write: async (w) => {
      if (fail > 0) { fail--; throw new Error('503 the WDS is restarting'); }
      writes.push(structuredClone(w));
    },
    watch: (onChange) => { const w = new FakeWatch(onChange); watches.push(w); return w; },
  });
  return { mirror, writes, watches, failNext: (n: number) => { fail = n; }, watch: () => watches[watches.length - 1]! };
}

const endpointsOf = (writes: MirrorWrite[]) => writes.filter((w) => w.path === ENDPOINTS).map((w) => w.object.subsets);
const sliceEndpointsOf = (writes: MirrorWrite[]) => writes.filter((w) => w.path === SLICE4).map((w) => w.object.endpoints);

t.test('pods added, ready, unready, terminating, removed: the WDS Endpoints and EndpointSlice follow', async (t) => {
  const h = harness();
  h.mirror.setLeading(true);
  t.equal(h.watch().started, 1, 'the leader watches the hosting slices');

  h.watch().set([slice([{ ip: '10.88.0.5', ready: false }])]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes), [[{ notReadyAddresses: [{ ip: '10.88.0.5' }], ports: [{ name: 'https', port: 8443, protocol: 'TCP' }] }]],
    'a pod not ready yet: listed as not ready, so the aggregator does not dial it');
  const s0 = h.writes.find((w) => w.path === SLICE4)!.object;
  t.match(s0, {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
    metadata: { name: 'ksview-ipv4', namespace: 'kubestellar-view', labels: { 'kubernetes.io/service-name': 'ksview', 'endpointslice.kubernetes.io/managed-by': MIRROR_MANAGER } },
    ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
    endpoints: [{ addresses: ['10.88.0.5'], conditions: { ready: false, serving: false, terminating: false } }],
  });
  t.notOk(JSON.stringify(s0).includes('host1-node') || JSON.stringify(s0).includes('targetRef'), 'no node names nor pod references of the hosting cluster');
  const e0 = h.writes.find((w) => w.path === ENDPOINTS)!.object;
  t.match(e0, { metadata: { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } } }, 'the WDS\'s slice mirroring leaves our Endpoints alone');

  h.writes.length = 0;
  h.watch().set([slice([{ ip: '10.88.0.5' }, { ip: '10.88.0.6', ready: false }])]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes), [[{ addresses: [{ ip: '10.88.0.5' }], notReadyAddresses: [{ ip: '10.88.0.6' }], ports: [{ name: 'https', port: 8443, protocol: 'TCP' }] }]],
    'ready: in addresses, the only field the v1.33 aggregator reads');

  h.writes.length = 0;
  h.watch().set([slice([{ ip: '10.88.0.5', ready: false, serving: true, terminating: true }, { ip: '10.88.0.6' }])]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes), [[{ addresses: [{ ip: '10.88.0.6' }], ports: [{ name: 'https', port: 8443, protocol: 'TCP' }] }]],
    'terminating: left out of the Endpoints');
  t.same(sliceEndpointsOf(h.writes), [[
    { addresses: ['10.88.0.5'], conditions: { ready: false, serving: true, terminating: true } },
    { addresses: ['10.88.0.6'], conditions: { ready: true, serving: true, terminating: false } },
  ]], 'the slice says terminating and still serving, as the hosting slice does');

  h.writes.length = 0;
  h.watch().set([slice([{ ip: '10.88.0.6', ready: false }])]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes), [[{ notReadyAddresses: [{ ip: '10.88.0.6' }], ports: [{ name: 'https', port: 8443, protocol: 'TCP' }] }]], 'unready again');

  h.writes.length = 0;
  h.watch().set([slice([])]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes), [[]], 'every pod removed: no subsets (the aggregator answers 503 "no endpoints")');
  t.same(sliceEndpointsOf(h.writes), [[]]);
});

t.test('idempotent: the same endpoints again write nothing; a new term writes once more', async (t) => {
  const h = harness();
  h.mirror.setLeading(true);
  h.watch().set([slice([{ ip: '10.88.0.5' }])]);
  await h.mirror.idle();
  t.equal(h.writes.length, 3, 'Endpoints and the IPv4 and (empty) IPv6 slices');
  // A resync, or another slice's event changing nothing of ours.
  h.watch().set([slice([{ ip: '10.88.0.5' }], { name: 'ksview-abcde' })]);
  h.watch().set([slice([{ ip: '10.88.0.5' }])]);
  await h.mirror.idle();
  t.equal(h.writes.length, 3, 'nothing written again');
  h.mirror.setLeading(false);
  h.mirror.setLeading(true);
  h.watch().set([slice([{ ip: '10.88.0.5' }])]);
  await h.mirror.idle();
  t.equal(h.writes.length, 6, 'a new leader term writes what it sees once (someone may have changed the WDS meanwhile)');
});

t.test('leader lost: the watch stops and no write starts', async (t) => {
  const h = harness();
  h.mirror.setLeading(true);
  const w = h.watch();
  w.set([slice([{ ip: '10.88.0.5' }])]);
  await h.mirror.idle();
  const before = h.writes.length;
  h.mirror.setLeading(false);
  t.equal(w.stopped, 1, 'the watch of the hosting slices is stopped');
  w.set([slice([{ ip: '10.88.0.7' }])]);
  await h.mirror.idle();
  t.equal(h.writes.length, before, 'a late event of the old watch writes nothing');

  // Lost while a sync is under way: the write in flight completes, none starts after it.
  const h2 = harness();
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const writes: string[] = [];
  const m = new EndpointsMirror({
    hosting: undefined as never, wds: undefined as never, source: { namespace: 'ksview-system', service: 'ksview' }, target, serverPort: 8443, log: () => undefined,
    write: async (x) => { writes.push(x.path); await gate; },
    watch: (onChange) => { const fw = new FakeWatch(onChange); h2.watches.push(fw); return fw; },
  });
  m.setLeading(true);
  h2.watch().set([slice([{ ip: '10.88.0.5' }])]);
  await new Promise((r) => setImmediate(r));
  t.same(writes, [ENDPOINTS], 'the first write is under way');
  m.setLeading(false);
  release();
  await m.idle();
  t.same(writes, [ENDPOINTS], 'the slice is not written after leadership was lost');
});

t.test('a failed write is retried', async (t) => {
  const h = harness();
  h.failNext(1);
  h.mirror.setLeading(true);
  h.watch().set([slice([{ ip: '10.88.0.5' }])]);
  await h.mirror.idle();
  t.equal(h.writes.length, 0, 'the WDS refused');
  const deadline = Date.now() + 5000;
  while (h.writes.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.equal(h.writes.length, 3, 'written after the backoff');
  h.mirror.stop();
});

t.test('ports: the server\'s own port, named as the WDS Service\'s; slices of other families and kinds', async (t) => {
  const two: SourceSlice = { ...slice([{ ip: '10.88.0.5' }]), ports: [{ name: 'metrics', port: 9090, protocol: 'TCP' }, { name: 'web', port: 8443, protocol: 'TCP' }] };
  const [ep] = mirroredObjects([two], target, 8443, SERVICE_UID);
  t.same((ep!.object.subsets as Array<{ ports: unknown }>)[0]!.ports, [{ name: 'https', port: 8443, protocol: 'TCP' }], 'the port numbered as the server listens, renamed https');
  const none = mirroredObjects([{ ...two, ports: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] }], target, 8443, SERVICE_UID);
  t.same(none[0]!.object.subsets, [], 'no port leads to the server: no endpoints rather than a wrong one');
  const dual = mirroredObjects([slice([{ ip: '10.88.0.5' }]), slice([{ ip: 'fd00::5' }], { name: 'ksview-v6', addressType: 'IPv6' }),
    { ...slice([]), addressType: 'FQDN', endpoints: [{ addresses: ['x.example'] }] }], target, 8443, SERVICE_UID);
  t.same(dual.map((w) => w.path.split('/').pop()), ['ksview', 'ksview-ipv4', 'ksview-ipv6'], 'one slice per IP family; FQDN ignored');
  t.same((dual[0]!.object.subsets as Array<{ addresses: unknown }>)[0]!.addresses, [{ ip: '10.88.0.5' }, { ip: 'fd00::5' }]);
  const unset = mirroredObjects([{ ...slice([]), endpoints: [{ addresses: ['10.88.0.9'] }] }], target, 8443, SERVICE_UID);
  t.same((unset[1]!.object.endpoints as unknown[])[0], { addresses: ['10.88.0.9'], conditions: { ready: true, serving: true, terminating: false } },
    'unset conditions read as the API says: ready');
});

t.test('the default writer: server-side apply by name into the WDS, as ksview-serve-endpoints', async (t) => {
  const wds = mockUpstream();
  t.teardown(() => wds.close());
  wds.pool.intercept({ path: (p) => p.startsWith(ENDPOINTS), method: 'PATCH' }).reply(200, {});
  wds.pool.intercept({ path: (p) => p.startsWith(SLICE4), method: 'PATCH' }).reply(200, {});
  wds.pool.intercept({ path: (p) => p.startsWith(SLICE6), method: 'PATCH' }).reply(200, {});
  let fw!: FakeWatch;
  const m = new EndpointsMirror({
    hosting: undefined as never, wds: wds.up, source: { namespace: 'ksview-system', service: 'ksview' }, target, serverPort: 8443, log: () => undefined,
    watch: (onChange) => { fw = new FakeWatch(onChange); return fw; },
  });
  m.setLeading(true);
  fw.set([slice([{ ip: '10.88.0.5' }])]);
  await m.idle();
  const calls = wds.calls();
  t.same(calls.map((c) => `${c.method} ${c.path}`), [
    `PATCH ${ENDPOINTS}?fieldManager=ksview-serve-endpoints&force=true`,
    `PATCH ${SLICE4}?fieldManager=ksview-serve-endpoints&force=true`,
    `PATCH ${SLICE6}?fieldManager=ksview-serve-endpoints&force=true`,
  ]);
  t.equal(calls[0]!.headers['content-type'], 'application/apply-patch+yaml');
  m.stop();
});

t.test('what the WDS is told comes from the hosting cluster\'s EndpointSlice controller only, bounded, and a family gone is emptied', async (t) => {
  // Anyone who may create EndpointSlices in the release namespace can label one with the Service's name.
  const forged: SourceSlice = { ...slice([{ ip: '10.99.0.66' }], { name: 'forged' }), metadata: { name: 'forged', namespace: 'ksview-system', labels: { 'kubernetes.io/service-name': 'ksview' } } };
  const [ep] = mirroredObjects([slice([{ ip: '10.88.0.5' }]), forged], target, 8443, SERVICE_UID);
  t.same((ep!.object.subsets as Array<{ addresses: unknown }>)[0]!.addresses, [{ ip: '10.88.0.5' }], 'a slice not managed by endpointslice-controller.k8s.io is not mirrored');
  const many = slice(Array.from({ length: 1200 }, (_, i) => ({ ip: `10.88.${Math.floor(i / 250)}.${(i % 250) + 1}` })));
  const bounded = mirroredObjects([many], target, 8443, SERVICE_UID);
  t.equal((bounded[1]!.object.endpoints as unknown[]).length, MAX_ADDRESSES, `at most ${MAX_ADDRESSES} addresses per slice, what the API accepts`);
  const v4only = mirroredObjects([slice([{ ip: '10.88.0.5' }])], target, 8443, SERVICE_UID);
  t.same(v4only[2]!.object.endpoints, [], 'the IPv6 slice is written empty when the hosting cluster has none (no stale addresses stay)');
});

t.test('a slice labelled as the EndpointSlice controller\'s is mirrored only if the Service owns it as that controller does', async (t) => {
  const labelled = (ip: string, ownerReferences?: object[]): SourceSlice => {
    const s = slice([{ ip }], { name: `hand-${ip}` });
    return { ...s, metadata: { ...s.metadata, ownerReferences } as SourceSlice['metadata'] };
  };
  const ready = (slices: SourceSlice[], uid: string | undefined) =>
    ((mirroredObjects(slices, target, 8443, uid)[0]!.object.subsets as Array<{ addresses?: Array<{ ip: string }> }>)[0]?.addresses ?? []).map((a) => a.ip);
  const real = slice([{ ip: '10.88.0.5' }]);
  t.same(ready([real, labelled('10.66.6.6')], SERVICE_UID), ['10.88.0.5'], 'managed-by endpointslice-controller.k8s.io set by hand, no owner: not mirrored');
  t.same(ready([real, labelled('10.66.6.6', [{ ...controllerRef, uid: 'a-deleted-service' }])], SERVICE_UID), ['10.88.0.5'], 'the owner reference of another Service (another uid): not mirrored');
  t.same(ready([real, labelled('10.66.6.6', [{ ...controllerRef, controller: false }])], SERVICE_UID), ['10.88.0.5'], 'the Service as an owner, but not as the controller: not mirrored');
  t.same(ready([real, labelled('10.66.6.6', [{ ...controllerRef, kind: 'Pod' }])], SERVICE_UID), ['10.88.0.5'], 'a controller of that uid that is no Service: not mirrored');
  t.same(ready([real], SERVICE_UID), ['10.88.0.5'], 'the controller\'s own slice (its controller reference to the Service\'s uid): mirrored');
  t.same(ready([real], undefined), [], 'no such Service: no slice is its controller\'s');

  // Through the controller: the Service deleted and made again (a new uid) — the old Service's slices are no longer mirrored.
  const h = harness();
  h.mirror.setLeading(true);
  h.watch().set([real, labelled('10.66.6.6')]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes).at(-1), [{ addresses: [{ ip: '10.88.0.5' }], ports: [{ name: 'https', port: 8443, protocol: 'TCP' }] }], 'only the controller\'s slice reaches the WDS');
  h.watch().uid = 'the-new-service';
  h.watch().set([real]);
  await h.mirror.idle();
  t.same(endpointsOf(h.writes).at(-1), [], 'slices owned by the Service that is gone: no endpoints');
  h.mirror.stop();
});
