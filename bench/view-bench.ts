// What the benches through the view share: the demo spaces and `ksview serve` as `ksview spaces up`
// runs them (started when they are not running), an undici Pool to wds1 with its admin
// certificate, and the median.
import { KubeConfig } from '@kubernetes/client-node';
import type https from 'node:https';
import { Pool } from 'undici';
import { stderrProgress } from '../src/util/progress.js';
import { defaultCacheDir } from '../src/spaces/binaries.js';
import { DEFAULT_PORT_BASE, defaultSpacesDir, spacesLayout } from '../src/spaces/layout.js';
import { spacesUp } from '../src/spaces/spaces.js';
import { ensureViewServer } from '../src/spaces/view-server.js';

export const VIEW_ROOT = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
export const progress = stderrProgress();

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

/** The demo spaces and ksview serve up; a Pool to wds1's kube-apiserver as its admin. */
export async function wds1Pool(): Promise<Pool> {
  return (await spacePools(['wds1'])).wds1!;
}

/** The demo spaces and ksview serve up; a Pool per kubeconfig context (a space's kube-apiserver, as its admin). */
export async function spacePools(contexts: readonly string[]): Promise<Record<string, Pool>> {
  const dir = defaultSpacesDir();
  const layout = spacesLayout({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2 });
  progress.step(`ensuring the demo spaces in ${dir} and ksview serve`);
  await spacesUp({ dir, portBase: DEFAULT_PORT_BASE, wecs: 2, cacheDir: defaultCacheDir(), progress });
  await ensureViewServer(layout, progress);
  const out: Record<string, Pool> = {};
  for (const context of contexts) {
    const kc = new KubeConfig();
    kc.loadFromFile(layout.kubeconfigPath);
    kc.setCurrentContext(context);
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const origin = new URL(kc.getCurrentCluster()!.server).origin;
    out[context] = new Pool(origin, { connections: 2, pipelining: 1, connect: { ca: opts.ca as string, cert: opts.cert as string, key: opts.key as string } });
  }
  return out;
}
