// `fn` over every item, at most `limit` at once, every item tried whatever the others did; then the
// first failure is thrown (the rest were tried, and a retry of the whole finds them done). Written
// by hand: ten lines, where p-queue (our dependency) would add a queue object per call.
export async function eachSettled<T>(items: Iterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const list = [...items];
  const errors: unknown[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < list.length) {
      const item = list[next++]!;
      try { await fn(item); } catch (err) { errors.push(err); }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), list.length) }, worker));
  if (errors.length > 0) throw errors[0];
}
