// The StatusCollector admission webhook (src/apiserver/admission/statuscollectors-webhook.ts) through the app, without
// spaces: the real compiler (validateCollector → compileCollector in the CEL workers) behind it. A bad
// collector is denied with a 422 Invalid Status naming each error and its field; a good one and
// other operations are allowed; no validator (no ITS) allows everything; a body that is not an
// AdmissionReview is a 400 Status. The caller is the WDS's kube-apiserver (who else may call is
// test/unit/admission-callers.test.ts).
// The ValidatingWebhookConfiguration registration writes is checked too.
import t from 'tap';
import { ADMISSION_PATH, WEBHOOK_NAME } from '../../src/apiserver/admission/statuscollectors-webhook.js';
import { webhookConfiguration } from '../../src/apiserver/wds-registration.js';
import { CelPool } from '../../src/controllers/status/cel-pool.js';
import { validateCollector as validateWith } from '../../src/controllers/status/combined-statuses.js';
import { testApp } from '../fixtures/view-app.js';

// The compiler behind the webhook: the CEL workers of a pool.
const pool = new CelPool();
t.teardown(() => pool.close());
const validateCollector = (sc: { metadata: { name: string }; spec?: unknown }) => validateWith(pool, sc);

const review = (object: unknown, operation = 'CREATE', oldObject?: unknown) => ({
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: { uid: 'u-1', operation, name: 'sc', resource: { group: 'control.kubestellar.io', version: 'v1alpha1', resource: 'statuscollectors' }, object, ...(oldObject ? { oldObject } : {}) },
});
const collector = (spec: unknown) => ({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'sc' }, spec });

t.test('a collector with a bad expression is denied with a 422 naming each error and its field', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  const res = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review(collector({
    filter: 'obj.spec.replicas ==', select: [{ name: 'wec', def: 'foo.bar' }], limit: 20,
  })) });
  t.equal(res.statusCode, 200, 'an AdmissionReview answer is always a 200');
  const body = res.json();
  t.equal(body.kind, 'AdmissionReview');
  t.equal(body.response.uid, 'u-1');
  t.equal(body.response.allowed, false);
  const s = body.response.status;
  t.equal(s.code, 422);
  t.equal(s.reason, 'Invalid');
  t.match(s.message, /^StatusCollector\.control\.kubestellar\.io "sc" is invalid: \[spec\.filter: filter expression invalid: .+, spec\.select: select expression \(wec\) invalid: undeclared reference to 'foo'/);
  t.same(s.details.causes.map((c: { field: string }) => c.field), ['spec.filter', 'spec.select']);
  t.equal(s.details.kind, 'StatusCollector');
  t.equal(s.details.group, 'control.kubestellar.io');
});

t.test('shape errors: the same words as status.errors', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  const cases: [unknown, RegExp][] = [
    [{ groupBy: [{ name: 'p', def: 'returned.status.phase' }], limit: 20 }, /spec\.groupBy: groupBy must be empty if combinedFields is/],
    [{ combinedFields: [{ name: 'n', type: 'MEDIAN', subject: '1' }], limit: 20 }, /spec\.combinedFields: combinedField expression \(n\) invalid: type must be one of/],
    [{ combinedFields: [{ name: 'n', type: 'SUM' }], limit: 20 }, /subject must be set/],
    [{ select: [{ name: 'a', def: '1' }, { name: 'a', def: '2' }], limit: 20 }, /spec: column name "a" is used more than once/],
    [{ select: [{ name: 'a', def: `${'1 + '.repeat(1100)}1` }], limit: 20 }, /spec\.select: select expression \(a\) invalid: .*4096/],
  ];
  for (const [spec, message] of cases) {
    const res = (await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review(collector(spec)) })).json();
    t.equal(res.response.allowed, false, JSON.stringify(spec).slice(0, 80));
    t.match(res.response.status.message, message);
  }
});

t.test('a valid collector, a delete and an object that is not a collector are allowed', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  for (const payload of [
    review(collector({ combinedFields: [{ name: 'count', type: 'COUNT' }], limit: 20 })),
    review(collector({ filter: 'obj.spec.replicas != returned.status.availableReplicas', select: [{ name: 'wec', def: 'inventory.name' }], limit: 20 }), 'UPDATE'),
    review(collector({ filter: 'obj.spec.replicas ==' }), 'DELETE'),
    review(undefined, 'CREATE'),
  ]) {
    const res = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload });
    t.same(res.json(), { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u-1', allowed: true } });
  }
});

