import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { isRunning, logTail, runsWith, startDetached, stopAll } from '../../src/spaces/processes.js';

t.test('a detached process is recognised by pid and binary, and stopped by group', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-proc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'sh.log');
  // A shell that ignores TERM, with a child: stopAll must escalate to KILL and reach the group.
  const rec = startDetached('sh', '/bin/sh', ['-c', 'trap "" TERM; echo started; sleep 600 & wait'], log);
  t.ok(isRunning(rec), 'running');
  t.notOk(isRunning({ ...rec, binary: '/bin/other' }), 'a different binary at that pid is not ours');
  const start = Date.now();
  while (!readFileSync(log, 'utf8').includes('started') && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 20));
  t.equal(logTail(log), 'started');
  await stopAll([rec], 300);
  t.notOk(isRunning(rec), 'stopped');
  t.equal(logTail(path.join(dir, 'missing.log')), '(no log)');
});

t.test('runsWith: a live process is judged by its whole command line, so up restarts one started with other flags', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-proc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const args = ['-c', 'sleep 600', 'ksview', '--listen-client-urls=http://127.0.0.1:1'];
  const rec = startDetached('sh', '/bin/sh', args, path.join(dir, 'sh.log'));
  t.teardown(() => stopAll([rec], 300));
  t.ok(runsWith(rec, '/bin/sh', args), 'the same command line');
  t.notOk(runsWith(rec, '/bin/sh', [...args.slice(0, 3), '--listen-client-urls=https://127.0.0.1:1']), 'one flag changed');
  t.notOk(runsWith(rec, '/bin/sh', args.slice(0, 3)), 'a flag fewer');
  t.notOk(runsWith(rec, '/bin/sh', [...args, '--client-cert-auth=true']), 'a flag more');
  t.notOk(runsWith(rec, '/bin/bash', args), 'another binary');
  await stopAll([rec], 300);
  t.notOk(runsWith(rec, '/bin/sh', args), 'a dead process runs nothing');
});
