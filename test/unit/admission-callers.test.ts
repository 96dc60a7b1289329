// Who may call the admission webhooks of ksview serve (every route under /admission/): only the
// WDS's kube-apiserver, by the front-proxy client certificate it presents (docs/security.md D6).
// Without credentials a caller gets 401, with another identity 403, and the review is never read.
import t from 'tap';
import { ADMISSION_PATH } from '../../src/apiserver/admission/statuscollectors-webhook.js';
import { testApp } from '../fixtures/view-app.js';

const review = {
  apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
  request: { uid: 'u-1', operation: 'CREATE', object: { apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'StatusCollector', metadata: { name: 'c' }, spec: { select: [{ name: 'a', def: '((' }] } } },
};

t.test('a review without credentials is 401, from a user 403, and is never compiled', async (t) => {
  let compiled = 0;
  const { app, close } = await testApp({ validateCollector: async () => { compiled++; return ['select: bad']; } });
  t.teardown(close);
  const anonymous = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.json(), { kind: 'Status', reason: 'Unauthorized', code: 401 });
  const user = await app.inject({ method: 'POST', url: ADMISSION_PATH, headers: { 'x-test-user': 'mallory' }, payload: review });
  t.equal(user.statusCode, 403);
  t.match(user.json(), { kind: 'Status', reason: 'Forbidden', code: 403, message: /User "mallory" cannot call the admission webhooks/ });
  const token = await app.inject({ method: 'POST', url: ADMISSION_PATH, headers: { authorization: 'Bearer abc' }, payload: review });
  t.equal(token.statusCode, 403, 'a valid token of some user is not the kube-apiserver either');
  t.equal(compiled, 0, 'nothing was compiled for them');
});

t.test('the rule covers every route under /admission/, however the path is spelled', async (t) => {
  const { app, close } = await testApp({ validateCollector: async () => [] });
  t.teardown(close);
  // Another webhook added later inherits the rule.
  app.post('/admission/another-kind', async () => ({ answered: true }));
  const other = await app.inject({ method: 'POST', url: '/admission/another-kind', payload: review });
  t.equal(other.statusCode, 401);
  for (const url of ['/%61dmission/statuscollectors', '/admission/statuscollectors/', '/admission//statuscollectors', `${ADMISSION_PATH}?x=1`]) {
    const res = await app.inject({ method: 'POST', url, payload: review });
    t.ok([400, 401, 404].includes(res.statusCode), `${url}: ${res.statusCode}, not answered`);
    t.notMatch(res.body, /AdmissionReview/, `${url}: no review answered`);
  }
});

t.test('the kube-apiserver is answered', async (t) => {
  const { app, close } = await testApp({ validateCollector: async () => ['select: bad'], kubeApiserver: true });
  t.teardown(close);
  const res = await app.inject({ method: 'POST', url: ADMISSION_PATH, payload: review });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { kind: 'AdmissionReview', response: { uid: 'u-1', allowed: false, status: { code: 422 } } });
});
