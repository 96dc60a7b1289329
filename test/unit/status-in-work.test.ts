// The status of a bundle's object carried in its manifest's statusFeedback (src/kube/status-in-work.ts).
import t from 'tap';
import { MAX_BYTES, MAX_FIELDS, MAX_JSON_RAW, statusFromValues, statusValues } from '../../src/kube/status-in-work.js';

const deployment = {
  observedGeneration: 3, replicas: 2, readyReplicas: 2, availableReplicas: 2,
  conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
};

t.test('a status and its details go through the values and come back the same', async (t) => {
  const got = statusValues(deployment, { lastGeneration: 4, lastGenerationIsApplied: false })!;
  t.ok(got, 'it fits');
  t.ok(got.values.every((v) => v.name.startsWith('view.kubestellar.io/')), 'every value is named as ours');
  t.ok(got.values.every((v) => v.fieldValue.type !== 'JsonRaw' || v.fieldValue.jsonRaw!.length <= MAX_JSON_RAW), 'each JsonRaw within OCM\'s 1,024');
  t.same(statusFromValues(got.values), { status: deployment, details: { lastGeneration: 4, lastGenerationIsApplied: false } });
  t.same(statusFromValues(statusValues({}, undefined)!.values), { status: {} }, 'an empty status (a ConfigMap) is still a report');
  // Feedback rules' own values beside ours are not read as status.
  const mixed = [{ name: 'ReadyReplicas', fieldValue: { type: 'Integer' as const, integer: 2 } }, ...got.values];
  t.same((statusFromValues(mixed) as { status: unknown }).status, deployment);
  t.equal(statusFromValues([{ name: 'ReadyReplicas', fieldValue: { type: 'Integer', integer: 2 } }]), undefined, 'no values of ours: no report');
});

t.test('a status that does not fit is not encoded (its WorkStatus carries it)', async (t) => {
  t.equal(statusValues({ big: 'x'.repeat(MAX_JSON_RAW) }, undefined), undefined, 'a field over OCM\'s jsonRaw length');
  t.equal(statusValues(Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, i) => [`f${i}`, i])), undefined), undefined, 'too many fields');
  t.equal(statusValues(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, 'y'.repeat(1000)])), undefined), undefined, `over ${MAX_BYTES} in all`);
});

t.test('values that are not whole are no report, and say why', async (t) => {
  const { values } = statusValues(deployment, undefined)!;
  const missing = values.filter((v) => v.name !== 'view.kubestellar.io/status.replicas');
  t.match(statusFromValues(missing), { invalid: /4 of 5 fields/ });
  const broken = values.map((v) => (v.name === 'view.kubestellar.io/status.replicas' ? { ...v, fieldValue: { type: 'JsonRaw' as const, jsonRaw: '{' } } : v));
  t.match(statusFromValues(broken), { invalid: /replicas is not JSON/ });
  t.match(statusFromValues(values.filter((v) => v.name !== 'view.kubestellar.io/statusFields')), { invalid: /not counted/ });
  const twice = [...values, values.find((v) => v.name === 'view.kubestellar.io/status.replicas')!];
  t.match(statusFromValues(twice), { invalid: /replicas is not one JSON value/ });
});
