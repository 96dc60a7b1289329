// FramedProcess: a helper child spoken to in length-prefixed frames. Checked against a small
// Node child written here: answers come back in order; a child that dies rejects what it owed
// (with its exit and stderr) and the next request starts a new one; a missing binary, a child
// that stops answering (timeout) and close() all leave the client usable; an answer frame over
// maxAnswerBytes is refused on its header and skipped unread, and the next answer is read as usual.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { FramedProcess } from '../../src/kube/framed-process.js';

// The child: answers {"pid", "echo"} per frame; "die" exits 3 after a line on stderr; "hang"
// makes it read on but never answer again; "split" answers in two writes 20ms apart; "huge"
// answers a frame of 256 MiB, written in 1 MiB pieces.
const CHILD = `
let buf = Buffer.alloc(0);
let hung = false;
let out = Promise.resolve();
const write = (b) => new Promise((r) => process.stdout.write(b, () => r()));
const pause = () => new Promise((r) => setTimeout(r, 20));
const answer = (obj) => {
  const body = Buffer.from(JSON.stringify(obj));
  const head = Buffer.alloc(4); head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
};
process.stdin.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
    const n = buf.readUInt32BE(0);
    const msg = buf.subarray(4, 4 + n).toString();
    buf = buf.subarray(4 + n);
    if (msg === 'die') { process.stderr.write('dying on purpose\\n'); process.exit(3); }
    if (msg === 'hang') hung = true;
    if (hung) continue;
    if (msg === 'huge') {
      const n = 256 << 20;
      const head = Buffer.alloc(4); head.writeUInt32BE(n, 0);
      const piece = Buffer.alloc(1 << 20, 0x61);
      out = out.then(async () => { await write(head); for (let i = 0; i < 256; i++) await write(piece); });
      continue;
    }
    const frame = answer({ pid: process.pid, echo: msg });
    out = msg === 'split'
      ? out.then(() => write(frame.subarray(0, 3))).then(pause).then(() => write(frame.subarray(3)))
      : out.then(() => write(frame));
  }
});
`;

function helper(t: Test, timeoutMs?: number, maxAnswerBytes?: number): FramedProcess {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-framed-'));
  const script = path.join(dir, 'child.cjs');
  writeFileSync(script, CHILD);
  const p = new FramedProcess(process.execPath, { name: 'test-helper', args: [script], timeoutMs, maxAnswerBytes });
  t.teardown(() => { p.close(); rmSync(dir, { recursive: true, force: true }); });
  return p;
}

type Echo = { pid: number; echo: string };
const ask = (p: FramedProcess, s: string) => p.request(Buffer.from(s)).then((b) => JSON.parse(b.toString()) as Echo);

t.test('answers come back in order, from one long-lived child, even split across writes', async (t) => {
  const p = helper(t);
  const answers = await Promise.all(['a', 'split', 'b', '', 'ü'.repeat(5000)].map((s) => ask(p, s)));
  t.same(answers.map((a) => a.echo), ['a', 'split', 'b', '', 'ü'.repeat(5000)]);
  t.equal(new Set(answers.map((a) => a.pid)).size, 1, 'one child served them all');
  t.same(await p.requestJson({ x: 1 }), { pid: answers[0]!.pid, echo: '{"x":1}' });
});

t.test('a child that dies rejects what it owed with its exit and stderr; the next request starts a new one', async (t) => {
  const p = helper(t);
  const first = await ask(p, 'a');
  const owed = [ask(p, 'die'), ask(p, 'never answered')];
  for (const r of owed) await t.rejects(r, { message: 'test-helper exited (3): dying on purpose' });
  const next = await ask(p, 'again');
  t.equal(next.echo, 'again');
  t.not(next.pid, first.pid, 'a new child');
});

t.test('a missing binary rejects with the spawn error, every time', async (t) => {
  const p = new FramedProcess('/nonexistent/helper-binary');
  t.teardown(() => p.close());
  await t.rejects(p.request(Buffer.from('x')), { message: /^helper-binary failed: spawn \/nonexistent\/helper-binary ENOENT/ });
  await t.rejects(p.request(Buffer.from('y')), { message: /ENOENT/ });
});

t.test('a child that stops answering is killed after the timeout; the next request gets a new one', async (t) => {
  // The limit counts a new child's start too: 10 s, as a Node child may take seconds to start on a
  // loaded machine (2 s was missed there by the first answer, not by the hang).
  const p = helper(t, 10_000);
  const first = await ask(p, 'a');
  await t.rejects(ask(p, 'hang'), { message: 'test-helper did not answer within 10000ms (killed)' });
  const next = await ask(p, 'b');
  t.equal(next.echo, 'b');
  t.not(next.pid, first.pid);
});

t.test('close() lets the child answer what it read; a later request starts a new child', async (t) => {
  const p = helper(t);
  const pending = ask(p, 'before close');
  p.close();
  const answered = await pending;
  t.equal(answered.echo, 'before close');
  const after = await ask(p, 'after close');
  t.not(after.pid, answered.pid);
});

t.test('an answer over maxAnswerBytes is refused unread; the answers after it are read as usual', async (t) => {
  const p = helper(t, undefined, 1 << 20);
  const before = await ask(p, 'a');
  const rss = process.memoryUsage().rss;
  let peak = rss;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
  t.teardown(() => clearInterval(sampler));
  const [huge, after] = [ask(p, 'huge'), ask(p, 'after')];
  await t.rejects(huge, { message: `test-helper answered ${256 << 20} bytes, over the limit of ${1 << 20}` });
  const next = await after;
  clearInterval(sampler);
  t.equal(next.echo, 'after', 'the next answer, after the skipped frame');
  t.equal(next.pid, before.pid, 'from the same child');
  t.ok(peak - rss < 64 << 20, `the 256 MiB frame was never held (RSS grew ${Math.round((peak - rss) / 2 ** 20)} MiB)`);
});
