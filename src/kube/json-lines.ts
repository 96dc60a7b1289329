// The documents of a watch stream: kube-apiserver writes one JSON object per line (blank lines
// may occur); chunks split lines anywhere, so a line is parsed only once it is complete. A line is
// kept as the chunks it arrived in and joined once, when its newline comes: an object of 1.2 MB
// arrives in dozens of chunks, and re-scanning (and copying) the whole line at each one made every
// such event cost tens of MB of garbage. Bytes are decoded per line, never per chunk, so a UTF-8
// character split between chunks stays whole (a newline byte is never inside one).

const NEWLINE = 0x0a;

export async function* jsonLines(body: AsyncIterable<Buffer | string>): AsyncGenerator<unknown> {
  let parts: Buffer[] = [];
  const line = (tail: Buffer): string => {
    const text = (parts.length === 0 ? tail : Buffer.concat([...parts, tail])).toString('utf8');
    parts = [];
    return text;
  };
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    let nl: number;
    while ((nl = bytes.indexOf(NEWLINE, start)) >= 0) {
      const text = line(bytes.subarray(start, nl));
      start = nl + 1;
      if (text.trim()) yield JSON.parse(text);
    }
    if (start < bytes.length) parts.push(bytes.subarray(start));
  }
  const rest = line(Buffer.alloc(0));
  if (rest.trim()) yield JSON.parse(rest);
}
