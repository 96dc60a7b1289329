// Mailbox namespaces: created for an accepted cluster, an existing one left alone.
import t from 'tap';
import { accepted, ensureMailbox } from '../../src/controllers/clusters/mailboxes.js';
import { mockUpstream } from '../fixtures/mock-upstream.js';

t.test('ensureMailbox creates the namespace, and a 409 (it exists) is fine', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  its.pool.intercept({ path: '/api/v1/namespaces', method: 'POST' }).reply(201, {});
  its.pool.intercept({ path: '/api/v1/namespaces', method: 'POST' }).reply(409, { kind: 'Status', reason: 'AlreadyExists', code: 409 });
  t.equal(await ensureMailbox(its.up, 'wec1'), true);
  t.equal(await ensureMailbox(its.up, 'wec1'), false);
  t.match(its.calls()[0]?.body, { kind: 'Namespace', metadata: { name: 'wec1' } });
  t.same(its.calls().map((c) => c.method), ['POST', 'POST'], 'never a DELETE');
});

t.test('ensureMailbox: a refusal is an error naming the namespace', async (t) => {
  const its = mockUpstream('https://its.test:6443');
  t.teardown(() => its.close());
  its.pool.intercept({ path: '/api/v1/namespaces', method: 'POST' }).reply(403, { kind: 'Status', message: 'forbidden', code: 403 });
  await t.rejects(ensureMailbox(its.up, 'wec1'), /wec1/);
});

t.test('accepted: only spec.hubAcceptsClient true', async (t) => {
  t.ok(accepted({ metadata: { name: 'a' }, spec: { hubAcceptsClient: true } }));
  t.notOk(accepted({ metadata: { name: 'a' }, spec: {} }));
  t.notOk(accepted({ metadata: { name: 'a' } }));
});
