// What one cluster's reports may bring into ksview serve (docs/security.md D13 and D14): the WorkStatus
// cache's transform (src/controllers/status/workstatus-cache.ts) refuses a status nested 6,000
// levels deep or of 1.2 MB — kept without its status, saying why — and caps 3,000 conditions to the
// first 32; a mailbox keeps at most so many reports and bytes of them, and frees what is deleted or
// no longer listed. A report's spec is bounded too: a sourceRef name longer than Kubernetes allows
// (a 1 MB name, 10,000 times over, would have cached GBs) is not cached at all, nothing of the spec
// but the six names is kept, and the spec counts in the mailbox's bytes. The combination over clusters (combine.ts) takes only reports that are valid
// statuses of their kind (Kubernetes' words), clamps sums to int32, and keeps the conditions most
// clusters report when one cluster reports thousands.
import t from 'tap';
import { combineConditions, combineStatuses, INT32_MAX, invalidStatus } from '../../src/controllers/status/combine.js';
import { REPORT_LIMITS } from '../../src/controllers/status/report-bounds.js';
import { WorkStatusIntake } from '../../src/controllers/status/workstatus-cache.js';
import { Store } from '../../src/kube/informer.js';
import type { JsonObject } from '../../src/kube/objects.js';
import type { WorkStatus } from '../../src/kube/ocm-api.js';