t.test('an update that leaves an invalid spec as it was (a label, a finalizer, a deletion) is allowed; one that changes it is checked', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  const bad = collector({ filter: '((' });
  const labelled = { ...bad, metadata: { ...bad.metadata, labels: { a: 'b' }, finalizers: [] } };
  const allowed = async (payload: object) => (await app.inject({ method: 'POST', url: ADMISSION_PATH, payload })).json().response.allowed as boolean;
  t.equal(await allowed(review(labelled, 'UPDATE', bad)), true, 'same spec: allowed');
  t.equal(await allowed(review({ ...bad, metadata: { ...bad.metadata, deletionTimestamp: '2026-11-24T00:00:00Z' }, spec: { filter: ')' } }, 'UPDATE', bad)), true, 'being deleted: allowed');
  t.equal(await allowed(review(collector({ filter: ')' }), 'UPDATE', bad)), false, 'a changed, still invalid spec: refused');
  t.equal(await allowed(review(bad, 'UPDATE')), false, 'no old object to compare: checked');
});

t.test('a body over 256 KiB is a 413 Status, before any compiling', async (t) => {
  let compiled = 0;
  const { app, close } = await testApp({ validateCollector: async () => { compiled++; return []; }, kubeApiserver: true });
  t.teardown(close);
  const big = review(collector({ select: [{ name: 'a', def: `"${'x'.repeat(300 * 1024)}"` }] }));
  const res = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: big });
  t.equal(res.statusCode, 413);
  t.match(res.json(), { kind: 'Status', code: 413 });
  t.equal(compiled, 0);
});

t.test('without a validator (no ITS, no status controller) everything is allowed', async (t) => {
  const { app, close } = await testApp({ kubeApiserver: true });
  t.teardown(close);
  const res = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review(collector({ filter: '((' })) });
  t.equal(res.json().response.allowed, true);
});

t.test('a compiler that fails is not the collector\'s fault: allowed, with a warning', async (t) => {
  const { app, close } = await testApp({ validateCollector: async () => { throw new Error('no CEL engine'); }, kubeApiserver: true });
  t.teardown(close);
  const res = (await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review(collector({})) })).json();
  t.equal(res.response.allowed, true);
  t.same(res.response.warnings, ['not validated: no CEL engine']);
});

t.test('a body that is not an AdmissionReview is a 400 Status; other verbs are not served', async (t) => {
  const { app, close } = await testApp({ validateCollector, kubeApiserver: true });
  t.teardown(close);
  const bad = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: { kind: 'AdmissionReview' } });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { kind: 'Status', code: 400, reason: 'BadRequest', message: /AdmissionReview with request\.uid/ });
  const notJson = await app.inject({ method: 'POST', url: ADMISSION_PATH, headers: { 'content-type': 'application/json' }, payload: '{' });
  t.equal(notJson.statusCode, 400);
  t.equal(notJson.json().kind, 'Status');
  const get = await app.inject({ method: 'GET', url: ADMISSION_PATH, headers: { 'x-test-user': 'admin' } });
  t.equal(get.statusCode, 404);
  t.equal(get.json().kind, 'Status');
  const other = await app.inject({ url: '/admissionx' });
  t.equal(other.statusCode, 401, 'outside the admission routes, callers are users');
});

t.test('the ValidatingWebhookConfiguration: creates and updates of statuscollectors, to our service and path, failurePolicy Ignore', async (t) => {
  const cfg = webhookConfiguration({ namespace: 'kubestellar-view', service: 'ksview', port: 443, caBundlePem: 'PEM' }) as Record<string, any>;
  t.equal(cfg.kind, 'ValidatingWebhookConfiguration');
  const [w] = cfg.webhooks;
  t.equal(w.name, WEBHOOK_NAME);
  t.same(w.clientConfig, { service: { namespace: 'kubestellar-view', name: 'ksview', port: 443, path: ADMISSION_PATH }, caBundle: Buffer.from('PEM').toString('base64') });
  t.same(w.rules, [{ apiGroups: ['control.kubestellar.io'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['statuscollectors'], scope: 'Cluster' }]);
  t.equal(w.failurePolicy, 'Ignore');
  t.equal(w.sideEffects, 'None');
  t.same(w.admissionReviewVersions, ['v1']);
});
