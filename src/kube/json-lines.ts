// The documents of a watch stream: kube-apiserver writes one JSON object per line (blank lines
// may occur); chunks split lines anywhere, so a line is parsed only once it is complete.

export async function* jsonLines(body: AsyncIterable<Buffer | string>): AsyncGenerator<unknown> {
  let buffered = '';
  for await (const chunk of body) {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim()) yield JSON.parse(line);
    }
  }
  if (buffered.trim()) yield JSON.parse(buffered);
}
