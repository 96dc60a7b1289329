// One user's watches cannot block the view for everyone (docs/security.md D9). A user who may only
// watch ConfigMaps in their own namespace opens 300 watches through the view (through the
// aggregator, as kubectl would); meanwhile another user's list of namespaces through the view is
// answered as fast as ever (median of ten under 200 ms, and kubectl get ns works); the next watch
// past the per-user cap (serve's default, 300) is a 429 TooManyRequests with Retry-After, and a
// watch closed gives its slot back.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import t from 'tap';
import { Pool } from 'undici';
import { DEFAULT_REQUEST_LIMITS } from '../../src/apiserver/http/request-limits.js';
import { kubectl } from '../../src/cli/kubectl.js';
import { issueCert, type KeyPair } from '../../src/kube/pki.js';
import { renderKubeconfig } from '../../src/spaces/kubeconfig.js';
import { kc, kcOk, layout, testNamespace, uniqueName, waitUntil } from '../fixtures/spaces.js';

const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const pki = (f: string) => readFileSync(path.join(wds.dir, 'pki', f), 'utf8');
const viewPath = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
const WATCHES = DEFAULT_REQUEST_LIMITS.longRunningPerUser;

async function userCert(name: string): Promise<KeyPair> {
  return issueCert({ certPem: pki('ca.crt'), keyPem: pki('ca.key') }, { commonName: name, usages: ['client'] });
}

/** HTTP/1.1 connections to wds1's kube-apiserver as `who`: one per open watch, as many as asked. */
function poolAs(who: KeyPair, connections: number): Pool {
  return new Pool(`https://127.0.0.1:${wds.apiserverPort}`, {
    connections, pipelining: 1, bodyTimeout: 0, headersTimeout: 60_000,
    connect: { ca: pki('ca.crt'), cert: who.certPem, key: who.keyPem },
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

t.test(`${WATCHES} watches of one user leave another user's get ns fast; one more is a 429`, async (t) => {
  const ns = testNamespace(t, ['wds1'], 'watches');
  const watcher = uniqueName('watcher');
  const reader = uniqueName('reader');
  kcOk('wds1', ['-n', ns, 'create', 'role', 'cm-watch', '--verb=get,list,watch', '--resource=configmaps']);
  kcOk('wds1', ['-n', ns, 'create', 'rolebinding', 'watcher', '--role=cm-watch', `--user=${watcher}`]);
  kcOk('wds1', ['create', 'clusterrole', `${reader}-ns`, '--verb=get,list', '--resource=namespaces']);
  kcOk('wds1', ['create', 'clusterrolebinding', `${reader}-ns`, `--clusterrole=${reader}-ns`, `--user=${reader}`]);
  for (const u of [watcher, reader]) kcOk('wds1', ['create', 'clusterrolebinding', `${u}-view`, '--clusterrole=kubestellar-view:user', `--user=${u}`]);
  t.teardown(() => { kc('wds1', ['delete', 'clusterrolebinding', `${reader}-ns`, `${watcher}-view`, `${reader}-view`, '--ignore-not-found']); kc('wds1', ['delete', 'clusterrole', `${reader}-ns`, '--ignore-not-found']); });

  const watcherPool = poolAs(await userCert(watcher), WATCHES + 10);
  const readerCert = await userCert(reader);
  const readerPool = poolAs(readerCert, 4);
  const aborts: AbortController[] = [];
  t.teardown(async () => {
    for (const a of aborts) a.abort();
    await Promise.all([watcherPool.destroy(), readerPool.destroy()]);
  });

  /** One list of namespaces as the reader: its status and time (a list that takes over 5 s is cut: status 0). */
  const listNamespaces = async () => {
    const started = performance.now();
    try {
      const res = await readerPool.request({ method: 'GET', path: `${viewPath}/api/v1/namespaces`, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) });
      await res.body.text();
      return { status: res.statusCode, ms: performance.now() - started };
    } catch {
      return { status: 0, ms: performance.now() - started };
    }
  };
  await waitUntil('the reader lists namespaces through the view', async () => (await listNamespaces()).status === 200, 30_000);

  /** One watch as the watcher; status 0 when its answer did not start within 20 s. */
  const watch = async () => {
    const ac = new AbortController();
    aborts.push(ac);
    const timer = setTimeout(() => ac.abort(), 20_000);
    try {
      const res = await watcherPool.request({
        method: 'GET', path: `${viewPath}/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=600`,
        headers: { accept: 'application/json' }, signal: ac.signal,
      });
      // A watch's headers come at once; its body stays open (consumed, so nothing piles up).
      if (res.statusCode === 200) res.body.on('data', () => undefined).on('error', () => undefined);
      return { status: res.statusCode, res, ac };
    } catch {
      return { status: 0, res: undefined, ac };
    } finally {
      clearTimeout(timer);
    }
  };
  // Opened in batches, as a client would.
  const open: Array<Awaited<ReturnType<typeof watch>>> = [];
  for (let i = 0; i < WATCHES; i += 50) open.push(...await Promise.all(Array.from({ length: Math.min(50, WATCHES - i) }, watch)));
  t.equal(open.filter((w) => w.status === 200).length, WATCHES, `all ${WATCHES} watches are open`);

  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await listNamespaces();
    t.equal(r.status, 200, 'the other user lists namespaces');
    times.push(r.status === 200 ? r.ms : Infinity);
  }
  t.ok(median(times) < 200, `another user's list of namespaces: median ${median(times).toFixed(1)} ms of ${times.map((x) => x.toFixed(0)).join(', ')}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-reader-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'kubeconfig'), renderKubeconfig([{ name: 'view', server: `https://127.0.0.1:${wds.apiserverPort}${viewPath}`, caPem: pki('ca.crt'), certPem: readerCert.certPem, keyPem: readerCert.keyPem }]));
  const getNs = kubectl(path.join(dir, 'kubeconfig'), ['--request-timeout=5s', 'get', 'ns', ns, '-o', 'name']);
  t.equal(getNs.stdout.trim(), `namespace/${ns}`, `kubectl get ns works for the other user ${getNs.stderr}`);

  const past = await watch();
  t.equal(past.status, 429, 'one watch past the cap');
  t.equal(past.res?.headers['retry-after'], '1');
  t.match(JSON.parse(await past.res?.body.text() ?? '{}'), { kind: 'Status', reason: 'TooManyRequests', code: 429, message: new RegExp(`user "${watcher}": at most ${WATCHES}`) });

  open.pop()!.ac.abort();
  const again = await waitUntil('a closed watch gives its slot back', async () => {
    const w = await watch();
    if (w.status === 200) return w;
    await w.res?.body.text();
    return undefined;
  }, 30_000);
  t.equal(again.status, 200);
});
