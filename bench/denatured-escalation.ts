// Benchmark (not a test): what Kubernetes' RBAC escalation check (ksview-native's escalation.go,
// docs/security.md F1) adds to a write of denatured RBAC through the view.
//
//   npx tsc -p . && node dist/bench/denatured-escalation.js
//
// Ensures the local demo spaces and `ksview serve` for wds1 (or, with KSVIEW_BENCH_KUBECONFIG, uses
// the spaces of that kubeconfig as they run: contexts wds1), then, through the view with the wds1
// admin certificate impersonating one of two users, one request at a time, in the same run:
//   CHECKED  a user holding kubestellar-view:user, kubestellar-view:denatured-editor and (natively in
//            wds1) get/list of configmaps, without escalate or bind: each write takes the whole
//            check: a SubjectAccessReview for escalate (or bind), denied; for a binding the
//            denatured role read from the WDS; the user's rules resolved from the WDS's RBAC
//            (informers) and found to cover the rules written
//   MASTERS  the same writes by a user in system:masters, which Kubernetes' check lets through
//            without asking anything (EscalationAllowed): the write without the check
// The writes: POST a ClusterRole with rules get/list configmaps, then POST a ClusterRoleBinding
// to a ClusterRole with those rules; alternating which user goes first each iteration, after a
// warm-up. Reported: medians per write and user, and the difference. Target: the check
// adds <= 2 ms to the median of each write. Everything it creates carries a label and is deleted
// at the end, with the users' grants.
// Exit status: 0 target met, 1 missed, 2 could not run.
import { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { median, progress, VIEW_ROOT, wds1Pool } from './view-bench.js';

const N = 200;
const WARMUP = 20;
const TARGET_MS = 2;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

async function pool(): Promise<Pool> {
  const file = process.env.KSVIEW_BENCH_KUBECONFIG;
  if (!file) return wds1Pool();
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  kc.setCurrentContext('wds1');
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return new Pool(new URL(kc.getCurrentCluster()!.server).origin, { connections: 2, pipelining: 1, connect: { ca: opts.ca as string, cert: opts.cert as string, key: opts.key as string } });
}

async function main(): Promise<number> {
  const p = await pool();
  const call = async (method: string, path: string, body?: unknown, as?: { user: string; groups?: readonly string[] }): Promise<number> => {
    const headers: Record<string, string | string[]> = { accept: 'application/json', 'content-type': 'application/json' };
    if (as) {
      headers['impersonate-user'] = as.user;
      if (as.groups) headers['impersonate-group'] = [...as.groups];
    }
    const t0 = performance.now();
    const res = await p.request({ method: method as 'GET', path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}${as ? ` as ${as.user}` : ''}: ${res.statusCode} ${text.slice(0, 300)}`);
    return performance.now() - t0;
  };

  const run = randomBytes(3).toString('hex');
  const label = { 'ksview-bench': run };
  const checked = `bench-checked-${run}`;
  const users = { CHECKED: { user: checked }, MASTERS: { user: `bench-masters-${run}`, groups: ['system:masters'] } } as const;
  const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }];
  const held = `bench-held-${run}`;
  const crb = (name: string, role: string, user: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name, labels: label },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] });
  // The checked user's rights in wds1 (native RBAC): the view's two roles, and the rules it writes.
  const grants = [
    [`${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: held, labels: label }, rules }],
    [`${RBAC}/clusterrolebindings`, crb(`${held}`, held, checked)],
    [`${RBAC}/clusterrolebindings`, crb(`${held}-user`, 'kubestellar-view:user', checked)],
    [`${RBAC}/clusterrolebindings`, crb(`${held}-denatured`, 'kubestellar-view:denatured-editor', checked)],
  ] as const;
  const samples = { CHECKED: { role: [] as number[], binding: [] as number[] }, MASTERS: { role: [] as number[], binding: [] as number[] } };
  try {
    for (const [path, body] of grants) await call('POST', path, body);
    // The denatured ClusterRole the bindings refer to (its rules are what a binding grants in the fleet).
    await call('POST', `${VIEW_ROOT}${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: held, labels: label }, rules });
    // The informers of ksview-native see the grants within moments: wait until a dry run passes.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await call('POST', `${VIEW_ROOT}${RBAC}/clusterrolebindings?dryRun=All`, crb(`${held}-probe`, held, 'alice'), users.CHECKED);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    progress.step(`${WARMUP} warm-up and ${N} measured ClusterRole + ClusterRoleBinding creates per user, through the view`);
    for (let i = 0; i < WARMUP + N; i++) {
      const order: (keyof typeof users)[] = i % 2 ? ['CHECKED', 'MASTERS'] : ['MASTERS', 'CHECKED'];
      for (const k of order) {
        const name = `bench-${run}-${k.toLowerCase()}-${i}`;
        const role = await call('POST', `${VIEW_ROOT}${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels: label }, rules }, users[k]);
        const binding = await call('POST', `${VIEW_ROOT}${RBAC}/clusterrolebindings`, crb(name, held, 'alice'), users[k]);
        if (i >= WARMUP) {
          samples[k].role.push(role);
          samples[k].binding.push(binding);
        }
      }
      if ((i + 1) % 50 === 0) progress.step(`${i + 1}/${WARMUP + N}`);
    }
  } finally {
    progress.step('deleting what the benchmark created');
    const selector = `?labelSelector=${encodeURIComponent(`ksview-bench=${run}`)}`;
    await Promise.allSettled([
      call('DELETE', `${VIEW_ROOT}${RBAC}/clusterroles${selector}`), call('DELETE', `${VIEW_ROOT}${RBAC}/clusterrolebindings${selector}`),
      call('DELETE', `${RBAC}/clusterroles${selector}`), call('DELETE', `${RBAC}/clusterrolebindings${selector}`),
    ]);
    await p.close();
  }

  const lines = ['| write (through the view) | CHECKED median (ms) | MASTERS median (ms) | added (ms) | ratio |', '|---|---|---|---|---|'];
  let worst = -Infinity;
  for (const [what, key] of [['create ClusterRole (escalate asked, rules resolved)', 'role'], ['create ClusterRoleBinding (bind asked, denatured role read, rules resolved)', 'binding']] as const) {
    const c = median(samples.CHECKED[key]);
    const m = median(samples.MASTERS[key]);
    worst = Math.max(worst, c - m);
    lines.push(`| ${what} | ${c.toFixed(2)} | ${m.toFixed(2)} | ${(c - m).toFixed(2)} | ${(c / m).toFixed(2)} |`);
  }
  const met = worst <= TARGET_MS;
  process.stdout.write(`${lines.join('\n')}\n\ntarget: the check adds <= ${TARGET_MS} ms to the median of each write: ${met ? 'met' : 'NOT met'} (worst ${worst.toFixed(2)} ms; n=${N} each, ${new Date().toISOString()})\n`);
  return met ? 0 : 1;
}

main().then((code) => process.exit(code), (err: Error) => {
  process.stderr.write(`denatured-escalation: ${err.message}\n`);
  process.exit(2);
});
