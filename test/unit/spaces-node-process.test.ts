// Our Node processes (serve, agents) as recorded processes of the spaces: one that exits at once is
// reported with the end of its log, and a live one is reused, not started twice.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ensureNodeProcess } from '../../src/spaces/agents.js';
import { spacesLayout } from '../../src/spaces/layout.js';
import { freeLoopbackPort } from '../../src/spaces/ports.js';
import { stopAll } from '../../src/spaces/processes.js';
import { readState, writeState } from '../../src/spaces/state.js';

const quiet = { step: () => {} } as never;

t.test('an agent that exits at once: the error carries its log tail', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-nodeproc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const layout = spacesLayout({ dir, portBase: 30000, wecs: 1 });
  mkdirSync(path.join(dir, 'logs'));
  writeState(layout.statePath, { portBase: 30000, wecs: 1, processes: [] });
  const port = await freeLoopbackPort();
  await t.rejects(ensureNodeProcess(layout, quiet, 'wec1/ksview-agent',
    ['-e', 'console.error("error: unknown command \'agent\'"); process.exit(1)'], port, { timeoutMs: 10_000 }),
  { name: 'UserError', message: /^wec1\/ksview-agent exited; log .*wec1-ksview-agent\.log:\nerror: unknown command 'agent'/ });
});

t.test('a live one is reused; restart replaces it', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-nodeproc-'));
  const layout = spacesLayout({ dir, portBase: 30000, wecs: 1 });
  mkdirSync(path.join(dir, 'logs'));
  writeState(layout.statePath, { portBase: 30000, wecs: 1, processes: [] });
  const port = await freeLoopbackPort();
  const server = ['-e', `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`];
  t.teardown(async () => {
    await stopAll(readState(layout.statePath)!.processes, 2000);
    rmSync(dir, { recursive: true, force: true });
  });
  await ensureNodeProcess(layout, quiet, 'wec1/ksview-agent', server, port, { timeoutMs: 20_000 });
  const first = readState(layout.statePath)!.processes[0]!.pid;
  await ensureNodeProcess(layout, quiet, 'wec1/ksview-agent', server, port, { timeoutMs: 20_000 });
  t.equal(readState(layout.statePath)!.processes[0]!.pid, first, 'reused');
  await ensureNodeProcess(layout, quiet, 'wec1/ksview-agent', server, port, { timeoutMs: 20_000, restart: true });
  const state = readState(layout.statePath)!;
  t.equal(state.processes.length, 1, 'one record');
  t.not(state.processes[0]!.pid, first, 'replaced');
});
