// The watch stream of the virtual resources: events as JSON lines, the end at timeoutSeconds,
// subscriptions released at the end, and events after it dropped (a write after end would be an
// 'error' on the response that nothing handles).
import Fastify from 'fastify';
import t from 'tap';
import { request } from 'undici';
import { openWatchStream, queryBool, type WatchStream } from '../../src/apiserver/http/watch-stream.js';

t.test('events until timeoutSeconds; at the end the subscription goes and later events are dropped', async (t) => {
  const app = Fastify();
  t.teardown(() => app.close());
  let stream: WatchStream | undefined;
  let released = 0;
  const responseErrors: Error[] = [];
  app.get<{ Querystring: { timeoutSeconds?: string } }>('/w', async (req, reply) => {
    reply.raw.on('error', (err) => responseErrors.push(err));
    stream = openWatchStream(reply, req.query.timeoutSeconds);
    stream.onClose(() => { released++; });
    // An event that arrives after the stream ended but before its socket closed (a slow client).
    reply.raw.once('finish', () => stream!.send('MODIFIED', { metadata: { name: 'late' } }));
    stream.send('ADDED', { metadata: { name: 'a' } });
    stream.send('MODIFIED', { metadata: { name: 'a' } });
    return reply;
  });
  // A real socket: Node's ServerResponse is what reports a write after end.
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const res = await request(`${address}/w?timeoutSeconds=1`);
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/json');
  const body = await res.body.text();
  t.same(body.split('\n').filter(Boolean).map((l) => JSON.parse(l).type), ['ADDED', 'MODIFIED']);
  t.equal(released, 1, 'the subscription was released when the stream ended');
  t.doesNotThrow(() => stream!.send('MODIFIED', { metadata: { name: 'a' } }), 'an event after the end is dropped');
  await new Promise((r) => setImmediate(r));
  t.same(responseErrors, [], 'no error on the response');
  let late = 0;
  stream!.onClose(() => { late++; });
  t.equal(late, 1, 'a subscription added after the end is released at once');
  t.equal(released, 1, 'released once');
});

t.test('queryBool reads booleans as Go does', async (t) => {
  for (const v of ['1', 't', 'T', 'true', 'TRUE', 'True']) t.ok(queryBool(v), v);
  for (const v of ['0', 'false', 'yes', '', undefined, null]) t.notOk(queryBool(v), String(v));
});
