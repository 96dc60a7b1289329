// jsonLines (src/kube/json-lines.ts), the watch stream's documents: lines split anywhere across
// chunks, a UTF-8 character split between two chunks, blank lines, a last line without its
// newline, and a line of 1.2 MB arriving in 1,200 chunks, parsed once.
import t from 'tap';
import { jsonLines } from '../../src/kube/json-lines.js';

async function* chunks(...parts: (Buffer | string)[]): AsyncGenerator<Buffer | string> {
  for (const p of parts) yield p;
}

async function all(body: AsyncIterable<Buffer | string>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const d of jsonLines(body)) out.push(d);
  return out;
}

t.test('lines split across chunks, blank lines, and a last line without a newline', async (t) => {
  t.same(await all(chunks('{"a":', '1}\n\n{"b"', ':2}\n', '  \n{"c":3}')), [{ a: 1 }, { b: 2 }, { c: 3 }]);
  t.same(await all(chunks('{"a":1}\n{"b":2}\n')), [{ a: 1 }, { b: 2 }], 'several lines in one chunk');
});

t.test('a UTF-8 character split between two chunks stays whole', async (t) => {
  const bytes = Buffer.from('{"name":"größe ✓"}\n', 'utf8');
  const at = bytes.indexOf(0x9c); // the middle of ✓ (e2 9c 93)
  t.same(await all(chunks(bytes.subarray(0, at), bytes.subarray(at))), [{ name: 'größe ✓' }]);
});

t.test('a 1.2 MB line in 1,200 chunks is one document', async (t) => {
  const text = `${JSON.stringify({ type: 'MODIFIED', object: { blob: 'x'.repeat(1_200_000) } })}\n`;
  const pieces: Buffer[] = [];
  for (let i = 0; i < text.length; i += 1000) pieces.push(Buffer.from(text.slice(i, i + 1000)));
  const [doc] = await all(chunks(...pieces)) as { object: { blob: string } }[];
  t.equal(doc!.object.blob.length, 1_200_000);
});