const report = (cluster: string, name: string, status: unknown): WorkStatus => ({
  apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus', metadata: { name, namespace: cluster, resourceVersion: '1' },
  spec: { sourceRef: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'demo', name } },
  status: status as JsonObject, statusDetails: { lastGeneration: 2, lastGenerationIsApplied: true },
});
const deep = (n: number): unknown => JSON.parse(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`);
const DEPLOYMENT = { group: 'apps', kind: 'Deployment' };

t.test("the issue's 6,000-deep status is refused, without its status, and nothing throws; 64 levels are taken", async (t) => {
  const intake = new WorkStatusIntake();
  const ws = intake.take(report('wec1', 'deep', deep(6000)));
  t.equal(ws.refused, 'its status is nested more than 64 levels deep');
  t.equal(ws.status, undefined, 'no part of it is kept');
  t.equal(ws.statusDetails, undefined);
  t.same(ws.spec.sourceRef.name, 'deep', 'what it reports on is known: the refusal can be said');
  t.doesNotThrow(() => JSON.stringify(ws), 'the cached copy is safe to stringify');
  const ok = intake.take(report('wec1', 'ok', deep(REPORT_LIMITS.depth - 1)));
  t.equal(ok.refused, undefined, '63 levels under the status (64 with it) are fine');
});

t.test('a 1.2 MB status is refused; 3,000 conditions (1.36 MB) are capped to the first 32, the rest kept', async (t) => {
  const intake = new WorkStatusIntake();
  const big = intake.take(report('wec1', 'big', { replicas: 1, blob: 'x'.repeat(1_200_000) }));
  t.equal(big.refused, 'its status is over 65536 bytes');
  t.equal(big.status, undefined);
  // The issue's: 3,000 condition types of about 450 bytes each, 1.36 MB in all.
  const conditions = Array.from({ length: 3000 }, (_, i) => ({ type: `T${i}`, status: 'True', reason: 'Lie', message: 'm'.repeat(400) }));
  const many = intake.take(report('wec1', 'many', { replicas: 2, conditions }));
  t.equal(many.capped, 'it has 3000 conditions; the first 32 are kept');
  t.same((many.status!.conditions as JsonObject[]).map((c) => c.type), conditions.slice(0, 32).map((c) => c.type));
  t.equal(many.status!.replicas, 2, 'the rest of the status is kept');
  t.ok(many.statusDetails, 'and statusDetails');
});

t.test('a mailbox keeps at most so many reports and bytes; deleted and unlisted reports stop counting', async (t) => {
  const intake = new WorkStatusIntake({ ...REPORT_LIMITS, mailboxReports: 3, mailboxBytes: 1200 });
  const store = new Store<WorkStatus>();
  const put = (ws: WorkStatus) => { const c = intake.take(ws); store.set(c); return c; };
  put(report('wec1', 'a', { s: 'a'.repeat(300) }));
  put(report('wec1', 'b', { s: 'b'.repeat(300) }));
  const two = intake.usage('wec1');
  t.ok(two.reports === 2 && two.bytes > 600 && two.bytes < 1200, `two reports of ${two.bytes} bytes`);
  const c = put(report('wec1', 'c', { s: 'c'.repeat(600) }));
  t.equal(c.refused, 'the reports of mailbox wec1 would be over 1200 bytes', 'over the bytes: refused');
  t.same(intake.usage('wec1'), { reports: 3, bytes: two.bytes + JSON.stringify(c.spec).length }, 'a refused report counts as one report, and only the bytes of its spec (kept)');
  t.throws(() => intake.take(report('wec1', 'd', {})), { message: 'mailbox wec1 holds 3 reports, the most kept' }, 'a fourth is not taken');
  t.equal(intake.take(report('wec2', 'd', {})).refused, undefined, 'another mailbox is not affected');
  t.equal(put(report('wec1', 'a', { s: 'a' })).refused, undefined, 'a report already kept may change');
  intake.release(store.delete(report('wec1', 'b', {}))!);
  t.equal(put(report('wec1', 'c', { s: 'c'.repeat(600) })).refused, undefined, 'once another is deleted, there is room');
  intake.take(report('wec1', 'phantom', {}));
  t.equal(intake.usage('wec1').reports, 3, 'taken, never cached');
  intake.retain(store);
  t.equal(intake.usage('wec1').reports, 2, 'after a relist only what the cache holds counts');
});

t.test('a report that is not a valid status of its kind is said in Kubernetes\' words', async (t) => {
  t.equal(invalidStatus(DEPLOYMENT, { replicas: 1, readyReplicas: 1, availableReplicas: INT32_MAX }),
    'status.availableReplicas: Invalid value: 2147483647: cannot be greater than status.replicas; status.availableReplicas: Invalid value: 2147483647: cannot be greater than status.readyReplicas');
  t.equal(invalidStatus(DEPLOYMENT, { replicas: 2 ** 31 }), 'status.replicas: Invalid value: 2147483648: must be a whole number of at most 2147483647');
  t.equal(invalidStatus(DEPLOYMENT, { replicas: -1 }), 'status.replicas: Invalid value: -1: must be greater than or equal to 0');
  t.equal(invalidStatus(DEPLOYMENT, { replicas: '3' }), 'status.replicas: Invalid value: "3": must be a whole number of at most 2147483647');
  t.equal(invalidStatus(DEPLOYMENT, { observedGeneration: -2, replicas: 1 }), 'status.observedGeneration: Invalid value: -2: must be greater than or equal to 0');
  t.equal(invalidStatus(DEPLOYMENT, { replicas: 3, readyReplicas: 3, availableReplicas: 2, updatedReplicas: 3, observedGeneration: 4 }), undefined, 'a real one');
  t.equal(invalidStatus({ group: 'apps', kind: 'DaemonSet' }, { numberReady: 5, desiredNumberScheduled: 1 }), undefined, 'a DaemonSet has no such relations');
  t.equal(invalidStatus({ group: 'example.com', kind: 'Widget' }, { replicas: -1 }), undefined, 'kinds not combined are the WDS\'s to judge');
});

t.test('sums are clamped to int32: honest clusters whose counts overflow it give the largest int32', async (t) => {
  const half = { replicas: 2 ** 30, readyReplicas: 2 ** 30, availableReplicas: 2 ** 30 };
  const out = combineStatuses(DEPLOYMENT, [half, half, { replicas: 3, readyReplicas: 3, availableReplicas: 3 }]);
  t.same([out.replicas, out.readyReplicas, out.availableReplicas], [INT32_MAX, INT32_MAX, INT32_MAX]);
  t.equal(invalidStatus(DEPLOYMENT, out), undefined, 'and the combination is still a valid status');
});

t.test('conditions: one cluster\'s 3,000 types cannot push out those every cluster reports; at most 32', async (t) => {
  const junk = Array.from({ length: 32 }, (_, i) => ({ type: `Junk${i}`, status: 'True', message: 'm' }));
  const wec1 = [...junk, { type: 'Available', status: 'True' }];
  const wec2 = [{ type: 'Progressing', status: 'True' }, { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }];
  const wec3 = [{ type: 'Progressing', status: 'True' }, { type: 'Available', status: 'True' }];
  const out = combineConditions([wec1, wec2, wec3]);
  t.equal(out.length, 32);
  t.match(out.find((c) => c.type === 'Available'), { status: 'False', reason: 'MinimumReplicasUnavailable' }, 'Available as the fleet has it');
  t.match(out.find((c) => c.type === 'Progressing'), { status: 'Unknown' }, 'Progressing, which wec1 does not report');
  t.same(out.map((c) => c.type).slice(0, 2), ['Junk0', 'Junk1'], 'in the order the types first appear');
  const lone = combineConditions([junk, [{ type: 'Available', status: 'True' }, { type: 'Progressing', status: 'True' }]]);
  t.equal(lone.length, 32);
  t.ok(['Available', 'Progressing'].every((type) => lone.some((c) => c.type === type)), 'with no type in common, each cluster\'s first ones are kept in turn');
  const huge = combineConditions([[{ type: 'A', status: 'True', message: 'x'.repeat(40_000) }, { type: 'B', status: 'True', message: 'y'.repeat(40_000) }]]);
  t.same(huge.map((c) => c.type), ['A'], 'no more of them than a report may hold (64 KiB)');
});

const named = (cluster: string, name: string, sourceRef: Record<string, unknown>, status: unknown = { replicas: 1 }): WorkStatus =>
  ({ ...report(cluster, name, status), spec: { sourceRef } } as WorkStatus);
/** Kubernetes' lengths: group and name DNS-1123 subdomains, version/resource/kind DNS-1035 labels, namespace a DNS-1123 label. */
const SOURCE_REF_LIMITS = { group: 253, version: 63, resource: 63, kind: 63, namespace: 63, name: 253 };
const REF = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'demo', name: 'web' };

t.test('a report naming its object by a 1 MB name is not cached, and the reason says the length, not the name; names as long as Kubernetes allows are', async (t) => {
  const intake = new WorkStatusIntake();
  t.throws(() => intake.take(named('wec1', 'huge', { ...REF, name: 'x'.repeat(1_000_000) })),
    { message: 'not a report of any object: its spec.sourceRef.name is 1000000 characters long, more than Kubernetes allows (253)' }, 'not taken (the informer skips it and logs this)');
  t.same(intake.usage('wec1'), { reports: 0, bytes: 0 }, 'nothing of it counted, nothing held');
  for (const [field, max] of Object.entries(SOURCE_REF_LIMITS)) {
    t.throws(() => intake.take(named('wec1', `long-${field}`, { ...REF, [field]: 'a'.repeat(max + 1) })), { message: new RegExp(`spec\\.sourceRef\\.${field} is ${max + 1} characters`) }, `${field}: ${max + 1} characters refused`);
  }
  t.throws(() => intake.take(named('wec1', 'typed', { ...REF, name: { nested: 'x'.repeat(1000) } })), { message: /spec\.sourceRef\.name is not a string/ });
  const longest = Object.fromEntries(Object.entries(SOURCE_REF_LIMITS).map(([field, max]) => [field, 'a'.repeat(max)]));
  const ok = intake.take(named('wec1', 'longest', longest));
  t.same(ok.spec.sourceRef, longest, 'each name at Kubernetes\' limit (253 for a group and a name, 63 for the others) is taken');
  t.ok(JSON.stringify(ok.spec).length < 1024, 'a spec is then under 1 KiB');
});

t.test('only the six names of a spec are kept; the spec counts in the mailbox\'s bytes, refused status or not', async (t) => {
  const intake = new WorkStatusIntake({ ...REPORT_LIMITS, mailboxBytes: 2000 });
  const padded = { ...report('wec1', 'padded', { replicas: 1 }), spec: { sourceRef: { ...REF, extra: 'y'.repeat(1_000_000) }, junk: 'z'.repeat(1_000_000) } } as unknown as WorkStatus;
  const kept = intake.take(padded);
  // (Lengths and keys, not the objects: a failure here must not print megabytes.)
  t.same([Object.keys(kept.spec), Object.keys(kept.spec.sourceRef)], [['sourceRef'], Object.keys(REF)], 'fields the CRD would prune, had it been another one: not kept');
  t.ok(JSON.stringify(kept).length < 1000, `the cached copy is ${JSON.stringify(kept).length} bytes`);
  const longest = Object.fromEntries(Object.entries(SOURCE_REF_LIMITS).map(([field, max]) => [field, 'a'.repeat(max)]));
  const before = intake.usage('wec1').bytes;
  const a = intake.take(named('wec1', 'a', longest, {}));
  const specBytes = JSON.stringify(a.spec).length;
  t.ok(intake.usage('wec1').bytes - before >= specBytes, 'a report with an empty status counts the bytes of its spec');
  const b = intake.take(named('wec1', 'b', longest, {}));
  t.equal(b.refused, 'the reports of mailbox wec1 would be over 2000 bytes', 'specs fill the mailbox\'s bytes as statuses do');
  t.ok(intake.usage('wec1').bytes <= 2000 + specBytes, 'and what it holds stays bounded');
});
