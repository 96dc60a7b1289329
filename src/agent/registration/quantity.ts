// Kubernetes resource quantities ("4", "500m", "16Gi", "1e3") summed exactly, as OCM sums Node
// capacity into a ManagedCluster: parsed to BigInt milli-units, formatted back in the form the
// inputs used (binary suffixes stay binary), so "8Gi" + "8Gi" reads "16Gi".
const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, bigint> = { k: 10n ** 3n, M: 10n ** 6n, G: 10n ** 9n, T: 10n ** 12n, P: 10n ** 15n, E: 10n ** 18n };

export interface Quantity { milli: bigint; binary: boolean }

/** undefined for text that is no quantity (it is then left out of the sum). */
export function parseQuantity(text: string): Quantity | undefined {
  const m = /^([+-]?\d+(?:\.\d+)?)(?:(m|Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const [int, frac = ''] = m[1]!.split('.');
  const digits = BigInt(`${int}${frac}`);
  const scale = 10n ** BigInt(frac.length);
  const suffix = m[2];
  let mult = 1000n; // milli per unit
  let div = scale;
  if (suffix === 'm') mult = 1n;
  else if (suffix && BINARY[suffix]) mult *= BINARY[suffix]!;
  else if (suffix && DECIMAL[suffix]) mult *= DECIMAL[suffix]!;
  else if (m[3]) {
    const e = BigInt(m[3]);
    if (e >= 0n) mult *= 10n ** e; else div *= 10n ** -e;
  }
  return { milli: (digits * mult) / div, binary: suffix !== undefined && suffix in BINARY };
}

export function formatQuantity(q: Quantity): string {
  if (q.milli % 1000n !== 0n) return `${q.milli}m`;
  const units = q.milli / 1000n;
  if (q.binary && units !== 0n) {
    for (const s of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki']) if (units % BINARY[s]! === 0n) return `${units / BINARY[s]!}${s}`;
  }
  return `${units}`;
}

/** Sums resource lists key by key (cpu, memory, pods, ephemeral-storage, hugepages-*, ...). */
export function sumResources(lists: readonly (Record<string, string> | undefined)[]): Record<string, string> {
  const acc = new Map<string, Quantity>();
  for (const list of lists) {
    for (const [key, text] of Object.entries(list ?? {})) {
      const q = parseQuantity(text);
      if (!q) continue;
      const had = acc.get(key);
      acc.set(key, had ? { milli: had.milli + q.milli, binary: had.binary || q.binary } : q);
    }
  }
  const out: Record<string, string> = {};
  for (const key of [...acc.keys()].sort()) out[key] = formatQuantity(acc.get(key)!);
  return out;
}
