// The raw client of the hostile-request tests (test/fixtures/raw-client.ts rawRequest) reads a
// server's early answer to a large upload — a 413 sent before the body is read, as ksview serve
// sends it — whatever the timing: it keeps the connection, as kubectl's client does, so the server
// drains the rest of the body instead of closing on it while it is still being written.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { selfSignedServingCert } from '../../src/kube/pki.js';
import { rawRequest } from '../fixtures/raw-client.js';

/** Larger than what the kernel buffers of a loopback connection take, so the client is still writing when the answer comes. */
const BODY = Buffer.alloc(32 * 1024 * 1024, 0x20);
const TRIES = 10;

t.test('a 413 sent while the body is still being written is the answer', async (t) => {
  const serving = await selfSignedServingCert('early', ['localhost'], ['127.0.0.1']);
  const worker = new Worker(path.join(import.meta.dirname, '..', 'fixtures', 'early-answer-server.mjs'),
    { workerData: { keyPem: serving.keyPem, certPem: serving.certPem } });
  t.teardown(() => worker.terminate());
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));

  const outcomes: string[] = [];
  for (let i = 0; i < TRIES; i++) {
    const r = await rawRequest({ port, ca: serving.caPem }, { method: 'POST', path: '/api/v1/namespaces/x/configmaps', headers: { 'content-type': 'application/json' }, body: BODY });
    outcomes.push(`${r.status} ${r.status ? (JSON.parse(r.body) as { reason?: string }).reason : r.body}`);
  }
  t.same(outcomes, Array(TRIES).fill('413 RequestEntityTooLarge'), 'every upload got the server\'s Status');
});
